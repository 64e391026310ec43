"""The linear-corotated tet Hessian from four rank-one terms (``tet_blocks.tet_hessian_lcr_into``) equals the
nine-mode eigensystem Hessian (``tet_hessian_from_eigensystem_into``) and B^T D B with the projected dP/dF of
``isotropic.dpdf_projected_from_invariants``, on rest, stretched, inverted and degenerate tets (repeated singular
values, a pair of opposite singular values, a flat tet), and ``material_response_into`` picks it only for LCR
with mu > 0 and lam >= 0."""

import numpy as np
import pytest
from numba import njit

from ipcsim.energies.isotropic import dpdf_projected_from_invariants, sigma_hessian
from ipcsim.energies.kinematics import dfdx
from ipcsim.energies.mat3 import svd3_rv
from ipcsim.energies.materials import (LCR, NH, STIFFNESS_EIGEN, STIFFNESS_LCR, material_response_into,
                                       material_scratch)
from ipcsim.energies.tet_blocks import (HW_H, HW_STRIDE, hessian_workspace, shape_gradients_into,
                                        tet_hessian_from_eigensystem_into, tet_hessian_lcr_into)

MU, LAM, VOLUME = 3.4e4, 1.6e5, 2.5e-7


@njit(cache=False)
def _hessians(code, f, dm_inv, volume, mu, lam):
    """(kind, H from four terms, H from nine modes, H = V B^T D B) (12, 12) for one tet at F."""
    u, s, v = svd3_rv(f)
    p, dpdf = np.empty((3, 3)), np.empty((9, 9))
    dpsi, d2psi, ap = np.empty(3), np.empty((3, 3)), np.empty((3, 3))
    kind = material_response_into(code, f, u, s, v, mu, lam, p, dpdf, dpsi, d2psi, ap, material_scratch())
    g = np.empty((4, 3))
    shape_gradients_into(dm_inv, 0, g)
    fast, nine = hessian_workspace(), hessian_workspace()
    tet_hessian_lcr_into(u, s, v, dpsi, mu, lam, g, volume, fast)
    out = np.empty((3, 12, 12))
    if kind == STIFFNESS_LCR:  # the nine-mode form needs A+ (= A here), which material_response_into skips for LCR
        ap[:] = sigma_hessian(s, dpsi, d2psi)
    tet_hessian_from_eigensystem_into(u, s, v, dpsi, ap, g, volume, nine)
    for r in range(12):
        for c in range(12):
            out[0, r, c] = fast[HW_H + HW_STRIDE * r + c]
            out[1, r, c] = nine[HW_H + HW_STRIDE * r + c]
    b = dfdx(dm_inv[0])
    out[2] = volume * (b.T @ dpdf_projected_from_invariants(u, s, v, dpsi, d2psi) @ b)
    return kind, out


def _rotation(rng):
    q, _ = np.linalg.qr(rng.standard_normal((3, 3)))
    return q if np.linalg.det(q) > 0 else -q


def _deformations(rng):
    """Named deformation gradients F (3, 3)."""
    r1, r2 = _rotation(rng), _rotation(rng)
    return {
        "rest": np.eye(3),
        "rotated": r1,
        "stretched": r1 @ np.diag([1.8, 1.3, 0.9]) @ r2.T,
        "compressed": r1 @ np.diag([0.4, 0.3, 0.7]) @ r2.T,
        "inverted": r1 @ np.diag([1.1, 0.8, -0.5]) @ r2.T,
        "opposite pair": r1 @ np.diag([0.6, 0.6, -0.6]) @ r2.T,   # sigma_1 + sigma_2 = 0 for one pair
        "repeated": r1 @ np.diag([0.9, 0.9, 0.9]) @ r2.T,
        "flat": r1 @ np.diag([1.0, 0.7, 0.0]) @ r2.T,
        "random": np.eye(3) + 0.8 * rng.standard_normal((3, 3)),
    }


@pytest.mark.parametrize("lam", [LAM, 0.0])
@pytest.mark.parametrize("state", list(_deformations(np.random.default_rng(0))))
def test_four_term_hessian_equals_the_nine_mode_and_the_dense_forms(state, lam):
    rng = np.random.default_rng(7)
    f = np.ascontiguousarray(_deformations(rng)[state])
    dm_inv = np.ascontiguousarray(np.linalg.inv(np.array([[1.0, 0.2, 0.1], [0.0, 0.9, 0.3], [0.1, 0.0, 1.1]]) * 0.05))
    kind, (fast, nine, dense) = _hessians(LCR, f, dm_inv[None], VOLUME, MU, lam)
    assert kind == STIFFNESS_LCR
    scale = np.abs(dense).max()  # measured: differences and negative eigenvalues up to 9.4e-16 x scale
    assert np.abs(fast - nine).max() <= 5e-14 * scale
    assert np.abs(fast - dense).max() <= 5e-14 * scale
    assert np.array_equal(fast, fast.T)                           # exactly symmetric
    assert np.linalg.eigvalsh(fast).min() >= -5e-14 * scale        # PSD to round-off


def test_only_lcr_with_positive_mu_and_nonnegative_lam_takes_the_four_term_form():
    f, dm_inv = np.diag([1.1, 0.9, 1.0]), np.eye(3)[None] * 20.0
    assert _hessians(LCR, f, dm_inv, VOLUME, MU, LAM)[0] == STIFFNESS_LCR
    assert _hessians(LCR, f, dm_inv, VOLUME, MU, -0.5 * MU)[0] == STIFFNESS_EIGEN  # nu < 0: A+ is computed
    assert _hessians(NH, f, dm_inv, VOLUME, MU, LAM)[0] == STIFFNESS_EIGEN
