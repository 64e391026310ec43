"""The hand-written 3x3 routines of energies/mat3.py against NumPy/LAPACK, including the hard cases: repeated,
zero and tiny singular values, inverted (det F < 0), rotation-only and badly scaled matrices."""
import numpy as np
import pytest

from ipcsim.energies.mat3 import det3, frob2, mul3, mul3_abt, svd3_rv, sym_eig3
from ipcsim.energies.neohookean import _det_combo, _first_root_in_unit, max_step_without_inversion

TOL = 1e-12


def _rotation(rng):
    q, r = np.linalg.qr(rng.standard_normal((3, 3)))
    q = q * np.sign(np.diag(r))
    if np.linalg.det(q) < 0:
        q[:, 0] = -q[:, 0]
    return q


def _hard_matrices(rng):
    """Random, structured and degenerate 3x3 matrices (list of (3, 3))."""
    out = [rng.standard_normal((3, 3)) for _ in range(300)]
    out += [np.eye(3) + 0.05 * rng.standard_normal((3, 3)) for _ in range(100)]
    choices = [0.0, 1e-300, 1e-200, 1e-14, 1e-8, 1.0, 1.0 + 1e-9, 2.0, -1.0, -1e-10, 1e10]
    for _ in range(400):
        s = rng.choice(choices, 3)
        out.append(_rotation(rng) @ np.diag(s) @ _rotation(rng).T)
    out += [_rotation(rng) for _ in range(20)]                      # rotations only
    out += [-_rotation(rng) for _ in range(20)]                     # reflections (det = -1)
    out += [np.zeros((3, 3)), np.eye(3), -np.eye(3), np.diag([1.0, 1.0, -1.0]), np.diag([0.0, 0.0, 3.0]),
            np.outer([1.0, 2.0, 3.0], [4.0, 5.0, 6.0]), 1e150 * rng.standard_normal((3, 3)),
            1e-150 * rng.standard_normal((3, 3))]
    return out


def test_svd_rv_matches_lapack_and_is_rotation_variant():
    rng = np.random.default_rng(0)
    for f in _hard_matrices(rng):
        u, s, v = svd3_rv(f)
        scale = np.abs(f).max() + 1e-300
        ref = np.linalg.svd(f)[1]
        assert np.abs(np.abs(s) - ref).max() <= TOL * scale, f
        assert np.abs(u @ np.diag(s) @ v.T - f).max() <= TOL * scale, f
        for q in (u, v):
            assert np.abs(q.T @ q - np.eye(3)).max() <= TOL
            assert abs(np.linalg.det(q) - 1.0) <= TOL
        assert s[0] >= s[1] - TOL * scale and s[1] >= abs(s[2]) - TOL * scale
        assert s[0] >= 0 and s[1] >= 0
        det = np.linalg.det(f / scale)
        if abs(det) > 1e-6:                                         # sign of sigma_2 = sign of det F
            assert np.sign(s[2]) == np.sign(det)


def test_svd_rv_of_rotation_is_identity_scaling():
    rng = np.random.default_rng(1)
    for _ in range(20):
        r = _rotation(rng)
        u, s, v = svd3_rv(r)
        assert np.abs(s - 1.0).max() <= TOL
        assert np.abs(u @ v.T - r).max() <= TOL
        u, s, v = svd3_rv(-r)                                       # a reflection: R = U V^T stays a rotation
        assert np.abs(s - [1.0, 1.0, -1.0]).max() <= TOL
        assert np.linalg.det(u @ v.T) == pytest.approx(1.0, abs=TOL)


def test_sym_eig3_matches_lapack():
    rng = np.random.default_rng(2)
    mats = []
    for _ in range(300):
        a = rng.standard_normal((3, 3))
        mats.append(a + a.T)
    for _ in range(200):
        q = _rotation(rng)
        mats.append(q @ np.diag(rng.choice([0.0, 1.0, 1.0, -1e-12, 5.0, 1e8], 3)) @ q.T)
    mats += [np.zeros((3, 3)), np.eye(3), np.diag([3.0, -1.0, 2.0]), np.ones((3, 3))]
    for a in mats:
        w, q = sym_eig3(a)
        scale = np.abs(a).max() + 1e-300
        assert np.all(np.diff(w) >= 0)
        assert np.abs(w - np.linalg.eigvalsh(a)).max() <= TOL * scale
        assert np.abs(q @ np.diag(w) @ q.T - a).max() <= TOL * scale
        assert np.abs(q.T @ q - np.eye(3)).max() <= TOL


def test_small_helpers_match_numpy():
    rng = np.random.default_rng(3)
    for _ in range(50):
        a, b = rng.standard_normal((3, 3)), rng.standard_normal((3, 3))
        t = float(rng.standard_normal())
        assert det3(a) == pytest.approx(np.linalg.det(a), rel=1e-12, abs=1e-14)
        assert _det_combo(a, b, t) == pytest.approx(np.linalg.det(a + t * b), rel=1e-12, abs=1e-13)
        assert frob2(a) == pytest.approx(np.sum(a * a), rel=1e-14)
        assert np.abs(mul3(a, b) - a @ b).max() <= 1e-14 * np.abs(a).max() * np.abs(b).max() * 3
        assert np.abs(mul3_abt(a, b) - a @ b.T).max() <= 1e-14 * np.abs(a).max() * np.abs(b).max() * 3


def _first_root_reference(c3, c2, c1, c0, safety):
    """Dense-sampling reference of _first_root_in_unit: first t in [0, 1] with cubic(t) <= 0.1 c0."""
    t = np.linspace(0.0, 1.0, 200001)
    vals = ((c3 * t + c2) * t + c1) * t + c0
    hit = np.flatnonzero(vals <= 0.1 * c0)
    return 1.0 if hit.size == 0 else safety * t[hit[0]]


def test_first_root_in_unit_matches_dense_sampling():
    rng = np.random.default_rng(4)
    for _ in range(300):
        c3, c2, c1 = rng.standard_normal(3) * rng.choice([0.0, 1.0, 10.0], 3)
        c0 = float(rng.uniform(0.1, 2.0))
        got = _first_root_in_unit(c3, c2, c1, c0, 0.9)
        ref = _first_root_reference(c3, c2, c1, c0, 0.9)
        assert got == pytest.approx(ref, abs=2e-5)


def test_max_step_without_inversion_keeps_volumes_positive():
    rng = np.random.default_rng(5)
    x = rng.standard_normal((40, 3))
    tets = np.array([rng.choice(40, 4, replace=False) for _ in range(60)])
    p0, p1, p2, p3 = (x[tets[:, k]] for k in range(4))
    neg = np.einsum("ij,ij->i", np.cross(p1 - p0, p2 - p0), p3 - p0) < 0
    tets[neg] = tets[neg][:, [0, 2, 1, 3]]
    p = 2.0 * rng.standard_normal((40, 3))
    alpha = max_step_without_inversion(x, p, tets, 0.9)
    assert 0.0 < alpha < 1.0                                         # this large step would invert some tet
    for a in np.linspace(0.0, alpha, 30):
        y = x + a * p
        q0, q1, q2, q3 = (y[tets[:, k]] for k in range(4))
        assert np.all(np.einsum("ij,ij->i", np.cross(q1 - q0, q2 - q0), q3 - q0) > 0)
