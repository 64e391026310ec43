"""Lagged friction stencils: the tangential contact data frozen at the lagging point x^n.

IPC's friction (Li et al. 2020 §5; 004 Eq. 8) lags three things at positions x^n (the start of
the time step, or the last outer iterate):

* lambda_k: the magnitude of the normal barrier force of contact k,
      lambda_k = -kappa * s * db/dd (d_k) = -kappa * s * 2 d_k * b'(d_k^2, dhat^2)
  (b is written in squared distances, so db/dd = 2 d b'(d2)); s = 1, or 1/dhat^3 with the
  physical barrier of the convergent formulation (002). The stencil's weight (multiplicity, area
  weight, or the signed terms of the improved max approximator) is kept apart in ``weight`` and
  multiplies the potential, as in ipc-toolkit. Units: w * lambda is a force [N]; lambda itself is
  [N] with the plain barrier (kappa [N/m^3]) and a pressure [Pa] with the physical barrier and
  area weights [m^2] (kappa [Pa]).
* the closest-point parameters beta_k and with them the relative-displacement map Gamma_k,
* the tangent basis T_k (3, 2).

Edge-edge stencils whose edges are (nearly) parallel, |ea x eb|^2 < eps_x, get no friction
(their tangent frame is undefined), exactly as ipc-toolkit's TangentialCollisions::build.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from numba import njit, prange

from ...runtime.jit import twin
from ..barrier import barrier_first_derivative, physical_barrier_scale
from ...runtime.threads import numba_threads, threads_for
from ..collisions_data import EE, KIND_NAMES, PV, STENCIL_SIZE, VV, Collisions
from ..distance.types import EA_EB
from ..stencils import stencil_d2
from .tangent import _cross, _dot, stencil_tangent_frame


@njit(cache=True)
def normal_force_magnitude(d2, dhat2, kappa, scale):
    """lambda = -kappa * scale * 2 sqrt(d2) * b'(d2, dhat2): the barrier force magnitude of one
    contact at squared distance d2 [m^2] (scale 1 or 1/dhat^3; see the module docstring for units).
    dhat2 is the squared activation distance [m^2]; 0 for d2 >= dhat2."""
    return -kappa * scale * 2.0 * math.sqrt(d2) * barrier_first_derivative(d2, dhat2)


@twin  # the serial variant under one Numba thread (``threads_for``)
def _build_frames(kind, vertices, dtype, eps_x, plane_id, x, plane_origins, plane_normals,
                  dhat2, kappa, scale):
    n = kind.shape[0]
    keep = np.ones(n, dtype=np.bool_)
    beta = np.zeros((n, 2))
    T = np.zeros((n, 3, 2))
    gamma = np.zeros((n, 4))
    d2 = np.zeros(n)
    lam = np.zeros(n)
    for k in prange(n):
        xs = np.zeros((4, 3))
        for i in range(4):
            v = vertices[k, i]
            if v >= 0:
                xs[i] = x[v]
        if kind[k] == EE:
            c = _cross(xs[1] - xs[0], xs[3] - xs[2])
            cross2 = _dot(c, c)
            if cross2 < eps_x[k] or cross2 == 0.0:
                keep[k] = False
                continue
        p = plane_id[k] if kind[k] == PV else 0
        b, Tk, g = stencil_tangent_frame(kind[k], xs, plane_normals[p])
        beta[k] = b
        T[k] = Tk
        gamma[k] = g
        # the squared distance the normal barrier uses (typed for mollified edge-edge stencils)
        t = dtype[k] if dtype[k] >= 0 else EA_EB
        d2[k] = stencil_d2(kind[k], vertices[k], p, t, x, plane_origins, plane_normals, None)
        lam[k] = normal_force_magnitude(d2[k], dhat2, kappa, scale)
    return keep, beta, T, gamma, d2, lam


# ----------------------------------------------------------------------------- container
def _empty(shape, dtype=np.float64):
    return field(default_factory=lambda: np.zeros(shape, dtype))


@dataclass
class FrictionCollisions:
    """Lagged tangential contact stencils (structure of arrays, one row per friction stencil).

    Attributes:
        kind: (m,) int64, contact kind (VV, EV, EE, FV, PV of ``collisions_data``).
        vertices: (m, 4) int64, collision-vertex ids in the kind's stencil order, -1 padded.
        primitives: (m, 2) int64, primitive ids copied from the Collisions (PV: (plane, vertex)).
        source: (m,) int64, row of the Collisions each stencil came from.
        closest_point: (m, 2) float64 [1], lagged closest-point parameters beta (EV: (alpha, 0);
            VV, PV: zeros).
        tangent_basis: (m, 3, 2) float64, lagged orthonormal tangent bases T.
        gamma: (m, 4) float64 [1], lagged relative-displacement coefficients (Gamma = [g_i I]).
        distance_squared: (m,) float64 [m^2], lagged squared distances.
        normal_force: (m,) float64, lagged normal force magnitudes lambda, without the weight
            (weight * normal_force [N]; see the module docstring).
        weight: (m,) float64, stencil weights of the Collisions.
        mu: (m,) float64 [1], friction coefficients.
        n_vertices: number of collision vertices of the positions the set was built from.
    """

    kind: np.ndarray = _empty(0, np.int64)
    vertices: np.ndarray = _empty((0, 4), np.int64)
    primitives: np.ndarray = _empty((0, 2), np.int64)
    source: np.ndarray = _empty(0, np.int64)
    closest_point: np.ndarray = _empty((0, 2))
    tangent_basis: np.ndarray = _empty((0, 3, 2))
    gamma: np.ndarray = _empty((0, 4))
    distance_squared: np.ndarray = _empty(0)
    normal_force: np.ndarray = _empty(0)
    weight: np.ndarray = _empty(0)
    mu: np.ndarray = _empty(0)
    n_vertices: int = 0

    def __len__(self) -> int:
        return len(self.kind)

    def count(self, kind: int) -> int:
        """Number of friction stencils of one kind."""
        return int(np.count_nonzero(self.kind == kind))

    @classmethod
    def build(cls, collisions: Collisions, mesh, x, stiffness: float, mu=None, *, vertex_mu=None,
              use_physical_barrier: bool = False, dhat: float | None = None) -> "FrictionCollisions":
        """Lag the tangential data of an active set at positions x.

        Args:
            collisions: the active set (``Collisions``) built at (or near) x.
            mesh: the ``CollisionMesh`` (its planes serve PV stencils; its vertex count is checked),
                or None for a set without PV stencils.
            x: (n_vertices, 3) float64 [m], collision-vertex positions at the lagging point.
            stiffness: barrier stiffness kappa (> 0), the one the normal barrier potential uses.
            mu: friction coefficient [1], a scalar or (len(collisions),) per stencil (>= 0).
            vertex_mu: instead of mu, (n_vertices,) coefficients per collision vertex [1]: each side
                of a contact takes the value interpolated at its closest point, and the stencil the
                mean of its two sides (ipc-toolkit's default blending); PV stencils the vertex's value.
            use_physical_barrier: scale lambda by 1/dhat^3, as the convergent formulation's barrier.
            dhat: activation distance [m] (default ``collisions.dhat``).
        Raises:
            ValueError: bad shapes or parameters, stencil vertices out of range, a PV stencil
                without its plane, or a stencil whose tangent frame or force is not finite
                (degenerate primitive, zero distance); the message names the stencil.
        """
        x = _as_positions(x)
        if mesh is not None and len(x) != mesh.n_vertices:
            raise ValueError(f"positions x has {len(x)} vertices, the collision mesh {mesh.n_vertices}")
        n = len(collisions)
        kind = np.ascontiguousarray(collisions.kind, dtype=np.int64).reshape(n)
        vertices = np.ascontiguousarray(collisions.vertices, dtype=np.int64).reshape(n, 4)
        primitives = np.asarray(collisions.primitives, dtype=np.int64).reshape(n, 2)
        dtype = np.ascontiguousarray(collisions.dtype, dtype=np.int64).reshape(n)
        eps_x = np.ascontiguousarray(collisions.eps_x, dtype=np.float64).reshape(n)
        weight = np.asarray(collisions.weight, dtype=np.float64).reshape(n)
        dhat = float(collisions.dhat if dhat is None else dhat)
        kappa = float(stiffness)
        if not (np.isfinite(dhat) and dhat > 0):
            raise ValueError(f"dhat must be a positive distance [m], got {dhat}")
        if not (np.isfinite(kappa) and kappa > 0):
            raise ValueError(f"stiffness (barrier stiffness kappa) must be positive, got {kappa}")
        if (mu is None) == (vertex_mu is None):
            raise ValueError("give exactly one of mu (scalar or per stencil) and vertex_mu (per vertex)")
        mu_arr = _as_mu(mu, n) if vertex_mu is None else None
        _check_stencils(kind, vertices, dtype, len(x))
        plane_id = np.ascontiguousarray(primitives[:, 0])
        origins, normals = _plane_arrays(mesh, kind, plane_id)
        scale = physical_barrier_scale(dhat) if use_physical_barrier else 1.0
        with numba_threads(threads_for(n)):  # small sets: one thread (see runtime.threads)
            keep, beta, T, gamma, d2, lam = _build_frames(
                kind, vertices, dtype, eps_x, plane_id, x, origins, normals, dhat * dhat, kappa, scale)
        bad = np.flatnonzero(keep & ~(np.isfinite(T).all(axis=(1, 2)) & np.isfinite(beta).all(axis=1)
                                      & np.isfinite(lam)))
        if bad.size:
            k = int(bad[0])
            raise ValueError(
                f"stencil {k} ({KIND_NAMES[kind[k]]}, vertices {vertices[k].tolist()}) has no finite "
                f"tangent frame or normal force at x (squared distance {d2[k]:.3e} m^2): degenerate "
                f"primitive or zero distance")
        if mu_arr is None:
            mu_arr = _blend_vertex_mu(vertex_mu, kind, vertices, gamma, len(x))
        idx = np.flatnonzero(keep)
        return cls(kind=kind[idx], vertices=vertices[idx], primitives=primitives[idx], source=idx,
                   closest_point=beta[idx], tangent_basis=T[idx], gamma=gamma[idx],
                   distance_squared=d2[idx], normal_force=lam[idx], weight=weight[idx],
                   mu=mu_arr[idx], n_vertices=len(x))


def build_friction_collisions(collisions: Collisions, mesh, x, stiffness: float, mu=None,
                              **kwargs) -> FrictionCollisions:
    """Same as ``FrictionCollisions.build`` (see there for arguments and units)."""
    return FrictionCollisions.build(collisions, mesh, x, stiffness, mu, **kwargs)


# ----------------------------------------------------------------------------- input checks
def _as_positions(x) -> np.ndarray:
    x = np.ascontiguousarray(x, dtype=np.float64)
    if x.ndim != 2 or x.shape[1] != 3:
        raise ValueError(f"positions x must have shape (n_vertices, 3), got {x.shape}")
    if not np.all(np.isfinite(x)):
        raise ValueError(f"positions x: vertex {int(np.flatnonzero(~np.isfinite(x).all(axis=1))[0])} "
                         "has a non-finite coordinate")
    return x


def _as_mu(mu, n: int) -> np.ndarray:
    m = np.asarray(mu, dtype=np.float64)
    if m.ndim == 0:
        m = np.full(n, float(m))
    elif m.shape != (n,):
        raise ValueError(f"mu must be a scalar or have one value per stencil ({n},), got shape {m.shape}")
    if not np.all(np.isfinite(m) & (m >= 0)):
        raise ValueError("mu (friction coefficient) must be finite and >= 0")
    return np.ascontiguousarray(m)


def _blend_vertex_mu(vertex_mu, kind, vertices, gamma, n_vertices: int) -> np.ndarray:
    """Per-stencil mu from per-vertex values: mean of the two sides' values at the closest points.

    Side A (the vertex, or edge a for EE) has the interpolation weights +gamma, side B (the other
    primitive) -gamma, so each side's value is a closest-point interpolation of its vertices' mu.
    """
    m = np.asarray(vertex_mu, dtype=np.float64)
    if m.shape != (n_vertices,):
        raise ValueError(f"vertex_mu must have one value per collision vertex ({n_vertices},), got {m.shape}")
    if not np.all(np.isfinite(m) & (m >= 0)):
        raise ValueError("vertex_mu (friction coefficients) must be finite and >= 0")
    mv = np.where(vertices >= 0, m[np.maximum(vertices, 0)], 0.0)  # (n, 4)
    terms = gamma * mv
    n_a = np.where(kind == EE, 2, 1)  # number of side-A vertices in the stencil
    side_a = np.arange(4)[None, :] < n_a[:, None]
    mu_a = np.where(side_a, terms, 0.0).sum(axis=1)
    mu_b = -np.where(side_a, 0.0, terms).sum(axis=1)
    return np.where(kind == PV, mu_a, 0.5 * (mu_a + mu_b))


def _check_stencils(kind, vertices, dtype, n_vertices: int) -> None:
    if kind.size and (kind.min() < VV or kind.max() > PV):
        k = int(np.flatnonzero((kind < VV) | (kind > PV))[0])
        raise ValueError(f"stencil {k} has unknown kind {kind[k]}")
    size = STENCIL_SIZE[kind]
    used = np.arange(4)[None, :] < size[:, None]
    bad = np.flatnonzero((used & ((vertices < 0) | (vertices >= n_vertices))).any(axis=1))
    if bad.size:
        k = int(bad[0])
        raise ValueError(f"stencil {k} ({KIND_NAMES[kind[k]]}) has vertices {vertices[k].tolist()} "
                         f"outside 0..{n_vertices - 1}")
    bad = np.flatnonzero((kind == EE) & ((dtype < -1) | (dtype > 9)))
    if bad.size:
        raise ValueError(f"stencil {int(bad[0])} (edge-edge) has unsupported distance type {dtype[bad[0]]}")


def _plane_arrays(mesh, kind, plane_id):
    """(origins, unit normals) of the mesh's planes, at least one row so Numba gets 2D arrays."""
    if mesh is not None and mesh.planes:
        origins, normals = mesh.planes_array()
    else:
        origins, normals = np.zeros((0, 3)), np.zeros((0, 3))
    n_planes = len(origins)
    pv = np.flatnonzero(kind == PV)
    bad = pv[(plane_id[pv] < 0) | (plane_id[pv] >= n_planes)]
    if bad.size:
        raise ValueError(f"stencil {int(bad[0])} (plane-vertex) refers to plane {plane_id[bad[0]]} but the "
                         f"collision mesh has {n_planes} plane(s)")
    if n_planes == 0:
        origins, normals = np.zeros((1, 3)), np.array([[0.0, 0.0, 1.0]])
    return np.ascontiguousarray(origins), np.ascontiguousarray(normals)
