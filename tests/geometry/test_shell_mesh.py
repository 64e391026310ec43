"""The shell construction of geometry.shell_mesh and the actuation targets of geometry.shape_targets, on a
synthetic patch: a spherical cap with a thin slit (two "lips" 0.5 mm apart at the middle, joined at the corners)."""
import numpy as np
import pytest

from ipcsim.contact.intersection import find_intersections
from ipcsim.geometry.collision_mesh import CollisionMesh
from ipcsim.geometry.shell_mesh import (annulus_grid, annulus_map, boundary_loops, extrude_shell, prism_tets,
                                       smooth_unit, tilt_towards_normals, vertex_normals)
from ipcsim.geometry.shape_targets import HarmonicExtension, actuation_targets, symmetric_factor
from ipcsim.geometry.surface import boundary_faces, tet_signed_volumes


def slit_cap(n_theta=64, n_rings=14, half=0.02, gap=0.0005, outer=0.05, radius=0.08):
    """A spherical cap patch (metres, normals towards +z) around a slit hole: polar rings around the ellipse
    x = half cos t, y = gap/2 sin t (ring 0), out to a circle of radius outer."""
    t = np.linspace(0, 2 * np.pi, n_theta, endpoint=False)
    s = np.linspace(0, 1, n_rings)[:, None]
    x = (1 - s) * half * np.cos(t) + s * outer * np.cos(t)
    y = (1 - s) * 0.5 * gap * np.sin(t) + s * outer * np.sin(t)
    z = np.sqrt(radius**2 - x**2 - y**2)
    v = np.c_[x.ravel(), y.ravel(), z.ravel()]
    tris = []
    for r in range(n_rings - 1):
        for j in range(n_theta):
            a, b = r * n_theta + j, r * n_theta + (j + 1) % n_theta
            tris += [(a, b, b + n_theta), (a, b + n_theta, a + n_theta)]
    return v, np.asarray(tris, np.int64)


@pytest.fixture(scope="module")
def shell():
    v, t = slit_cap()
    loops = boundary_loops(t)
    outline, hole = loops[0], loops[1]
    if np.linalg.norm(v[outline, :2], axis=1).mean() < np.linalg.norm(v[hole, :2], axis=1).mean():
        outline, hole = hole, outline
    uv, radius = annulus_map(v, t, hole, outline, view=(0, 0, 1))
    grid = annulus_grid(v, t, uv, hole, 1.0, 8, outer_radius=radius)
    d = grid.lift(t, smooth_unit(vertex_normals(v, t), t, 20))
    d = tilt_towards_normals(d / np.linalg.norm(d, axis=1, keepdims=True), grid.triangles, grid.vertices, 0.3)
    thick = np.full(len(grid.vertices), 0.006)
    x, tets, report, _ = extrude_shell(grid.vertices, grid.triangles, d, thick, 3)
    return dict(v=v, t=t, hole=hole, grid=grid, x=x, tets=tets, report=report, d=d, thick=thick)


def test_ring0_is_the_hole(shell):
    """Ring 0 of the remesh lies on the fine hole's vertices (column_factor 1): the slit is kept exactly."""
    g = shell["grid"]
    ring0 = g.vertices[g.ring == 0]
    hole = shell["v"][shell["hole"]]
    d = np.linalg.norm(ring0[:, None] - hole[None], axis=2).min(axis=1)
    assert d.max() < 1e-12


def test_extruded_shell_valid(shell):
    """No inverted tet, closed edge-manifold boundary, boundary free of self-intersections."""
    rep = shell["report"]
    assert rep.n_inverted == 0 and rep.min_volume > 0
    assert rep.closed
    cm = CollisionMesh.from_tet_mesh(shell["x"], shell["tets"])
    assert len(find_intersections(cm, cm.select_positions(shell["x"]))) == 0


def test_prism_orientation_fix_matters(shell):
    """Feature off: the raw global-index cut (no orientation fix) leaves negatively oriented tets."""
    g = shell["grid"]
    raw = prism_tets(g.triangles, len(g.vertices), 3)
    assert np.count_nonzero(tet_signed_volumes(shell["x"], raw) < 0) > 0
    assert np.all(np.sort(raw, axis=1) == np.sort(shell["tets"], axis=1))


def test_lips_are_separate_flaps(shell):
    """No tet joins the two sides of the slit away from its corners (the upper and lower lip)."""
    g, n_s = shell["grid"], len(shell["grid"].vertices)
    ang = np.arctan2(g.uv[:, 1], g.uv[:, 0])
    ring0 = g.ring == 0
    away = np.abs(np.sin(ang)) > 0.3
    upper = np.flatnonzero(ring0 & away & (ang > 0))
    lower = np.flatnonzero(ring0 & away & (ang < 0))
    layers = np.arange(4)[:, None] * n_s
    up, lo = (upper + layers).ravel(), (lower + layers).ravel()
    both = np.isin(shell["tets"], up).any(axis=1) & np.isin(shell["tets"], lo).any(axis=1)
    assert len(upper) > 10 and len(lower) > 10
    assert not both.any()


def test_harmonic_extension_translation_exact(shell):
    """A translation of the outer and inner layers extends exactly (constants are harmonic): A = I."""
    x, tets, n_s = shell["x"], shell["tets"], len(shell["grid"].vertices)
    ext = HarmonicExtension(x, tets, np.r_[np.arange(n_s), np.arange(3 * n_s, 4 * n_s)])
    u = ext(np.tile([0.01, -0.02, 0.005], (len(ext.fixed), 1)))
    assert np.abs(u - [0.01, -0.02, 0.005]).max() < 1e-14
    A, n_inv = actuation_targets(x, tets, u)
    assert n_inv == 0 and np.abs(A - np.eye(3)).max() < 1e-9


def test_harmonic_extension_affine_exact_with_whole_boundary(shell):
    """With Dirichlet data on the whole boundary, an affine map extends exactly (P1 reproduces linear fields):
    a rotation gives A = I, a stretch gives A = the stretch; with only the outer layer given it does not."""
    x, tets = shell["x"], shell["tets"]
    ext = HarmonicExtension(x, tets, np.unique(boundary_faces(x, tets)))
    c, s = np.cos(0.4), np.sin(0.4)
    rot = np.array([[c, -s, 0], [s, c, 0], [0, 0, 1.0]])
    for lin, expect in ((rot, np.eye(3)), (np.diag([1.1, 0.9, 1.3]), np.diag([1.1, 0.9, 1.3]))):
        u = ext(x[ext.fixed] @ lin.T - x[ext.fixed])
        A, n_inv = actuation_targets(x, tets, u)
        assert n_inv == 0 and np.abs(A - expect).max() < 1e-8
        assert np.abs(A - A.transpose(0, 2, 1)).max() == 0
    n_s = len(shell["grid"].vertices)
    part = HarmonicExtension(x, tets, np.arange(n_s))
    A, _ = actuation_targets(x, tets, part(x[:n_s] @ rot.T - x[:n_s]))
    assert np.abs(A - np.eye(3)).max() > 1e-3


def test_neutral_targets_identity_and_deformed_not(shell):
    """Zero displacement gives A = I exactly; a non-affine bump on the outer layer does not."""
    x, tets, n_s = shell["x"], shell["tets"], len(shell["grid"].vertices)
    ext = HarmonicExtension(x, tets, np.arange(n_s))
    A0, _ = actuation_targets(x, tets, ext(np.zeros((n_s, 3))))
    assert np.abs(A0 - np.eye(3)).max() < 1e-12
    bump = np.zeros((n_s, 3))
    bump[:, 2] = 0.003 * np.exp(-np.sum(x[:n_s, :2] ** 2, axis=1) / 0.02**2)
    A1, _ = actuation_targets(x, tets, ext(bump))
    assert np.abs(A1 - np.eye(3)).max() > 1e-2


def test_symmetric_factor(rng):
    F = np.eye(3) + 0.3 * rng.standard_normal((50, 3, 3))
    F[:5] *= -1.0  # some inverted
    S, det = symmetric_factor(F)
    R = F @ np.linalg.inv(S)
    assert np.abs(S - S.transpose(0, 2, 1)).max() < 1e-12
    assert np.abs(R @ R.transpose(0, 2, 1) - np.eye(3)).max() < 1e-8
    assert np.all(np.linalg.det(R) > 0)
    assert np.all((np.linalg.eigvalsh(S).min(axis=1) > 0) == (det > 0))
    rest = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1.0]])
    flat = rest * np.array([1.0, 1.0, -0.5]) - rest  # inverts the tet along z
    A, n_inv = actuation_targets(rest, np.array([[0, 1, 2, 3]]), flat)
    assert n_inv == 1 and np.linalg.eigvalsh(A[0]).min() < 0
    A, n_inv = actuation_targets(rest, np.array([[0, 1, 2, 3]]), flat, min_stretch=0.2)
    assert n_inv == 1 and np.linalg.eigvalsh(A[0]).min() >= 0.2 - 1e-12
