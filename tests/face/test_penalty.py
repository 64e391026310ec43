"""The standard-PD penalty baseline (``face.penalty``, 000 Fig. 3): its per-spring math against finite
differences, and on the small face's press_roll sequence: the springs leave intersecting frames where IPC leaves
none, and fewer than no collision handling at all."""
import numpy as np
import pytest

from ipcsim.face import penalty as fp
from _face_check import proxy_intersects


def _tri(seed, degenerate=None):
    rng = np.random.default_rng(seed)
    a, b, c = rng.normal(size=(3, 3))
    q = (a + b + c) / 3 + 0.3 * rng.normal(size=3)
    if degenerate == "on_plane":  # the point in the triangle's plane (d = 0)
        q = 0.2 * a + 0.5 * b + 0.3 * c
    elif degenerate == "at_corner":  # straight above a corner (the projection on the triangle's boundary)
        n = np.cross(b - a, c - a)
        q = a + 1e-3 * n / np.linalg.norm(n)
    elif degenerate == "sliver":  # a nearly flat (needle) triangle
        c = a + (b - a) * 0.5 + 1e-3 * rng.normal(size=3)
    return q, a, b, c


def _d(x):
    return fp.signed_distance(x[None, 0], x[None, 1], x[None, 2], x[None, 3])[0]


@pytest.mark.parametrize("case", [None, "on_plane", "at_corner", "sliver"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_signed_distance_gradient_matches_finite_differences(seed, case):
    x = np.array(_tri(seed, case))
    g = fp.signed_distance_gradient(*(x[None, j] for j in range(4)))[0]
    h = 1e-6
    fd = np.zeros((4, 3))
    for i in range(4):
        for j in range(3):
            e = np.zeros((4, 3))
            e[i, j] = h
            fd[i, j] = (_d(x + e) - _d(x - e)) / (2 * h)
    # central differences, h = 1e-6: measured error <= 3e-9 (the sliver: its 1/|N| ~ 1e3 amplifies round-off)
    assert np.abs(g - fd).max() < 1e-6 * max(1.0, np.abs(g).max())
    assert abs(g.sum(axis=0)).max() < 1e-12 * max(1.0, np.abs(g).max())  # translation invariance


def test_gauss_newton_hessian_is_exact_in_the_point_and_psd():
    """d is linear in the point q, so the spring's Hessian block in q is exactly k n n^T (finite differences of
    the gradient); the whole 12 x 12 Gauss-Newton block k g g^T is positive semi-definite."""
    faces = np.array([[0, 1, 2]])
    x = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0.2, 0.3, 0.0005]], float)

    class Mesh:  # the least PenaltySprings needs of a CollisionMesh
        pass

    mesh = Mesh()
    mesh.faces, mesh.n_vertices = faces, 4
    springs = fp.PenaltySprings.__new__(fp.PenaltySprings)
    springs.mesh, springs.faces, springs.p, springs.k, springs.margin, springs.depth = mesh, faces, 4, 7.0, 1e-3, 1e-2
    corners = np.array([[3, 0, 1, 2]])

    def grad_at(y):
        d = fp.signed_distance(y[[3]], y[[0]], y[[1]], y[[2]])
        g = fp.signed_distance_gradient(y[[3]], y[[0]], y[[1]], y[[2]])
        s = fp.Springs(np.array([3]), np.array([0]), corners, d, g, 0.0)
        return springs.gradient(s), s

    g0, s0 = grad_at(x)
    hess = springs.hessian(s0).toarray()
    h = 1e-7
    for j in range(3):
        e = np.zeros_like(x)
        e[3, j] = h
        col = (grad_at(x + e)[0] - grad_at(x - e)[0]).ravel() / (2 * h)
        # measured: 1e-9 relative (the gradient is linear in q)
        assert np.allclose(hess[9:12, 9 + j], col[9:12], rtol=1e-6, atol=1e-6)
    w = np.linalg.eigvalsh(hess)
    assert w.min() > -1e-10 * w.max()
    # the energy's gradient: d/dq of k/2 (margin - d)^2 by finite differences of the energy
    e_of = lambda y: fp.spring_energy(fp.signed_distance(y[[3]], y[[0]], y[[1]], y[[2]]), 7.0, 1e-3).sum()
    for i, j in [(3, 2), (0, 1), (2, 2)]:
        e = np.zeros_like(x)
        e[i, j] = 1e-7
        assert np.isclose(g0[i, j], (e_of(x + e) - e_of(x - e)) / 2e-7, rtol=1e-5, atol=1e-9)


def test_detection_keeps_close_pairs_and_skips_neighbours():
    """Two parallel squares 0.5 mm apart, one above the other: springs between them (margin 1 mm), none inside a
    square (its own neighbours), none beyond the margin."""
    from ipcsim.geometry.collision_mesh import CollisionMesh

    sq = np.array([[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0]], float) * 0.01
    tris = np.array([[0, 1, 2], [0, 2, 3]])
    top = sq + [0.001, 0.001, 0.0005]
    v = np.r_[sq, top]
    f = np.r_[tris, tris[:, ::-1] + 4]  # the top square faces down, toward the bottom one
    mesh = CollisionMesh.from_triangle_mesh(v, f)
    springs = fp.PenaltySprings(mesh, k=1.0, margin=1e-3, depth=1e-3, exclude_rings=2)
    s = springs.detect(v)
    assert len(s) > 0
    assert np.all(s.d > 0) and np.all(s.d < 1e-3)
    assert np.all((s.point < 4) != (s.tri < 2))  # always a point of one square and a triangle of the other
    far = springs.detect(np.r_[sq, sq + [0.001, 0.001, 0.003]])
    assert len(far) == 0


# --------------------------------------------------------------------------------------------- on the face


@pytest.fixture(scope="module")
def face(small_face):
    return small_face


def test_penalty_baseline_leaves_intersections_where_ipc_does_not(face):
    """press_roll, frames 17-18 (the lower lip rolled in and pressed, the upper starting to roll), every
    configuration from IPC's equilibrium of frame 16. Measured: IPC 0 intersecting frames; the springs 2 of 2 (4
    edge-triangle crossings in each: the springs act between vertices and triangles only, so an edge can pass
    through an edge; no CCD stops it) against 67 crossings per frame without collision handling.
    Fails if the baseline were IPC (no intersections) or had its springs off (as many crossings as without)."""
    from ipcsim.contact.intersection import find_intersections
    from ipcsim.face.expressions import expressions
    from ipcsim.face.solver import FaceContact, FacePDSolver

    w = expressions("press_roll", face.names)
    ipc = FacePDSolver(face, "woodbury")
    ipc.run(w[:17])
    x16 = ipc.x.copy()
    penalty = fp.PenaltyFacePDSolver(face, "woodbury")
    free = FacePDSolver(face, "direct", FaceContact(enabled=False))
    runs = {}
    for name, solver in (("ipc", ipc), ("penalty", penalty), ("free", free)):
        solver.start_from(x16)
        runs[name] = solver.run(w[17:19])
    assert not any(proxy_intersects(face, x) for x in runs["ipc"][0])
    assert any(proxy_intersects(face, x) for x in runs["penalty"][0])
    assert max(s.n_contacts for s in runs["penalty"][1]) > 0  # the springs were active
    crossings = {k: sum(len(find_intersections(penalty.mesh, face.proxy_map.apply(x))) for x in v[0])
                 for k, v in runs.items()}
    assert crossings["penalty"] < crossings["free"] / 4
