"""Friction potential D(u): finite differences, PSD projection, force, and input checks."""
import numpy as np
import pytest
import scipy.sparse as sp

from ipcsim.contact.collisions_data import EE, EV, FV, PV, VV, Collisions
from ipcsim.contact.friction import FrictionCollisions, FrictionPotential, project_2x2_psd
from ipcsim.geometry.collision_mesh import CollisionMesh, Plane

DHAT = 0.1
KAPPA = 50.0
EPS_U = 1e-3


def _scene(weights=None):
    """Hand-made stencils of every kind, sharing some vertices, all within dhat, including
    degenerate closest points (on a triangle vertex, at an edge end, on an edge of the other edge)."""
    x = np.array([
        # triangle 0-1-2 in z = 0, points above it
        [0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0],
        [0.2, 0.3, 0.04],            # 3: above the triangle interior (FV)
        [0.0, 0.0, 0.05],            # 4: above vertex 0 (FV, closest point = t0)
        [0.5, 0.5, 0.06],            # 5: above edge 1-2 midpoint (FV on an edge)
        # edge 6-7 crossing above edge 0-1
        [0.3, -0.5, 0.03], [0.4, 0.5, 0.03],
        # edge 8-9 whose line's closest point to line 0-1 is its end 8 (EE closest point at an endpoint)
        [0.7, 0.0, 0.02], [0.7, 1.0, 0.02],
        [1.0, 0.0, 0.07],            # 10: above vertex 1 (VV with 1, and EV with edge 0-1 at alpha = 1)
        [0.6, -0.03, 0.05],          # 11: near edge 0-1 (EV, interior)
        [0.0, 2.0, -0.96],           # 12: near the plane z = -1 (PV)
    ])
    kinds = [FV, FV, FV, EE, EE, VV, EV, EV, PV]
    verts = [[3, 0, 1, 2], [4, 0, 1, 2], [5, 0, 1, 2], [6, 7, 0, 1], [0, 1, 8, 9], [10, 1, -1, -1],
             [10, 0, 1, -1], [11, 0, 1, -1], [12, -1, -1, -1]]
    prims = [[0, 3], [0, 4], [0, 5], [0, 1], [2, 3], [10, 1], [0, 10], [0, 11], [0, 12]]
    n = len(kinds)
    c = Collisions(kind=np.array(kinds), vertices=np.array(verts), primitives=np.array(prims),
                   dtype=np.full(n, -1), eps_x=np.full(n, 1e-8), dhat=DHAT,
                   weight=np.ones(n) if weights is None else np.asarray(weights, float))
    mesh = CollisionMesh.from_points(x)
    mesh.planes = [Plane(origin=np.array([0.0, 0.0, -1.0]), normal=np.array([0.0, 0.0, 1.0]))]
    return c, x, mesh


@pytest.fixture(scope="module")
def scene():
    c, x, mesh = _scene()
    fc = FrictionCollisions.build(c, mesh, x, KAPPA, 0.3)
    assert len(fc) == len(c)
    assert np.all(fc.normal_force > 0)
    return fc, x


def _fd_gradient(f, u, h):
    g = np.zeros(u.size)
    for i in range(u.size):
        du = np.zeros(u.size)
        du[i] = h
        g[i] = (f(u + du.reshape(u.shape)) - f(u - du.reshape(u.shape))) / (2 * h)
    return g


def _fd_hessian(grad, u, h):
    H = np.zeros((u.size, u.size))
    for i in range(u.size):
        du = np.zeros(u.size)
        du[i] = h
        H[:, i] = (grad(u + du.reshape(u.shape)) - grad(u - du.reshape(u.shape))) / (2 * h)
    return H


def _tangential_norms(fc, u):
    out = []
    for k in range(len(fc)):
        r = sum(fc.gamma[k, i] * u[v] for i, v in enumerate(fc.vertices[k]) if v >= 0)
        out.append(np.linalg.norm(fc.tangent_basis[k].T @ r))
    return np.array(out)


@pytest.mark.parametrize("regime", ["static", "sliding", "mixed"])
def test_gradient_and_hessian_by_finite_differences(scene, regime):
    fc, x = scene
    D = FrictionPotential(EPS_U, 1.0)
    rng = np.random.default_rng({"static": 1, "sliding": 2, "mixed": 3}[regime])
    scale = {"static": 0.05 * EPS_U, "sliding": 20 * EPS_U, "mixed": 0.8 * EPS_U}[regime]
    u = rng.normal(size=x.shape) * scale
    y = _tangential_norms(fc, u)
    if regime == "static":
        assert np.all(y < EPS_U)
    elif regime == "sliding":
        assert np.all(y > EPS_U)
    else:
        assert np.any(y < EPS_U) and np.any(y > EPS_U)
    h = 1e-7 * EPS_U
    assert np.all(np.abs(y - EPS_U) > 1e3 * h)  # no stencil crosses the kink of f2 within the stencil
    g = D.gradient(fc, u)
    g_fd = _fd_gradient(lambda v: D(fc, v), u, h)
    np.testing.assert_allclose(g, g_fd, rtol=1e-6, atol=1e-7 * np.abs(g).max())
    H = D.hessian(fc, u, project=False).toarray()
    H_fd = _fd_hessian(lambda v: D.gradient(fc, v), u, h)
    np.testing.assert_allclose(H, H_fd, rtol=1e-5, atol=1e-6 * np.abs(H).max())
    np.testing.assert_allclose(H, H.T, atol=1e-12 * np.abs(H).max())


def test_at_zero_displacement(scene):
    """u = 0: D = sum s eps_u/3, zero gradient, Hessian = sum s (2/eps_u) Gamma^T T T^T Gamma (FD-checked)."""
    fc, x = scene
    D = FrictionPotential(EPS_U, 1.0)
    u = np.zeros_like(x)
    s = fc.weight * fc.mu * fc.normal_force
    assert D(fc, u) == pytest.approx(s.sum() * EPS_U / 3, rel=1e-13)
    np.testing.assert_array_equal(D.gradient(fc, u), 0.0)
    H = D.hessian(fc, u, project=False).toarray()
    H_fd = _fd_hessian(lambda v: D.gradient(fc, v), u, 1e-6 * EPS_U)
    np.testing.assert_allclose(H, H_fd, rtol=1e-5, atol=1e-6 * np.abs(H).max())
    assert np.all(np.isfinite(H))


def test_time_step_scales_threshold(scene):
    fc, x = scene
    u = np.random.default_rng(4).normal(size=x.shape) * 1e-4
    a = FrictionPotential(eps_v=0.1, dt=1e-2)
    b = FrictionPotential(eps_v=1e-3, dt=1.0)
    assert a.eps_u == pytest.approx(1e-3)
    assert a(fc, u) == pytest.approx(b(fc, u), rel=1e-14)


def test_force_is_negative_gradient_and_bounded_by_coulomb(scene):
    fc, x = scene
    D = FrictionPotential(EPS_U, 1.0)
    u = np.random.default_rng(5).normal(size=x.shape) * 30 * EPS_U
    np.testing.assert_allclose(D.force(fc, u), -D.gradient(fc, u), rtol=0, atol=0)
    fc1 = FrictionCollisions(**{**fc.__dict__, "mu": np.ones(len(fc))})
    np.testing.assert_allclose(D.force(fc, u, no_mu=True), D.force(fc1, u), rtol=1e-14)
    # one stencil at a time, sliding: the force on the stencil's first vertex is gamma_0 times a
    # tangential force of magnitude w mu lambda (Coulomb's law)
    for k in range(len(fc)):
        one = _subset(fc, [k])
        assert abs(one.gamma[0, 0]) > 0.1
        f_t = D.force(one, u).reshape(-1, 3)[one.vertices[0, 0]] / one.gamma[0, 0]
        assert np.linalg.norm(f_t) == pytest.approx(one.mu[0] * one.normal_force[0] * one.weight[0], rel=1e-12)
        assert abs(f_t @ _normal_of(one)) <= 1e-12 * np.linalg.norm(f_t)


def _normal_of(one):
    T = one.tangent_basis[0]
    return np.cross(T[:, 0], T[:, 1])


def _subset(fc, idx):
    d = {}
    for key, val in fc.__dict__.items():
        d[key] = val[idx] if isinstance(val, np.ndarray) else val
    return FrictionCollisions(**d)


def test_project_2x2_psd_matches_eigen_clamp():
    rng = np.random.default_rng(6)
    for _ in range(200):
        a, b, c = rng.normal(size=3) * 10.0 ** rng.uniform(-3, 3)
        M = np.array([[a, b], [b, c]])
        w, V = np.linalg.eigh(M)
        clamp = V @ np.diag(np.maximum(w, 0)) @ V.T
        absm = V @ np.diag(np.abs(w)) @ V.T
        tol = 1e-12 * np.abs(w).max()
        pa, pb, pc = project_2x2_psd(a, b, c, 1)
        np.testing.assert_allclose([[pa, pb], [pb, pc]], clamp, atol=tol)
        pa, pb, pc = project_2x2_psd(a, b, c, 2)
        np.testing.assert_allclose([[pa, pb], [pb, pc]], absm, atol=tol)


def test_projected_hessian_is_psd_and_exact_per_stencil():
    """Negative weights (improved max approximator) make stencil Hessians NSD; the 2x2 projection
    must equal the eigenvalue clamp of the full stencil Hessian."""
    c, x, mesh = _scene(weights=[1, -1, 0.5, -2, 1, -1, 1, -0.5, 1])
    fc = FrictionCollisions.build(c, mesh, x, KAPPA, 0.3)
    D = FrictionPotential(EPS_U, 1.0)
    rng = np.random.default_rng(8)
    for scale in (0.0, 0.3 * EPS_U, 10 * EPS_U):
        u = rng.normal(size=x.shape) * scale
        H = D.hessian(fc, u, project=True).toarray()
        assert np.linalg.eigvalsh(H).min() >= -1e-10 * np.abs(H).max()
        for k in range(len(fc)):
            one = _subset(fc, [k])
            Hk = D.hessian(one, u, project=False).toarray()
            w, V = np.linalg.eigh(Hk)
            clamp = (V * np.maximum(w, 0)) @ V.T
            absm = (V * np.abs(w)) @ V.T
            tol = 1e-10 * max(np.abs(w).max(), 1e-300)
            np.testing.assert_allclose(D.hessian(one, u, True).toarray(), clamp, atol=tol)
            np.testing.assert_allclose(D.hessian(one, u, "abs").toarray(), absm, atol=tol)


def test_hessian_sparse_layout(scene):
    fc, x = scene
    H = FrictionPotential(EPS_U, 1.0).hessian(fc, np.zeros_like(x))
    assert isinstance(H, sp.csr_matrix) and H.shape == (x.size, x.size)


def test_empty_set():
    fc = FrictionCollisions.build(Collisions(dhat=DHAT), None, np.zeros((3, 3)), KAPPA, 0.5)
    D = FrictionPotential(EPS_U, 1.0)
    u = np.ones((3, 3))
    assert len(fc) == 0 and D(fc, u) == 0.0
    np.testing.assert_array_equal(D.gradient(fc, u), np.zeros(9))
    assert D.hessian(fc, u).nnz == 0


def test_bad_input():
    c, x, mesh = _scene()
    with pytest.raises(ValueError, match="eps_v"):
        FrictionPotential(0.0, 1.0)
    with pytest.raises(ValueError, match="dt"):
        FrictionPotential(1e-3, -1.0)
    with pytest.raises(ValueError, match="mu"):
        FrictionCollisions.build(c, mesh, x, KAPPA, -0.1)
    with pytest.raises(ValueError, match="mu"):
        FrictionCollisions.build(c, mesh, x, KAPPA, np.ones(3))
    with pytest.raises(ValueError, match="stiffness"):
        FrictionCollisions.build(c, mesh, x, 0.0, 0.3)
    with pytest.raises(ValueError, match="plane-vertex"):
        FrictionCollisions.build(c, None, x, KAPPA, 0.3)
    with pytest.raises(ValueError, match=r"positions x"):
        FrictionCollisions.build(c, None, x[:, :2], KAPPA, 0.3)
    with pytest.raises(ValueError, match="collision mesh"):
        FrictionCollisions.build(c, mesh, x[:5], KAPPA, 0.3)
    with pytest.raises(ValueError, match="outside"):
        FrictionCollisions.build(c, None, x[:5], KAPPA, 0.3)
    with pytest.raises(ValueError, match="exactly one"):
        FrictionCollisions.build(c, mesh, x, KAPPA, 0.3, vertex_mu=np.ones(len(x)))
    with pytest.raises(ValueError, match="vertex_mu"):
        FrictionCollisions.build(c, mesh, x, KAPPA, vertex_mu=np.ones(3))
    bad = Collisions(**{**c.__dict__, "vertices": c.vertices.copy()})
    bad.vertices[5, 1] = 10  # VV of vertex 10 with itself: zero distance
    with pytest.raises(ValueError, match=r"stencil 5 \(vertex-vertex"):
        FrictionCollisions.build(bad, mesh, x, KAPPA, 0.3)
    fc = FrictionCollisions.build(c, mesh, x, KAPPA, 0.3)
    D = FrictionPotential(EPS_U, 1.0)
    with pytest.raises(ValueError, match="displacements u"):
        D(fc, x[:4])
    with pytest.raises(ValueError, match="project"):
        D.hessian(fc, x, project="maybe")


def test_parallel_edges_get_no_friction():
    x = np.array([[0.0, 0, 0], [1.0, 0, 0], [0.2, 0.0, 0.05], [0.9, 0.0, 0.05],   # exactly parallel
                  [0.2, 0.01, 0.05], [0.9, -0.01, 0.05]])                          # nearly parallel
    c = Collisions(kind=np.array([EE, EE]), vertices=np.array([[0, 1, 2, 3], [0, 1, 4, 5]]),
                   primitives=np.array([[0, 1], [0, 2]]), dtype=np.array([-1, -1]), eps_x=np.array([0.0, 1e-3]),
                   weight=np.ones(2), dhat=DHAT)
    fc = FrictionCollisions.build(c, None, x, KAPPA, 0.5)
    assert len(fc) == 0
    c.eps_x[1] = 1e-6  # |ea x eb|^2 = 0.02^2 * 0.7^2 ... above this threshold: kept
    fc = FrictionCollisions.build(c, None, x, KAPPA, 0.5)
    assert len(fc) == 1 and fc.source[0] == 1
