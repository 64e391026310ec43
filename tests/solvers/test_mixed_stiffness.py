"""Mixed stiffness: the default barrier stiffness is chosen per contact from its softer side (issue #13 item 4)."""
from __future__ import annotations

import numpy as np
import pytest

from ipcsim.geometry.voxel_cage import box_tet_mesh
from ipcsim.model import ModelBuilder, State
from ipcsim.solvers.implicit_euler import ContactParameters, FrictionParameters, ImplicitEulerSolver

ipctk = pytest.importorskip("ipctk")


def _scene():
    """A soft cube (E 1e4 Pa) and a heavy stiff cube (E 1e8 Pa, 8000 kg/m^3) thrown at 2 m/s onto the ground, and a
    soft plate (E 1e4 Pa) dropped onto the stiff cube: soft-ground, stiff-ground and soft-on-stiff contacts."""
    v, t = box_tet_mesh((0.1, 0.1, 0.1), (4, 4, 4))
    p, pt = box_tet_mesh((0.16, 0.02, 0.16), (6, 1, 6))
    b = ModelBuilder()
    b.add_body(v, t, youngs_modulus=1e4, density=1000.0, translation=(0.0, 0.005, 0.0), velocity=(0, -2, 0))
    b.add_body(v, t, youngs_modulus=1e8, density=8000.0, translation=(0.2, 0.005, 0.0), velocity=(0, -2, 0))
    b.add_body(p, pt, youngs_modulus=1e4, density=1000.0, translation=(0.17, 0.125, -0.03))
    b.add_ground(0.0)
    return b.finalize()


def _run(kappa, steps=16):
    model, state = _scene()
    solver = ImplicitEulerSolver(model, ContactParameters(dhat=1e-3, kappa=kappa),
                                 friction=FrictionParameters(mu=0.1, eps_v=1e-3))
    mesh = model.collision_mesh
    faces = mesh.faces
    its = []
    for _ in range(steps):
        out = State(state.x.copy(), state.v.copy(), state.t)
        stats = solver.step(state, out, dt=0.01)
        state = out
        its.append(stats.newton_iterations)
        assert stats.converged
        xs = model.surface_map.apply(state.x)
        cm = ipctk.CollisionMesh(xs, mesh.edges, faces)
        assert not ipctk.has_intersections(cm, xs)
    return float(np.mean(its)), solver, state


def test_default_kappa_is_per_contact_from_the_softer_side():
    mean_its, solver, state = _run(None)
    assert solver.kappa == pytest.approx(1e7)  # 0.1 x the stiffest body's modulus ...
    e_rel = solver.vertex_stiffness  # ... scaled per collision vertex by its body's modulus
    body = solver.model.collision_mesh.body
    np.testing.assert_allclose(e_rel[body == 1], 1.0)
    np.testing.assert_allclose(e_rel[(body == 0) | (body == 2)], 1e-4)
    # the old default, one kappa for all = 0.1 x the mean modulus, needs more Newton iterations per step
    old_its, _, _ = _run(0.1 * float(np.mean(solver.model.youngs_modulus)))
    assert mean_its < old_its
    print(f"per contact {mean_its:.2f} its/step, one mean kappa {old_its:.2f}")
