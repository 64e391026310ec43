import numpy as np
import pytest

from ipcsim.contact import psd


def _ref_project(a, method):
    w, v = np.linalg.eigh(a)
    w = np.maximum(w, 0.0) if method == "clamp" else np.abs(w)
    return (v * w) @ v.T


@pytest.mark.parametrize("n", [1, 2, 3, 6, 9, 12])
def test_symmetric_eigen_reconstructs(rng, n):
    for trial in range(30):
        a = rng.standard_normal((n, n))
        a = a + a.T
        if trial % 3 == 1:  # low rank, repeated zero eigenvalues
            u = rng.standard_normal((n, min(2, n)))
            a = u @ np.diag([3.0, -2.0][: u.shape[1]]) @ u.T
        w, z, e = np.empty(12), np.empty((12, 12)), np.empty(12)
        assert psd.symmetric_eigen(a.copy(), n, w, z, e)
        zz = z[:n, :n]
        assert np.abs(zz.T @ zz - np.eye(n)).max() < 1e-12
        assert np.abs((zz * w[:n]) @ zz.T - a).max() < 1e-12 * max(1.0, np.abs(a).max())


@pytest.mark.parametrize("method", ["clamp", "abs"])
@pytest.mark.parametrize("n", [3, 6, 12])
def test_project_to_psd_matches_numpy(rng, n, method):
    for _ in range(20):
        a = rng.standard_normal((n, n))
        a = a + a.T
        got = psd.project_to_psd(a, method)
        assert np.abs(got - _ref_project(a, method)).max() < 1e-12 * max(1.0, np.abs(a).max())
        assert np.linalg.eigvalsh(got).min() >= -1e-12 * np.abs(a).max()


def test_positive_definite_is_left_unchanged(rng):
    a = rng.standard_normal((9, 9))
    a = a @ a.T + np.eye(9)
    assert np.array_equal(psd.project_to_psd(a, "clamp"), 0.5 * (a + a.T))


@pytest.mark.parametrize("k", [2, 3, 4])
def test_translation_reduced_projection_is_exact(rng, k):
    n = 3 * k
    t = np.kron(np.ones((k, 1)), np.eye(3)) / np.sqrt(k)
    p = np.eye(n) - t @ t.T
    ws = psd.make_workspace()
    for _ in range(20):
        a = rng.standard_normal((n, n))
        h = p @ (a + a.T) @ p  # translation invariant: h t = 0
        got = h.copy()
        psd.project_translation_invariant(got, k, psd.PROJECT_CLAMP, ws)
        assert np.abs(got - _ref_project(h, "clamp")).max() < 1e-12 * np.abs(h).max()


def test_bad_input():
    with pytest.raises(ValueError, match="square"):
        psd.project_to_psd(np.zeros((3, 4)))
    with pytest.raises(ValueError, match="project"):
        psd.projection_code("eig")


# ------------------------------------------------------------------ cheap exact exits of 'analytic'
def _psd_test(h):
    n = h.shape[0]
    return psd.is_psd_within(np.ascontiguousarray(h), n, psd.PSD_REL_TOL, np.empty((12, 12)), np.empty(12))


@pytest.mark.parametrize("k", [2, 3, 4])
def test_is_psd_within_accepts_singular_psd(rng, k):
    n = 3 * k
    t = np.kron(np.ones((k, 1)), np.eye(3)) / np.sqrt(k)
    p = np.eye(n) - t @ t.T
    for rank in range(0, n - 2):
        u = rng.standard_normal((n, rank))
        h = p @ (u @ u.T) @ p  # PSD, translation invariant, rank <= n - 3
        assert _psd_test(h), rank
        # accepted => leaving h unchanged equals the eigenvalue clamp up to the documented bound
        w = np.linalg.eigvalsh(h)
        assert -w.min() <= n * psd.PSD_REL_TOL * max(np.diag(h).max(), 1e-300) + 1e-15 * np.abs(h).max()


@pytest.mark.parametrize("n", [3, 9, 12])
def test_is_psd_within_rejects_indefinite(rng, n):
    for trial in range(30):
        q, _ = np.linalg.qr(rng.standard_normal((n, n)))
        w = np.abs(rng.standard_normal(n)) + 0.1
        w[trial % n] = -10.0 ** -(trial % 8)  # one negative eigenvalue, down to 1e-7 relative
        w[(trial + 1) % n] = 0.0 if trial % 2 else w[(trial + 1) % n]
        h = (q * w) @ q.T
        assert not _psd_test(h)
    assert not _psd_test(-np.eye(n))
    assert _psd_test(np.zeros((n, n)))


@pytest.mark.parametrize("method", ["clamp", "abs"])
def test_vertex_vertex_closed_form_equals_eigen_projection(rng, method):
    code = psd.projection_code(method)
    for trial in range(50):
        u = rng.standard_normal(3)
        if trial % 5 == 0:
            u *= 1e-3
        c1, c2 = rng.standard_normal(2) * [10.0, 1.0]  # any signs: negative weights flip both
        a = 4.0 * c1 * np.outer(u, u) + 2.0 * c2 * np.eye(3)
        h = np.block([[a, -a], [-a, a]])
        got = np.empty((6, 6))
        psd.project_vertex_vertex_closed_form(got, c1, c2, (u[0], u[1], u[2]), code)
        ref = _ref_project(h, method)
        assert np.abs(got - ref).max() <= 1e-12 * np.abs(h).max()
        assert np.linalg.eigvalsh(got).min() >= -1e-12 * np.abs(h).max()
