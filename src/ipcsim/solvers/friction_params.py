"""Friction parameters and the coefficient of each contact: one default, per-obstacle, per-plane and per-pair values.

IPC 2020's rule (ipc-sim/IPC ``Config.cpp``, ``Optimizer.cpp``): every collision object (``meshCO``,
``halfSpace``, ``ground``) carries its own coefficient, used for all contacts between the simulated meshes and
that object; contacts between simulated shapes use ``selfFric``. Collision objects never touch each other, so no
two object coefficients ever meet. ipcsim keeps that rule and adds a table of body pairs:

    mu(contact between collision bodies a and b) = pair_mu[(a, b)]     if the pair is listed,
                                                 = body_mu[b]          if b is an obstacle with its own value,
                                                 = mu                  otherwise;
    mu(contact of a vertex with half-space plane k) = plane_mu[k] (default ground_mu, default mu).

Collision-body ids are those of ``CollisionMesh.body``: the scene's bodies 0..B-1, then its obstacles.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..contact.collisions_data import EE, PV


#: The most lagged solves of one step when lagging_iterations = 0 ("until converged").
MAX_LAGGING = 20


def _check_mu(value, what: str) -> float:
    value = float(value)
    if not (np.isfinite(value) and value >= 0):
        raise ValueError(f"friction {what} must be >= 0, got {value}")
    return value


@dataclass
class FrictionParameters:
    """Lagged smooth-Coulomb friction (IPC 2020 §5).

    mu [1]: default coefficient (between bodies, IPC's selfFric); ground_mu [1]: default against half-space
    planes (None: mu); plane_mu: None or one coefficient per half-space plane (overrides ground_mu);
    body_mu: {collision body id: mu}, the coefficient of every contact with that (obstacle) body (IPC's meshCO
    friction); pair_mu: {(a, b): mu}, the coefficient between collision bodies a and b (either order; wins
    over body_mu); eps_v [m/s]: static/dynamic velocity threshold; lagging_iterations: number of solves per
    step, each re-lagging lambda and the tangent frames at the previous solution (1 = lagged at x^t, like IPC);
    0 = until converged (IPC's fricIterAmt <= 0): re-lag until a solve's first Newton increment already meets
    the tolerance, at most ``MAX_LAGGING`` solves.
    """

    mu: float = 0.0
    ground_mu: float | None = None
    eps_v: float = 1e-3
    lagging_iterations: int = 1
    plane_mu: tuple | None = None
    body_mu: dict | None = None
    pair_mu: dict | None = None

    def __post_init__(self):
        _check_mu(self.mu, "mu")
        if self.ground_mu is not None:
            _check_mu(self.ground_mu, "ground_mu")
        if self.plane_mu is not None:
            self.plane_mu = tuple(_check_mu(m, f"plane_mu[{k}]") for k, m in enumerate(self.plane_mu))
        self.body_mu = {int(b): _check_mu(m, f"body_mu[{b}]") for b, m in (self.body_mu or {}).items()}
        pairs = {}
        for key, m in (self.pair_mu or {}).items():
            a, b = (int(v) for v in key)
            pairs[(min(a, b), max(a, b))] = _check_mu(m, f"pair_mu[{key}]")
        self.pair_mu = pairs
        if not (np.isfinite(self.eps_v) and self.eps_v > 0):
            raise ValueError(f"friction eps_v must be positive [m/s], got {self.eps_v}")
        if int(self.lagging_iterations) < 0:
            raise ValueError(f"friction lagging_iterations must be >= 0 (0: until converged), got "
                             f"{self.lagging_iterations}")

    @property
    def max_solves(self) -> int:
        """Largest number of lagged solves per step."""
        return int(self.lagging_iterations) or MAX_LAGGING

    @property
    def enabled(self) -> bool:
        """True when some friction coefficient is positive."""
        values = [self.mu, self.ground_mu or 0.0, *(self.plane_mu or ()), *self.body_mu.values(),
                  *self.pair_mu.values()]
        return max(values) > 0

    def body_table(self, n_bodies: int) -> np.ndarray:
        """(n_bodies, n_bodies) float64 [1]: the coefficient between every two collision bodies."""
        table = np.full((n_bodies, n_bodies), float(self.mu))
        for b, m in self.body_mu.items():
            if not 0 <= b < n_bodies:
                raise ValueError(f"friction body_mu: body {b} is not a collision body (0..{n_bodies - 1})")
            table[b, :] = table[:, b] = m
        for (a, b), m in self.pair_mu.items():
            if not (0 <= a < n_bodies and 0 <= b < n_bodies):
                raise ValueError(f"friction pair_mu: ({a}, {b}) names a body outside 0..{n_bodies - 1}")
            table[a, b] = table[b, a] = m
        return table

    def plane_table(self, n_planes: int) -> np.ndarray:
        """(n_planes,) float64 [1]: the coefficient of each half-space plane."""
        if self.plane_mu is not None:
            if len(self.plane_mu) != n_planes:
                raise ValueError(f"friction plane_mu: expected {n_planes} coefficients (one per half space), "
                                 f"got {len(self.plane_mu)}")
            return np.asarray(self.plane_mu, np.float64)
        return np.full(n_planes, float(self.mu if self.ground_mu is None else self.ground_mu))


def stencil_mu(kind, vertices, primitives, body, body_table, plane_table) -> np.ndarray:
    """(n,) float64 [1]: the friction coefficient of each contact stencil.

    Args:
        kind, vertices, primitives: the stencils (``collisions_data.Collisions`` arrays).
        body: (n_vertices,) int64, collision body of each collision vertex (``CollisionMesh.body``).
        body_table: (B, B) float64, ``FrictionParameters.body_table``; plane_table: (P,) float64.
    """
    kind = np.asarray(kind)
    if not len(kind):
        return np.zeros(0)
    verts = np.asarray(vertices, np.int64)
    other = np.where(kind == EE, verts[:, 2], verts[:, 1])
    is_plane = kind == PV
    b_a = body[verts[:, 0]]
    b_b = body[np.maximum(other, 0)]
    mu = body_table[b_a, b_b]
    if is_plane.any():
        mu = np.where(is_plane, plane_table[np.asarray(primitives)[:, 0] * is_plane], mu)
    return mu
