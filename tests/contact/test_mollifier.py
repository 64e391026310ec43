"""Edge-edge mollifier: scalar m(c), threshold, |ea x eb|^2 and m(c(x)) with derivatives: finite
differences (incl. parallel and nearly parallel edges) and parity with ipctk."""
import ipctk
import numpy as np
import pytest

import ipcsim.contact.distance as D
from _distance_configs import (EE_PARALLEL_EDGES, assert_fd_close, fd_gradient, fd_jacobian, parallel_edge_config,
                               rel_err)

RTOL_FD = 1e-6


def test_scalar_mollifier_shape():
    eps = 2.5e-3
    assert D.mollifier(0.0, eps) == 0.0
    assert D.mollifier(eps, eps) == 1.0
    assert D.mollifier(10 * eps, eps) == 1.0
    assert D.mollifier(0.5 * eps, eps) == pytest.approx(0.75, rel=1e-15)
    # C1 at c = eps: derivative from below -> 0
    assert D.mollifier_first_derivative(eps * (1 - 1e-12), eps) == pytest.approx(0.0, abs=1e-9 / eps)
    assert D.mollifier_first_derivative(eps, eps) == 0.0
    assert D.mollifier_second_derivative(eps, eps) == 0.0
    assert D.mollifier_second_derivative(0.3 * eps, eps) == -2.0 / eps**2


@pytest.mark.parametrize("c_over_eps", [0.0, 1e-12, 0.1, 0.5, 0.9, 0.999])
def test_scalar_mollifier_fd(c_over_eps):
    eps = 3e-4
    c = c_over_eps * eps
    h = 1e-6 * eps
    fd1 = (D.mollifier(c + h, eps) - D.mollifier(c - h, eps)) / (2 * h)
    fd2 = (D.mollifier_first_derivative(c + h, eps) - D.mollifier_first_derivative(c - h, eps)) / (2 * h)
    assert D.mollifier_first_derivative(c, eps) == pytest.approx(fd1, rel=1e-6)
    assert D.mollifier_second_derivative(c, eps) == pytest.approx(fd2, rel=1e-6)


def test_threshold_formula():
    rng = np.random.default_rng(1)
    for _ in range(20):
        x = rng.normal(size=(4, 3))
        expected = 1e-3 * np.sum((x[1] - x[0]) ** 2) * np.sum((x[3] - x[2]) ** 2)
        assert D.edge_edge_mollifier_threshold(*x) == pytest.approx(expected, rel=1e-14)


def mollifier_configs():
    """Random edges and (nearly) parallel ones: (x (4, 3), eps_x from the same positions as rest)."""
    rng = np.random.default_rng(3)
    out = [rng.normal(size=(4, 3)) for _ in range(10)]
    for xs in sorted(EE_PARALLEL_EDGES):
        for slope in (0.0, 1e-12, 1e-6, 1e-3, 1e-2):
            out.append(np.stack(parallel_edge_config(*xs, 0.3, slope)))
    return out


@pytest.mark.parametrize("i,x", list(enumerate(mollifier_configs())))
def test_cross_squarednorm_fd(i, x):
    h = 1e-6
    g = D.edge_edge_cross_squarednorm_gradient(*x)
    H = D.edge_edge_cross_squarednorm_hessian(*x)
    c = lambda y: D.edge_edge_cross_squarednorm(*y)  # noqa: E731
    grad = lambda y: D.edge_edge_cross_squarednorm_gradient(*y)  # noqa: E731
    assert_fd_close(g, fd_gradient(c, x, h), RTOL_FD, what=f"cross #{i} gradient")
    assert_fd_close(H, fd_jacobian(grad, x, h), RTOL_FD, what=f"cross #{i} hessian")
    assert D.edge_edge_cross_squarednorm(*x) == pytest.approx(np.sum(np.cross(x[1] - x[0], x[3] - x[2]) ** 2),
                                                              rel=1e-12, abs=1e-30)


@pytest.mark.parametrize("i,x", list(enumerate(mollifier_configs())))
@pytest.mark.parametrize("eps_scale", [1.0, 1e3, 1e6])
def test_mollifier_fd(i, x, eps_scale):
    """eps_x from rest = current positions, scaled so that c < eps_x in most configurations."""
    eps_x = D.edge_edge_mollifier_threshold(*x) * eps_scale
    c = D.edge_edge_cross_squarednorm(*x)
    g = D.edge_edge_mollifier_gradient(*x, eps_x)
    H = D.edge_edge_mollifier_hessian(*x, eps_x)
    if c >= eps_x:
        assert D.edge_edge_mollifier(*x, eps_x) == 1.0
        assert np.all(g == 0.0) and np.all(H == 0.0)
        return
    # step small against the scale on which m varies: c changes by ~|dc| h, must stay << eps_x
    dc = np.abs(D.edge_edge_cross_squarednorm_gradient(*x)).max()
    h = min(1e-6, 1e-6 * eps_x / max(dc, 1e-300))
    m = lambda y: D.edge_edge_mollifier(*y, eps_x)  # noqa: E731
    grad = lambda y: D.edge_edge_mollifier_gradient(*y, eps_x)  # noqa: E731
    floor_g = np.abs(g).max() if np.abs(g).max() > 0 else 1.0
    floor_h = np.abs(H).max()
    assert_fd_close(g, fd_gradient(m, x, h), RTOL_FD, scale_floor=floor_g, what=f"mollifier #{i} gradient")
    assert_fd_close(H, fd_jacobian(grad, x, h), RTOL_FD, scale_floor=floor_h, what=f"mollifier #{i} hessian")


def test_into_variants_overwrite_out():
    x = np.random.default_rng(4).normal(size=(4, 3))
    eps_x = 1e3 * D.edge_edge_cross_squarednorm(*x)
    for name, args in (("edge_edge_cross_squarednorm", ()), ("edge_edge_mollifier", (eps_x,))):
        g = np.full(12, np.nan)
        H = np.full((12, 12), np.nan)
        getattr(D, name + "_gradient_into")(*x, *args, g)
        getattr(D, name + "_hessian_into")(*x, *args, H)
        np.testing.assert_array_equal(g, getattr(D, name + "_gradient")(*x, *args))
        np.testing.assert_array_equal(H, getattr(D, name + "_hessian")(*x, *args))
        assert np.abs(H).max() > 0


def test_mollifier_matches_ipctk():
    rng = np.random.default_rng(5)
    n_active = 0
    for i in range(1000):
        x = rng.normal(size=(4, 3))
        if i % 2:  # make half of them nearly parallel so that the mollifier is active
            x[3] = x[2] + (x[1] - x[0]) * rng.uniform(-2, 2) + 1e-2 * rng.normal(size=3)
        rest = rng.normal(size=(4, 3))
        eps_x = D.edge_edge_mollifier_threshold(*rest)
        assert rel_err(eps_x, ipctk.edge_edge_mollifier_threshold(*rest)) <= 1e-10
        for mine, theirs in ((D.edge_edge_cross_squarednorm(*x), ipctk.edge_edge_cross_squarednorm(*x)),
                             (D.edge_edge_cross_squarednorm_gradient(*x), ipctk.edge_edge_cross_squarednorm_gradient(*x)),
                             (D.edge_edge_cross_squarednorm_hessian(*x), ipctk.edge_edge_cross_squarednorm_hessian(*x)),
                             (D.edge_edge_mollifier(*x, eps_x), ipctk.edge_edge_mollifier(*x, eps_x)),
                             (D.edge_edge_mollifier_gradient(*x, eps_x), ipctk.edge_edge_mollifier_gradient(*x, eps_x)),
                             (D.edge_edge_mollifier_hessian(*x, eps_x), ipctk.edge_edge_mollifier_hessian(*x, eps_x))):
            assert rel_err(mine, theirs) <= 1e-10, f"config #{i}"
        c = D.edge_edge_cross_squarednorm(*x)
        n_active += c < eps_x
        assert D.mollifier(c, eps_x) == pytest.approx(ipctk.edge_edge_mollifier(c, eps_x), rel=1e-12)
    assert n_active > 50  # the test exercises the active branch


def test_gradient_into_returns_value():
    x = np.random.default_rng(9).normal(size=(4, 3))
    g = np.empty(12)
    c = D.edge_edge_cross_squarednorm(*x)
    assert D.edge_edge_cross_squarednorm_gradient_into(*x, g) == c
    for eps_x in (0.5 * c, 2.0 * c):
        assert D.edge_edge_mollifier_gradient_into(*x, eps_x, g) == D.edge_edge_mollifier(*x, eps_x)
