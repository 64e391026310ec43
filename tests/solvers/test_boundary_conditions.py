"""Dirichlet vertex sets, Neumann loads, initial rigid velocities, quasi-static solves."""
import numpy as np
import pytest

from ipcsim.model import ModelBuilder, box_tet_mesh
from ipcsim.solvers.integrator_solvers import ImplicitEulerSolver, make_solver

H = 0.01


def _bar(res=(4, 1, 1)):
    return box_tet_mesh((0.4, 0.1, 0.1), res)


def _steps(solver, state, n, h=H):
    for _ in range(n):
        new = state.copy()
        stats = solver.step(state, new, None, h)
        assert stats.converged
        state = new
    return state


def test_dirichlet_box_follows_its_motion_then_is_released():
    v, t = _bar()
    b = ModelBuilder(gravity=(0.0, 0.0, 0.0))
    b.add_body(v, t, youngs_modulus=1e5)
    b.add_dirichlet(0, box=((-1, -1, -1), (0.01, 1, 1)), velocity=(0.0, 0.5, 0.0), time_range=(0.0, 0.05))
    model, state = b.finalize()
    sel = np.flatnonzero(v[:, 0] < 0.01)
    assert len(sel) == 4
    solver = ImplicitEulerSolver(model, tol=1e-6)
    x0 = state.x.copy()
    state = _steps(solver, state, 5)
    np.testing.assert_allclose(state.x[sel], x0[sel] + [0.0, 0.025, 0.0], atol=1e-12)
    rest = ~np.isin(np.arange(len(v)), sel)
    assert np.all(state.x[rest, 1] - x0[rest, 1] < 0.025)  # the rest lags behind
    y_clamped = state.x[sel, 1].copy()
    state = _steps(solver, state, 3)
    assert not np.allclose(state.x[sel, 1] - y_clamped, 3 * H * 0.5)  # released: no longer driven


def test_dirichlet_rotation_about_center_by_indices():
    v, t = _bar()
    b = ModelBuilder(gravity=(0.0, 0.0, 0.0))
    b.add_body(v, t)
    idx = np.flatnonzero(v[:, 0] > 0.39)
    b.add_dirichlet(0, indices=idx, angular_velocity=(1.0, 0.0, 0.0))
    model, state = b.finalize()
    solver = ImplicitEulerSolver(model, tol=1e-6)
    x0 = state.x[idx].copy()
    c = x0.mean(0)
    state = _steps(solver, state, 4)
    ang = 4 * H * 1.0
    r = np.array([[1, 0, 0], [0, np.cos(ang), -np.sin(ang)], [0, np.sin(ang), np.cos(ang)]])
    np.testing.assert_allclose(state.x[idx], c + (x0 - c) @ r.T, atol=1e-12)


def test_neumann_load_impulse_matches_force_times_active_time():
    v, t = box_tet_mesh((0.1, 0.1, 0.1), (1, 1, 1))
    b = ModelBuilder(gravity=(0.0, 0.0, 0.0))
    b.add_body(v, t, youngs_modulus=1e5)
    b.add_neumann(0, (0.0, 0.0, 2.0), box=((0.05, -1, -1), (1, 1, 1)), time_range=(0.0, 0.03))
    model, state = b.finalize()
    n_loaded = int(np.sum(v[:, 0] > 0.05))
    solver = ImplicitEulerSolver(model, tol=1e-6)
    state = _steps(solver, state, 6)
    momentum = (model.mass[:, None] * state.v).sum(0)
    # implicit Euler samples the load at the end of each step: t = 0.01, 0.02, 0.03 are inside the range
    np.testing.assert_allclose(momentum, [0.0, 0.0, n_loaded * 2.0 * 0.03], atol=1e-8)


def test_initial_angular_velocity_is_a_rigid_spin():
    v, t = box_tet_mesh((0.1, 0.1, 0.1), (2, 2, 2))
    b = ModelBuilder(gravity=(0.0, 0.0, 0.0))
    w = np.array([0.0, 3.0, 1.0])
    b.add_body(v, t, velocity=(1.0, 0.0, 0.0), angular_velocity=w)
    model, state = b.finalize()
    r = v - v.mean(0)
    np.testing.assert_allclose(state.v, [1.0, 0.0, 0.0] + np.cross(w, r), atol=1e-14)
    np.testing.assert_allclose((model.mass[:, None] * state.v).sum(0), [model.mass.sum(), 0, 0], atol=1e-12)


def test_selection_errors_name_the_argument():
    v, t = _bar()
    b = ModelBuilder()
    b.add_body(v, t)
    with pytest.raises(ValueError, match="no body 3"):
        b.add_dirichlet(3, indices=[0])
    with pytest.raises(ValueError, match="exactly one of box and indices"):
        b.add_neumann(0, (0, 0, 1))
    with pytest.raises(ValueError, match="no vertex"):
        b.add_dirichlet(0, box=((5, 5, 5), (6, 6, 6)))
    with pytest.raises(ValueError, match="time_range"):
        b.add_dirichlet(0, indices=[0], time_range=(1.0, 0.0))
    with pytest.raises(ValueError, match="indices out of range"):
        b.add_dirichlet(0, indices=[10_000])


def _clamped_bar():
    v, t = _bar((6, 2, 2))
    b = ModelBuilder(gravity=(0.0, -9.81, 0.0))
    b.add_body(v, t, youngs_modulus=2e5, poisson_ratio=0.3, fixed=v[:, 0] < 1e-9)
    return b.finalize()


def test_quasi_static_sag_matches_settled_dynamics():
    model, state = _clamped_bar()
    qs = make_solver(model, quasi_static=True, tol=1e-6)
    eq = state.copy()
    stats = qs.step(state, eq, None, 1.0)
    assert stats.converged
    tip = model.rest_positions[:, 0] > 0.399
    sag = -eq.x[tip, 1].mean() + model.rest_positions[tip, 1].mean()
    assert sag > 5e-3  # a visible deflection
    # a second quasi-static step from the equilibrium stays there
    again = eq.copy()
    qs.step(eq, again, None, 1.0)
    np.testing.assert_allclose(again.x, eq.x, atol=1e-6 * 0.4)
    dyn = ImplicitEulerSolver(model, tol=1e-6)
    settled = _steps(dyn, state, 50, h=0.05)  # implicit Euler's numerical damping settles the bar
    assert np.abs(settled.v).max() < 1e-3
    np.testing.assert_allclose(settled.x, eq.x, atol=1e-3 * sag)  # measured: 1.0e-4 sag (9.4e-6 m of 0.093 m)


@pytest.mark.filterwarnings("ignore::ipcsim.model.sanity.SanityWarning")
def test_quasi_static_compression_by_a_kinematic_plate():
    """A cube on the ground squeezed by a plate obstacle moving down 3 mm per load step: each step is an
    equilibrium, intersection-free, and the cube's height follows the plate. (The cube starts within dhat of
    the ground and the plate: without gravity and inertia a free-floating cube would have no equilibrium.)"""
    import ipctk

    from ipcsim.solvers.integrator_solvers import ContactParameters

    v, t = box_tet_mesh((0.1, 0.1, 0.1), (2, 2, 2))
    pv, pt = box_tet_mesh((0.2, 0.01, 0.2), (1, 1, 1))
    b = ModelBuilder(gravity=(0.0, 0.0, 0.0))
    b.add_body(v, t, translation=(0.0, 5e-4, 0.0), youngs_modulus=1e5)
    b.add_ground(0.0)
    b.add_obstacle(pv, pt, translation=(-0.05, 0.1 + 1e-3, -0.05), velocity=(0.0, -0.3, 0.0))
    model, state = b.finalize()
    n = len(v)
    mesh = model.collision_mesh
    tk = ipctk.CollisionMesh(mesh.rest_positions, mesh.edges.astype(np.int32), mesh.faces.astype(np.int32))
    solver = make_solver(model, ContactParameters(dhat=1e-3, kappa=1e5), quasi_static=True, tol=1e-5)
    for k in range(1, 4):
        new = state.copy()
        assert solver.step(state, new, None, H).converged
        state = new
        assert not ipctk.has_intersections(tk, mesh.select_positions(state.x))
        plate_bottom = state.x[n:, 1].min()
        assert plate_bottom == pytest.approx(0.1 + 1e-3 - 3e-3 * k, abs=1e-12)
        assert 0.0 < state.x[:n, 1].min() and state.x[:n, 1].max() < plate_bottom
        assert plate_bottom - state.x[:n, 1].max() < 1e-3  # in contact with the plate (within dhat)


def test_fully_prescribed_body_and_singular_quasi_static():
    v, t = box_tet_mesh((0.1, 0.1, 0.1), (1, 1, 1))
    b = ModelBuilder()
    b.add_body(v, t)
    b.add_dirichlet(0, indices=np.arange(len(v)), velocity=(0.0, 0.0, 1.0))
    model, state = b.finalize()
    new = state.copy()
    assert ImplicitEulerSolver(model).step(state, new, None, H).converged
    np.testing.assert_allclose(new.x, state.x + [0.0, 0.0, H], atol=1e-14)
    b = ModelBuilder()
    b.add_body(v, t)
    model, state = b.finalize()  # free-floating: no quasi-static equilibrium under gravity
    with pytest.raises(ValueError, match="body 0 has no Dirichlet vertex and no contact"):
        make_solver(model, quasi_static=True).step(state, state.copy(), None, H)
