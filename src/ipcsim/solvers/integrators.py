"""Time integrators of the incremental potential and IPC's lagged Rayleigh damping.

Every step minimises (``ipcsim.solvers.integrator_solvers``)

    E(x) = w_i/2 (x - x_hat)^T M (x - x_hat) + w_p (Psi(x) + kappa B(x) + D(x) - f_ext . x) + E_d(x)

x [m] full positions (n, 3), M [kg] lumped masses, h [s] the step, f_ext [N] gravity and Neumann loads at the
end of the step, E_d the damping term below (0 without damping). An integrator supplies the predictor x_hat,
the weights (w_i [1], w_p [s^2]) and the velocity/acceleration update once x = x^{t+1} is found:

implicit Euler:  x_hat = x^t + h v^t,  (w_i, w_p) = (1, h^2),
                 v^{t+1} = (x - x^t) / h,  a^{t+1} = (v^{t+1} - v^t) / h.
quasi-static:    (w_i, w_p) = (0, 1) (equilibrium; x_hat unused),  v^{t+1} = (x - x^t) / h,  a^{t+1} = 0.
Newmark (beta, gamma), as IPC 2020's ``timeIntegration NM``:
                 x_hat = x^t + h v^t + h^2 (1/2 - beta) a^t,  (w_i, w_p) = (1, beta h^2),
                 a^{t+1} = (x - x_hat) / (beta h^2),  v^{t+1} = v^t + h ((1 - gamma) a^t + gamma a^{t+1}).
    Derivation: Newmark's x^{t+1} = x^t + h v^t + h^2 ((1/2 - beta) a^t + beta a^{t+1}) with
    M a^{t+1} = f(x^{t+1}) reads M (x - x_hat) = beta h^2 f(x), the stationarity condition of E. IPC keeps
    gravity inside its x_tilde (+ beta h^2 g) and adds g back to its acceleration; putting M g into f_ext with
    the same weight beta h^2 is the same equation. Neumann loads also carry beta h^2 here (IPC weights them by
    h^2 under NM). beta = 1/4, gamma = 1/2 (average acceleration, the default) conserves the energy of linear
    elastic vibrations; 2 beta >= gamma >= 1/2 is unconditionally stable for linear problems.
    The State carries a (n, 3) [m/s^2] so that a restart from a saved State continues the same run.
    ``State.a`` starts at zero (IPC's initial acceleration); ``ImplicitEulerSolver.consistent_acceleration``
    gives M^-1 f(x^0) instead (with it, free fall under gravity is the exact parabola).
    Prescribed vertices (fixed, obstacles, active Dirichlet sets) get v = (x - x^t) / h and a = 0.
    Lagged friction is unchanged: its lagged normal forces are barrier forces, so w_p D and w_p kappa B are
    consistent for any w_p, and its slip threshold is eps_v h with the full step h (IPC uses h^2 eps_v^2 under
    both BE and NM), the tangential displacement being x - x^t.

Lagged Rayleigh damping (IPC's ``dampingRatio`` / ``dampingStiff``):

    dampingStiff = 0.75 * dampingRatio * h^3                      [s^3]
    E_d(x) = 1/2 (dampingStiff / h) (x - x^t)^T K_t (x - x^t)    [kg m^2, like the inertia term]

K_t (3n, 3n) [N/m] is the PSD-projected Hessian of the elastic energy Psi at x^t (recomputed each step, held
fixed within it), so E_d is an exact quadratic with gradient c K_t (x - x^t) and Hessian c K_t,
c = dampingStiff / h = 0.75 dampingRatio h^2 [s^2]. E_d is added outside w_p, as in IPC, so at the minimum
the damping force in the momentum balance M a^{t+1} = f - f_d is
    implicit Euler: f_d = (c / h^2) K_t (x - x^t) = (0.75 dampingRatio h) K_t v^{t+1}
                    (stiffness-proportional Rayleigh damping, coefficient 0.75 dampingRatio h [s]);
    Newmark:        f_d = (c / (beta h^2)) K_t (x - x^t) = (0.75 dampingRatio h / beta) K_t (x - x^t) / h.
It is rigid-translation free (K_t annihilates translations) and dissipative within a step (dx^T K_t dx >= 0).
Deviation from IPC: IPC zeroes the displacement of Dirichlet vertices in E_d; here x - x^t includes the
prescribed vertices' motion, so a body pulled rigidly by a Dirichlet set is not dragged (only its relative
motion is damped). Identical when Dirichlet sets are static.
"""
from __future__ import annotations

import math

import numpy as np
import scipy.sparse as sp

from ..linalg.sparse import canonical_csr

INTEGRATORS = ("implicit_euler", "newmark")


def _finite(value, name: str) -> float:
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number, got {value!r}") from None
    if not math.isfinite(v):
        raise ValueError(f"{name} must be finite, got {value!r}")
    return v


def _check_acceleration(a: np.ndarray, x: np.ndarray) -> np.ndarray:
    a = np.asarray(a, dtype=np.float64)
    if a.shape != x.shape or not np.all(np.isfinite(a)):
        raise ValueError(f"state.a must be a finite {x.shape} array [m/s^2], got shape {a.shape}")
    return a


class ImplicitEuler:
    """Backward (implicit) Euler: x_hat = x^t + h v^t, weights (1, h^2), v = (x - x^t)/h.

    Every integrator has ``name`` and ``quasi_static`` (True: no inertia, so no velocity-dependent terms: the
    solver refuses damping and checks that every body is held)."""

    name = "implicit_euler"
    quasi_static = False

    def predictor(self, x: np.ndarray, v: np.ndarray, a: np.ndarray, h: float) -> np.ndarray:
        """x_hat (n, 3) [m] from x^t (n, 3) [m], v^t (n, 3) [m/s] (a^t unused) and h [s]."""
        return x + h * v

    def weights(self, h: float) -> tuple[float, float]:
        """(inertia weight [1], potential weight [s^2])."""
        return 1.0, h * h

    def update(self, x_t, v_t, a_t, x, x_hat, h, prescribed) -> tuple[np.ndarray, np.ndarray]:
        """(v^{t+1} (n, 3) [m/s], a^{t+1} (n, 3) [m/s^2]) once the step's positions x (n, 3) [m] are known."""
        v = (x - x_t) / h
        return v, (v - v_t) / h


class QuasiStatic(ImplicitEuler):
    """Quasi-static load steps: no inertia, weights (0, 1); v = (x - x^t)/h as a rate, a = 0."""

    name = "quasi_static"
    quasi_static = True

    def weights(self, h: float) -> tuple[float, float]:
        """(inertia weight, potential weight [1])."""
        return 0.0, 1.0

    def update(self, x_t, v_t, a_t, x, x_hat, h, prescribed):
        """(v (n, 3) [m/s], a = 0 (n, 3))."""
        return (x - x_t) / h, np.zeros_like(x)


class Newmark:
    """Newmark-beta (IPC 2020's NM); see the module docstring for the formulas.

    beta in (0, 1/2], gamma in [1/2, 1] (dimensionless; defaults 1/4, 1/2: the average-acceleration rule).
    """

    name = "newmark"
    quasi_static = False

    def __init__(self, beta: float = 0.25, gamma: float = 0.5):
        beta = _finite(beta, "newmark_beta")
        gamma = _finite(gamma, "newmark_gamma")
        if not 0.0 < beta <= 0.5:
            raise ValueError(f"newmark_beta must be in (0, 0.5], got {beta}")
        if not 0.5 <= gamma <= 1.0:
            raise ValueError(f"newmark_gamma must be in [0.5, 1], got {gamma}")
        self.beta, self.gamma = beta, gamma

    def predictor(self, x, v, a, h):
        """x_hat = x^t + h v^t + h^2 (1/2 - beta) a^t (n, 3) [m]."""
        return x + h * v + (h * h * (0.5 - self.beta)) * _check_acceleration(a, x)

    def weights(self, h):
        """(1, beta h^2 [s^2])."""
        return 1.0, self.beta * h * h

    def update(self, x_t, v_t, a_t, x, x_hat, h, prescribed):
        """a^{t+1} = (x - x_hat)/(beta h^2), v^{t+1} = v^t + h((1 - gamma) a^t + gamma a^{t+1});
        prescribed (n,) bool vertices get v = (x - x^t)/h and a = 0."""
        a = (x - x_hat) / (self.beta * h * h)
        v = v_t + h * ((1.0 - self.gamma) * a_t + self.gamma * a)
        v[prescribed] = (x[prescribed] - x_t[prescribed]) / h
        a[prescribed] = 0.0
        return v, a


def check_damping_ratio(damping_ratio) -> float:
    """Validate IPC's dampingRatio [1] (0 <= ratio <= 1; IPC clamps values above 1) and return it as float."""
    r = _finite(damping_ratio, "damping_ratio")
    if not 0.0 <= r <= 1.0:
        raise ValueError(f"damping_ratio must be in [0, 1], got {damping_ratio!r}")
    return r


def damping_stiffness(damping_ratio: float, h: float) -> float:
    """IPC's dampingStiff = 0.75 dampingRatio h^3 [s^3] for a step h [s]."""
    return 0.75 * damping_ratio * h ** 3


class LaggedRayleighDamping:
    """E_d(x) = 1/2 c (x - x^t)^T K_t (x - x^t) with c = dampingStiff / h [s^2] (module docstring).

    Args:
        stiffness: K_t (3n, 3n) sparse [N/m], the PSD elastic Hessian at x^t (vertex-major).
        x_t: (n, 3) [m] positions at the start of the step.
        coefficient: c [s^2].
    """

    def __init__(self, stiffness: sp.spmatrix, x_t: np.ndarray, coefficient: float):
        self.x_t = np.array(x_t, dtype=np.float64, copy=True)
        self.coefficient = float(coefficient)
        k = stiffness if type(stiffness) is sp.csr_matrix else sp.csr_matrix(stiffness)
        if k.has_canonical_format:  # c K_t on K_t's own index arrays (the Newton matrix then sees the elastic
            self.matrix = canonical_csr(self.coefficient * k.data, k.indices, k.indptr, k.shape[0])  # pattern)
        else:
            self.matrix = (self.coefficient * k).tocsr()

    @classmethod
    def from_ratio(cls, stiffness: sp.spmatrix, x_t: np.ndarray, damping_ratio: float,
                   h: float) -> "LaggedRayleighDamping":
        """IPC's damping for dampingRatio [1] and step h [s]: c = 0.75 dampingRatio h^2."""
        return cls(stiffness, x_t, damping_stiffness(damping_ratio, h) / h)

    def energy(self, x: np.ndarray) -> float:
        """E_d at x (n, 3) [m], in kg m^2."""
        dx = (x - self.x_t).ravel()
        return 0.5 * float(dx @ (self.matrix @ dx))

    def gradient(self, x: np.ndarray) -> np.ndarray:
        """dE_d/dx (3n,) [kg m] at x (n, 3) [m]."""
        return self.matrix @ (x - self.x_t).ravel()

    def hessian(self) -> sp.csr_matrix:
        """c K_t (3n, 3n) [kg], constant within the step."""
        return self.matrix
