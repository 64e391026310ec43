"""Finite-difference checks of the solver's incremental potential (inertia, elasticity, barrier, lagged friction,
gravity and Neumann loads; dynamic h^2 scaling and quasi-static) against its gradient and Hessian."""

import numpy as np
import pytest

from ipcsim.model import ModelBuilder, box_tet_mesh
from ipcsim.solvers.implicit_euler import ContactParameters, FrictionParameters, ImplicitEulerSolver

H = 0.01

def _setup(quasi_static, rng):
    v, t = box_tet_mesh((0.1, 0.1, 0.1), (1, 1, 1))
    b = ModelBuilder()
    b.add_body(v, t, translation=(0.0, 5e-4, 0.0), youngs_modulus=1e5)
    b.add_ground(0.0)
    b.add_neumann(0, (0.3, 0.0, -0.2), box=((0.05, -1, -1), (1, 1, 1)))
    model, state = b.finalize()
    solver = ImplicitEulerSolver(model, ContactParameters(dhat=1e-3, kappa=1e5),
                                 friction=FrictionParameters(mu=0.4, eps_v=1e-3), quasi_static=quasi_static)
    solver._xs_lag = solver._surface(state.x)
    solver._lag_friction(state.x, H)
    assert len(solver._fc) == 4  # the four bottom corners touch the ground
    x_hat = state.x + H * rng.normal(scale=0.1, size=state.x.shape)
    # slide the cube (kinetic for some corners, static for others) and deform it a little
    x = state.x + rng.normal(scale=2e-5, size=state.x.shape) + [1.5e-5, 0.0, 0.0]
    x[:, 1] = np.maximum(x[:, 1], 2e-4)
    f_ext = model.mass[:, None] * model.gravity + model.control.external_forces(model.n_vertices, H)
    return solver, x, x_hat, f_ext

@pytest.mark.parametrize("quasi_static", [False, True])
def test_gradient_and_hessian_match_finite_differences(quasi_static, rng):
    solver, x, x_hat, f_ext = _setup(quasi_static, rng)
    from ipcsim.contact.broad_phase import build_candidates

    cand = build_candidates(solver.model.collision_mesh, solver._surface(x), None, inflation_radius=1e-3)
    grad, hess, _ = solver._gradient_hessian(x, x_hat, H, cand, f_ext)
    d = rng.normal(size=x.shape)
    eps = 1e-8
    e_p = solver.energy(x + eps * d, x_hat, H, cand, f_ext)
    e_m = solver.energy(x - eps * d, x_hat, H, cand, f_ext)
    fd = (e_p - e_m) / (2 * eps)
    assert fd == pytest.approx(grad @ d.ravel(), rel=1e-5)
    g_p, _, _ = solver._gradient_hessian(x + eps * d, x_hat, H, cand, f_ext)
    g_m, _, _ = solver._gradient_hessian(x - eps * d, x_hat, H, cand, f_ext)
    np.testing.assert_allclose(hess @ d.ravel(), (g_p - g_m) / (2 * eps), rtol=1e-4,
                               atol=1e-5 * np.abs(hess @ d.ravel()).max())
