"""Energy terms of the incremental potential, each with value, gradient and PSD Hessian, and their sum.

    E(q) = sum_k term_k(q)                                  q (n, 3) [m]: node positions

A term holds everything it needs, frozen for the step (the predictor, the lagged friction data, the damping
matrix, its weight); the Newton loop only sums terms, so a new term (an affine body's orthogonality energy,
a shape-targeting actuation) plugs in without touching the loop. Terms on the collision surface (barrier,
friction) evaluate at x = J q (``Evaluation.xs``) and pull back with the chain rule grad_q = J^T grad_x,
H_q = J^T H_x J (``SystemMatrix.add_surface``).

Weights: implicit Euler (w_i, w_p) = (1, h^2), Newmark (1, beta h^2), quasi-static (0, 1)
(``ipcsim.solvers.integrators``); values are in kg m^2 (dynamic) or J (quasi-static).
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np

from ..contact.barrier_potential import barrier_potential, barrier_potential_gradient, barrier_potential_hessian
from ..contact.collisions import build_collisions
from ..contact.formulation import BarrierFormulation
from .reduction import PatternCache, SystemMatrix


@dataclass
class Evaluation:
    """A point where the potential is evaluated.

    Attributes:
        x: (n, 3) [m] node positions; xs: (n_surface, 3) [m] collision-surface positions J x;
        candidates: broad-phase candidates reused by every evaluation of a line search (None: static broad
            phase at x);
        collisions: the active set at xs (``contact.collisions``), built once by the first term that asks
            (``BarrierTerm.collisions``) or set by the Newton loop; None: not built yet;
        derivatives_follow: the gradient and Hessian will be asked for right after the energy (the start of a
            solve), so terms computing both in one pass may do so;
        elastic: (gradient (3n,), Hessian) of the elastic energy kept by such a pass until ``add_to`` takes them.
    """

    x: np.ndarray
    xs: np.ndarray
    candidates: object = None
    collisions: object = None
    derivatives_follow: bool = False
    elastic: tuple | None = None


class EnergyTerm:
    """Base of the energy terms: ``value(ev)`` and ``add_to(ev, grad, hess)`` (adds the weighted gradient (3n,)
    into grad and the weighted PSD Hessian into the ``SystemMatrix`` hess). ``contact`` terms are timed apart."""

    contact = False

    def value(self, ev: Evaluation) -> float:  # pragma: no cover - interface
        raise NotImplementedError

    def add_to(self, ev: Evaluation, grad: np.ndarray, hess: SystemMatrix) -> None:  # pragma: no cover
        raise NotImplementedError


class InertiaTerm(EnergyTerm):
    """w/2 (q - q_hat)^T M (q - q_hat); mass: ``energies.mass.Mass``, q_hat (n, 3) [m] the predictor."""

    def __init__(self, mass, q_hat: np.ndarray, weight: float):
        self.mass, self.q_hat, self.weight = mass, q_hat, float(weight)

    def value(self, ev):
        if self.weight == 0.0:
            return 0.0
        return 0.5 * self.weight * self.mass.quadratic(ev.x - self.q_hat)

    def add_to(self, ev, grad, hess):
        if self.weight == 0.0:
            return
        grad += self.weight * self.mass.apply(ev.x - self.q_hat).ravel()
        if self.mass.is_lumped:
            hess.add_diagonal(self.weight * self.mass.diagonal3)
        else:
            hess.add_full(self.weight, self.mass.matrix)


class ElasticEnergyTerm(EnergyTerm):
    """w Psi(q) over all tets (``solvers.elastic.ElasticAssembler`` assembles it; its Hessian is the base pattern of
    the Newton matrix). Psi is +inf when an inversion-guarded tet is inverted."""

    def __init__(self, elastic, weight: float):
        self.elastic, self.weight = elastic, float(weight)

    def value(self, ev):
        if ev.derivatives_follow:  # one pass gives the energy and the derivatives asked for next
            ge, he, psi = self.elastic.gradient_hessian_energy(ev.x)
            if math.isfinite(psi):
                ev.elastic = (ge, he)
        else:
            psi = self.elastic.energy(ev.x)
        return self.weight * psi if math.isfinite(psi) else math.inf

    def add_to(self, ev, grad, hess):
        found, ev.elastic = ev.elastic, None
        ge, he = found if found is not None else self.elastic.gradient_and_hessian(ev.x)
        grad += self.weight * ge
        hess.set_elastic(self.weight, he)


class ExternalWorkTerm(EnergyTerm):
    """-w f . q for constant forces f (n, 3) [N] (gravity M g, Neumann loads); no Hessian."""

    def __init__(self, forces: np.ndarray, weight: float):
        self.forces, self.weight = np.asarray(forces, np.float64), float(weight)

    def value(self, ev):
        return -self.weight * float(np.sum(self.forces * ev.x))

    def add_to(self, ev, grad, hess):
        grad -= self.weight * self.forces.ravel()


class BarrierTerm(EnergyTerm):
    """w kappa B(J q): the barrier potential on the collision surface (docs/contact.md), active set built from
    the evaluation's candidates; Hessian PSD-projected per stencil ('analytic'). vertex_stiffness: None or
    (n_surface,) [1], per-vertex relative stiffness (each stencil scaled by its softer side, ``build_collisions``)."""

    contact = True

    def __init__(self, mesh, surface_map, dhat: float, kappa: float, convergent: bool, weight: float,
                 vertex_stiffness=None):
        self.mesh, self.surface_map, self.dhat, self.weight = mesh, surface_map, float(dhat), float(weight)
        form = BarrierFormulation.of(convergent)
        self.build_args = dict(form.collision_args, vertex_stiffness=vertex_stiffness)
        self.barrier_args = dict(form.potential_args, stiffness=float(kappa))

    def collisions(self, ev: Evaluation):
        """The active set at ev (built once per evaluation)."""
        if ev.collisions is None:
            ev.collisions = build_collisions(self.mesh, ev.xs, self.dhat, candidates=ev.candidates,
                                             **self.build_args)
        return ev.collisions

    def value(self, ev):
        coll = self.collisions(ev)
        return self.weight * barrier_potential(coll, self.mesh, ev.xs, **self.barrier_args) if len(coll) else 0.0

    def add_to(self, ev, grad, hess):
        coll = self.collisions(ev)
        if not len(coll):
            return
        gb = barrier_potential_gradient(coll, self.mesh, ev.xs, **self.barrier_args)
        hb = barrier_potential_hessian(coll, self.mesh, ev.xs, project="analytic", **self.barrier_args)
        grad += self.weight * self.surface_map.pull_gradient(gb)
        hess.add_surface(self.weight, hb)


class FrictionTerm(EnergyTerm):
    """w D(J q): IPC's lagged friction, with normal forces, closest points and tangent bases frozen at the lagging
    point (``contact.friction.FrictionCollisions``), tangential displacement u = J q - xs_lag (n_surface, 3) [m]."""

    contact = True

    def __init__(self, collisions, potential, xs_lag: np.ndarray, surface_map, weight: float):
        self.collisions, self.potential, self.xs_lag = collisions, potential, xs_lag
        self.surface_map, self.weight = surface_map, float(weight)

    def value(self, ev):
        return self.weight * self.potential(self.collisions, ev.xs - self.xs_lag)

    def add_to(self, ev, grad, hess):
        u = ev.xs - self.xs_lag
        grad += self.weight * self.surface_map.pull_gradient(self.potential.gradient(self.collisions, u))
        hess.add_surface(self.weight, self.potential.hessian(self.collisions, u, project="clamp"))


class DampingTerm(EnergyTerm):
    """IPC's lagged Rayleigh damping E_d (``integrators.LaggedRayleighDamping``), weight 1 (outside w_p)."""

    def __init__(self, damping):
        self.damping = damping

    def value(self, ev):
        return self.damping.energy(ev.x)

    def add_to(self, ev, grad, hess):
        grad += self.damping.gradient(ev.x)
        hess.add_full(1.0, self.damping.hessian())


class StiffnessDampingTerm(DampingTerm):
    """The bodies' stiffness-proportional damping E_beta = w_p / (2 h) (q - q^t)^T K_beta (q - q^t)
    (``stiffness_damping``), a ``LaggedRayleighDamping`` whose coefficient already holds w_p / h."""


class IncrementalPotential:
    """The sum of a step's energy terms over node positions q (n, 3) [m].

    Args:
        terms: the ``EnergyTerm`` objects (summed in this order); surface_map: the model's J;
        cache: the solver's ``PatternCache`` for the Newton matrices.
    """

    def __init__(self, terms: list, surface_map, cache: PatternCache | None = None):
        self.terms = list(terms)
        self.surface_map = surface_map
        self.cache = cache

    def evaluation(self, x: np.ndarray, candidates=None) -> Evaluation:
        """An ``Evaluation`` at node positions x (n, 3) [m]."""
        return Evaluation(x, self.surface_map.apply(x), candidates)

    def term(self, kind: type):
        """The first term of this class, or None."""
        return next((t for t in self.terms if isinstance(t, kind)), None)

    def energy(self, ev: Evaluation) -> float:
        """E at ev (+inf where a term is infinite, e.g. an inverted guarded tet)."""
        total = 0.0
        for t in self.terms:
            v = t.value(ev)
            if not math.isfinite(v):
                return math.inf
            total += v
        return total

    def gradient_hessian(self, ev: Evaluation) -> tuple[np.ndarray, SystemMatrix, float]:
        """(gradient (3n,), PSD Newton matrix as a ``SystemMatrix``, seconds spent in contact terms)."""
        grad = np.zeros(ev.x.size)
        hess = SystemMatrix(self.surface_map, None, 0.0, np.zeros(ev.x.size), self.cache)
        t_contact = 0.0
        for t in self.terms:
            t0 = time.perf_counter()
            t.add_to(ev, grad, hess)
            if t.contact:
                t_contact += time.perf_counter() - t0
        return grad, hess, t_contact
