"""Scene 5: a stack of three 1 m cubes (IPC's cube.msh), dropped from small gaps with friction 0.1, comes to
rest on the ground: every step intersection-free and uninverted, velocities decay to the solver's resolution,
the stack neither sinks, creeps nor slides once at rest, and each cube rests within dhat of the one below."""
import numpy as np

from _scene_harness import placed_at, rotation_y, run_scene, velocity_resolution
from ipcsim.geometry.mesh_io import load_tet_mesh
from ipcsim.model import ModelBuilder
from ipcsim.solvers.integrator_solvers import ContactParameters, FrictionParameters, ImplicitEulerSolver

DHAT = 1e-3  # [m]
H = 0.02  # [s]
YOUNG = 1e8  # [Pa]; 1000 kg/m^3 cubes: the bottom one is squeezed by 2.5 * rho g L / E = 2.5e-4 of its height
N_CUBES = 3
STEPS = 40
REST_WINDOW = 10  # the last steps, which must be at rest


def test_three_cube_stack_comes_to_rest(shared_data):
    v, t = load_tet_mesh(shared_data / "ipc/input/tetMeshes/cube.msh")  # [0, 1]^3 [m]
    b = ModelBuilder()
    b.add_ground(0.0)
    # cube k is dropped from 5 cm (times k + 1) above its resting place, offset and turned about y
    for k in range(N_CUBES):
        rot = rotation_y(15.0 * k)
        b.add_body(v, t, rotation=rot, translation=placed_at(v, rot, (0.5 + 0.1 * k, k * 1.05 + 0.05, 0.5 - 0.05 * k)),
                   youngs_modulus=YOUNG)
    model, state = b.finalize()
    n = len(v)
    cubes = [slice(k * n, (k + 1) * n) for k in range(N_CUBES)]
    solver = ImplicitEulerSolver(model, ContactParameters(dhat=DHAT), friction=FrictionParameters(mu=0.1))
    history = []
    state, rec = run_scene(model, state, solver, H, STEPS, "three-cube stack",
                           lambda k, s, stats: history.append((s.x.copy(), s.v.copy())))

    # at rest: Newton stops once ||dx||_inf / h < tol * bbox, so velocities below that are the solver's zero;
    # a body left unsupported would instead gain g h = 0.2 m/s per step, far above it (0.03 m/s here)
    v_tol = velocity_resolution(solver)
    assert v_tol < 9.81 * H
    speeds = np.array([np.abs(vel).max() for _, vel in history])
    assert speeds[:10].max() > 9.81 * H  # it did fall and hit
    assert speeds[-REST_WINDOW:].max() < v_tol
    # no drift at rest: over the last REST_WINDOW steps no vertex moved by as much as dhat
    x_first, x_last = history[-REST_WINDOW][0], history[-1][0]
    assert np.abs(x_last - x_first).max() < DHAT
    # resting heights: each gap (ground-cube, cube-cube) in (0, dhat]; cube k's centre at k + 0.5 m plus the k + 1
    # gaps below it, less the squeeze (< 0.3 mm in all; a slight tilt moves corners, not the centre)
    below = 0.0
    for k, c in enumerate(cubes):
        y = state.x[c, 1]
        assert 0.0 < y.min() - below <= DHAT, f"cube {k}: gap {y.min() - below:.3g} m"
        assert k + 0.5 - 0.3e-3 < y.mean() <= k + 0.5 + (k + 1) * DHAT, f"cube {k}: centre at {y.mean():.6f} m"
        below = y.max()
    assert rec.n_contacts[-1] > 0 and 0.0 < rec.min_distance[-1] < DHAT
