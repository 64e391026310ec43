"""Implicit Euler with IPC contact: projected Newton on the barrier-augmented incremental potential.

    E(x) = 1/2 (x - x_hat)^T M (x - x_hat) + h^2 (Psi(x) + kappa B(x))
    x_hat = x^t + h v^t + h^2 g

B is the barrier potential on the collision surface (the h^2 factor multiplies the barrier too, 001 §4).
Each Newton iteration: PSD-projected Hessian, direct solve for p, step bound alpha_max from CCD (surface) and
the inversion bound (tets), one trajectory broad phase over x -> x + alpha_max p whose candidates are reused by
every line-search trial (001 §3), then backtracking until the energy decreases.
Convergence: ||p||_inf / h < tol * bbox_diagonal (IPC's criterion).
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from ..contact.barrier_potential import barrier_potential, barrier_potential_gradient, barrier_potential_hessian
from ..contact.broad_phase import build_candidates
from ..contact.ccd import compute_collision_free_stepsize
from ..contact.collisions import build_collisions
from ..energies.neohookean import max_step_without_inversion, neohookean_energy, neohookean_gradient_and_hessian_blocks
from ..model import Model, State
from .linear import solve_spd


@dataclass
class ContactParameters:
    """dhat [m]: barrier activation distance; kappa [Pa]: barrier stiffness (physical barrier, area weighted)."""

    dhat: float = 1e-3
    kappa: float = 1e4


@dataclass
class StepStats:
    """Per-step statistics; times [s] split as 000 Table 1."""

    newton_iterations: int = 0
    line_search_steps: int = 0
    n_contacts: int = 0
    min_distance: float = float("inf")
    energy: float = 0.0
    time_contact: float = 0.0
    time_linear_solve: float = 0.0
    time_ccd: float = 0.0
    time_line_search: float = 0.0
    time_other: float = 0.0
    converged: bool = False
    history: list = field(default_factory=list)


class ImplicitEulerSolver:
    """Advances a Model's State by one implicit Euler step with IPC contact (no intersection, no inversion)."""

    def __init__(self, model: Model, contact: ContactParameters | None = None, tol: float = 1e-2,
                 max_newton_iterations: int = 100, linear_backend: str = "auto"):
        self.model = model
        self.contact = contact or ContactParameters()
        self.tol = tol
        self.max_newton_iterations = max_newton_iterations
        self.linear_backend = linear_backend
        mesh = model.collision_mesh
        n = model.n_vertices
        rows = (3 * mesh.full_vertex_index[:, None] + np.arange(3)).ravel()
        self._J = sp.csr_matrix((np.ones(rows.size), (np.arange(rows.size), rows)), shape=(rows.size, 3 * n))
        self._free = ~np.repeat(model.fixed, 3)
        self._bbox = float(np.linalg.norm(np.ptp(model.rest_positions, axis=0)))
        self._tets_rows = (3 * model.tets[:, :, None] + np.arange(3)).reshape(len(model.tets), 12)

    # ------------------------------------------------------------------ energy pieces
    def _surface(self, x: np.ndarray) -> np.ndarray:
        return x[self.model.collision_mesh.full_vertex_index]

    def _barrier_args(self):
        return dict(use_physical_barrier=True)

    def energy(self, x, x_hat, h, candidates) -> tuple[float, object]:
        m = self.model
        dx = x - x_hat
        inertia = 0.5 * float(np.sum(m.mass[:, None] * dx * dx))
        psi = neohookean_energy(x, m.tets, m.dm_inv, m.volume, m.mu, m.lam)
        xs = self._surface(x)
        coll = build_collisions(m.collision_mesh, xs, self.contact.dhat, candidates=candidates, use_area_weighting=True)
        b = barrier_potential(coll, m.collision_mesh, xs, **self._barrier_args())
        return inertia + h * h * (psi + self.contact.kappa * b), coll

    def _gradient_hessian(self, x, x_hat, h, candidates):
        m = self.model
        n3 = 3 * m.n_vertices
        grad = (m.mass[:, None] * (x - x_hat)).ravel()
        ge, he = neohookean_gradient_and_hessian_blocks(x, m.tets, m.dm_inv, m.volume, m.mu, m.lam, True, True)
        np.add.at(grad, self._tets_rows.ravel(), h * h * ge.ravel())
        r = np.repeat(self._tets_rows, 12, axis=1).ravel()
        c = np.tile(self._tets_rows, (1, 12)).ravel()
        hess = sp.csr_matrix((h * h * he.ravel(), (r, c)), shape=(n3, n3))
        hess = hess + sp.diags(np.repeat(m.mass, 3))
        t0 = time.perf_counter()
        xs = self._surface(x)
        coll = build_collisions(m.collision_mesh, xs, self.contact.dhat, candidates=candidates, use_area_weighting=True)
        k = h * h * self.contact.kappa
        if len(coll):
            gb = barrier_potential_gradient(coll, m.collision_mesh, xs, **self._barrier_args())
            hb = barrier_potential_hessian(coll, m.collision_mesh, xs, project="clamp", **self._barrier_args())
            grad += k * (self._J.T @ gb)
            hess = hess + k * (self._J.T @ hb @ self._J)
        return grad, hess.tocsr(), coll, time.perf_counter() - t0

    # ------------------------------------------------------------------ step
    def step(self, state_in: State, state_out: State, dt: float) -> StepStats:
        """One implicit Euler step of size dt [s] from state_in into state_out."""
        m, mesh = self.model, self.model.collision_mesh
        stats = StepStats()
        t_start = time.perf_counter()
        h = float(dt)
        x_t = state_in.x
        x_hat = x_t + h * state_in.v + h * h * m.gravity
        x_hat[m.fixed] = x_t[m.fixed]
        x = x_t.copy()
        dhat = self.contact.dhat
        candidates = build_candidates(mesh, self._surface(x), None, inflation_radius=dhat)
        e, _ = self.energy(x, x_hat, h, candidates)
        for it in range(self.max_newton_iterations):
            grad, hess, coll, t_contact = self._gradient_hessian(x, x_hat, h, candidates)
            stats.time_contact += t_contact
            t0 = time.perf_counter()
            free = self._free
            p = np.zeros(3 * m.n_vertices)
            p[free] = solve_spd(hess[free][:, free], -grad[free], self.linear_backend)
            stats.time_linear_solve += time.perf_counter() - t0
            p = p.reshape(-1, 3)
            stats.newton_iterations = it + 1
            if np.max(np.abs(p)) / h < self.tol * self._bbox:
                stats.converged = True
                break
            t0 = time.perf_counter()
            xs0, xs1 = self._surface(x), self._surface(x + p)
            candidates = build_candidates(mesh, xs0, xs1, inflation_radius=dhat)
            alpha = compute_collision_free_stepsize(mesh, xs0, xs1, candidates=candidates)
            alpha = min(alpha, max_step_without_inversion(x, p, m.tets, 0.9))
            stats.time_ccd += time.perf_counter() - t0
            t0 = time.perf_counter()
            while True:
                stats.line_search_steps += 1
                e_new, _ = self.energy(x + alpha * p, x_hat, h, candidates)
                if e_new <= e or alpha < 1e-12:
                    break
                alpha *= 0.5
            stats.time_line_search += time.perf_counter() - t0
            x = x + alpha * p
            e = e_new
            stats.history.append((it, alpha, e))
        xs = self._surface(x)
        coll = build_collisions(mesh, xs, dhat, candidates=build_candidates(mesh, xs, None, inflation_radius=dhat))
        stats.n_contacts = len(coll)
        stats.energy = e
        state_out.x = x
        state_out.v = (x - x_t) / h
        state_out.t = state_in.t + h
        stats.time_other = (time.perf_counter() - t_start - stats.time_contact - stats.time_linear_solve
                            - stats.time_ccd - stats.time_line_search)
        return stats
