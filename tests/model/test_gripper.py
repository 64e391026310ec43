"""Grippers (``ModelBuilder.add_gripper``): attached node sets, whole affine bodies and kinematic obstacles follow
x(t) = R(t) (X + s w(t)/2 a) + p(t) of a recorded trajectory; the prescribed velocity is that of the interpolation;
a JSON scene whose gripper closes two soft fingers on a box and lifts it, intersection-free (ipctk) every step."""
import math

import ipctk
import numpy as np
import pytest

from ipcsim.geometry.trajectory import Trajectory, quaternion_matrix
from ipcsim.model import ModelBuilder, box_tet_mesh
from ipcsim.solvers.integrator_solvers import ContactParameters, ImplicitEulerSolver


def _quat(axis, angle):
    a = np.asarray(axis, float) / np.linalg.norm(axis)
    return np.concatenate([[math.cos(angle / 2)], math.sin(angle / 2) * a])


TRAJ = Trajectory([0.0, 0.1, 0.25], [[0.0, 0.2, 0.0], [0.02, 0.25, 0.0], [0.05, 0.25, 0.03]],
                  [_quat([0, 1, 0], 0.0), _quat([0, 1, 0], 0.4), _quat([1, 1, 0], 0.9)], [0.06, 0.04, 0.05])


def _expected(rest, side, t, axis=np.array([1.0, 0.0, 0.0])):
    """The gripper formula written out independently: rest positions into the frame at t = 0, then out at t."""
    p0, pt = TRAJ.pose(0.0), TRAJ.pose(t)
    local = (rest - p0.position) @ p0.rotation - side * p0.width / 2 * axis
    return (local + side * pt.width / 2 * axis) @ pt.rotation.T + pt.position


def test_attachments_follow_the_trajectory_and_start_at_its_velocity():
    v, t = box_tet_mesh((0.02, 0.04, 0.04), (1, 2, 2))
    b = ModelBuilder(gravity=(0, 0, 0))
    left = b.add_body(v, t, translation=(-0.05, 0.18, -0.02))
    right = b.add_body(v, t, translation=(0.03, 0.18, -0.02))
    cube_v, cube_t = box_tet_mesh((0.02, 0.02, 0.02), (2, 2, 2))
    affine = b.add_affine_body(cube_v, cube_t, translation=(-0.01, 0.25, -0.01))
    palm = b.add_obstacle(np.array([[-0.05, 0.3, -0.05], [0.05, 0.3, -0.05], [0.0, 0.3, 0.05]]), np.array([[0, 1, 2]]))
    g = b.add_gripper(TRAJ, [{"body": left, "box": ((-1, 0, -1), (-0.049, 1, 1)), "side": -1},
                             {"body": right, "indices": [1, 3], "side": 1}, {"body": affine},
                             {"obstacle": palm}])
    assert g == 0
    model, state = b.finalize()
    x0 = state.x.copy()
    n_body = len(v)
    sets = {"left": np.flatnonzero(v[:, 0] < 1e-9), "right": 2 * 0 + np.array([1, 3]) + n_body,
            "affine": 2 * n_body + np.arange(4), "palm": 2 * n_body + 4 + np.arange(3)}
    sides = {"left": -1, "right": 1, "affine": 0, "palm": 0}
    for tt in (0.0, 0.05, 0.1, 0.17, 0.25, 0.4):
        target = model.control.targets(x0, 0.0, tt)
        for k, idx in sets.items():
            np.testing.assert_allclose(target[idx], _expected(x0[idx], sides[k], tt), atol=1e-14)
    assert model.control.prescribed_mask(model.fixed, 0.0, 0.01)[np.concatenate(list(sets.values()))].all()
    # the affine body's 4 nodes move rigidly: its map A = R(t) stays a rotation
    xa = model.control.targets(x0, 0.0, 0.17)[sets["affine"]]
    ds0, ds1 = (np.stack([y[k] - y[0] for k in (1, 2, 3)], 1) for y in (x0[sets["affine"]], xa))
    a_map = ds1 @ np.linalg.inv(ds0)
    np.testing.assert_allclose(a_map, TRAJ.pose(0.17).rotation @ TRAJ.pose(0.0).rotation.T, atol=1e-13)
    # the initial velocity of attached nodes is the derivative of the interpolated motion at t = 0
    eps = 1e-7
    fd = (model.control.targets(x0, 0.0, eps) - x0) / eps
    for idx in sets.values():
        np.testing.assert_allclose(state.v[idx], fd[idx], atol=2e-6)  # measured 4e-8 (forward difference)
    assert np.abs(state.v[sets["left"]]).max() > 0.1


def test_stepping_prescribes_the_pose_and_the_velocity_of_the_interpolation():
    cube_v, cube_t = box_tet_mesh((0.02, 0.02, 0.02), (2, 2, 2))
    b = ModelBuilder(gravity=(0, 0, 0))
    body = b.add_affine_body(cube_v, cube_t, translation=(-0.01, 0.25, -0.01))
    b.add_gripper(TRAJ, [{"body": body}])
    model, state = b.finalize()
    x0 = state.x.copy()
    solver = ImplicitEulerSolver(model, ContactParameters(dhat=1e-3, kappa=1e4), tol=1e-6)
    h = 0.04
    for _ in range(8):
        new = state.copy()
        solver.step(state, new, None, h)
        np.testing.assert_allclose(new.x, _expected(x0, 0, new.t), atol=1e-14)
        # implicit Euler: v = (x(t1) - x(t0)) / h, the finite difference of the interpolated pose over the step
        np.testing.assert_allclose(new.v, (_expected(x0, 0, new.t) - _expected(x0, 0, state.t)) / h, atol=1e-10)
        state = new


def test_bad_attachments_are_named():
    v, t = box_tet_mesh((0.02, 0.02, 0.02), (1, 1, 1))
    b = ModelBuilder()
    b.add_body(v, t)
    b.add_obstacle(v + 1.0, None, velocity=(0, 1, 0))
    with pytest.raises(ValueError, match="attachment 0: side must be"):
        b.add_gripper(TRAJ, [{"body": 0, "side": 2}])
    with pytest.raises(ValueError, match="attachment 1: no body 3"):
        b.add_gripper(TRAJ, [{"body": 0}, {"body": 3}])
    with pytest.raises(ValueError, match="obstacle 0 has a motion of its own"):
        b.add_gripper(TRAJ, [{"obstacle": 0}])
    with pytest.raises(ValueError, match="holds no vertex"):
        b.add_gripper(TRAJ, [{"body": 0, "box": ((5, 5, 5), (6, 6, 6))}])
    with pytest.raises(ValueError, match="axis"):
        b.add_gripper(TRAJ, [{"body": 0}], axis=(0, 0, 0))
    b.add_gripper(TRAJ, [{"body": 0, "indices": [0, 1]}])
    b.add_gripper(TRAJ, [{"body": 0, "indices": [1, 2], "side": 1}])
    with pytest.raises(ValueError, match="gripper 1, attachment 0: node 1 is also carried by gripper 0, attachment 0"):
        b.finalize()


# ------------------------------------------------------------------------------------------- end to end (JSON)
GRASP_CSV = """time,x,y,z,qw,qx,qy,qz,width
0.0,0.0,0.08,0.0,1,0,0,0,0.064
0.24,0.0,0.08,0.0,1,0,0,0,0.0385
0.32,0.0,0.08,0.0,1,0,0,0,0.0385
0.64,0.0,0.11,0.0,1,0,0,0,0.0385
"""


def grasp_scene(directory):
    """Two soft fingers (2 x 3 x 3 cm, E = 5e4 Pa) mounted on a gripper by their outer faces, a palm plate (a
    kinematic obstacle) on the same frame, a 4 cm stiff affine box on the ground between them: the fingers close
    from 6.4 to 3.85 cm (0.75 mm squeeze per side), hold, and the gripper lifts 3 cm."""
    (directory / "grasp.csv").write_text(GRASP_CSV)
    finger = {"box": {"size": [0.02, 0.03, 0.03], "resolution": [2, 2, 2]}}
    mat = {"model": "NH", "density": 1000.0, "youngs_modulus": 5e4, "poisson_ratio": 0.3}
    return {
        "name": "grasp", "time": {"end": 0.64, "dt": 0.02},
        "contact": {"dhat": 5e-4}, "friction": {"mu": 0.8, "eps_v": 1e-3},
        "solver": {"tol": 1e-3},
        "bodies": [
            {"name": "box", "mesh": {"box": {"size": [0.04, 0.04, 0.04], "resolution": [2, 2, 2]}},
             "transform": {"translation": [-0.02, 0.0006, -0.02]}, "material": {"density": 300.0},
             "affine": {"stiffness": 1e6}},
            {"name": "left", "mesh": finger, "material": mat, "transform": {"translation": [-0.052, 0.006, -0.015]}},
            {"name": "right", "mesh": finger, "material": mat, "transform": {"translation": [0.032, 0.006, -0.015]}},
        ],
        "obstacles": [{"name": "palm", "mesh": {"box": {"size": [0.1, 0.004, 0.04], "resolution": [1, 1, 1]}},
                       "transform": {"translation": [-0.05, 0.05, -0.02]}}],
        "half_spaces": [{"origin": [0, 0, 0], "normal": [0, 1, 0], "friction": 0.8}],
        "grippers": [{"trajectory": "grasp.csv", "axis": [1, 0, 0], "attachments": [
            {"body": "left", "box": {"min": [0, 0, 0], "max": [0.01, 1, 1]}, "side": -1},
            {"body": "right", "box": {"min": [0.99, 0, 0], "max": [1, 1, 1]}, "side": 1},
            {"obstacle": "palm"}]}],
    }


def test_gripper_scene_closes_on_and_lifts_a_box_intersection_free(tmp_path):
    from ipcsim.scene.loader import Scene

    scene = Scene.from_dict(grasp_scene(tmp_path), tmp_path, "grasp.json")
    assert scene.data["grippers"][0]["trajectory"] == str(tmp_path / "grasp.csv")
    assert Scene.from_dict(scene.data, "/", "resolved.json").data == scene.data  # the resolved scene reloads
    sim = scene.build()
    model, state, solver = sim.model, sim.state, sim.solver
    mesh = model.collision_mesh
    tk = ipctk.CollisionMesh(mesh.rest_positions, mesh.edges.astype(np.int32), mesh.faces.astype(np.int32))
    box = mesh.body == 0
    y0 = model.surface_positions(state.x)[box, 1].min()
    contacts = []
    for _ in range(round(0.64 / 0.02)):
        new = state.copy()
        stats = solver.step(state, new, None, 0.02)
        assert stats.converged
        state = new
        xs = model.surface_positions(state.x)
        assert not ipctk.has_intersections(tk, xs), state.t
        contacts.append(stats.n_contacts)
    xs = model.surface_positions(state.x)
    lift = xs[box, 1].min() - y0
    # the gripper rose 30 mm; the box, held by friction, rose with it: measured 29.75 mm (it first settled 0.1 mm
    # onto the ground; the fingers sag 0.15 mm). Fingers that do not close (width held at 6.4 cm) lift nothing.
    assert 0.029 < lift < 0.0301, lift
    assert max(contacts) > 50
    assert abs(xs[box, 0].mean()) < 1e-3  # still centred between the fingers


def test_example_gripper_turns_the_box_by_slerp():
    """examples/scenes/gripper.json: after the lift the gripper turns 90 degrees about the vertical (slerp between
    two samples); the box turns with it, intersection-free."""
    from pathlib import Path

    from ipcsim.scene import load_scene

    sim = load_scene(Path(__file__).resolve().parents[2] / "examples" / "scenes" / "gripper.json").build()
    model, state, solver = sim.model, sim.state, sim.solver
    mesh = model.collision_mesh
    tk = ipctk.CollisionMesh(mesh.rest_positions, mesh.edges.astype(np.int32), mesh.faces.astype(np.int32))
    box = mesh.body == 0
    xs0 = model.surface_positions(state.x)[box]
    for _ in range(round(sim.end_time / sim.dt)):
        new = state.copy()
        assert solver.step(state, new, None, sim.dt).converged
        state = new
        assert not ipctk.has_intersections(tk, model.surface_positions(state.x)), state.t
    xb = model.surface_positions(state.x)[box]
    u, _, vt = np.linalg.svd((xs0 - xs0.mean(0)).T @ (xb - xb.mean(0)))
    rot = (u @ vt).T  # the box's best-fit rotation
    # measured: 90.87 degrees about +y (the fingers' grip slips 0.9 degrees); lifted 29.8 of 30 mm
    np.testing.assert_allclose(rot, quaternion_matrix([math.cos(math.pi / 4), 0, math.sin(math.pi / 4), 0]),
                               atol=0.03)
    assert 0.029 < xb[:, 1].min() - xs0[:, 1].min() < 0.0301
