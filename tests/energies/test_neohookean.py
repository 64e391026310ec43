import numpy as np
import pytest

from ipcsim.energies.neohookean import (
    lame_parameters,
    max_step_without_inversion,
    neohookean_energy,
    neohookean_gradient_and_hessian_blocks,
    rest_shape_data,
)

REST = np.array([[0.0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]])
TETS = np.array([[0, 1, 2, 3]])


def _setup(rest=REST, tets=TETS, E=1e5, nu=0.4):
    dm_inv, vol = rest_shape_data(rest, tets)
    mu, lam = lame_parameters(E, nu)
    n = len(tets)
    return dm_inv, vol, np.full(n, mu), np.full(n, lam)


def _energy(x, data):
    return neohookean_energy(x.reshape(-1, 3), TETS, *data)


def test_rest_state_has_zero_energy_and_force():
    data = _setup()
    assert abs(_energy(REST, data)) < 1e-12
    g, _ = neohookean_gradient_and_hessian_blocks(REST, TETS, *data, False, False)
    assert np.max(np.abs(g)) < 1e-9


@pytest.mark.parametrize("seed", range(5))
def test_gradient_and_hessian_match_finite_differences(seed):
    rng = np.random.default_rng(seed)
    data = _setup()
    x = REST + 0.2 * rng.standard_normal(REST.shape)
    if np.linalg.det(np.stack([x[1] - x[0], x[2] - x[0], x[3] - x[0]], 1)) <= 0.1:
        x[3] += np.array([0, 0, 1.0])
    g, h = neohookean_gradient_and_hessian_blocks(x, TETS, *data, False, True)
    eps = 1e-6
    flat = x.ravel()
    fd_g = np.empty(12)
    fd_h = np.empty((12, 12))
    for i in range(12):
        xp, xm = flat.copy(), flat.copy()
        xp[i] += eps
        xm[i] -= eps
        fd_g[i] = (_energy(xp, data) - _energy(xm, data)) / (2 * eps)
        gp, _ = neohookean_gradient_and_hessian_blocks(xp.reshape(-1, 3), TETS, *data, False, False)
        gm, _ = neohookean_gradient_and_hessian_blocks(xm.reshape(-1, 3), TETS, *data, False, False)
        fd_h[:, i] = (gp[0] - gm[0]) / (2 * eps)
    np.testing.assert_allclose(g[0], fd_g, rtol=1e-6, atol=1e-6 * np.abs(fd_g).max())
    np.testing.assert_allclose(h[0], fd_h, rtol=1e-5, atol=1e-5 * np.abs(fd_h).max())


def test_energy_is_rotation_invariant(rng):
    data = _setup()
    x = REST + 0.1 * rng.standard_normal(REST.shape)
    q, _ = np.linalg.qr(rng.standard_normal((3, 3)))
    if np.linalg.det(q) < 0:
        q[:, 0] *= -1
    assert np.isclose(_energy(x, data), _energy(x @ q.T + 3.0, data), rtol=1e-12)


def test_projected_hessian_is_psd(rng):
    data = _setup()
    x = REST.copy()
    x[3] = [0.1, 0.1, 0.05]  # strongly compressed: indefinite Hessian
    _, h = neohookean_gradient_and_hessian_blocks(x, TETS, *data, False, True)
    _, hp = neohookean_gradient_and_hessian_blocks(x, TETS, *data, True, True)
    assert np.linalg.eigvalsh(h[0]).min() < 0
    assert np.linalg.eigvalsh(hp[0]).min() > -1e-8 * np.abs(hp[0]).max()


def test_inverted_energy_is_infinite_and_step_bound_prevents_inversion():
    data = _setup()
    x = REST.copy()
    p = np.zeros_like(x)
    p[3] = [0, 0, -2.0]  # would push vertex 3 through the opposite face at t = 0.5
    alpha = max_step_without_inversion(x, p, TETS, 0.9)
    assert 0 < alpha < 0.5
    assert np.isfinite(_energy(x + alpha * p, data))
    assert np.isinf(_energy(x + 0.6 * p, data))


def test_rest_shape_rejects_inverted_tet():
    with pytest.raises(ValueError, match="tet 0"):
        rest_shape_data(REST[[0, 2, 1, 3]], TETS)
