import numpy as np
import pytest

import ipctk
from ipcsim.contact.intersection import has_intersections
from ipcsim.demos.builtin import two_cubes_on_ground
from _tet_checks import count_inverted_tets
from ipcsim.model import ModelBuilder, box_tet_mesh
from ipcsim.solvers.integrator_solvers import ContactParameters, ImplicitEulerSolver, make_solver


def _single_cube(gravity=(0.0, -9.81, 0.0), velocity=(0.0, 0.0, 0.0), material="NH"):
    v, t = box_tet_mesh((0.1, 0.1, 0.1), (2, 2, 2))
    b = ModelBuilder(gravity=gravity)
    b.add_body(v, t, velocity=velocity, material=material)
    return b.finalize()


def test_free_fall_matches_backward_euler_exactly():
    model, state = _single_cube()
    solver = ImplicitEulerSolver(model, tol=1e-10)
    h, g = 0.01, model.gravity
    x_ref, v_ref = state.x.copy(), state.v.copy()
    for _ in range(10):
        new = state.copy()
        solver.step(state, new, None, h)
        state = new
        v_ref = v_ref + h * g  # backward Euler: v_{k+1} = v_k + h g, x_{k+1} = x_k + h v_{k+1}
        x_ref = x_ref + h * v_ref
    np.testing.assert_allclose(state.v, v_ref, atol=1e-9)
    np.testing.assert_allclose(state.x, x_ref, atol=1e-10)


@pytest.mark.parametrize("material", ["NH", "SNH", "FCR"])
def test_momentum_is_conserved_without_gravity_and_contact(material, rng):
    model, state = _single_cube(gravity=(0, 0, 0), material=material)
    state.v = rng.normal(scale=0.5, size=state.v.shape)  # tumbling and deforming
    solver = ImplicitEulerSolver(model, tol=1e-9)
    p0 = (model.mass[:, None] * state.v).sum(0)
    for _ in range(5):
        new = state.copy()
        solver.step(state, new, None, 0.01)
        state = new
    p1 = (model.mass[:, None] * state.v).sum(0)
    np.testing.assert_allclose(p1, p0, atol=1e-9 * np.abs(p0).max())


@pytest.mark.filterwarnings("ignore::ipcsim.model.sanity.SanityWarning")
@pytest.mark.parametrize("scheme", [{}, {"integrator": "newmark", "damping_ratio": 0.1}],
                         ids=["implicit_euler", "newmark_damped"])
def test_two_cubes_stay_intersection_free_and_uninverted(scheme):
    model, state = two_cubes_on_ground(resolution=2)
    mesh = model.collision_mesh
    solver = make_solver(model, ContactParameters(dhat=1e-3), **scheme)
    tk_mesh = ipctk.CollisionMesh(mesh.rest_positions, mesh.edges.astype(np.int32), mesh.faces.astype(np.int32))
    saw_contact = False
    for _ in range(12):
        new = state.copy()
        stats = solver.step(state, new, None, 0.01)
        state = new
        xs = mesh.select_positions(state.x)
        assert not has_intersections(mesh, xs)
        assert not ipctk.has_intersections(tk_mesh, xs)
        assert count_inverted_tets(state.x, model.tets) == 0
        assert state.x[:, 1].min() > 0.0  # above the ground plane
        saw_contact |= stats.n_contacts > 0
        assert stats.converged
    assert saw_contact
    # the upper cube (launched at -1 m/s) landed on the lower one and was slowed down by the contact
    upper = slice(model.n_vertices // 2, None)
    assert state.v[upper, 1].mean() > -0.5


def test_body_at_rest_starts_falling_at_small_time_steps():
    """With h = 1 ms the first Newton direction of a body at rest (|p|/h = g h) is below IPC's tolerance
    (tol * bbox diagonal); it must still be taken, else the body never leaves rest. Backward Euler from rest:
    y_n - y_0 = -g h^2 n (n + 1) / 2."""
    v, t = box_tet_mesh((1.0, 1.0, 1.0), (1, 1, 1))
    b = ModelBuilder()
    b.add_body(v, t, youngs_modulus=1e7)
    model, state = b.finalize()
    solver = ImplicitEulerSolver(model, ContactParameters(dhat=1e-3))
    h, n = 1e-3, 20
    for _ in range(n):
        new = state.copy()
        solver.step(state, new, None, h)
        state = new
    drop = state.x[:, 1].mean() - v[:, 1].mean()
    expected = -9.81 * h * h * n * (n + 1) / 2
    assert abs(drop - expected) < 1e-3 * abs(expected), (drop, expected)
