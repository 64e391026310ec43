"""Scene 3: IPC's bunny.msh (4670 vertices, 19379 tets, 3 m tall) scaled to 1 m and dropped into IPC's bowl.obj
(a static triangle obstacle, 10 m wide and 2.5 m deep, 2560 triangles), off centre on the bowl's slope.

The full-resolution bunny is kept (every surface vertex counts for contact); it is scaled down so that it fits
the bowl's floor and falls only a few centimetres before it lands (a short run). Every step is intersection-free
and uninverted; the bunny lands on the bowl (never below it, within dhat of it) and, on the slope, slides towards
the bowl's centre.
"""
import numpy as np
import pytest

from _scene_harness import load_triangle_mesh, placed_at, run_scene, surface_heights
from ipcsim.geometry.mesh_io import load_tet_mesh
from ipcsim.model import ModelBuilder
from ipcsim.solvers.integrator_solvers import ContactParameters, ImplicitEulerSolver

# bunny.msh has a few surface pairs closer than dhat to each other at rest (1.4e-4 m once scaled): the barrier
# between them is active from the start, which the scene check reports as a warning
pytestmark = pytest.mark.filterwarnings("ignore::ipcsim.model.sanity.SanityWarning")

DHAT = 1e-3  # [m]
H = 0.02  # [s]
START = (0.5, 0.03)  # [m]: the bunny's x offset from the bowl's axis, the height of its lowest point over the floor


def test_bunny_lands_in_bowl_and_slides_to_centre(shared_data):
    bv, bt = load_tet_mesh(shared_data / "ipc/input/tetMeshes/bunny.msh")
    wv, wf = load_triangle_mesh(shared_data / "ipc/input/triMeshes/bowl.obj")
    floor = wv[:, 1].min()  # -2.5 m, on the axis
    bv = bv / 3.0
    b = ModelBuilder()
    eye = np.eye(3)
    b.add_body(bv, bt, translation=placed_at(bv, eye, (START[0], floor + START[1], 0.0)), youngs_modulus=1e6)
    b.add_obstacle(wv, wf)
    model, state = b.finalize()
    n = len(bv)
    bowl = np.arange(n, model.n_vertices)
    bowl_faces = wf + n  # rows into the full vertex array
    mesh = model.collision_mesh
    bunny_surface = mesh.full_vertex_index[~mesh.is_obstacle]
    solver = ImplicitEulerSolver(model, ContactParameters(dhat=DHAT))
    centre_x = []

    def on_step(k, s, stats):
        centre_x.append(float(s.x[:n, 0].mean()))

    state, rec = run_scene(model, state, solver, H, 8, "bunny in bowl", on_step)
    np.testing.assert_array_equal(state.x[bowl], model.rest_positions[bowl])  # the static bowl did not move
    # the bunny's lowest surface vertices against the bowl right under them: vertical gaps positive, the
    # smallest within the barrier's reach (vertical gap = distance / cos(slope), slope < 6 degrees there)
    xs = state.x[bunny_surface]
    low = xs[xs[:, 1] < xs[:, 1].min() + 0.05]
    gaps = low[:, 1] - surface_heights(low, state.x, bowl_faces)
    assert np.all(np.isfinite(gaps))
    assert gaps.min() > 0.0 and gaps.min() <= 1.01 * DHAT
    # landed: from 0.6 m/s at impact, the centre of mass has (almost) stopped falling ...
    v_centre = (model.mass[:n, None] * state.v[:n]).sum(0) / model.mass[:n].sum()
    assert abs(v_centre[1]) < 0.1
    # ... and the slope pushes it towards the axis: it moves in -x, faster and faster
    assert v_centre[0] < 0.0 and np.all(np.diff(centre_x[-4:]) < 0.0)
