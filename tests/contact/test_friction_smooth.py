"""The smooth friction mollifier f0, f1, f1/x, f2, (f2 x - f1)/x^3 (IPC 2020 Eq. 13-15, 004 Eq. 9)."""
import ipctk
import numpy as np
import pytest

from ipcsim.contact.friction import smooth

EPS_U = [1e-5, 1e-3, 0.7]


def _samples(eps_u):
    """Points below, at and above eps_u, away from the kink for finite differences."""
    t = np.array([1e-6, 0.013, 0.25, 0.5, 0.77, 0.999, 1.0, 1.001, 1.5, 3.0, 40.0])
    return t * eps_u


@pytest.mark.parametrize("eps_u", EPS_U)
def test_f1_matches_paper_formula(eps_u):
    y = _samples(eps_u)
    expected = np.where(y < eps_u, -y**2 / eps_u**2 + 2 * y / eps_u, 1.0)  # 004 Eq. 9
    got = np.array([smooth.f1(v, eps_u) for v in y])
    np.testing.assert_allclose(got, expected, rtol=1e-14, atol=1e-15)


@pytest.mark.parametrize("eps_u", EPS_U)
def test_f0_is_integral_of_f1(eps_u):
    """f0(y) = int_{eps_u}^y f1 + eps_u (004 §III-B), checked by Gauss-Legendre quadrature."""
    nodes, weights = np.polynomial.legendre.leggauss(8)
    for y in _samples(eps_u):
        a, b = min(y, eps_u), max(y, eps_u)
        # f1 is a polynomial on each side of eps_u, so the rule is exact up to rounding
        z = 0.5 * (b - a) * nodes + 0.5 * (a + b)
        integral = 0.5 * (b - a) * sum(w * smooth.f1(v, eps_u) for v, w in zip(z, weights))
        expected = eps_u + (integral if y >= eps_u else -integral)
        assert smooth.f0(y, eps_u) == pytest.approx(expected, rel=1e-13, abs=1e-15 * eps_u)


@pytest.mark.parametrize("eps_u", EPS_U)
def test_derivative_chain_by_finite_differences(eps_u):
    """f0' = f1, f1' = f2 by central differences away from the kink at eps_u."""
    for y in _samples(eps_u):
        if abs(y - eps_u) < 1e-2 * eps_u or y < 1e-3 * eps_u:
            continue
        h = 1e-6 * eps_u
        d0 = (smooth.f0(y + h, eps_u) - smooth.f0(y - h, eps_u)) / (2 * h)
        d1 = (smooth.f1(y + h, eps_u) - smooth.f1(y - h, eps_u)) / (2 * h)
        assert d0 == pytest.approx(smooth.f1(y, eps_u), rel=1e-7, abs=1e-9)
        assert d1 == pytest.approx(smooth.f2(y, eps_u), rel=1e-6, abs=1e-6 / eps_u)


@pytest.mark.parametrize("eps_u", EPS_U)
def test_combinations_are_consistent(eps_u):
    for y in _samples(eps_u):
        f1v, f2v = smooth.f1(y, eps_u), smooth.f2(y, eps_u)
        assert smooth.f1_over_x(y, eps_u) == pytest.approx(f1v / y, rel=1e-12)
        assert smooth.f2_x_minus_f1_over_x3(y, eps_u) == pytest.approx((f2v * y - f1v) / y**3, rel=1e-9)


@pytest.mark.parametrize("eps_u", EPS_U)
def test_continuity_at_threshold_and_limits(eps_u):
    below, above = eps_u * (1 - 1e-12), eps_u
    for f in (smooth.f0, smooth.f1, smooth.f1_over_x):
        assert f(below, eps_u) == pytest.approx(f(above, eps_u), rel=1e-10)
    assert smooth.f0(0.0, eps_u) == pytest.approx(eps_u / 3)
    assert smooth.f1(0.0, eps_u) == 0.0
    assert smooth.f1_over_x(0.0, eps_u) == pytest.approx(2 / eps_u)
    assert smooth.f2(0.0, eps_u) == pytest.approx(2 / eps_u)
    # f1 <= 1 and monotone: Coulomb's bound on the friction force
    y = np.linspace(0, 3 * eps_u, 301)
    f1 = np.array([smooth.f1(v, eps_u) for v in y])
    assert np.all(np.diff(f1) >= 0) and f1.max() == 1.0


def test_matches_ipctk():
    rng = np.random.default_rng(7)
    for eps_u in EPS_U:
        ys = np.concatenate([[0.0, eps_u], rng.uniform(0, 3 * eps_u, 50)])
        for y in ys:
            assert smooth.f0(y, eps_u) == pytest.approx(ipctk.smooth_friction_f0(y, eps_u), rel=1e-14)
            assert smooth.f1(y, eps_u) == pytest.approx(ipctk.smooth_friction_f1(y, eps_u), rel=1e-14, abs=1e-300)
            assert smooth.f2(y, eps_u) == pytest.approx(ipctk.smooth_friction_f2(y, eps_u), rel=1e-13, abs=1e-300)
            assert smooth.f1_over_x(y, eps_u) == pytest.approx(ipctk.smooth_friction_f1_over_x(y, eps_u), rel=1e-14)
            if y > 0:
                assert smooth.f2_x_minus_f1_over_x3(y, eps_u) == pytest.approx(
                    ipctk.smooth_friction_f2_x_minus_f1_over_x3(y, eps_u), rel=1e-14)
