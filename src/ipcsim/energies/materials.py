"""Registry of elastic materials on linear tets and the vectorised (Numba) energy / gradient / Hessian assembly.

Usage::

    e = elastic_energy("FCR", x, tets, dm_inv, volume, mu, lam)                         # [J]
    g, h = elastic_gradient_and_hessian_blocks("FCR", x, tets, dm_inv, volume, mu, lam,
                                               project=True, want_hessian=True)       # (m, 12) [N], (m, 12, 12) [N/m]

x (n, 3) [m]; tets (m, 4) int; dm_inv (m, 3, 3) [1/m] and volume (m,) [m^3] from ``rest_shape_data``;
mu, lam (m,) [Pa] per tet (a scalar is broadcast). One material per call, parameters per element.
Materials (see constitutive.py for the formulas):

    NH          Neo-Hookean (log barrier), +inf energy for inverted tets: needs the inversion step bound
    SNH         Stable Neo-Hookean (lam_s = lam + mu internally)
    FCR         fixed corotated
    LCR         linear corotated, energy with R = R(F); exact Hessian
    LCR_LAGGED  same energy and gradient as LCR; Hessian = frozen-rotation stiffness (PSD, not the exact Hessian)
    LE          linear elasticity (small strain)
    ABD         affine-body orthogonality energy kappa ||F^T F - I||^2 with kappa = mu (for ``add_affine_body``)

``project=True`` returns PSD Hessian blocks: B^T Proj(dP/dF) B with the analytic eigensystem of dP/dF clamped
at zero for NH/SNH/FCR/LCR (isotropic.py) and the unchanged (already PSD) stiffness for LE and LCR_LAGGED.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit, prange

from .constitutive import (
    abd_orthogonality_invariant_derivatives_into,
    abd_orthogonality_psi,
    fixed_corotated_invariant_derivatives_into,
    fixed_corotated_psi,
    lcr_lagged_dpdf,
    lcr_lagged_dpdf_into,
    linear_corotated_invariant_derivatives_into,
    linear_corotated_psi,
    linear_elastic_dpdf,
    linear_elastic_dpdf_into,
    linear_elastic_pk1,
    linear_elastic_pk1_into,
    linear_elastic_psi,
    neohookean_invariant_derivatives_into,
    neohookean_psi,
    stable_neohookean_invariant_derivatives_into,
    stable_neohookean_psi,
)
from .isotropic import (
    dpdf_from_invariants,
    dpdf_projected_from_invariants,
    pk1_from_invariants,
    pk1_from_invariants_into,
    projected_sigma_hessian_into,
)
from .kinematics import deformation_gradient, dfdx, svd_rv, vec
from .mat3 import det3, frob2, mul3_abt

NH, SNH, FCR, LCR, LCR_LAGGED, LE, ABD = 0, 1, 2, 3, 4, 5, 6


@dataclass(frozen=True)
class MaterialInfo:
    """Static facts about a material: its kernel code, a one-line description, whether its energy is +inf
    for inverted tets (the solver must then bound steps by ``max_step_without_inversion``), whether its
    Hessian (project=False) is the exact second derivative of its energy, and whether it is rotation invariant."""

    code: int
    description: str
    needs_inversion_guard: bool
    exact_hessian: bool
    rotation_invariant: bool


MATERIALS: dict[str, MaterialInfo] = {
    "NH": MaterialInfo(NH, "Neo-Hookean, log-barrier volume term", True, True, True),
    "SNH": MaterialInfo(SNH, "Stable Neo-Hookean (Smith et al. 2018)", False, True, True),
    "FCR": MaterialInfo(FCR, "fixed corotated (IPC)", False, True, True),
    "LCR": MaterialInfo(LCR, "linear corotated, R = polar rotation of the current F", False, True, True),
    "LCR_LAGGED": MaterialInfo(LCR_LAGGED, "linear corotated with frozen-rotation stiffness", False, False, True),
    "LE": MaterialInfo(LE, "linear elasticity (small strain)", False, True, False),
    "ABD": MaterialInfo(ABD, "affine-body orthogonality kappa ||F^T F - I||^2, kappa = mu", False, True, True),
}


def material_info(name: str) -> MaterialInfo:
    """The registry entry of ``name``; ValueError naming the argument for an unknown material."""
    try:
        return MATERIALS[name]
    except (KeyError, TypeError):
        raise ValueError(f"unknown material name={name!r}; expected one of {sorted(MATERIALS)}") from None


def needs_inversion_guard(name: str) -> bool:
    """True if the material's energy is +inf for det F <= 0 (NH): bound steps with max_step_without_inversion."""
    return material_info(name).needs_inversion_guard


# ------------------------------------------------------------------------------------------ per element
@njit(cache=True)
def material_psi(code: int, f: np.ndarray, mu: float, lam: float) -> float:
    """Energy density [Pa] of material ``code`` at F (3, 3)."""
    if code == NH:
        return neohookean_psi(f, mu, lam)
    if code == SNH:
        return stable_neohookean_psi(f, mu, lam)
    if code == FCR:
        return fixed_corotated_psi(f, mu, lam)
    if code == LCR or code == LCR_LAGGED:
        return linear_corotated_psi(f, mu, lam)
    if code == ABD:
        return abd_orthogonality_psi(f, mu, lam)
    return linear_elastic_psi(f, mu, lam)


@njit(cache=True)
def _invariant_derivatives(code: int, i1: float, i2: float, i3: float, mu: float, lam: float):
    """(dPsi/dI (3,), d2Psi/dI2 (3, 3)) [Pa] of an isotropic material (``_invariant_derivatives_into``)."""
    dpsi, d2psi = np.empty(3), np.empty((3, 3))
    _invariant_derivatives_into(code, i1, i2, i3, mu, lam, dpsi, d2psi)
    return dpsi, d2psi


@njit(cache=True)
def material_pk1_and_dpdf(code: int, f: np.ndarray, mu: float, lam: float, want_dpdf: bool, project: bool):
    """P (3, 3) [Pa] and dvec(P)/dvec(F) (9, 9) [Pa] (PSD-projected if ``project``; (0, 0) if not ``want_dpdf``)."""
    empty = np.zeros((0, 0))
    if code == LE:
        p = linear_elastic_pk1(f, mu, lam)
        return p, (linear_elastic_dpdf(mu, lam) if want_dpdf else empty)
    uses_rotation = code == FCR or code == LCR or code == LCR_LAGGED or code == ABD
    if uses_rotation or (want_dpdf and project and code != LCR_LAGGED):
        u, s, v = svd_rv(f)
    else:
        u, s, v = np.eye(3), np.ones(3), np.eye(3)  # not read
    r = mul3_abt(u, v)
    i1 = s[0] + s[1] + s[2]
    dpsi, d2psi = _invariant_derivatives(code, i1, frob2(f), det3(f), mu, lam)
    p = pk1_from_invariants(f, r, dpsi)
    if not want_dpdf:
        return p, empty
    if code == LCR_LAGGED:
        return p, lcr_lagged_dpdf(r, mu, lam)
    if project:
        return p, dpdf_projected_from_invariants(u, s, v, dpsi, d2psi)
    return p, dpdf_from_invariants(f, u, s, v, dpsi, d2psi)


# ------------------------------------------------------------------------------------------ per element, no allocation
@njit(cache=True, inline="always")
def _invariant_derivatives_into(code, i1, i2, i3, mu, lam, dpsi, d2psi) -> None:
    if code == NH:
        neohookean_invariant_derivatives_into(i1, i2, i3, mu, lam, dpsi, d2psi)
    elif code == SNH:
        stable_neohookean_invariant_derivatives_into(i1, i2, i3, mu, lam, dpsi, d2psi)
    elif code == FCR:
        fixed_corotated_invariant_derivatives_into(i1, i2, i3, mu, lam, dpsi, d2psi)
    elif code == ABD:
        abd_orthogonality_invariant_derivatives_into(i1, i2, i3, mu, lam, dpsi, d2psi)
    else:
        linear_corotated_invariant_derivatives_into(i1, i2, i3, mu, lam, dpsi, d2psi)


#: What ``material_response_into`` returns: the projected stiffness is the 9x9 dpdf, or given by its eigensystem
#: (pair eigenvalues and A+), or that of LCR with mu > 0 and lam >= 0, whose A+ is A (``tet_hessian_lcr_into``).
STIFFNESS_DPDF, STIFFNESS_EIGEN, STIFFNESS_LCR = 0, 1, 2


@njit(cache=True)
def material_scratch():
    """Scratch arrays of ``material_response_into``."""
    return np.empty((3, 3)), np.empty(3), np.empty((3, 3)), np.empty((3, 3))


@njit(cache=True, inline="always")
def material_response_into(code: int, f, u, s, v, mu: float, lam: float, p, dpdf, dpsi, d2psi, ap, scratch) -> int:
    """P (3, 3) [Pa] into p and the PSD-projected stiffness of material ``code`` at F, without allocation.

    u, s, v: the rotation-variant SVD of f (``svd_rv(f)``; not read for LE). Returns STIFFNESS_DPDF when the
    stiffness is dpdf (9, 9) (LE, LCR_LAGGED; the same as ``material_pk1_and_dpdf(code, f, mu, lam, True, True)``),
    STIFFNESS_EIGEN for the isotropic invariant materials (NH, SNH, FCR, LCR): the projected dP/dF is then given by
    its eigensystem (isotropic.py): the pair eigenvalues ``pair_eigenvalues(s, dpsi, i, j)`` clamped at 0 and the
    scaling block A+ (3, 3) in ap; dpsi (3,), d2psi (3, 3) hold the invariant derivatives. STIFFNESS_LCR for LCR
    with mu > 0 and lam >= 0: the same, but ap is not written (its scaling block 2 mu I + lam 1 1^T is positive
    definite: ``tet_blocks.tet_hessian_lcr_into`` needs only mu and lam). scratch: ``material_scratch()``.
    """
    r, alpha, w, m = scratch
    if code == LE:
        linear_elastic_pk1_into(f, mu, lam, p)
        linear_elastic_dpdf_into(mu, lam, dpdf)
        return STIFFNESS_DPDF
    for i in range(3):
        for j in range(3):
            r[i, j] = u[i, 0] * v[j, 0] + u[i, 1] * v[j, 1] + u[i, 2] * v[j, 2]  # mul3_abt(u, v)
    i1 = s[0] + s[1] + s[2]
    _invariant_derivatives_into(code, i1, frob2(f), det3(f), mu, lam, dpsi, d2psi)
    pk1_from_invariants_into(f, r, dpsi, p)
    if code == LCR_LAGGED:
        lcr_lagged_dpdf_into(r, mu, lam, dpdf)
        return STIFFNESS_DPDF
    if code == LCR and mu > 0.0 and lam >= 0.0:
        return STIFFNESS_LCR
    projected_sigma_hessian_into(s, dpsi, d2psi, ap, alpha, w, m)
    return STIFFNESS_EIGEN


# ------------------------------------------------------------------------------------------ assembly
@njit(cache=True)
def _gather(x: np.ndarray, tet: np.ndarray) -> np.ndarray:
    xs = np.empty((4, 3))
    for a in range(4):
        for d in range(3):
            xs[a, d] = x[tet[a], d]
    return xs


@njit(cache=True, parallel=True)
def _energy_kernel(code, x, tets, dm_inv, volume, mu, lam) -> float:
    total = 0.0
    for e in prange(tets.shape[0]):
        f = deformation_gradient(_gather(x, tets[e]), dm_inv[e])
        total += volume[e] * material_psi(code, f, mu[e], lam[e])
    return total


@njit(cache=True)
def _element_blocks(code, x, tets, dm_inv, volume, mu, lam, project, want_hessian, e, grads, hess):
    """Gradient (12,) [N] and Hessian (12, 12) [N/m] of tet e, written into grads[e] / hess[e]."""
    f = deformation_gradient(_gather(x, tets[e]), dm_inv[e])
    p, dpdf = material_pk1_and_dpdf(code, f, mu[e], lam[e], want_hessian, project)
    b = dfdx(dm_inv[e])
    grads[e] = volume[e] * (b.T @ vec(p))
    if want_hessian:
        hess[e] = volume[e] * (b.T @ dpdf @ b)


@njit(cache=True, parallel=True)
def _blocks_kernel(code, x, tets, dm_inv, volume, mu, lam, project, want_hessian):
    n = tets.shape[0]
    grads = np.empty((n, 12))
    hess = np.empty((n, 12, 12)) if want_hessian else np.empty((0, 12, 12))
    for e in prange(n):
        _element_blocks(code, x, tets, dm_inv, volume, mu, lam, project, want_hessian, e, grads, hess)
    return grads, hess


def _checked_inputs(x, tets, dm_inv, volume, mu, lam):
    x = np.ascontiguousarray(x, dtype=np.float64)
    if x.ndim != 2 or x.shape[1] != 3:
        raise ValueError(f"x must have shape (n, 3), got {x.shape}")
    tets = np.ascontiguousarray(tets, dtype=np.int64)
    if tets.ndim != 2 or tets.shape[1] != 4:
        raise ValueError(f"tets must have shape (m, 4), got {tets.shape}")
    m = tets.shape[0]
    if m and (tets.min() < 0 or tets.max() >= x.shape[0]):
        raise ValueError(f"tets index vertices outside [0, {x.shape[0]})")
    dm_inv = np.ascontiguousarray(dm_inv, dtype=np.float64)
    if dm_inv.shape != (m, 3, 3):
        raise ValueError(f"dm_inv must have shape ({m}, 3, 3), got {dm_inv.shape}")
    out = [x, tets, dm_inv]
    for arg, val in (("volume", volume), ("mu", mu), ("lam", lam)):
        a = np.asarray(val, dtype=np.float64)
        if a.ndim == 0 and arg != "volume":
            a = np.full(m, float(a))
        if a.shape != (m,):
            raise ValueError(f"{arg} must have shape ({m},), got {a.shape}")
        out.append(np.ascontiguousarray(a))
    return out


def elastic_energy(name: str, x, tets, dm_inv, volume, mu, lam) -> float:
    """Total elastic energy [J] = sum_e volume_e Psi(F_e) of material ``name`` (see MATERIALS).

    x (n, 3) [m]; tets (m, 4); dm_inv (m, 3, 3) [1/m]; volume (m,) [m^3]; mu, lam (m,) or scalar [Pa].
    +inf for NH when any tet is inverted.
    """
    code = material_info(name).code
    return float(_energy_kernel(code, *_checked_inputs(x, tets, dm_inv, volume, mu, lam)))


def elastic_gradient_and_hessian_blocks(name: str, x, tets, dm_inv, volume, mu, lam, project: bool = True,
                                        want_hessian: bool = True):
    """Per-tet energy gradients (m, 12) [N] and Hessians (m, 12, 12) [N/m] of material ``name``.

    Rows/columns follow the tet's vertices (vertex-major xyz). ``project``: PSD-projected Hessians (see module
    doc). ``want_hessian=False`` returns an empty (0, 12, 12) array. Arguments as in ``elastic_energy``.
    """
    code = material_info(name).code
    args = _checked_inputs(x, tets, dm_inv, volume, mu, lam)
    return _blocks_kernel(code, *args, bool(project), bool(want_hessian))
