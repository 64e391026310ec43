"""Implicit Euler, Newmark (or quasi-static) with IPC contact: projected Newton on the barrier-augmented
incremental potential, with lagged friction, prescribed motions and optional lagged Rayleigh damping.

    E(x) = 1/2 (x - x_hat)^T M (x - x_hat) + h^2 (Psi(x) + kappa B(x) + D(x) - f_ext . x) [+ E_d(x)]
    x_hat = x^t + h v^t,    f_ext = M g + Neumann loads

Newmark replaces x_hat by x^t + h v^t + h^2 (1/2 - beta) a^t and h^2 by beta h^2; E_d is IPC's lagged Rayleigh
damping term (``ipcsim.solvers.integrators`` has the formulas, units and velocity/acceleration updates).

B is the barrier potential on the collision surface (the h^2 factor multiplies the barrier too, 001 §4), in the
convergent formulation by default (area weights, improved max approximator, physical barrier scaled by
1/dhat^3) with a fixed kappa [Pa] (docs/contact.md). D is IPC's lagged friction potential: its normal forces
lambda_k are the barrier forces kappa * s * |db/dd| lagged at the start of the step (forces [N] before the h^2,
exactly like the barrier's gradient), so h^2 D is consistent with h^2 kappa B and with -h^2 x^T f_d of 003.
The quasi-static mode drops the inertia term and the h^2 factor (equilibrium Psi + kappa B - f_ext . x).

Each Newton iteration: PSD-projected Hessian, direct solve for p over the free coordinates, step bound
alpha_max from additive CCD on the surface and the inversion bound of guarded materials, one trajectory broad
phase over x -> x + p whose candidates every line-search trial reuses (001 §3), then backtracking until the
energy decreases. Prescribed vertices (obstacles, Dirichlet sets) take part in the trajectory: while they are
short of their targets, p holds their remaining displacement and the unknowns' linearised response, and the
CCD/inversion-bounded step is taken without energy backtracking (E changes with the prescribed positions, so
it is no merit function then); once they have arrived the usual projected Newton runs.
Convergence: ||p||_inf / h < tol * bbox_diagonal (IPC's criterion).
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numpy as np

from ..contact.barrier_potential import barrier_potential, barrier_potential_gradient, barrier_potential_hessian
from ..contact.broad_phase import build_candidates
from ..contact.ccd import compute_collision_free_stepsize
from ..contact.collisions import build_collisions
from ..contact.collisions_data import PV
from ..contact.friction import FrictionCollisions, FrictionPotential
from ..contact.stiffness import minimum_distance_squared
from ..model import Model, State
from .boundary import DofMap
from .elastic import ElasticTerm
from .integrators import LaggedRayleighDamping, check_damping_ratio, make_integrator
from .linear import forget_history as forget_linear_history
from .linear import pardiso_solver, resolve_backend, solve_spd
from .reduction import FreePattern, SystemMatrix


@dataclass
class ContactParameters:
    """dhat [m]: barrier activation distance; kappa [Pa]: barrier stiffness (None: 0.1 x mean Young's modulus).

    convergent: area weighting + improved max approximator + physical barrier (002); False gives IPC 2020's
    unweighted barrier (kappa then has units Pa/m^3... prefer the default).
    """

    dhat: float = 1e-3
    kappa: float | None = None
    convergent: bool = True


@dataclass
class FrictionParameters:
    """Lagged smooth-Coulomb friction (IPC 2020 §5).

    mu [1]: friction coefficient between bodies (and obstacles); ground_mu [1]: against half-space obstacles
    (None: mu); eps_v [m/s]: static/dynamic velocity threshold; lagging_iterations: number of solves per step,
    each re-lagging lambda and the tangent frames at the previous solution (1 = lagged at x^t, like IPC).
    """

    mu: float = 0.0
    ground_mu: float | None = None
    eps_v: float = 1e-3
    lagging_iterations: int = 1

    def __post_init__(self):
        for name in ("mu", "ground_mu"):
            value = getattr(self, name)
            if value is not None and not (np.isfinite(value) and value >= 0):
                raise ValueError(f"friction {name} must be >= 0, got {value}")
        if not (np.isfinite(self.eps_v) and self.eps_v > 0):
            raise ValueError(f"friction eps_v must be positive [m/s], got {self.eps_v}")
        if int(self.lagging_iterations) < 1:
            raise ValueError(f"friction lagging_iterations must be >= 1, got {self.lagging_iterations}")

    @property
    def enabled(self) -> bool:
        """True when some friction coefficient is positive."""
        return self.mu > 0 or (self.ground_mu or 0.0) > 0


@dataclass
class StepStats:
    """Per-step statistics; times [s] split as 000 Table 1.

    newton_iterations, line_search_steps: summed over the friction lagging iterations; converged: the last
    solve converged; n_friction: friction stencils of the last lagging; lagging_iterations: solves done;
    prescribed_iterations: Newton iterations spent moving prescribed vertices (obstacles, Dirichlet sets)
    to their targets; min_distance [m]: smallest contact distance at the end (inf without contact).
    """

    newton_iterations: int = 0
    line_search_steps: int = 0
    n_contacts: int = 0
    min_distance: float = math.inf
    kappa: float = 0.0
    energy: float = 0.0
    time_contact: float = 0.0
    time_linear_solve: float = 0.0
    time_ccd: float = 0.0
    time_line_search: float = 0.0
    time_other: float = 0.0
    converged: bool = False
    n_friction: int = 0
    lagging_iterations: int = 0
    prescribed_iterations: int = 0
    history: list = field(default_factory=list)


class ImplicitEulerSolver:
    """Advances a Model's State by one implicit Euler or Newmark step (or one quasi-static load step) with IPC
    contact (no intersection, no inversion), lagged friction, prescribed motions, Neumann loads and optional
    lagged Rayleigh damping.

    Args:
        model: the scene; contact: barrier parameters; friction: None or ``FrictionParameters``;
        tol: Newton tolerance (relative to the bounding-box diagonal, per second of step);
        quasi_static: drop inertia (each step solves the equilibrium at the step's end time);
        integrator: "implicit_euler" (default) or "newmark"; newmark_beta (0, 1/2], newmark_gamma [1/2, 1]:
            Newmark's parameters (IPC's defaults 1/4, 1/2); the State's acceleration ``a`` carries Newmark's
            history (see ``ipcsim.solvers.integrators``);
        damping_ratio: IPC's dampingRatio in [0, 1] (0: no damping): lagged Rayleigh damping with
            dampingStiff = 0.75 damping_ratio h^3 [s^3] (not with quasi_static);
        sanity_check: run ``ipcsim.sanity.check_scene`` on the state of the first step (ValueError on inverted or
            degenerate tets, non-manifold surfaces, initial intersections; SanityWarning when closer than dhat).
    """

    def __init__(self, model: Model, contact: ContactParameters | None = None, tol: float = 1e-2,
                 max_newton_iterations: int = 1000, linear_backend: str = "auto",
                 friction: FrictionParameters | None = None, quasi_static: bool = False,
                 sanity_check: bool = True, integrator: str = "implicit_euler", newmark_beta: float = 0.25,
                 newmark_gamma: float = 0.5, damping_ratio: float = 0.0):
        self.model = model
        self.contact = contact or ContactParameters()
        self.kappa = (self.contact.kappa if self.contact.kappa is not None
                      else 0.1 * float(np.mean(model.youngs_modulus)))
        self.friction = friction if friction is not None and friction.enabled else None
        self.quasi_static = bool(quasi_static)
        self.integrator = make_integrator(integrator, quasi_static=self.quasi_static, newmark_beta=newmark_beta,
                                          newmark_gamma=newmark_gamma)
        self.damping_ratio = check_damping_ratio(damping_ratio)
        if self.quasi_static and self.damping_ratio > 0.0:
            raise ValueError("damping_ratio needs a dynamic integrator (quasi_static=True has no time scale)")
        self.tol = tol
        self.max_newton_iterations = max_newton_iterations
        self.linear_backend = linear_backend
        self.elastic = ElasticTerm(model)
        mesh = model.collision_mesh
        self.dofs = DofMap(mesh.full_vertex_index, model.n_vertices)
        sim = ~model.is_obstacle
        self._bbox = float(np.linalg.norm(np.ptp(model.rest_positions[sim], axis=0)))
        conv = self.contact.convergent
        self._build_args = dict(use_area_weighting=conv, use_improved_max_approximator=conv)
        self._barrier_args = dict(stiffness=self.kappa, use_physical_barrier=conv)
        #: run ``ipcsim.sanity.check_scene`` at the next step (set False when the caller has checked the scene)
        self.check_on_first_step = bool(sanity_check)
        self._orderings = {}  # packed free mask -> pardiso ordering of the contact-free H_ff (``_ordering_for``)
        # per-step data (set in step)
        self._fc = None
        self._fp = None
        self._xs_lag = None
        self._damping = None

    def forget_history(self) -> None:
        """Drop the caches kept across steps (the free-dof sparsity pattern, the linear solver's analysis and
        ordering): their explicit zeros and orderings change the round-off, and each step must be a function of
        its input state alone so that a run resumed from a checkpoint equals an uninterrupted one. Called at the
        start of every ``step``."""
        self.dofs.free_pattern = None
        forget_linear_history()

    def _ordering_for(self, free: np.ndarray):
        """pardiso's fill-reducing ordering of the contact-free Newton matrix H_ff (elastic pattern and diagonal)
        for this free mask, computed once per mask and reused by every analysis (``linear.PardisoSPD.solve``):
        it depends on the model and the mask only, so steps stay history-free, and no step pays for a nested
        dissection. None for the other backends."""
        if resolve_backend(self.linear_backend) != "pardiso":
            return None
        key = np.packbits(free).tobytes()
        if key not in self._orderings:
            e = self.elastic.pattern
            base = FreePattern(e.indptr, e.indices, free)
            data = np.full(base.nnz, 1e-3)
            data[base.diagonal] = 1.0
            if len(self._orderings) >= 4:
                self._orderings.pop(next(iter(self._orderings)))
            self._orderings[key] = pardiso_solver().compute_ordering(base.csr(data))
        return self._orderings[key]

    def _surface(self, x: np.ndarray) -> np.ndarray:
        return self.dofs.surface(x)

    def _collisions(self, x, candidates):
        return build_collisions(self.model.collision_mesh, self._surface(x), self.contact.dhat,
                                candidates=candidates, **self._build_args)

    def _weights(self, h):
        """(inertia weight, potential weight): (1, h^2) implicit Euler, (1, beta h^2) Newmark, (0, 1) quasi-static."""
        return self.integrator.weights(h)

    def energy(self, x, x_hat, h, candidates, f_ext=None) -> float:
        """E(x) of the module docstring [kg m^2] (quasi-static: [J]) at full positions x (n, 3) [m], with the
        active set built from the given candidates; f_ext (n, 3) [N] external forces (default M g)."""
        m = self.model
        wi, wp = self._weights(h)
        f_ext = m.mass[:, None] * m.gravity if f_ext is None else f_ext
        dx = x - x_hat
        inertia = 0.5 * wi * float(np.sum(m.mass[:, None] * dx * dx))
        psi = self.elastic.energy(x)
        if not math.isfinite(psi):
            return math.inf
        xs = self._surface(x)
        coll = self._collisions(x, candidates)
        b = barrier_potential(coll, m.collision_mesh, xs, **self._barrier_args) if len(coll) else 0.0
        d = self._fp(self._fc, xs - self._xs_lag) if self._fc is not None and len(self._fc) else 0.0
        damping = self._damping.energy(x) if self._damping is not None else 0.0
        return inertia + wp * (psi + b + d - float(np.sum(f_ext * x))) + damping

    def _gradient_hessian(self, x, x_hat, h, candidates, f_ext):
        m = self.model
        wi, wp = self._weights(h)
        ge, he = self.elastic.gradient_and_hessian(x)
        grad = wi * (m.mass[:, None] * (x - x_hat)).ravel() + wp * (ge - f_ext.ravel())
        hess = SystemMatrix(self.dofs, he, wp, wi * np.repeat(m.mass, 3))
        t0 = time.perf_counter()
        xs = self._surface(x)
        coll = self._collisions(x, candidates)
        if len(coll):
            gb = barrier_potential_gradient(coll, m.collision_mesh, xs, **self._barrier_args)
            hb = barrier_potential_hessian(coll, m.collision_mesh, xs, project="analytic", **self._barrier_args)
            grad += wp * self.dofs.pull_gradient(gb)
            hess.add_surface(wp, hb)
        if self._fc is not None and len(self._fc):
            u = xs - self._xs_lag
            grad += wp * self.dofs.pull_gradient(self._fp.gradient(self._fc, u))
            hess.add_surface(wp, self._fp.hessian(self._fc, u, project="clamp"))
        if self._damping is not None:
            grad += self._damping.gradient(x)
            hess.add_full(1.0, self._damping.hessian())
        return grad, hess, time.perf_counter() - t0

    def _lag_friction(self, x, h):
        """Freeze lambda, closest points and tangent frames at x (IPC's lagging)."""
        fr, mesh = self.friction, self.model.collision_mesh
        xs = self._surface(x)
        coll = build_collisions(mesh, xs, self.contact.dhat, **self._build_args)
        ground_mu = fr.mu if fr.ground_mu is None else fr.ground_mu
        mu = np.where(np.asarray(coll.kind) == PV, ground_mu, fr.mu) if len(coll) else np.zeros(0)
        self._fc = FrictionCollisions.build(coll, mesh, xs, self.kappa, mu, dhat=self.contact.dhat,
                                            use_physical_barrier=self.contact.convergent)
        self._fp = FrictionPotential(self.friction.eps_v, h)

    def consistent_acceleration(self, state: State) -> np.ndarray:
        """a = M^-1 f(x) (n, 3) [m/s^2] at the state's positions and time: gravity, Neumann loads, elastic and
        barrier forces (friction is zero at rest); 0 on prescribed and massless vertices. Assign it to
        ``state.a`` before the first Newmark step for a consistent start (the default a = 0 is IPC's)."""
        m = self.model
        f = m.mass[:, None] * m.gravity + m.control.external_forces(m.n_vertices, state.t)
        ge, _ = self.elastic.gradient_and_hessian(state.x)
        f -= ge.reshape(-1, 3)
        xs = self._surface(state.x)
        candidates = build_candidates(m.collision_mesh, xs, None, inflation_radius=0.5 * self.contact.dhat)
        coll = self._collisions(state.x, candidates)
        if len(coll):
            gb = barrier_potential_gradient(coll, m.collision_mesh, xs, **self._barrier_args)
            f -= self.dofs.pull_gradient(gb).reshape(-1, 3)
        free = ~m.control.prescribed_mask(m.fixed, state.t, state.t) & (m.mass > 0)
        a = np.zeros_like(f)
        a[free] = f[free] / m.mass[free, None]
        return a

    def step(self, state_in: State, state_out: State, dt: float) -> StepStats:
        """One step of size dt [s] from state_in into state_out: positions, then velocities and accelerations
        by the integrator (implicit Euler: v = (x - x^t) / dt)."""
        m = self.model
        stats = StepStats(kappa=self.kappa)
        t_start = time.perf_counter()
        h = float(dt)
        if not (h > 0.0 and math.isfinite(h)):
            raise ValueError(f"time step must be positive and finite, got {dt}")
        if self.check_on_first_step:
            from ..sanity import check_scene

            check_scene(m, state_in, self.contact.dhat)
            self.check_on_first_step = False
        self.forget_history()
        t0_, t1_ = state_in.t, state_in.t + h
        x_t = state_in.x
        x_hat = self.integrator.predictor(x_t, state_in.v, state_in.a, h)
        prescribed = m.control.prescribed_mask(m.fixed, t0_, t1_)
        target = m.control.targets(x_t, t0_, t1_)
        f_ext = m.mass[:, None] * m.gravity + m.control.external_forces(m.n_vertices, t1_)
        if self.quasi_static:
            from ..sanity import check_quasi_static_support

            check_quasi_static_support(m, x_t, prescribed, self.contact.dhat)
        self._xs_lag = self._surface(x_t)
        self._fc = None
        self._damping = None
        if self.damping_ratio > 0.0:
            _, k_t = self.elastic.gradient_and_hessian(x_t)
            self._damping = LaggedRayleighDamping.from_ratio(k_t, x_t, self.damping_ratio, h)
        x = x_t.copy()
        for lag in range(self.friction.lagging_iterations if self.friction else 1):
            if self.friction:
                self._lag_friction(x, h)
                stats.n_friction = len(self._fc)
            stats.lagging_iterations = lag + 1
            x, e = self._newton(x, x_hat, h, prescribed, target, f_ext, stats)
        xs = self._surface(x)
        candidates = build_candidates(m.collision_mesh, xs, None, inflation_radius=0.5 * self.contact.dhat)
        coll = self._collisions(x, candidates)
        stats.n_contacts = len(coll)
        if len(coll):
            stats.min_distance = math.sqrt(minimum_distance_squared(coll, m.collision_mesh, xs))
        stats.energy = e
        v, a = self.integrator.update(x_t, state_in.v, state_in.a, x, x_hat, h, prescribed)
        state_out.x, state_out.v, state_out.a, state_out.t = x, v, a, t1_
        stats.time_other = (time.perf_counter() - t_start - stats.time_contact - stats.time_linear_solve
                            - stats.time_ccd - stats.time_line_search)
        return stats

    def _newton(self, x, x_hat, h, prescribed, target, f_ext, stats):
        """Projected Newton from x; prescribed vertices are driven to target along the trajectory."""
        mesh, dhat = self.model.collision_mesh, self.contact.dhat
        free = DofMap.free_coordinates(prescribed)
        candidates = build_candidates(mesh, self._surface(x), None, inflation_radius=0.5 * dhat)
        e = self.energy(x, x_hat, h, candidates, f_ext)
        stats.converged = False
        for it in range(self.max_newton_iterations):
            grad, hess, t_contact = self._gradient_hessian(x, x_hat, h, candidates, f_ext)
            stats.time_contact += t_contact
            t0 = time.perf_counter()
            p = (target - x).ravel()
            p[free] = 0.0
            arrived = not np.any(p)
            rhs = -grad[free]
            if not arrived:
                rhs -= hess.prescribed_coupling(free, p)
            if free.any():
                p[free] = solve_spd(hess.free_block(free), rhs, self.linear_backend, self._ordering_for(free))
                if not np.all(np.isfinite(p)):
                    raise ValueError("Newton system is singular (non-finite search direction)")
            stats.time_linear_solve += time.perf_counter() - t0
            p = p.reshape(-1, 3)
            stats.newton_iterations += 1
            # IPC's criterion; but the first direction is always taken, else a body whose per-step velocity
            # change is below tol (g h < tol * bbox at small h) would never leave rest
            small = arrived and np.max(np.abs(p)) / h < self.tol * self._bbox
            if small and it > 0:
                stats.converged = True
                break
            t0 = time.perf_counter()
            xs0, xs1 = self._surface(x), self._surface(x + p)
            candidates = build_candidates(mesh, xs0, xs1, inflation_radius=0.5 * dhat)
            alpha = compute_collision_free_stepsize(mesh, xs0, xs1, candidates=candidates)
            alpha = min(alpha, self.elastic.max_step(x, p))
            stats.time_ccd += time.perf_counter() - t0
            t0 = time.perf_counter()
            if arrived:
                while True:
                    stats.line_search_steps += 1
                    e_new = self.energy(x + alpha * p, x_hat, h, candidates, f_ext)
                    if e_new <= e or alpha < 1e-12:
                        break
                    alpha *= 0.5
                x = x + alpha * p
            else:
                stats.prescribed_iterations += 1
                x = x + alpha * p
                if alpha >= 1.0:
                    x[prescribed] = target[prescribed]  # exact arrival (no round-off drift)
                e_new = self.energy(x, x_hat, h, candidates, f_ext)
            stats.time_line_search += time.perf_counter() - t0
            e = e_new
            stats.history.append((it, alpha, e))
            if small:
                stats.converged = True
                break
        return x, e
