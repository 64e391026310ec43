"""IPC's lagged Rayleigh damping (dampingRatio): the term against finite differences and IPC's formula, its
place in the incremental potential, dissipation, rigid motions, and dampingRatio 0 = no damping."""
import numpy as np
import pytest

from ipcsim.contact.broad_phase import build_candidates
from ipcsim.model import ModelBuilder, box_tet_mesh
from ipcsim.solvers.integrator_solvers import ContactParameters, FrictionParameters, ImplicitEulerSolver, make_solver
from ipcsim.solvers.integrators import LaggedRayleighDamping, damping_stiffness
from ipcsim.solvers.terms import DampingTerm, IncrementalPotential

H = 0.01


def _cube(gravity=(0.0, 0.0, 0.0), resolution=2):
    v, t = box_tet_mesh((0.1, 0.1, 0.1), (resolution,) * 3)
    b = ModelBuilder(gravity=gravity)
    b.add_body(v, t, youngs_modulus=1e5)
    return b.finalize()


def _deformed(model, rng, scale=3e-3):
    return model.rest_positions + rng.normal(scale=scale, size=model.rest_positions.shape)


def _run(solver, state, h, steps):
    out = []
    for _ in range(steps):
        new = state.copy()
        assert solver.step(state, new, None, h).converged
        state = new
        out.append(state)
    return out


def _vibrating_cube(rng):
    model, state = _cube()
    c = model.rest_positions.mean(axis=0)
    state.v = 2.0 * (model.rest_positions - c) * [1.0, -0.5, -0.5] + rng.normal(scale=0.05, size=state.v.shape)
    state.v -= (model.mass[:, None] * state.v).sum(axis=0) / model.mass.sum()
    return model, state


def _total_energy(solver, state):
    return 0.5 * float(np.sum(solver.model.mass[:, None] * state.v ** 2)) + solver.elastic.energy(state.x)


def test_damping_term_matches_finite_differences_and_ipc_formula(rng):
    model, _ = _cube()
    solver = ImplicitEulerSolver(model)
    x_t = _deformed(model, rng)
    _, k_t = solver.elastic.gradient_and_hessian(x_t)
    ratio = 0.3
    term = LaggedRayleighDamping.from_ratio(k_t, x_t, ratio, H)
    assert damping_stiffness(ratio, H) == pytest.approx(0.75 * ratio * H ** 3)  # IPC's dampingStiff
    x = x_t + rng.normal(scale=1e-3, size=x_t.shape)
    dx = (x - x_t).ravel()
    assert term.energy(x) == pytest.approx(0.5 * (0.75 * ratio * H ** 2) * dx @ (k_t @ dx), rel=1e-12)
    assert term.energy(x_t) == 0.0
    grad, hess = term.gradient(x), term.hessian()
    d = rng.normal(size=x.shape)
    eps = 1e-6
    fd = (term.energy(x + eps * d) - term.energy(x - eps * d)) / (2 * eps)
    assert fd == pytest.approx(grad @ d.ravel(), rel=1e-7)
    fd_h = (term.gradient(x + eps * d) - term.gradient(x - eps * d)) / (2 * eps)
    np.testing.assert_allclose(hess @ d.ravel(), fd_h, rtol=1e-7, atol=1e-9 * np.abs(fd_h).max())
    np.testing.assert_allclose(hess.toarray(), hess.toarray().T, atol=0)
    assert np.linalg.eigvalsh(hess.toarray()).min() > -1e-12 * np.abs(hess.toarray()).max()


@pytest.mark.parametrize("integrator", ["implicit_euler", "newmark"])
def test_incremental_potential_with_damping_matches_finite_differences(integrator, rng):
    v, t = box_tet_mesh((0.1, 0.1, 0.1), (1, 1, 1))
    b = ModelBuilder()
    b.add_body(v, t, translation=(0.0, 5e-4, 0.0), youngs_modulus=1e5)
    b.add_ground(0.0)
    model, state = b.finalize()
    ratio = 0.4
    solver = make_solver(model, ContactParameters(dhat=1e-3, kappa=1e5), integrator=integrator,
                                 friction=FrictionParameters(mu=0.4), damping_ratio=ratio)
    x_t = state.x.copy()
    x_t[:, 1] += rng.normal(scale=5e-5, size=len(x_t))
    _, k_t = solver.elastic.gradient_and_hessian(x_t)
    state.x = x_t
    state.v = rng.normal(scale=0.1, size=x_t.shape)  # the predictor x_hat = x_t + H v (a = 0)
    damped = solver.potential(state, H)  # friction lagged and damping matrix taken at x_t
    undamped = IncrementalPotential([t for t in damped.terms if not isinstance(t, DampingTerm)],
                                    damped.surface_map)
    x = x_t + rng.normal(scale=2e-5, size=x_t.shape) + [1.5e-5, 0.0, 0.0]
    x[:, 1] = np.maximum(x[:, 1], 2e-4)
    cand = build_candidates(model.collision_mesh, solver._surface(x), None, inflation_radius=1e-3)
    # the damping term is added unweighted (IPC): 1/2 (0.75 ratio h^2) dx^T K_t dx on top of the undamped E
    e = damped.energy(damped.evaluation(x, cand))
    e_undamped = undamped.energy(undamped.evaluation(x, cand))
    g_undamped, h_undamped, _ = undamped.gradient_hessian(undamped.evaluation(x, cand))
    g_damped, h_damped, _ = damped.gradient_hessian(damped.evaluation(x, cand))
    c = 0.75 * ratio * H ** 2
    np.testing.assert_allclose(g_damped - g_undamped, c * (k_t @ (x - x_t).ravel()), rtol=1e-9,
                               atol=1e-12 * np.abs(g_damped).max())
    h_damped, h_undamped = h_damped.tocsr().toarray(), h_undamped.tocsr().toarray()
    np.testing.assert_allclose(h_damped - h_undamped, c * k_t.toarray(), rtol=1e-9,
                               atol=1e-12 * np.abs(h_damped).max())
    dx = (x - x_t).ravel()
    assert e - e_undamped == pytest.approx(0.5 * 0.75 * ratio * H ** 2 * dx @ (k_t @ dx), rel=1e-6)
    grad, hess, _ = damped.gradient_hessian(damped.evaluation(x, cand))
    d = rng.normal(size=x.shape)
    eps = 1e-8
    fd = (damped.energy(damped.evaluation(x + eps * d, cand)) - damped.energy(damped.evaluation(x - eps * d, cand)))
    assert fd / (2 * eps) == pytest.approx(grad @ d.ravel(), rel=1e-5)
    g_p, _, _ = damped.gradient_hessian(damped.evaluation(x + eps * d, cand))
    g_m, _, _ = damped.gradient_hessian(damped.evaluation(x - eps * d, cand))
    np.testing.assert_allclose(hess @ d.ravel(), (g_p - g_m) / (2 * eps), rtol=1e-4,
                               atol=1e-5 * np.abs(hess @ d.ravel()).max())


@pytest.mark.parametrize("integrator", ["implicit_euler", "newmark"])
def test_damping_ratio_zero_is_no_damping_exactly(integrator, rng):
    model, state = _vibrating_cube(rng)
    runs = [_run(make_solver(model, tol=1e-6, integrator=integrator, **kw), state, 2e-3, 5)[-1]
            for kw in ({}, {"damping_ratio": 0.0}, {"damping_ratio": 1e-3})]
    np.testing.assert_array_equal(runs[1].x, runs[0].x)
    np.testing.assert_array_equal(runs[1].v, runs[0].v)
    np.testing.assert_array_equal(runs[1].a, runs[0].a)
    assert np.abs(runs[2].x - runs[0].x).max() > 0.0  # any positive ratio changes the run


@pytest.mark.parametrize("integrator", ["implicit_euler", "newmark"])
def test_damping_dissipates_vibration_energy_monotonically(integrator, rng):
    model, state0 = _vibrating_cube(rng)
    energy = {}
    for ratio in (0.0, 0.1):
        solver = make_solver(model, tol=1e-6, integrator=integrator, damping_ratio=ratio)
        e0 = _total_energy(solver, state0)
        energy[ratio] = np.array([e0] + [_total_energy(solver, s) for s in _run(solver, state0, 2e-3, 40)]) / e0
    assert np.all(np.diff(energy[0.1]) < 0.0)
    assert energy[0.1][-1] < energy[0.0][-1]
    if integrator == "newmark":  # (implicit Euler's own dissipation dwarfs dampingRatio 0.1 at this step)
        assert np.abs(energy[0.0] - 1.0).max() < 0.01  # without damping Newmark keeps the energy
        assert energy[0.1][-1] < 0.2


@pytest.mark.parametrize("integrator", ["implicit_euler", "newmark"])
def test_damping_leaves_a_rigid_translation_alone(integrator):
    model, state = _cube()
    state.v[:] = [0.4, -0.3, 0.2]
    solver = make_solver(model, tol=1e-8, integrator=integrator, damping_ratio=1.0)
    end = _run(solver, state, H, 5)[-1]
    np.testing.assert_allclose(end.v, state.v, atol=1e-12)
    np.testing.assert_allclose(end.x, state.x + 5 * H * state.v, atol=1e-12)
