"""The Newton solve's CCD-bounded extrapolated start (``solvers.warm_start``, ``NewtonSolver(warm_start=True)``)."""
import numpy as np

from ipcsim.contact.intersection import has_intersections
from ipcsim.model import ModelBuilder, box_tet_mesh
from ipcsim.solvers.integrator_solvers import ContactParameters, ImplicitEulerSolver
from ipcsim.solvers.validation import validate_updates
from ipcsim.solvers.warm_start import extrapolated_start


def _flying_box(gravity=(0.0, 0.0, 0.0), y=0.5):
    v, t = box_tet_mesh((0.1, 0.1, 0.1), (1, 1, 1))
    b = ModelBuilder(gravity=gravity)
    b.add_body(v, t, translation=(0.0, y, 0.0), youngs_modulus=1e5)
    b.add_ground(0.0)
    return b.finalize()


def test_a_free_flight_is_solved_at_the_extrapolated_start_in_one_iteration():
    """No force: implicit Euler's step is x + h v exactly, where the warm start begins; from x^t the first
    increment is h v (above the tolerance) and a second iteration checks it."""
    h, vel = 0.02, np.array([0.3, 0.1, -0.2])
    counts = {}
    for warm in (True, False):
        model, state = _flying_box()
        state.v = np.tile(vel, (model.n_vertices, 1))
        solver = ImplicitEulerSolver(model, ContactParameters(dhat=1e-3), warm_start=warm)
        new = state.copy()
        st = solver.step(state, new, None, h)
        assert st.converged
        np.testing.assert_allclose(new.x, state.x + h * vel, atol=1e-12)
        counts[warm] = st.newton_iterations
    assert counts == {True: 1, False: 2}


def test_the_start_stops_short_of_the_ground_and_the_update_is_checked():
    """A box 1 cm above the ground falling at 2 m/s: x + h v (h = 0.02 s) is 4 cm further down, through the ground.
    The start takes the CCD bound (alpha < 1), stays above the ground, and the validation hook sees the move."""
    model, state = _flying_box(y=0.01)
    state.v = np.tile([0.0, -2.0, 0.0], (model.n_vertices, 1))
    solver = ImplicitEulerSolver(model, ContactParameters(dhat=1e-3), warm_start=True)
    prescribed = np.zeros(model.n_vertices, bool)
    seen = []
    with validate_updates(lambda mesh, xs0, xs1: seen.append((xs0.copy(), xs1.copy()))):
        x0, alpha, candidates = extrapolated_start(solver, state.x, state.v, prescribed, state.x, 0.02)
    assert 0.0 < alpha < 0.25  # the 1 cm gap of a 4 cm move (measured 0.225: CCD keeps a 10 % margin)
    assert x0[:, 1].min() > 0.0
    np.testing.assert_allclose(x0, state.x + alpha * 0.02 * state.v, atol=1e-15)
    assert len(seen) == 1 and candidates is not None
    np.testing.assert_array_equal(seen[0][1], model.surface_map.apply(x0))
    # and whole steps with it stay intersection-free and above the ground
    for _ in range(5):
        new = state.copy()
        solver.step(state, new, None, 0.02)
        state = new
        assert state.x[:, 1].min() > 0.0
        assert not has_intersections(model.collision_mesh, model.surface_map.apply(state.x))


def test_prescribed_nodes_start_at_their_targets():
    """A Dirichlet set moving at 0.5 m/s: the start puts it on its target, so no prescribed iteration is spent."""
    v, t = box_tet_mesh((0.1, 0.1, 0.1), (2, 2, 2))
    b = ModelBuilder(gravity=(0.0, 0.0, 0.0))
    body = b.add_body(v, t, translation=(0.0, 0.5, 0.0), youngs_modulus=1e5)
    b.add_dirichlet(body, box=((-1.0, -1.0, -1.0), (1.0, 0.52, 1.0)), velocity=(0.0, 0.5, 0.0))
    model, state = b.finalize()
    stats = {}
    for warm in (True, False):
        solver = ImplicitEulerSolver(model, ContactParameters(dhat=1e-3), warm_start=warm)
        new = state.copy()
        stats[warm] = solver.step(state, new, None, 0.02)
    assert stats[True].prescribed_iterations == 0
    assert stats[False].prescribed_iterations == 1
