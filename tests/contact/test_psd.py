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


# ------------------------------------------------------------------ exact normal/tangent projection
from ipcsim.contact import barrier_potential as _bp  # noqa: E402
from ipcsim.contact.barrier_stencils import FORM_BARRIER, FORM_GENERAL, FORM_PARALLEL, local_hessian  # noqa: E402
from ipcsim.contact.collisions_data import EE, FV  # noqa: E402
from ipcsim.contact.distance.types import EA_EB  # noqa: E402

_NO_PLANES = (np.zeros((0, 3)), np.zeros((0, 3)))


def _stencil_hessian(kind, x, dtype, dhat2, sw, eps_x):
    """(h (12, 12), c1, c2, form) from ``local_hessian`` for the 4-vertex stencil x (4, 3)."""
    h, g = np.empty((12, 12)), np.empty(12)
    v = np.arange(4, dtype=np.int64)
    active, c1, c2, form = local_hessian(kind, v, 0, dtype, eps_x, np.ascontiguousarray(x), *_NO_PLANES,
                                         dhat2, sw, h, g)
    assert active
    return h, c1, c2, form


def _analytic(kind, x, dtype, h, c1, c2, form):
    got = h.copy()
    _bp._project_local(kind, np.arange(4, dtype=np.int64), dtype, np.ascontiguousarray(x), got, c1, c2, form,
                       psd.PROJECT_ANALYTIC, psd.make_workspace())
    return got


def _d2(kind, x):
    """Squared point-plane / line-line distance of x (4, 3) with numpy (independent of the kernels)."""
    if kind == FV:
        n = np.cross(x[2] - x[1], x[3] - x[1])
        return np.dot(x[0] - x[1], n) ** 2 / np.dot(n, n)
    n = np.cross(x[1] - x[0], x[3] - x[2])
    return np.dot(x[2] - x[0], n) ** 2 / np.dot(n, n)


def _configs(kind, rng):
    """Random and degenerate point-triangle (point over the face) / skew edge-edge configurations."""
    out = []
    for _ in range(40):
        out.append(rng.standard_normal((4, 3)))
    t = np.array([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])
    if kind == FV:
        out += [np.vstack([[0.3, 0.3, 1e-6], t]),            # nearly on the plane
                np.vstack([[0.0, 0.0, 0.2], t]),             # above a triangle vertex
                np.vstack([[0.5, 0.0, 0.2], t]),             # above a triangle edge
                np.vstack([[0.5, 0.5, 0.1], t]),             # above the hypotenuse
                np.vstack([[0.3, 1e-3, 0.05], [[0, 0, 0], [1, 0, 0], [0.5, 2e-3, 0]]]),  # thin triangle
                np.vstack([[3.0, -2.0, 0.3], t])]            # projection far outside the triangle
    else:
        s = np.sqrt(2e-3)  # sin^2(angle) = 2e-3: just above the mollifier threshold 1e-3
        out += [np.array([[0, 0, 0], [1, 0, 0], [0.5, -0.5, 1e-6], [0.5, 0.5, 1e-6]]),  # crossing, nearly touching
                np.array([[0, 0, 0], [1, 0, 0], [0, -0.5, 0.1], [0, 0.5, 0.1]]),        # crossing at an end point
                np.array([[0, 0, 0], [1, 0, 0], [0.2, 0, 0.05], [1.2, s, 0.05]]),       # nearly parallel
                np.array([[0, 0, 0], [1, 0, 0], [3, -1, 0.2], [3, 1, 0.2]])]             # lines cross far outside
    return [np.asarray(c, dtype=np.float64) for c in out]


@pytest.mark.parametrize("kind", [FV, EE])
def test_normal_tangent_projection_equals_eigenvalue_clamp(rng, kind):
    dtype = EA_EB if kind == EE else -1
    n_checked = 0
    for x in _configs(kind, rng):
        d2 = _d2(kind, x)
        eps_x = 1e-3 * np.dot(x[1] - x[0], x[1] - x[0]) * np.dot(x[3] - x[2], x[3] - x[2])
        if kind == EE and np.dot(np.cross(x[1] - x[0], x[3] - x[2]), np.cross(x[1] - x[0], x[3] - x[2])) < eps_x:
            continue  # mollified: not this path
        for ratio in (1.0 + 1e-6, 1.5, 1e3, 1e8):  # dhat2 / d2: barely active .. deep inside
            for sw in (1.0, -0.7):  # negative weights (improved max approximator) flip both signs
                h, c1, c2, form = _stencil_hessian(kind, x, dtype, ratio * d2, sw, eps_x)
                assert form == FORM_BARRIER
                ref = _ref_project(0.5 * (h + h.T), "clamp")
                got = _analytic(kind, x, dtype, h, c1, c2, form)
                scale = np.abs(h).max()
                assert np.abs(got - ref).max() <= 1e-10 * scale, (x, ratio, sw)
                assert np.linalg.eigvalsh(got).min() >= -1e-12 * scale
                n_checked += 1
    assert n_checked >= 150


@pytest.mark.parametrize("kind,ia,ib", [(FV, 2, 3), (EE, 1, 3)])
def test_normal_tangent_subspace_contains_the_range(rng, kind, ia, ib):
    """The derivation's claim checked directly: h = W (W^T h W) W^T with W orthonormal, <= 5 columns."""
    dtype = EA_EB if kind == EE else -1
    for x in _configs(kind, rng)[:20]:
        h, c1, c2, _ = _stencil_hessian(kind, x, dtype, 3.0 * _d2(kind, x), 1.0, 0.0)
        n = np.cross(x[2] - x[1], x[3] - x[1]) if kind == FV else np.cross(x[1] - x[0], x[3] - x[2])
        n /= np.linalg.norm(n)
        ws = psd.make_workspace()
        got = h.copy()
        psd.project_normal_tangent(got, (n[0], n[1], n[2]), ia, ib, psd.PROJECT_NONE, ws)
        assert np.array_equal(got, h)  # 'none' is a no-op
        psd.project_normal_tangent(got, (n[0], n[1], n[2]), ia, ib, psd.PROJECT_CLAMP, ws)
        w = ws[5][:, :5]
        assert np.abs(w.T @ w - np.eye(5)).max() < 1e-12
        assert np.abs(w @ (w.T @ h @ w) @ w.T - h).max() <= 1e-12 * np.abs(h).max()
        # the tangent-tangent block of h vanishes (s is constant under tangential motions)
        t = np.kron(np.eye(4), np.eye(3) - np.outer(n, n))
        assert np.abs(t @ h @ t).max() <= 1e-12 * np.abs(h).max()


@pytest.mark.parametrize("sw", [1.0, -2.0])
def test_exactly_parallel_mollified_edges(sw):
    x = np.array([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.25, 0.0, 0.05], [1.5, 0.0, 0.05]])
    for dtype in (4, 5, 6, 7):  # point-line types (line-line is undefined for parallel lines)
        h, c1, c2, form = _stencil_hessian(EE, x, dtype, 0.01, sw, 1e-3)
        assert form == FORM_PARALLEL and (c1 > 0) == (sw > 0) and c2 == 0.0
        assert np.linalg.matrix_rank(h, tol=1e-12 * np.abs(h).max()) <= 4
        got = _analytic(EE, x, dtype, h, c1, c2, form)
        ref = _ref_project(0.5 * (h + h.T), "clamp")
        assert np.abs(got - ref).max() <= 1e-12 * np.abs(h).max()
    # slightly rotated: mollified but not parallel -> the general path
    x[3, 1] = 1e-3
    _, _, _, form = _stencil_hessian(EE, x, 4, 0.01, sw, 1e-3)
    assert form == FORM_GENERAL



def test_round_off_non_parallel_mollified_edges_take_the_psd_exit():
    """Aligned grid sheets (the two-sheet benchmark's geometry): their diagonal edges are parallel up to
    round-off in the grid coordinates, so |ea x eb|^2 is tiny but not zero and the stencil Hessian is
    b m' Hess|ea x eb|^2 plus far smaller terms: PSD up to round-off. ``is_psd_within`` must accept all
    of them (else each costs a 9x9 eigen-decomposition), and accepting them is within the documented
    bound of the eigenvalue clamp."""
    from ipcsim.contact.broad_phase import build_candidates
    from ipcsim.contact.collisions import build_collisions

    from _sheets import sheets_mesh

    dhat = 1e-3
    mesh, x = sheets_mesh(100, 0.5 * dhat)
    col = build_collisions(mesh, x, dhat, candidates=build_candidates(mesh, x, None, 0.5 * dhat))
    st, geo, sc = _bp._inputs(col, mesh, x, 1.0, False)
    kind, verts, prims, dtype, eps_x, weight = st
    h, g = np.empty((12, 12)), np.empty(12)
    ws = psd.make_workspace()
    n_general = n_strict = 0
    for c in np.flatnonzero(kind == EE)[:20000]:
        active, c1, c2, form = local_hessian(kind[c], verts[c].copy(), prims[c, 0], dtype[c], eps_x[c], *geo,
                                             sc[0], sc[1] * weight[c], h, g)
        if not (active and form == FORM_GENERAL):
            continue
        n_general += 1
        n_strict += psd.is_psd_within(h, 12, 1e-14, ws[1], ws[3])
        assert psd.is_psd_within(h, 12, psd.PSD_REL_TOL, ws[1], ws[3]), c
        w = np.linalg.eigvalsh(0.5 * (h + h.T))
        assert -w.min() <= 12 * psd.PSD_REL_TOL * np.diag(h).max()
        assert -w.min() <= 1e-14 * np.abs(w).max()  # a round-off-level negative part
    assert n_general > 1000
    assert n_strict < n_general  # what a tolerance of 1e-14 (45 eps) got wrong: 1,151 of 3,342 rejected
