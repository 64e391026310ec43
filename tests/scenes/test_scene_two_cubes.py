"""Scene 1: two 1 m cubes (IPC's cube.msh, 6 tets each) fall onto each other and onto the ground, with friction
0.1 as in IPC's tutorialExamples/2cubesFall.txt. Every step stays intersection-free and uninverted; the pair
comes to rest stacked: the bottom cube within dhat of the ground, the top one within dhat of the bottom one, the
top face at y ~ 2 m."""
import numpy as np
import pytest

from _scene_harness import placed_at, rotation_y, run_scene, velocity_resolution
from ipcsim.geometry.mesh_io import load_tet_mesh
from ipcsim.model import ModelBuilder
from ipcsim.solvers.integrator_solvers import ContactParameters, FrictionParameters, ImplicitEulerSolver

DHAT = 1e-3  # [m]
H = 0.02  # [s]
# Stiff enough that self-weight compression stays far below dhat: sigma / E = rho g L / E ~ 1e-4 per cube.
YOUNG = 1e8  # [Pa]


def test_two_cubes_fall_and_rest_stacked(shared_data):
    v, t = load_tet_mesh(shared_data / "ipc/input/tetMeshes/cube.msh")  # [0, 1]^3 [m]
    b = ModelBuilder()
    b.add_ground(0.0)
    b.add_body(v, t, translation=(0.0, 0.1, 0.0), youngs_modulus=YOUNG)
    # the top cube is turned 20 degrees about y: its bottom edges cross the bottom cube's top edges (edge-edge)
    rot = rotation_y(20.0)
    b.add_body(v, t, rotation=rot, translation=placed_at(v, rot, (0.6, 1.4, 0.55)), youngs_modulus=YOUNG)
    model, state = b.finalize()
    n = len(v)
    solver = ImplicitEulerSolver(model, ContactParameters(dhat=DHAT), friction=FrictionParameters(mu=0.1))
    first_contact = {}

    def on_step(k, s, stats):
        if stats.n_contacts and "ground" not in first_contact:
            first_contact["ground"] = k
        if s.x[n:, 1].min() - s.x[:n, 1].max() < DHAT and "cubes" not in first_contact:
            first_contact["cubes"] = k

    state, rec = run_scene(model, state, solver, H, 30, "two cubes", on_step)
    # free fall of 0.1 m takes sqrt(2 * 0.1 / 9.81) = 0.14 s = 7 steps: contact well within the run
    assert first_contact["ground"] <= 10 and first_contact["cubes"] <= 15
    bottom, top = state.x[:n], state.x[n:]
    assert 0.0 < bottom[:, 1].min() <= DHAT  # resting on the ground, inside the barrier's reach
    assert 0.0 < top[:, 1].min() - bottom[:, 1].max() <= DHAT  # top cube on the bottom one
    # centres at 0.5 m and 1.5 m plus the gaps below them (each within dhat), less the squeeze (< 0.3 mm)
    assert 0.5 - 0.3e-3 < bottom[:, 1].mean() <= 0.5 + DHAT
    assert 1.5 - 0.3e-3 < top[:, 1].mean() <= 1.5 + 2 * DHAT
    assert top[:, 1].max() == pytest.approx(2.0, abs=3 * DHAT)  # two gaps and a tilt within dhat
    np.testing.assert_allclose(state.v, 0.0, atol=velocity_resolution(solver))  # at rest (Newton's resolution)
    assert rec.n_contacts[-1] > 0 and 0.0 < rec.min_distance[-1] < DHAT
