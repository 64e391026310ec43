import dataclasses

import ipctk
import numpy as np
import pytest

from _barrier_scenes import two_sheets
from _ipctk_compare import ipctk_candidates, ipctk_collisions
from ipcsim.contact.barrier_potential import (barrier_potential, barrier_potential_gradient,
                                              barrier_potential_hessian)
from ipcsim.contact.broad_phase import build_candidates
from ipcsim.contact.collisions import build_collisions
from ipcsim.contact.collisions_data import EE, EV, FV, PV, VV
from ipcsim.geometry.collision_mesh import CollisionMesh

ipctk.set_logger_level(ipctk.LoggerLevel.error)


# ------------------------------------------------------------------ small scenes (dhat = 0.1)
def _edges_scene(parallel: bool):
    """Two codimensional edges 0.05 apart; nearly parallel ones are within the mollifier range."""
    tilt = 1e-3 if parallel else 0.7
    v = np.array([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.3, -0.2, 0.05], [0.9, -0.2 + 0.6 * tilt + 0.4, 0.05]])
    if parallel:
        v[2:] = [[0.2, 0.01, 0.05], [1.2, 0.01 + tilt, 0.05]]
    return CollisionMesh.from_edges(v, [[0, 1], [2, 3]])


def _exactly_parallel_edges_scene():
    """Two exactly parallel codimensional edges 0.05 apart: |ea x eb|^2 == 0, so the mollifier and its
    gradient vanish and the stencil's value and gradient are exactly zero (the shortcut in
    ``barrier_stencils.parallel_edges``), its Hessian b m' Hess|ea x eb|^2."""
    v = np.array([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.25, 0.0, 0.05], [1.25, 0.0, 0.05]])
    return CollisionMesh.from_edges(v, [[0, 1], [2, 3]])


def _point_edge_scene(offset):
    """A point near an edge: 'interior' (closest point inside) or 'vertex' (near an endpoint)."""
    p = [0.4, 0.03, 0.04] if offset == "interior" else [1.0 + 1e-9, 0.02, 0.05]
    v = np.array([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], p])
    return CollisionMesh.concatenate([CollisionMesh.from_edges(v[:2], [[0, 1]]), CollisionMesh.from_points(v[2:])])


def _point_triangle_scene(where):
    t = np.array([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])
    p = {"face": [0.3, 0.3, 0.05], "edge": [0.5, -0.02, 0.04], "vertex": [-0.02, -0.03, 0.04],
         "coplanar": [0.5, -0.06, 0.0]}[where]
    return CollisionMesh.concatenate([CollisionMesh.from_triangle_mesh(t, [[0, 1, 2]]),
                                      CollisionMesh.from_points(np.array([p]))])


def _plane_scene():
    v = np.array([[0.1, 0.2, 0.04], [0.5, 0.1, 0.07]])
    return CollisionMesh.concatenate([CollisionMesh.from_points(v),
                                      CollisionMesh.from_plane([0.0, 0.0, 0.0], [0.2, 0.1, 1.0])])


SCENES = {
    "parallel_edges": lambda: _edges_scene(True),
    "crossing_edges": lambda: _edges_scene(False),
    "point_edge_interior": lambda: _point_edge_scene("interior"),
    "point_edge_vertex": lambda: _point_edge_scene("vertex"),
    "point_triangle_face": lambda: _point_triangle_scene("face"),
    "point_triangle_edge": lambda: _point_triangle_scene("edge"),
    "point_triangle_vertex": lambda: _point_triangle_scene("vertex"),
    "point_triangle_coplanar": lambda: _point_triangle_scene("coplanar"),
    "plane_vertex": _plane_scene,
}
DHAT = 0.1


def _scene(name):
    mesh = SCENES[name]()
    x = mesh.rest_positions.copy()
    cands = build_candidates(mesh, x, inflation_radius=0.5 * DHAT)
    col = build_collisions(mesh, x, DHAT, candidates=cands)
    assert len(col) > 0, name
    return mesh, x, col


def test_scenes_cover_all_kinds():
    kinds = set()
    for name in SCENES:
        kinds |= set(_scene(name)[2].kind.tolist())
    assert kinds == {VV, EV, EE, FV, PV}
    _, _, col = _scene("parallel_edges")
    assert col.count(EE) == 1  # mollified: |ea x eb|^2 < eps_x
    assert col.kind[0] == EE


def test_exactly_parallel_edges_shortcut():
    mesh = _exactly_parallel_edges_scene()
    x = mesh.rest_positions.copy()
    col = build_collisions(mesh, x, DHAT, candidates=build_candidates(mesh, x, inflation_radius=0.5 * DHAT))
    assert col.kind.tolist() == [EE] and np.cross(x[1] - x[0], x[3] - x[2]).tolist() == [0.0, 0.0, 0.0]
    kappa = 3.0
    assert barrier_potential(col, mesh, x, kappa) == 0.0
    assert np.all(barrier_potential_gradient(col, mesh, x, kappa) == 0.0)
    h = barrier_potential_hessian(col, mesh, x, kappa).toarray()
    assert np.abs(h).max() > 0.0
    # the Hessian against finite differences of the gradient (general path: |ea x eb|^2 > 0 there)
    eps = 1e-7
    x0 = x.ravel()
    fd_h = np.array([(barrier_potential_gradient(col, mesh, (x0 + eps * e).reshape(-1, 3), kappa)
                      - barrier_potential_gradient(col, mesh, (x0 - eps * e).reshape(-1, 3), kappa)) / (2 * eps)
                     for e in np.eye(len(x0))])
    np.testing.assert_allclose(h, fd_h.T, rtol=1e-4, atol=1e-5 * np.abs(h).max())
    # and against ipctk, projected or not
    c, cm = ipctk_collisions(mesh, x, DHAT)
    b = ipctk.BarrierPotential(DHAT, kappa)
    assert np.all(b.gradient(c, cm, x) == 0.0)
    for ours, theirs in [("none", ipctk.PSDProjectionMethod.NONE), ("analytic", ipctk.PSDProjectionMethod.CLAMP)]:
        h_ref = b.hessian(c, cm, x, theirs).toarray()
        ha = barrier_potential_hessian(col, mesh, x, kappa, project=ours).toarray()
        assert np.abs(ha - h_ref).max() <= 1e-12 * np.abs(h_ref).max(), ours
    # a negative weight (improved max approximator) makes it negative semi-definite: its projection is zero
    neg = dataclasses.replace(col, weight=-col.weight)
    assert np.array_equal(barrier_potential_hessian(neg, mesh, x, kappa).toarray(), -h)
    assert np.all(barrier_potential_hessian(neg, mesh, x, kappa, project="analytic").toarray() == 0.0)
    hc = barrier_potential_hessian(neg, mesh, x, kappa, project="clamp").toarray()
    assert np.abs(hc).max() <= 1e-12 * np.abs(h).max()


@pytest.mark.parametrize("name", list(SCENES))
@pytest.mark.parametrize("physical", [False, True])
def test_gradient_and_hessian_finite_differences(name, physical):
    mesh, x, col = _scene(name)
    kappa = 3.0
    f = lambda y: barrier_potential(col, mesh, y.reshape(-1, 3), kappa, physical)  # noqa: E731
    g = barrier_potential_gradient(col, mesh, x, kappa, physical)
    h = barrier_potential_hessian(col, mesh, x, kappa, physical).toarray()
    x0 = x.ravel()
    eps = 1e-7
    fd_g = np.array([(f(x0 + eps * e) - f(x0 - eps * e)) / (2 * eps) for e in np.eye(len(x0))])
    np.testing.assert_allclose(g, fd_g, rtol=1e-5, atol=1e-6 * np.abs(g).max())
    fd_h = np.array([(barrier_potential_gradient(col, mesh, (x0 + eps * e).reshape(-1, 3), kappa, physical)
                      - barrier_potential_gradient(col, mesh, (x0 - eps * e).reshape(-1, 3), kappa, physical))
                     / (2 * eps) for e in np.eye(len(x0))])
    np.testing.assert_allclose(h, fd_h.T, rtol=1e-4, atol=1e-5 * np.abs(h).max())
    np.testing.assert_allclose(h, h.T, atol=1e-12 * np.abs(h).max())


@pytest.mark.parametrize("name", list(SCENES))
def test_projections_psd_and_analytic_equals_clamp(name):
    mesh, x, col = _scene(name)
    hc = barrier_potential_hessian(col, mesh, x, project="clamp").toarray()
    ha = barrier_potential_hessian(col, mesh, x, project="analytic").toarray()
    hb = barrier_potential_hessian(col, mesh, x, project="abs").toarray()
    scale = np.abs(barrier_potential_hessian(col, mesh, x).toarray()).max()
    for m in (hc, ha, hb):
        assert np.linalg.eigvalsh(m).min() >= -1e-9 * scale
    np.testing.assert_allclose(ha, hc, atol=1e-12 * scale)


@pytest.mark.parametrize("area,improved,physical", [(False, False, False), (True, False, True), (True, True, True),
                                                    (False, True, False)])
def test_sheets_parity_with_ipctk(area, improved, physical):
    n = ipctk.get_num_threads()
    ipctk.set_num_threads(1)
    try:
        dhat = 1e-3
        x, f = two_sheets(10, dhat, jitter=0.2, seed=4)
        mesh = CollisionMesh.from_triangle_mesh(x, f)
        c, cm = ipctk_collisions(mesh, x, dhat, area, improved)
        col = build_collisions(mesh, x, dhat, candidates=ipctk_candidates(mesh, x, dhat),
                               use_area_weighting=area, use_improved_max_approximator=improved)
    finally:
        ipctk.set_num_threads(n)
    b = ipctk.BarrierPotential(dhat, 2.5, physical)
    v = barrier_potential(col, mesh, x, 2.5, physical)
    assert v == pytest.approx(b(c, cm, x), rel=1e-10)
    g_ref = b.gradient(c, cm, x)
    assert np.abs(barrier_potential_gradient(col, mesh, x, 2.5, physical) - g_ref).max() <= 1e-10 * np.abs(g_ref).max()
    for ours, theirs in [("none", ipctk.PSDProjectionMethod.NONE), ("clamp", ipctk.PSDProjectionMethod.CLAMP),
                         ("abs", ipctk.PSDProjectionMethod.ABS), ("analytic", ipctk.PSDProjectionMethod.CLAMP)]:
        h_ref = b.hessian(c, cm, x, theirs)
        h = barrier_potential_hessian(col, mesh, x, 2.5, physical, project=ours)
        assert abs(h - h_ref).max() <= 1e-10 * abs(h_ref).max(), ours
        assert h.has_canonical_format


def test_bunny_parity_with_ipctk(shared_data):
    from ipcsim.geometry.mesh_io import read_mesh

    pts, cells = read_mesh(shared_data / "ipc/input/tetMeshes/bunny.msh")
    a = CollisionMesh.from_tet_mesh(pts, cells["tetra"])
    # a copy stacked 0.5 dhat above the bunny's top (no interpenetration: distances stay well
    # conditioned; across interpenetrating copies d2 ~ 1e-15 differs by round-off between any two
    # implementations, and b'' ~ 1/d2^2 amplifies it)
    dhat = 1e-2 * a.bbox_diagonal()
    lift = np.ptp(a.rest_positions[:, 2]) + 0.5 * dhat
    b = CollisionMesh.from_triangle_mesh(a.rest_positions + [0.0, 0.0, lift], a.faces)
    mesh = CollisionMesh.concatenate([a, b])
    x = mesh.rest_positions + np.random.default_rng(5).uniform(-0.05, 0.05, mesh.rest_positions.shape) * dhat
    c, cm = ipctk_collisions(mesh, x, dhat)
    col = build_collisions(mesh, x, dhat)
    assert len(col) > 1000
    pot = ipctk.BarrierPotential(dhat, 1.0)
    assert barrier_potential(col, mesh, x) == pytest.approx(pot(c, cm, x), rel=1e-10)
    g_ref = pot.gradient(c, cm, x)
    assert np.abs(barrier_potential_gradient(col, mesh, x) - g_ref).max() <= 1e-10 * np.abs(g_ref).max()
    h_ref = pot.hessian(c, cm, x, ipctk.PSDProjectionMethod.CLAMP)
    h = barrier_potential_hessian(col, mesh, x, project="analytic")
    assert abs(h - h_ref).max() <= 1e-10 * abs(h_ref).max()


def test_empty_and_bad_input():
    mesh, x, col = _scene("point_triangle_face")
    empty = build_collisions(mesh, x + [0.0, 0.0, 0.0], 1e-6)
    assert barrier_potential(empty, mesh, x) == 0.0
    assert not barrier_potential_gradient(empty, mesh, x).any()
    assert barrier_potential_hessian(empty, mesh, x).nnz == 0
    with pytest.raises(ValueError, match="x must have shape"):
        barrier_potential(col, mesh, x[:1])
    with pytest.raises(ValueError, match="stiffness"):
        barrier_potential(col, mesh, x, stiffness=-1.0)
    with pytest.raises(ValueError, match="project"):
        barrier_potential_hessian(col, mesh, x, project="eig")


def _jittered_sheets(n, improved):
    dhat = 1e-3
    x, f = two_sheets(n, dhat, jitter=0.05, seed=7)  # nearly parallel edges: mollified EE with c > 0
    mesh = CollisionMesh.from_triangle_mesh(x, f)
    col = build_collisions(mesh, x, dhat, use_area_weighting=improved, use_improved_max_approximator=improved)
    return mesh, x, col


@pytest.mark.parametrize("improved", [False, True])
def test_parallel_and_serial_paths_agree(monkeypatch, improved):
    import ipcsim.contact.barrier_potential as bp

    mesh, x, col = _jittered_sheets(40, improved)
    assert len(col) >= bp.SERIAL_BELOW and col.count(EE) > 0
    par = (barrier_potential(col, mesh, x, 2.0), barrier_potential_gradient(col, mesh, x, 2.0),
           barrier_potential_hessian(col, mesh, x, 2.0, project="analytic"))
    monkeypatch.setattr(bp, "SERIAL_BELOW", 10**9)
    ser = (barrier_potential(col, mesh, x, 2.0), barrier_potential_gradient(col, mesh, x, 2.0),
           barrier_potential_hessian(col, mesh, x, 2.0, project="analytic"))
    assert par[0] == pytest.approx(ser[0], rel=1e-13)
    np.testing.assert_allclose(par[1], ser[1], rtol=0, atol=1e-13 * np.abs(ser[1]).max())
    assert abs(par[2] - ser[2]).max() <= 1e-13 * abs(ser[2]).max()


@pytest.mark.parametrize("improved", [False, True])
def test_analytic_equals_clamp_on_nearly_parallel_sheets(improved):
    """Exercises every analytic path: closed-form VV, PSD-within-round-off exits, and the reduced
    eigen-decomposition of indefinite mollified / line-line EE stencils (negative weights too)."""
    mesh, x, col = _jittered_sheets(12, improved)
    hc = barrier_potential_hessian(col, mesh, x, project="clamp")
    ha = barrier_potential_hessian(col, mesh, x, project="analytic")
    scale = abs(hc).max()
    assert abs(ha - hc).max() <= 1e-10 * scale
    assert abs(ha - ha.T).max() == 0.0
    assert np.linalg.eigvalsh(ha.toarray()).min() >= -1e-9 * scale
