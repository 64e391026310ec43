"""Finite-difference checks of the solver's incremental potential (inertia, elasticity, barrier, lagged friction,
gravity and Neumann loads; dynamic h^2 scaling and quasi-static) against its gradient and Hessian."""

import numpy as np
import pytest

from ipcsim.model import ModelBuilder, box_tet_mesh
from ipcsim.solvers.integrator_solvers import ContactParameters, FrictionParameters, make_solver
from ipcsim.solvers.terms import FrictionTerm

H = 0.01

def _setup(quasi_static, rng):
    v, t = box_tet_mesh((0.1, 0.1, 0.1), (1, 1, 1))
    b = ModelBuilder()
    b.add_body(v, t, translation=(0.0, 5e-4, 0.0), youngs_modulus=1e5)
    b.add_ground(0.0)
    b.add_neumann(0, (0.3, 0.0, -0.2), box=((0.05, -1, -1), (1, 1, 1)))
    model, state = b.finalize()
    solver = make_solver(model, ContactParameters(dhat=1e-3, kappa=1e5),
                         friction=FrictionParameters(mu=0.4, eps_v=1e-3), quasi_static=quasi_static)
    state.v = rng.normal(scale=0.1, size=state.x.shape)  # the predictor x_hat = x + H v
    potential = solver.potential(state, H)  # friction lagged at state.x, gravity and the Neumann load
    assert len(potential.term(FrictionTerm).collisions) == 4  # the four bottom corners touch the ground
    # slide the cube (kinetic for some corners, static for others) and deform it a little
    x = state.x + rng.normal(scale=2e-5, size=state.x.shape) + [1.5e-5, 0.0, 0.0]
    x[:, 1] = np.maximum(x[:, 1], 2e-4)
    return solver, potential, x

@pytest.mark.parametrize("quasi_static", [False, True])
def test_gradient_and_hessian_match_finite_differences(quasi_static, rng):
    solver, pot, x = _setup(quasi_static, rng)
    from ipcsim.contact.broad_phase import build_candidates

    cand = build_candidates(solver.model.collision_mesh, solver._surface(x), None, inflation_radius=1e-3)
    grad, hess, _ = pot.gradient_hessian(pot.evaluation(x, cand))
    d = rng.normal(size=x.shape)
    eps = 1e-8
    e_p = pot.energy(pot.evaluation(x + eps * d, cand))
    e_m = pot.energy(pot.evaluation(x - eps * d, cand))
    fd = (e_p - e_m) / (2 * eps)
    assert fd == pytest.approx(grad @ d.ravel(), rel=1e-5)
    g_p, _, _ = pot.gradient_hessian(pot.evaluation(x + eps * d, cand))
    g_m, _, _ = pot.gradient_hessian(pot.evaluation(x - eps * d, cand))
    np.testing.assert_allclose(hess @ d.ravel(), (g_p - g_m) / (2 * eps), rtol=1e-4,
                               atol=1e-5 * np.abs(hess @ d.ravel()).max())
