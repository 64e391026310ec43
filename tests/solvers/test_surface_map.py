"""x = J q: the map from nodes to the collision surface, the chain rule through it (finite differences with
random sparse J, weights outside [0, 1] included), the Newton matrix written through it, and a body whose
surface is re-expressed through barycentric weights in its own tets reproducing the selection's trajectory."""
import numpy as np
import pytest
import scipy.sparse as sp

from ipcsim.contact.barrier_potential import (barrier_potential, barrier_potential_gradient,
                                              barrier_potential_hessian)
from ipcsim.contact.collisions import build_collisions
from ipcsim.geometry.collision_mesh import CollisionMesh
from ipcsim.geometry.surface_map import SurfaceMap
from ipcsim.model import ModelBuilder, box_tet_mesh
from ipcsim.solvers.integrator_solvers import ContactParameters, FrictionParameters, ImplicitEulerSolver
from ipcsim.solvers.reduction import PatternCache, SystemMatrix


def _random_map(rng, n_surface, n_nodes, k):
    """k distinct nodes per surface vertex, weights in [-0.5, 1.5] (outside [0, 1] too)."""
    nodes = np.stack([rng.choice(n_nodes, size=k, replace=False) for _ in range(n_surface)])
    weights = rng.uniform(-0.5, 1.5, size=(n_surface, k))
    return SurfaceMap(nodes, weights, n_nodes)


@pytest.mark.parametrize("k", [1, 2, 3, 4])
def test_apply_and_pullbacks_equal_the_sparse_matrix(rng, k):
    jmap = _random_map(rng, 30, 50, k)
    j = jmap.matrix.toarray()
    q = rng.normal(size=(50, 3))
    np.testing.assert_allclose(jmap.apply(q).ravel(), j @ q.ravel(), rtol=1e-14, atol=1e-14)
    g = rng.normal(size=90)
    np.testing.assert_allclose(jmap.pull_gradient(g), j.T @ g, rtol=1e-13, atol=1e-13)
    h = sp.random(90, 90, density=0.1, random_state=1)
    h = (h + h.T).tocsr()
    np.testing.assert_allclose(jmap.pull_hessian(h).toarray(), j.T @ h.toarray() @ j, rtol=1e-12, atol=1e-12)
    assert not jmap.is_selection


@pytest.mark.parametrize("k", [1, 4])
def test_pull_hessian_blocks_equal_the_dense_product(rng, k):
    """J_r^T H J_c for coordinate subsets (the face's free-free and free-bone blocks) against dense algebra."""
    jmap = _random_map(rng, 30, 50, k)
    j = jmap.matrix.toarray()
    h = sp.random(90, 90, density=0.1, random_state=2)
    h = (h + h.T).tocsr()
    rows = np.sort(rng.choice(150, size=100, replace=False))
    cols = np.setdiff1d(np.arange(150), rows)
    ff = jmap.pull_hessian(h, rows, rows)
    fb = jmap.pull_hessian(h, rows, cols)
    ref = j.T @ h.toarray() @ j
    np.testing.assert_allclose(ff.toarray(), ref[np.ix_(rows, rows)], rtol=1e-12, atol=1e-12)  # measured 9e-16
    np.testing.assert_allclose(fb.toarray(), ref[np.ix_(rows, cols)], rtol=1e-12, atol=1e-12)
    assert jmap.columns(rows) is jmap.columns(rows)  # the slice is kept for the same index array
    np.testing.assert_array_equal(jmap.columns(rows).toarray(), j[:, rows])


def test_a_selection_is_the_fast_path():
    jmap = SurfaceMap.selection([3, 1, 4], 6)
    assert jmap.is_selection
    q = np.arange(18.0).reshape(6, 3)
    np.testing.assert_array_equal(jmap.apply(q), q[[3, 1, 4]])
    g = np.arange(9.0)
    np.testing.assert_array_equal(jmap.pull_gradient(g).reshape(6, 3)[[3, 1, 4]], g.reshape(3, 3))


@pytest.mark.parametrize("bad", [dict(nodes=np.zeros((3, 5), int), weights=np.ones((3, 5))),
                                 dict(nodes=np.full((3, 2), 9), weights=np.ones((3, 2))),
                                 dict(nodes=np.zeros((3, 2), int), weights=np.full((3, 2), np.nan))])
def test_bad_maps_are_named(bad):
    with pytest.raises(ValueError, match="surface map"):
        SurfaceMap(bad["nodes"], bad["weights"], 6)


def _two_triangles():
    """Two close triangles (a face-vertex, edge-edge and vertex-vertex rich configuration), 6 surface vertices."""
    v = np.array([[0, 0, 0], [1, 0, 0], [0, 0, 1], [0.2, 4e-4, 0.2], [1.1, 6e-4, 0.3], [0.1, 5e-4, 1.2]], float)
    mesh = CollisionMesh.from_triangle_mesh(v, np.array([[0, 2, 1], [3, 4, 5]]))
    return mesh, v


@pytest.mark.parametrize("k", [2, 3, 4])
def test_barrier_chain_rule_matches_finite_differences(rng, k):
    """B(J q): gradient J^T grad B and Hessian J^T H_B J against central differences, for random sparse J."""
    mesh, xs0 = _two_triangles()
    n_nodes = 9
    jmap = _random_map(rng, 6, n_nodes, k)
    # nodes placed so that J q equals the two triangles (least squares), then perturbed
    q0 = np.linalg.lstsq(jmap.matrix.toarray(), xs0.ravel(), rcond=None)[0].reshape(-1, 3)
    dhat, kappa = 1e-3, 1e3

    def parts(q):
        xs = jmap.apply(q)
        coll = build_collisions(mesh, xs, dhat, use_area_weighting=True, use_improved_max_approximator=True)
        return xs, coll

    xs, coll = parts(q0)
    assert len(coll) > 0
    args = dict(stiffness=kappa, use_physical_barrier=True)
    grad = jmap.pull_gradient(barrier_potential_gradient(coll, mesh, xs, **args))
    hess = jmap.pull_hessian(barrier_potential_hessian(coll, mesh, xs, project="none", **args))
    d = rng.normal(size=q0.shape) * 1e-5
    eps = 1e-3

    def energy(q):
        xs_q, c = parts(q)
        return barrier_potential(c, mesh, xs_q, **args)

    fd = (energy(q0 + eps * d) - energy(q0 - eps * d)) / (2 * eps)
    assert fd == pytest.approx(grad @ d.ravel(), rel=1e-5)
    g_p = jmap.pull_gradient(barrier_potential_gradient(coll, mesh, jmap.apply(q0 + eps * d), **args))
    g_m = jmap.pull_gradient(barrier_potential_gradient(coll, mesh, jmap.apply(q0 - eps * d), **args))
    np.testing.assert_allclose(hess @ d.ravel(), (g_p - g_m) / (2 * eps), rtol=1e-5,
                               atol=1e-6 * np.abs(hess @ d.ravel()).max())
    # the projected Hessian through J stays PSD
    hp = jmap.pull_hessian(barrier_potential_hessian(coll, mesh, xs, project="analytic", **args)).toarray()
    assert np.linalg.eigvalsh(hp).min() >= -1e-9 * np.abs(hp).max()


@pytest.mark.parametrize("k", [1, 2, 4])
def test_free_block_through_a_weighted_map_equals_scipy(rng, k):
    """H_ff written straight into the cached pattern through J equals (E + J^T C J)[free][:, free]."""
    v, t = box_tet_mesh((1.0, 1.0, 1.0), (2, 2, 2))
    b = ModelBuilder()
    b.add_body(v, t)
    model, _ = b.finalize()
    from ipcsim.solvers.elastic import ElasticAssembler

    e = ElasticAssembler(model).gradient_and_hessian(model.rest_positions * 1.01)[1]
    n = model.n_vertices
    jmap = _random_map(rng, 12, n, k)
    c = sp.random(36, 36, density=0.3, random_state=2)
    c = (c + c.T).tocsr()
    free = np.ones(3 * n, bool)
    free[:9] = False
    cache = PatternCache()
    hess = SystemMatrix(jmap, e, 0.5, rng.uniform(1, 2, 3 * n), cache)
    hess.add_surface(2.0, c)
    full = hess.tocsr()
    a = hess.free_block(free)
    ref = full[free][:, free]
    assert abs(a - ref).max() <= 1e-12 * abs(ref).max()
    v_ = rng.normal(size=3 * n)
    np.testing.assert_allclose(hess @ v_, full @ v_, rtol=1e-12, atol=1e-12 * np.abs(full @ v_).max())
    p = np.where(free, 0.0, v_)
    np.testing.assert_allclose(hess.prescribed_coupling(free, p), (full[free][:, ~free] @ p[~free]), rtol=1e-12,
                               atol=1e-12 * np.abs(full @ v_).max())
    assert cache.pattern.n_surface_entries > 0  # J^T C J reached beyond the elastic pattern


def barycentric_self_embedding(model):
    """The model's surface re-expressed through barycentric weights in its own tets: each surface vertex gets
    the 4 corners of a tet incident to it and the weights that solve x = sum_a w_a x_a at rest (1 and 0 up
    to round-off: not a selection)."""
    jmap = model.surface_map
    x = model.rest_positions
    incident = {}
    for e, tet in enumerate(model.tets):
        for node in tet:
            incident.setdefault(int(node), e)
    nodes = np.zeros((jmap.n_surface, 4), np.int64)
    weights = np.zeros((jmap.n_surface, 4))
    for s, node in enumerate(jmap.index):
        tet = model.tets[incident[int(node)]]
        a = np.vstack([x[tet].T, np.ones(4)])
        nodes[s] = tet
        weights[s] = np.linalg.solve(a, np.append(x[node], 1.0))
    return SurfaceMap(nodes, weights, model.n_vertices)


def _drop_scene(surface_map=None):
    v, t = box_tet_mesh((0.1, 0.1, 0.1), (2, 2, 2))
    b = ModelBuilder()
    b.add_ground(0.0)
    b.add_body(v, t, translation=(0.0, 0.004, 0.0), velocity=(0.5, -0.5, 0.0), angular_velocity=(0, 0, 3.0))
    model, state = b.finalize()
    if surface_map is not None:
        model.surface_map = surface_map(model)
    return model, state


def test_a_body_embedded_in_its_own_tets_follows_the_selection_trajectory():
    runs = []
    for embed in (None, barycentric_self_embedding):
        model, state = _drop_scene(embed)
        solver = ImplicitEulerSolver(model, ContactParameters(dhat=1e-3, kappa=1e4),
                                     friction=FrictionParameters(mu=0.5), tol=1e-6)
        xs = []
        for _ in range(12):
            new = state.copy()
            stats = solver.step(state, new, None, 0.01)
            state = new
            xs.append(state.x.copy())
        runs.append((model, np.array(xs), stats))
    (m0, x0, s0), (m1, x1, s1) = runs
    assert m0.surface_map.is_selection and not m1.surface_map.is_selection
    assert s0.n_contacts > 0 and s1.n_contacts == s0.n_contacts  # it hit the ground, in both runs
    np.testing.assert_allclose(x1, x0, rtol=0, atol=1e-10)
