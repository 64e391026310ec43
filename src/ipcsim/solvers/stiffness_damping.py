"""Stiffness-proportional (Rayleigh) damping per body, as an energy term of the implicit step.

Drake's deformable bodies and the Embedded IPC paper (004 §IV-A, beta = 0.05 s) damp with the force

    f_d = -beta K(x) v                      beta [s], K [N/m] the elastic stiffness, v [m/s]

(mass-proportional damping alpha M v is the other half of Rayleigh's; not here). Lagging K at the start of the
step, K_t = the PSD-projected Hessian of Psi at x^t (recomputed each step, held fixed within it; per tet, with
each tet's own beta_e: K_beta = sum_e beta_e K_e(x^t)), the force is the gradient of the quadratic

    E_beta(x) = w_p / (2 h) (x - x^t)^T K_beta (x - x^t)        [kg m^2 dynamic, the unit of E]

added with the potential weight w_p of the integrator. Derivation for implicit Euler (w_p = h^2): the
stationarity of E = 1/2 |x - x_hat|_M^2 + h^2 (Psi - f_ext . x) + E_beta reads
M (x - x^t - h v^t) / h^2 = f(x) - K_beta (x - x^t) / h, i.e. M a^{t+1} = f - K_beta v^{t+1}: backward Euler of
M a = f - beta K v with K lagged. Under Newmark (w_p = beta_N h^2) the damping force is K_beta (x - x^t) / h, the
step's mean velocity. The quasi-static mode has no velocity: a model with damping is rejected there.

Relation to IPC's ``dampingRatio`` (``integrators.LaggedRayleighDamping``): the same quadratic in K_t, but over all
tets, added unweighted, with coefficient 0.75 dampingRatio h^2, so its beta = 0.75 dampingRatio h [s] shrinks with
the step (and is divided by beta_N under Newmark); here beta is a material constant in seconds, the same at every
h, and set per body. Linear modal theory: a mode of frequency omega gets the damping ratio zeta = beta omega / 2
and decays as exp(-zeta omega t) (implicit Euler adds its own ~ omega^2 h / 2, ``tests/solvers/
test_stiffness_damping.py`` measures both). Rigid motion is never damped: K_t annihilates translations, and
rotations too at rest shape.

Per body: a body's beta applies to its own tets; an embedded body's to its coarse cage (where its elasticity
lives); an affine body's to the orthogonality energy kappa_a ||F F^T - I||^2 of its one tet, so beta damps the
stretch and shear of its affine map and leaves its rigid motion alone.
"""
from __future__ import annotations

import dataclasses

import numpy as np

from ..model import Model
from .elastic import ElasticAssembler
from .integrators import LaggedRayleighDamping


def damped_model(model: Model) -> Model | None:
    """A copy of model holding only the tets with beta_e > 0, their Lame parameters scaled by beta_e [s] (the
    elastic energies are linear in (mu, lam) and the per-tet PSD projection commutes with a positive factor, so its
    PSD Hessian is K_beta = sum_e beta_e K_e [N s/m]); None when no tet is damped."""
    beta = np.asarray(model.damping_stiffness, np.float64)
    if not np.any(beta > 0.0):
        return None
    groups = [(name, np.asarray(idx, np.int64)[beta[idx] > 0.0]) for name, idx in model.material_groups]
    groups = [(name, idx) for name, idx in groups if len(idx)]
    return dataclasses.replace(model, mu=model.mu * beta, lam=model.lam * beta, material_groups=groups)


def node_damping(model: Model) -> np.ndarray | None:
    """beta per node (n,) [s] when all tets of each node share one beta (0 for nodes in no tet), else None.

    Bodies are damped as wholes (``ModelBuilder``, JSON ``"damping"``) and share no node, so this is the usual
    case: K_beta = sum_e beta_e K_e is then the elastic Hessian K = sum_e K_e with each row scaled by its node's
    beta (a block of K couples two nodes of the same tets, so of one beta)."""
    beta = np.asarray(model.damping_stiffness, np.float64)
    tets = np.asarray(model.tets, np.int64)
    hi, lo = np.full(model.n_vertices, -np.inf), np.full(model.n_vertices, np.inf)
    np.maximum.at(hi, tets.ravel(), np.repeat(beta, 4))
    np.minimum.at(lo, tets.ravel(), np.repeat(beta, 4))
    used = np.isfinite(hi)
    if not np.array_equal(hi[used], lo[used]):
        return None
    return np.where(used, hi, 0.0)


class StiffnessDamping:
    """K_beta of a model's damped tets, assembled at the start of each step (``damping``).

    Args:
        model: the scene; ``model.damping_stiffness`` (m,) [s] gives each tet's beta (no tet damped: ``enabled``
            is False and ``damping`` returns None).
        elastic: the solver's ``ElasticAssembler`` of model (None: one is built when needed). When every node's
            tets share one beta (``node_damping``), K_beta is that assembler's Hessian at x^t with its rows scaled
            by their node's beta: on the elastic pattern (the Newton matrix gathers it directly) and, when the
            previous step's last Newton direction was computed at x^t, without assembling it again
            (``ElasticAssembler.hessian_at``). Else a separate assembler over the damped tets, Lame parameters
            scaled by beta_e (``damped_model``).
    """

    def __init__(self, model: Model, elastic: ElasticAssembler | None = None):
        self.elastic = self._entry_beta = None
        if not np.any(np.asarray(model.damping_stiffness) > 0.0):
            return
        beta = node_damping(model)
        if beta is None:
            self.elastic = ElasticAssembler(damped_model(model))
            return
        self.elastic = elastic if elastic is not None else ElasticAssembler(model)
        pat = self.elastic.pattern
        rows = np.repeat(np.arange(len(pat.indptr) - 1), np.diff(pat.indptr))
        self._entry_beta = beta[rows // 3]  # (nnz,) [s]: the beta of each entry's row node

    @property
    def enabled(self) -> bool:
        """True when some tet has beta > 0."""
        return self.elastic is not None

    def matrix(self, x_t: np.ndarray):
        """K_beta (3n, 3n) CSR [N s/m]: sum_e beta_e times tet e's PSD elastic Hessian at x_t (n, 3) [m]."""
        if self._entry_beta is None:
            return self.elastic.gradient_and_hessian(x_t)[1]
        return self.elastic.pattern.csr(self.elastic.hessian_at(x_t).data * self._entry_beta)

    def damping(self, x_t: np.ndarray, h: float, potential_weight: float) -> LaggedRayleighDamping | None:
        """E_beta for the step of size h [s] from x_t (n, 3) [m] with the integrator's w_p [s^2]: the quadratic
        1/2 c (x - x_t)^T K_beta (x - x_t) with c = w_p / h [s] (None without damped tets)."""
        if self.elastic is None:
            return None
        return LaggedRayleighDamping(self.matrix(x_t), x_t, potential_weight / h)
