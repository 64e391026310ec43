"""The solver's caches across steps (issue #11) give the results of fresh computations: the end-of-step active
set kept from the line search equals a static build, and a solver that has stepped before gives the same bits
as a new one (kept pattern and pardiso analysis)."""

import numpy as np

import ipcsim
from ipcsim.contact.broad_phase import build_candidates
from ipcsim.contact.collisions import build_collisions
from ipcsim.model import ModelBuilder, box_tet_mesh

FIELDS = ("kind", "vertices", "primitives", "dtype", "eps_x", "weight")


def _stack():
    """Two boxes 1.5 mm apart, the lower one 1.5 mm above the ground: falling, face-face and ground contact."""
    v, t = box_tet_mesh((0.04, 0.02, 0.04), (3, 2, 3))
    b = ModelBuilder()
    b.add_ground(0.0)
    b.add_body(v, t, translation=(0.0, 1.5e-3, 0.0), material="LCR", youngs_modulus=5e4, poisson_ratio=0.45)
    b.add_body(v, t, translation=(0.01, 0.023, 0.005), material="LCR", youngs_modulus=5e4, poisson_ratio=0.45)
    return b.finalize()


def _solver(model, sanity_check=True):
    return ipcsim.ImplicitEulerSolver(model, ipcsim.ContactParameters(dhat=1e-3, kappa=1e4),
                                      friction=ipcsim.FrictionParameters(mu=0.5, eps_v=1e-3), sanity_check=sanity_check)


def test_kept_end_of_step_active_set_equals_a_static_build():
    model, state = _stack()
    solver = _solver(model)
    mesh, kinds = model.collision_mesh, set()
    for _ in range(16):
        new = state.copy()
        solver.step(state, new, None, 0.01)
        state = new
        _, xs, coll = solver._last_static
        assert np.array_equal(xs, model.surface_map.apply(state.x))
        fresh = build_collisions(mesh, xs, 1e-3, candidates=build_candidates(mesh, xs, None, inflation_radius=5e-4),
                                 **solver._build_args())
        for f in FIELDS:
            assert np.array_equal(getattr(fresh, f), getattr(coll, f)), f
        kinds.update(np.unique(coll.kind).tolist())
    assert len(kinds) >= 2  # ground and body-body stencils were both active


def test_a_solver_that_stepped_before_gives_the_bits_of_a_new_one():
    model, state = _stack()
    solver = _solver(model)
    for _ in range(6):
        new = state.copy()
        solver.step(state, new, None, 0.01)
        state = new
    a, b = state.copy(), state.copy()
    solver.step(state, a, None, 0.01)
    _solver(model, sanity_check=False).step(state, b, None, 0.01)  # in contact
    assert np.array_equal(a.x, b.x) and np.array_equal(a.v, b.v)
