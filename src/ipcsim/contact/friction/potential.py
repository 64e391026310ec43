"""Lagged friction potential D(u) of IPC (Li et al. 2020 Eq. 15-19; 004 Eq. 8).

For the displacement over the step u = x - x^n, (n_vertices, 3) [m], and lagged stencils k
(``FrictionCollisions``):

    u_k = T_k^T Gamma_k u                          (2,) [m]  tangential relative displacement
    D(u) = sum_k w_k mu_k lambda_k f0(||u_k||)     [J]

    grad_u D   = sum_k Gamma_k^T T_k  s_k f1(y)/y u_k                         (s_k = w_k mu_k lambda_k)
    hess_u D   = sum_k Gamma_k^T T_k  M_k  T_k^T Gamma_k,
    M_k        = s_k [ (f2(y) y - f1(y))/y^3 u_k u_k^T + f1(y)/y I_2 ]   (y = ||u_k||; M_k = s_k f1(y)/y I at y = 0)

M_k is 2x2 and A_k = T_k^T Gamma_k = |gamma_k| Q_k with orthonormal rows Q_k (T_k has orthonormal
columns, Gamma_k = [gamma_k0 I, ..]), so the stencil Hessian A_k^T M_k A_k has the eigenvalues of M_k
times |gamma_k|^2 (and zeros): projecting M_k (clamping or mirroring its eigenvalues, closed form)
is exactly projecting the stencil Hessian. The eigenvalues of M_k are s_k f2(y) (along u_k) and
s_k f1(y)/y (across), both >= 0 when s_k >= 0: only negative weights (improved max approximator)
make a stencil Hessian indefinite.

Gradients are vertex-major vectors (3 n,), entry 3 v + c; Hessians scipy CSR (3 n, 3 n).
"""
from __future__ import annotations

import math

import numpy as np
import scipy.sparse as sp
from numba import njit, prange

from ...runtime.jit import twin
from .. import psd
from ...runtime.threads import numba_threads, threads_for
from ..collisions_data import STENCIL_SIZE
from ...linalg.sparse import assemble_block_csr
from .lagged import FrictionCollisions
from .smooth import f0, f1_over_x, f2_x_minus_f1_over_x3

PSD_NONE, PSD_CLAMP, PSD_ABS = 0, 1, 2


# ----------------------------------------------------------------------------- one stencil
@njit(cache=True)
def tangential_displacement(T, gamma, vertices, nv, k, u):
    """u_k = T_k^T sum_i gamma_ki u[vertices_ki] [m] of stencil k (nv vertices), as a pair.

    T (m, 3, 2), gamma (m, 4), vertices (m, 4) are the set's arrays, u (n_vertices, 3) [m].
    """
    r0 = 0.0
    r1 = 0.0
    r2 = 0.0
    for i in range(nv):
        v = vertices[k, i]
        g = gamma[k, i]
        r0 += g * u[v, 0]
        r1 += g * u[v, 1]
        r2 += g * u[v, 2]
    return (T[k, 0, 0] * r0 + T[k, 1, 0] * r1 + T[k, 2, 0] * r2,
            T[k, 0, 1] * r0 + T[k, 1, 1] * r1 + T[k, 2, 1] * r2)


@njit(cache=True)
def project_2x2_psd(a, b, c, mode):
    """PSD projection of the symmetric [[a, b], [b, c]]; mode 1 clamps negative eigenvalues to 0,
    mode 2 replaces them by their absolute values. Returns (a', b', c')."""
    m = 0.5 * (a + c)
    h = 0.5 * (a - c)
    r = math.sqrt(h * h + b * b)
    l1 = m + r  # larger eigenvalue
    l2 = m - r
    if l2 >= 0.0:
        return a, b, c
    if l1 <= 0.0:  # negative semi-definite
        if mode == PSD_CLAMP:
            return 0.0, 0.0, 0.0
        return -a, -b, -c
    # l1 > 0 > l2, so r > 0: projector on the l1 eigenvector P1 = (M - l2 I) / (l1 - l2)
    inv = 1.0 / (l1 - l2)
    p_a = (a - l2) * inv
    p_b = b * inv
    p_c = (c - l2) * inv
    if mode == PSD_CLAMP:
        return l1 * p_a, l1 * p_b, l1 * p_c
    # l1 P1 - l2 (I - P1)
    a1 = l1
    a2 = -l2
    return a1 * p_a + a2 * (1.0 - p_a), (a1 - a2) * p_b, a1 * p_c + a2 * (1.0 - p_c)


@njit(cache=True)
def friction_inner_hessian(uk0, uk1, s, eps_u, mode):
    """M (2x2 as (a, b, c)) = s [(f2 y - f1)/y^3 u u^T + f1/y I] for u_k = (uk0, uk1) [m], y = ||u_k||,
    s = w mu lambda [N]; projected to PSD for mode 1 (clamp) or 2 (abs)."""
    y = math.sqrt(uk0 * uk0 + uk1 * uk1)
    f1x = f1_over_x(y, eps_u)
    if y == 0.0:
        a = s * f1x
        b = 0.0
        c = s * f1x
    else:
        f2x = f2_x_minus_f1_over_x3(y, eps_u)
        a = s * (f2x * uk0 * uk0 + f1x)
        b = s * (f2x * uk0 * uk1)
        c = s * (f2x * uk1 * uk1 + f1x)
    if mode != PSD_NONE:
        return project_2x2_psd(a, b, c, mode)
    return a, b, c


# ----------------------------------------------------------------------------- assembly kernels
@twin  # twins: the serial variants under one Numba thread (``threads_for``), the same bits there
def _value_kernel(vertices, nv, T, gamma, s, eps_u, u):
    total = 0.0
    for k in prange(vertices.shape[0]):
        uk0, uk1 = tangential_displacement(T, gamma, vertices, nv[k], k, u)
        total += s[k] * f0(math.sqrt(uk0 * uk0 + uk1 * uk1), eps_u)
    return total


@twin
def _local_gradients(vertices, nv, T, gamma, s, eps_u, u):
    m = vertices.shape[0]
    out = np.zeros((m, 4, 3))
    for k in prange(m):
        uk0, uk1 = tangential_displacement(T, gamma, vertices, nv[k], k, u)
        c = s[k] * f1_over_x(math.sqrt(uk0 * uk0 + uk1 * uk1), eps_u)
        # s f1(y)/y T u_k: the tangential force direction in 3D
        t0 = c * (T[k, 0, 0] * uk0 + T[k, 0, 1] * uk1)
        t1 = c * (T[k, 1, 0] * uk0 + T[k, 1, 1] * uk1)
        t2 = c * (T[k, 2, 0] * uk0 + T[k, 2, 1] * uk1)
        for i in range(nv[k]):
            g = gamma[k, i]
            out[k, i, 0] = g * t0
            out[k, i, 1] = g * t1
            out[k, i, 2] = g * t2
    return out


@njit(cache=True)
def _scatter_gradient(vertices, nv, local, n_dof):
    grad = np.zeros(n_dof)
    for k in range(vertices.shape[0]):
        for i in range(nv[k]):
            v = vertices[k, i]
            for c in range(3):
                grad[3 * v + c] += local[k, i, c]
    return grad


@twin
def _hessian_local(vertices, nv, T, gamma, s, eps_u, u, mode):
    """Local Hessians (m, 12, 12): block (i, j) = gamma_i gamma_j T M T^T, M the 2x2 inner matrix."""
    m = vertices.shape[0]
    local = np.zeros((m, 12, 12))
    for k in prange(m):
        uk0, uk1 = tangential_displacement(T, gamma, vertices, nv[k], k, u)
        a, b, c = friction_inner_hessian(uk0, uk1, s[k], eps_u, mode)
        for p in range(3):
            # row p of T M, times column q of T^T
            q0 = T[k, p, 0] * a + T[k, p, 1] * b
            q1 = T[k, p, 0] * b + T[k, p, 1] * c
            for q in range(3):
                K = q0 * T[k, q, 0] + q1 * T[k, q, 1]
                for i in range(nv[k]):
                    gi = gamma[k, i] * K
                    for j in range(nv[k]):
                        local[k, 3 * i + p, 3 * j + q] = gi * gamma[k, j]
    return local


# ----------------------------------------------------------------------------- public class
class FrictionPotential:
    """Lagged smooth-Coulomb friction potential D(u) over a ``FrictionCollisions`` set.

    Args:
        eps_v: static/dynamic velocity threshold [m/s] (> 0).
        dt: time step h [s] (> 0). The mollifier works on displacements with eps_u = eps_v * dt [m];
            pass dt=1 to give the displacement threshold directly as eps_v.

    All methods take u: (n_vertices, 3) float64 [m], the displacement x - x^n over the step, with
    n_vertices the number of collision vertices; energies are in [J] when the set's weight *
    normal_force is in [N].
    """

    def __init__(self, eps_v: float, dt: float):
        eps_v = float(eps_v)
        dt = float(dt)
        if not (np.isfinite(eps_v) and eps_v > 0):
            raise ValueError(f"eps_v (friction velocity threshold) must be positive [m/s], got {eps_v}")
        if not (np.isfinite(dt) and dt > 0):
            raise ValueError(f"dt (time step) must be positive [s], got {dt}")
        self.eps_v = eps_v
        self.dt = dt
        self.eps_u = eps_v * dt
        self._kept = None  # the last set's kernel arrays (``_stencil_arrays``)

    # -- helpers
    def _prepare(self, fc: FrictionCollisions, u, no_mu: bool = False):
        if not isinstance(fc, FrictionCollisions):
            raise ValueError("collisions must be a FrictionCollisions (see FrictionCollisions.build)")
        u = np.ascontiguousarray(u, dtype=np.float64)
        if u.ndim != 2 or u.shape[1] != 3:
            raise ValueError(f"displacements u must have shape (n_vertices, 3), got {u.shape}")
        if fc.n_vertices and len(u) != fc.n_vertices:
            raise ValueError(f"displacements u has {len(u)} vertices, the friction set was built for "
                             f"{fc.n_vertices}")
        arrays, top = self._stencil_arrays(fc, no_mu)
        if top >= len(u):
            raise ValueError(f"displacements u has {len(u)} vertices but the friction stencils refer to "
                             f"vertex {top}")
        return (*arrays, u)

    def _stencil_arrays(self, fc: FrictionCollisions, no_mu: bool):
        """((vertices (m, 4) int64, sizes (m,), T (m, 3, 2), gamma (m, 4), s (m,)), largest vertex id or -1) of
        the kernels for fc, s = weight * lambda (* mu unless no_mu). The last set's are kept while its arrays are
        the same objects: a lagged set is read by every energy, gradient and Hessian of its Newton solve, and is
        never changed in place."""
        sources = (fc.kind, fc.vertices, fc.tangent_basis, fc.gamma, fc.weight, fc.normal_force, fc.mu, no_mu)
        kept = self._kept
        if kept is not None and all(a is b for a, b in zip(kept[0], sources)):
            return kept[1], kept[2]
        s = fc.weight * fc.normal_force * (1.0 if no_mu else fc.mu)
        arrays = (np.ascontiguousarray(fc.vertices, dtype=np.int64), np.ascontiguousarray(STENCIL_SIZE[fc.kind]),
                  np.ascontiguousarray(fc.tangent_basis), np.ascontiguousarray(fc.gamma),
                  np.ascontiguousarray(s, dtype=np.float64))
        top = int(fc.vertices.max()) if len(fc) else -1
        self._kept = (sources, arrays, top)
        return arrays, top

    # -- value, gradient, Hessian, force
    def __call__(self, fc: FrictionCollisions, u) -> float:
        """D(u) [J] (scalar)."""
        return self.value(fc, u)

    def value(self, fc: FrictionCollisions, u) -> float:
        """D(u) = sum_k w_k mu_k lambda_k f0(||u_k||) [J]."""
        vertices, nv, T, gamma, s, u = self._prepare(fc, u)
        if len(vertices) == 0:
            return 0.0
        with numba_threads(threads_for(len(vertices))):  # small sets: one thread (see runtime.threads)
            return float(_value_kernel(vertices, nv, T, gamma, s, self.eps_u, u))

    def gradient(self, fc: FrictionCollisions, u) -> np.ndarray:
        """dD/du (3 n_vertices,) [N], vertex-major."""
        vertices, nv, T, gamma, s, u = self._prepare(fc, u)
        if len(vertices) == 0:
            return np.zeros(u.size)
        with numba_threads(threads_for(len(vertices))):
            local = _local_gradients(vertices, nv, T, gamma, s, self.eps_u, u)
        return _scatter_gradient(vertices, nv, local, u.size)

    def force(self, fc: FrictionCollisions, u, no_mu: bool = False) -> np.ndarray:
        """Friction force -dD/du (3 n_vertices,) [N]; no_mu=True leaves mu out (mu = 1)."""
        vertices, nv, T, gamma, s, u = self._prepare(fc, u, no_mu=no_mu)
        if len(vertices) == 0:
            return np.zeros(u.size)
        with numba_threads(threads_for(len(vertices))):
            local = _local_gradients(vertices, nv, T, gamma, s, self.eps_u, u)
        return -_scatter_gradient(vertices, nv, local, u.size)

    def hessian(self, fc: FrictionCollisions, u, project: bool | str = "clamp") -> sp.csr_matrix:
        """d2D/du2 (3 n_vertices, 3 n_vertices) [N/m], scipy CSR (canonical), vertex-major.

        project: "clamp" or True (negative eigenvalues of each stencil's 2x2 inner matrix M_k set
        to 0, which is exactly the clamp of the stencil's Hessian; "analytic" is the same), "abs"
        (replaced by their absolute values), "none" or False (exact Hessian). With positive
        weights every stencil Hessian is already PSD; only the negative weights of the improved
        max approximator are changed by the projection.
        """
        mode = _psd_mode(project)
        vertices, nv, T, gamma, s, u = self._prepare(fc, u)
        if len(vertices) == 0:
            return sp.csr_matrix((u.size, u.size))
        with numba_threads(threads_for(len(vertices))):
            local = _hessian_local(vertices, nv, T, gamma, s, self.eps_u, u, mode)
        return assemble_block_csr(vertices, nv, local, len(u))


def relative_displacements(fc: FrictionCollisions, u: np.ndarray) -> np.ndarray:
    """Gamma_k u (m, 3) [m]: every lagged stencil's relative displacement (the two sides' closest points) for
    collision-vertex displacements u (n_vertices, 3) [m]."""
    u = np.asarray(u, dtype=np.float64).reshape(-1, 3)
    if len(fc) == 0:
        return np.zeros((0, 3))
    v = np.asarray(fc.vertices, np.int64)
    g = np.where(v >= 0, fc.gamma, 0.0)  # padded slots (-1) carry no weight
    return np.einsum("ki,kic->kc", g, u[np.maximum(v, 0)])


def tangential_displacements(fc: FrictionCollisions, u: np.ndarray) -> np.ndarray:
    """u_k = T_k^T Gamma_k u (m, 2) [m]: every lagged stencil's tangential relative displacement for collision-vertex
    displacements u (n_vertices, 3) [m] (vectorised ``tangential_displacement``)."""
    return np.einsum("kc,kcj->kj", relative_displacements(fc, u), fc.tangent_basis)


def friction_direction(uk: np.ndarray, eps_u: float) -> np.ndarray:
    """F_k = f1(||u_k||) u_k / ||u_k|| (m, 2) [1]: each stencil's friction force per unit w mu lambda, its sign
    reversed, at tangential displacements uk (m, 2) [m] (0 at u_k = 0); ||F_k|| <= 1, and F_k is Lipschitz in u_k
    with constant 2 / eps_u (the slope f1'(0) of the stick regime)."""
    y = np.linalg.norm(uk, axis=1)
    f1x = np.where(y < eps_u, (2.0 - y / eps_u) / eps_u, 1.0 / np.maximum(y, eps_u))  # f1(y) / y
    return f1x[:, None] * uk


def increment_effect(fc: FrictionCollisions, u: np.ndarray, du: np.ndarray, eps_u: float):
    """What an increment du (n_vertices, 3) [m] from the displacement u (n_vertices, 3) [m] (from the step's start)
    does to each lagged stencil: (||F_k(u + du) - F_k(u)|| (m,) [1], the change of its friction force per unit
    w_k mu_k lambda_k (``friction_direction``; at most 2 ||T_k^T Gamma_k du|| / eps_u), and the normal part of its
    relative displacement ||(I - T_k T_k^T) Gamma_k du|| (m,) [m])."""
    m = len(fc)
    force, normal = np.zeros(m), np.zeros(m)
    if m:
        _increment_effect(np.ascontiguousarray(fc.vertices, dtype=np.int64), np.ascontiguousarray(STENCIL_SIZE[fc.kind]),
                          np.ascontiguousarray(fc.tangent_basis), np.ascontiguousarray(fc.gamma),
                          np.ascontiguousarray(u, dtype=np.float64).reshape(-1, 3),
                          np.ascontiguousarray(du, dtype=np.float64).reshape(-1, 3), float(eps_u), force, normal)
    return force, normal


@njit(cache=True)
def _increment_effect(vertices, nv, T, gamma, u, du, eps_u, force, normal):
    """``increment_effect`` per stencil into force (m,) and normal (m,)."""
    for k in range(vertices.shape[0]):
        uk0, uk1 = tangential_displacement(T, gamma, vertices, nv[k], k, u)
        r0 = 0.0
        r1 = 0.0
        r2 = 0.0
        for i in range(nv[k]):
            v = vertices[k, i]
            g = gamma[k, i]
            r0 += g * du[v, 0]
            r1 += g * du[v, 1]
            r2 += g * du[v, 2]
        d0 = T[k, 0, 0] * r0 + T[k, 1, 0] * r1 + T[k, 2, 0] * r2
        d1 = T[k, 0, 1] * r0 + T[k, 1, 1] * r1 + T[k, 2, 1] * r2
        a = f1_over_x(math.sqrt(uk0 * uk0 + uk1 * uk1), eps_u)
        w0, w1 = uk0 + d0, uk1 + d1
        b = f1_over_x(math.sqrt(w0 * w0 + w1 * w1), eps_u)
        f0_, f1_ = b * w0 - a * uk0, b * w1 - a * uk1
        force[k] = math.sqrt(f0_ * f0_ + f1_ * f1_)
        normal[k] = math.sqrt(max(r0 * r0 + r1 * r1 + r2 * r2 - d0 * d0 - d1 * d1, 0.0))


def _psd_mode(project) -> int:
    """Projection code of ``ipcsim.contact.psd`` names; 'analytic' is the exact 2x2 clamp here."""
    code = psd.projection_code(project)
    if code == psd.PROJECT_ANALYTIC:
        return PSD_CLAMP
    return {psd.PROJECT_NONE: PSD_NONE, psd.PROJECT_CLAMP: PSD_CLAMP, psd.PROJECT_ABS: PSD_ABS}[code]
