"""Elastic materials (NH, SNH, FCR, LCR, LCR_LAGGED, LE, ABD): derivatives, invariances, PSD projection, small strain.

ipctk has no elasticity models, so the oracles here are finite differences, the closed-form linear-elastic
stiffness and numerical eigenvalue clamping.
"""
import numpy as np
import pytest

from ipcsim.energies.materials import (
    MATERIALS,
    elastic_energy,
    elastic_gradient_and_hessian_blocks,
    material_info,
    material_pk1_and_dpdf,
    material_psi,
    needs_inversion_guard,
)
from ipcsim.energies.neohookean import lame_parameters, rest_shape_data

MU, LAM = lame_parameters(1e5, 0.4)
REST = np.array([[0.0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]])
TETS = np.array([[0, 1, 2, 3]])
ISOTROPIC = ["NH", "SNH", "FCR", "LCR", "ABD"]  # exact Hessian through the invariants + analytic projection
EXACT = ["NH", "SNH", "FCR", "LCR", "LE", "ABD"]  # project=False gives the true Hessian of the energy


def _rotation(rng):
    q, _ = np.linalg.qr(rng.standard_normal((3, 3)))
    return q if np.linalg.det(q) > 0 else -q


def _f_from_sigma(sigma, seed):
    rng = np.random.default_rng(seed)
    return _rotation(rng) @ np.diag(sigma) @ _rotation(rng).T


# name -> (F, inverted?)
CONFIGS = {
    "near_identity": (np.eye(3) + 0.02 * np.random.default_rng(1).standard_normal((3, 3)), False),
    "large_stretch": (_f_from_sigma([3.0, 2.0, 1.5], 2), False),
    "strong_compression": (_f_from_sigma([0.3, 0.25, 0.2], 3), False),
    "near_singular": (_f_from_sigma([1.2, 0.9, 0.02], 4), False),
    "repeated_sigma_pair": (_f_from_sigma([1.3, 1.3, 0.6], 5), False),
    "repeated_sigma_all": (1.1 * _f_from_sigma([1.0, 1.0, 1.0], 6), False),
    "inverted": (_f_from_sigma([1.1, 0.9, -0.3], 7), True),
    "inverted_repeated": (_f_from_sigma([1.2, 1.2, -0.5], 8), True),
}


def _cases(materials):
    return [(m, c) for m in materials for c, (_, inv) in CONFIGS.items() if not (inv and m == "NH")]


def _code(name):
    return material_info(name).code


def _psi(name, f):
    return material_psi(_code(name), np.ascontiguousarray(f), MU, LAM)


def _pk1(name, f):
    return material_pk1_and_dpdf(_code(name), np.ascontiguousarray(f), MU, LAM, False, False)[0]


def _dpdf(name, f, project=False):
    return material_pk1_and_dpdf(_code(name), np.ascontiguousarray(f), MU, LAM, True, project)[1]


def _vec(m):
    return m.reshape(-1, order="F")


def _fd_stress_and_stiffness(psi, pk1, f, step):
    """Central differences: dpsi/dF (3, 3) and dvec(P)/dvec(F) (9, 9), column-major vec."""
    p_fd = np.empty((3, 3))
    k_fd = np.empty((9, 9))
    for c in range(3):
        for r in range(3):
            e = np.zeros((3, 3))
            e[r, c] = step
            p_fd[r, c] = (psi(f + e) - psi(f - e)) / (2 * step)
            k_fd[:, 3 * c + r] = (_vec(pk1(f + e)) - _vec(pk1(f - e))) / (2 * step)
    return p_fd, k_fd


# ------------------------------------------------------------------------------------ per-element derivatives
@pytest.mark.parametrize("name,config", _cases(EXACT))
def test_stress_and_stiffness_match_finite_differences(name, config):
    f, _ = CONFIGS[config]
    step = 1e-7 if config == "near_singular" else 1e-6
    p_fd, k_fd = _fd_stress_and_stiffness(lambda g: _psi(name, g), lambda g: _pk1(name, g), f, step)
    p, k = _pk1(name, f), _dpdf(name, f)
    np.testing.assert_allclose(p, p_fd, rtol=1e-6, atol=1e-7 * np.abs(p_fd).max())
    np.testing.assert_allclose(k, k_fd, rtol=1e-5, atol=1e-6 * np.abs(k_fd).max())
    np.testing.assert_allclose(k, k.T, atol=1e-9 * np.abs(k).max())


def _polar_rotation(f):
    u, _, vt = np.linalg.svd(f)
    d = np.diag([1.0, 1.0, np.sign(np.linalg.det(u @ vt))])
    return u @ d @ vt


@pytest.mark.parametrize("config", [c for c in CONFIGS])
def test_lcr_lagged_stiffness_is_frozen_rotation_hessian_with_the_same_stress(config):
    f, _ = CONFIGS[config]
    r = _polar_rotation(f)

    def frozen_psi(g):
        s = r.T @ g
        e = 0.5 * (s + s.T) - np.eye(3)
        return MU * np.sum(e * e) + 0.5 * LAM * np.trace(e) ** 2

    def frozen_pk1(g):
        s = r.T @ g
        return 2 * MU * r @ (0.5 * (s + s.T) - np.eye(3)) + LAM * (np.trace(s) - 3) * r

    p_fd, k_fd = _fd_stress_and_stiffness(frozen_psi, frozen_pk1, f, 1e-6)
    p = _pk1("LCR_LAGGED", f)
    np.testing.assert_allclose(p, p_fd, rtol=1e-6, atol=1e-7 * np.abs(p_fd).max())
    np.testing.assert_allclose(p, _pk1("LCR", f), rtol=1e-12, atol=1e-9 * np.abs(p).max())
    np.testing.assert_allclose(_dpdf("LCR_LAGGED", f), k_fd, rtol=1e-5, atol=1e-6 * np.abs(k_fd).max())
    assert _psi("LCR_LAGGED", f) == _psi("LCR", f)


@pytest.mark.parametrize("name,config", _cases(ISOTROPIC))
def test_analytic_projection_equals_eigenvalue_clamping(name, config):
    f, _ = CONFIGS[config]
    k = _dpdf(name, f)
    w, q = np.linalg.eigh(0.5 * (k + k.T))
    clamped = (q * np.maximum(w, 0.0)) @ q.T
    np.testing.assert_allclose(_dpdf(name, f, project=True), clamped, atol=1e-9 * np.abs(k).max())


def test_fixed_corotated_finite_where_rotation_is_undefined():
    f = _f_from_sigma([1.0, 1.0, -1.0], 9)  # sigma_0 + sigma_2 = 0: R jumps, I1 has infinite curvature
    for name in ("FCR", "LCR"):
        k = _dpdf(name, f, project=True)
        assert np.isfinite(_pk1(name, f)).all() and np.isfinite(k).all()
        assert np.linalg.eigvalsh(k).min() > -1e-9 * np.abs(k).max()


# ------------------------------------------------------------------------------------- per-tet assembly
def _setup(rest=REST, tets=TETS):
    dm_inv, vol = rest_shape_data(rest, tets)
    return dm_inv, vol, np.full(len(tets), MU), np.full(len(tets), LAM)


@pytest.mark.parametrize("name", list(MATERIALS))
@pytest.mark.parametrize("seed", [0, 1])
def test_element_gradient_and_hessian_match_finite_differences(name, seed):
    rng = np.random.default_rng(seed)
    data = _setup()
    x = REST + 0.2 * rng.standard_normal(REST.shape)
    if np.linalg.det(np.stack([x[1] - x[0], x[2] - x[0], x[3] - x[0]], 1)) <= 0.1:
        x[3] += np.array([0, 0, 1.0])
    g, h = elastic_gradient_and_hessian_blocks(name, x, TETS, *data, False, True)
    eps = 1e-6
    fd_g = np.empty(12)
    fd_h = np.empty((12, 12))
    for i in range(12):
        xp, xm = x.ravel().copy(), x.ravel().copy()
        xp[i] += eps
        xm[i] -= eps
        xp, xm = xp.reshape(4, 3), xm.reshape(4, 3)
        fd_g[i] = (elastic_energy(name, xp, TETS, *data) - elastic_energy(name, xm, TETS, *data)) / (2 * eps)
        gp, _ = elastic_gradient_and_hessian_blocks(name, xp, TETS, *data, False, False)
        gm, _ = elastic_gradient_and_hessian_blocks(name, xm, TETS, *data, False, False)
        fd_h[:, i] = (gp[0] - gm[0]) / (2 * eps)
    np.testing.assert_allclose(g[0], fd_g, rtol=1e-6, atol=1e-6 * np.abs(fd_g).max())
    if material_info(name).exact_hessian:
        np.testing.assert_allclose(h[0], fd_h, rtol=1e-5, atol=1e-5 * np.abs(fd_h).max())
    else:  # frozen-rotation stiffness: differs from the true Hessian only by the rotation-derivative terms
        assert not np.allclose(h[0], fd_h, rtol=1e-3, atol=1e-3 * np.abs(fd_h).max())


def test_mesh_assembly_matches_directional_derivatives(shared_data):
    from ipcsim.geometry.mesh_io import load_tet_mesh

    rest, tets = load_tet_mesh(shared_data / "ipc/input/tetMeshes/bar-186.msh")
    data = _setup(rest, tets)
    rng = np.random.default_rng(3)
    scale = np.ptp(rest, axis=0).max()
    h_min = np.linalg.norm(rest[tets[:, 1]] - rest[tets[:, 0]], axis=1).min()
    x = rest * np.array([1.2, 0.9, 1.0]) + 0.05 * h_min * rng.standard_normal(rest.shape)
    d = rng.standard_normal(rest.shape)
    rows = (3 * tets[:, :, None] + np.arange(3)).reshape(len(tets), 12)
    for name in MATERIALS:
        def grad(y):
            ge, _ = elastic_gradient_and_hessian_blocks(name, y, tets, *data, False, False)
            out = np.zeros(3 * len(rest))
            np.add.at(out, rows.ravel(), ge.ravel())
            return out

        ge, he = elastic_gradient_and_hessian_blocks(name, x, tets, *data, False, True)
        eps = 1e-6 * scale
        de_fd = (elastic_energy(name, x + eps * d, tets, *data) - elastic_energy(name, x - eps * d, tets, *data)) / (2 * eps)
        g = grad(x)
        assert np.isfinite(de_fd)
        assert np.isclose(g @ d.ravel(), de_fd, rtol=1e-6)
        if material_info(name).exact_hessian:
            hd = np.zeros(3 * len(rest))
            np.add.at(hd, rows.ravel(), np.einsum("eij,ej->ei", he, d.ravel()[rows]).ravel())
            hd_fd = (grad(x + eps * d) - grad(x - eps * d)) / (2 * eps)
            np.testing.assert_allclose(hd, hd_fd, rtol=1e-5, atol=1e-5 * np.abs(hd_fd).max())


# ------------------------------------------------------------------------------------- physical properties
@pytest.mark.parametrize("name", list(MATERIALS))
def test_rest_state_has_zero_energy_and_force(name):
    data = _setup()
    assert abs(elastic_energy(name, REST, TETS, *data)) < 1e-12 * MU
    g, _ = elastic_gradient_and_hessian_blocks(name, REST, TETS, *data, False, False)
    assert np.abs(g).max() < 1e-9 * MU


@pytest.mark.parametrize("name", list(MATERIALS))
def test_rotation_invariance(name, rng):
    data = _setup()
    x = REST + 0.15 * rng.standard_normal(REST.shape)
    q = _rotation(rng)
    y = x @ q.T + np.array([0.3, -2.0, 1.0])
    e_x, e_y = elastic_energy(name, x, TETS, *data), elastic_energy(name, y, TETS, *data)
    g_x, _ = elastic_gradient_and_hessian_blocks(name, x, TETS, *data, False, False)
    g_y, _ = elastic_gradient_and_hessian_blocks(name, y, TETS, *data, False, False)
    e_rigid = elastic_energy(name, REST @ q.T, TETS, *data)
    if material_info(name).rotation_invariant:
        assert np.isclose(e_x, e_y, rtol=1e-10)
        np.testing.assert_allclose(g_y[0].reshape(4, 3), g_x[0].reshape(4, 3) @ q.T, atol=1e-9 * np.abs(g_x).max())
        assert abs(e_rigid) < 1e-10 * MU
    else:  # small-strain elasticity charges finite rotations
        assert not np.isclose(e_x, e_y, rtol=1e-3)
        assert e_rigid > 1e-3 * MU


@pytest.mark.parametrize("name", [m for m in MATERIALS if m != "ABD"])
def test_small_strain_limit_is_linear_elasticity(name):
    h = np.random.default_rng(11).standard_normal((3, 3))
    errors = []
    for t in (1e-2, 1e-3, 1e-4):
        f = np.eye(3) + t * h
        errors.append(abs(_psi(name, f) / _psi("LE", f) - 1.0))
    assert errors[2] < 2e-3  # first order: |ratio - 1| = O(t)
    if name != "LE":
        assert errors[0] > 5 * errors[1] > 25 * errors[2]
    np.testing.assert_allclose(_dpdf(name, np.eye(3)), _dpdf("LE", np.eye(3)), atol=1e-9 * (MU + LAM))


def test_abd_small_strain_limit_is_linear_elasticity_with_four_kappa_shear():
    """ABD: kappa ||F^T F - I||^2 = 4 kappa ||eps||^2 + O(t^3): LE with (mu, lam) = (4 kappa, 0), kappa = MU."""
    h = np.random.default_rng(11).standard_normal((3, 3))
    le = material_info("LE").code
    errors = []
    for t in (1e-2, 1e-3, 1e-4):
        f = np.ascontiguousarray(np.eye(3) + t * h)
        errors.append(abs(_psi("ABD", f) / material_psi(le, f, 4 * MU, 0.0) - 1.0))
    assert errors[2] < 2e-3
    assert errors[0] > 5 * errors[1] > 25 * errors[2]
    _, k_le = material_pk1_and_dpdf(le, np.eye(3), 4 * MU, 0.0, True, False)
    np.testing.assert_allclose(_dpdf("ABD", np.eye(3)), k_le, atol=1e-9 * MU)


def test_abd_energy_is_the_sum_of_squared_stretch_defects():
    """Psi = kappa sum (sigma_i^2 - 1)^2 on the configurations (signed sigma included), and its invariant
    polynomial (the stress path) agrees with the direct form through P = dPsi/dF (finite differences)."""
    for name, (f, _) in CONFIGS.items():
        s = np.linalg.svd(f, compute_uv=False)
        assert np.isclose(_psi("ABD", f), MU * np.sum((s ** 2 - 1) ** 2), rtol=1e-12), name
        p = _pk1("ABD", f)
        np.testing.assert_allclose(p, 4 * MU * f @ (f.T @ f - np.eye(3)), rtol=1e-9, atol=1e-9 * MU, err_msg=name)


@pytest.mark.parametrize("name,config", [(m, c) for m, c in _cases(MATERIALS)
                                         if c in ("strong_compression", "near_singular", "inverted")])
def test_projected_element_hessian_is_psd(name, config):
    f, _ = CONFIGS[config]
    x = REST.copy()
    x[1:] = f.T  # Dm = I for the reference tet, so F = Ds
    data = _setup()
    _, h = elastic_gradient_and_hessian_blocks(name, x, TETS, *data, False, True)
    _, hp = elastic_gradient_and_hessian_blocks(name, x, TETS, *data, True, True)
    assert np.linalg.eigvalsh(hp[0]).min() >= -1e-9 * np.abs(hp[0]).max()  # ABD: all clamped (0) at strong compression
    if name in ISOTROPIC and config in ("strong_compression", "inverted"):
        assert np.linalg.eigvalsh(h[0]).min() < -1e-6 * np.abs(h[0]).max()  # the projection had work to do


def test_inversion_guard_flags_and_inverted_energies():
    x = REST.copy()
    x[3] = [0.2, 0.2, -0.5]
    data = _setup()
    for name in MATERIALS:
        e = elastic_energy(name, x, TETS, *data)
        assert needs_inversion_guard(name) == (name == "NH")
        assert np.isinf(e) if name == "NH" else (np.isfinite(e) and e > 0)


def test_bad_input_raises_value_error_naming_the_argument():
    data = _setup()
    with pytest.raises(ValueError, match="name='XYZ'"):
        elastic_energy("XYZ", REST, TETS, *data)
    with pytest.raises(ValueError, match="x must"):
        elastic_energy("FCR", REST[:, :2], TETS, *data)
    with pytest.raises(ValueError, match="tets"):
        elastic_energy("FCR", REST, TETS + 1, *data)
    with pytest.raises(ValueError, match="mu"):
        elastic_gradient_and_hessian_blocks("FCR", REST, TETS, data[0], data[1], np.ones(2), data[3])
    with pytest.raises(ValueError, match="dm_inv"):
        elastic_energy("LE", REST, TETS, data[0][0], *data[1:])
    assert elastic_energy("SNH", 1.1 * REST, TETS, data[0], data[1], MU, LAM) == pytest.approx(
        elastic_energy("SNH", 1.1 * REST, TETS, *data), rel=1e-14)  # scalar parameters broadcast
