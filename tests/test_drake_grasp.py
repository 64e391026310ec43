"""benchmarks/drake_grasp.py and its scene builder benchmarks/_drake_scene.py (issue #23 item 5): the measurements
on hand-made meshes (no Drake needed), and the pydrake scene built and stepped once (skips only without pydrake)."""

import numpy as np
import pytest
from _benchmarks import load_benchmark


@pytest.fixture(scope="module")
def scene():
    return load_benchmark("_drake_scene")


def _cube(scene, side=1.0):
    """Unit cube as 6 tets (Kuhn), oriented; (x, tets, faces)."""
    x = np.array([[i, j, k] for i in (0, 1) for j in (0, 1) for k in (0, 1)], float) * side
    idx = lambda i, j, k: 4 * i + 2 * j + k  # noqa: E731
    tets = []
    for perm in ((0, 1, 2), (0, 2, 1), (1, 0, 2), (1, 2, 0), (2, 0, 1), (2, 1, 0)):
        p = [0, 0, 0]
        path = [idx(*p)]
        for a in perm:
            p[a] = 1
            path.append(idx(*p))
        tets.append(path)
    tets = scene.orient_tets(x, np.array(tets))
    return x, tets, scene.boundary_faces(tets)


def test_boundary_faces_of_a_cube_are_its_12_outward_triangles(scene):
    x, tets, faces = _cube(scene)
    assert len(faces) == 12
    centre = x.mean(axis=0)
    p = x[faces]
    normal = np.cross(p[:, 1] - p[:, 0], p[:, 2] - p[:, 0])
    assert np.all(np.einsum("ij,ij->i", normal, p.mean(axis=1) - centre) > 0)


def test_penetration_depth_is_the_distance_of_the_deepest_inside_point_to_the_surface(scene):
    x, tets, faces = _cube(scene)
    p = np.array([[0.5, 0.5, 0.9], [0.2, 0.7, 0.25], [1.5, 0.5, 0.5], [0.5, -0.1, 0.5]])
    # inside points at depth 0.1 and 0.2 (distance to the nearest face); the others outside
    assert scene.penetration_depth(p, x, tets, faces) == pytest.approx(0.2, abs=1e-12)
    assert scene.penetration_depth(p[2:], x, tets, faces) == 0.0


def test_deepest_penetration_sees_a_vertex_pushed_into_another_body_and_the_ground(scene):
    x, tets, faces = _cube(scene)
    body = scene.Body("cube", None, None, tets, faces, scene.rest_inverse(x, tets))
    apart = [x, x + [0.0, 0.0, 1.5]]
    assert scene.deepest_penetration(apart, [body, body], ground=-1.0) == 0.0
    assert scene.deepest_penetration(apart, [body, body], ground=0.03) == pytest.approx(0.03)
    over = [x, x + [0.3, 0.4, 0.75]]  # the second cube's corner (0.3, 0.4, 0.75) is 0.25 below the first's top
    assert scene.deepest_penetration(over, [body, body], ground=-1.0) == pytest.approx(0.25, abs=1e-12)
    assert scene.penetrations(over, [body, body], ground=0.03) == pytest.approx((0.03, 0.25), abs=1e-12)
    squashed = x.copy()
    squashed[7] = [1.0, 1.0, -0.5]  # a corner pushed through the bottom face: tets invert
    assert scene.min_jacobians([squashed], [body])[0] < 0 < scene.min_jacobians([x], [body])[0] == pytest.approx(1)


def test_the_frame_change_is_a_proper_rotation_with_the_ground_at_y_0(scene):
    r = scene.drake_to_ipcsim_vector(np.eye(3))
    assert np.allclose(r @ r.T, np.eye(3)) and np.linalg.det(r) == pytest.approx(1.0)
    ground = scene.drake_to_ipcsim(np.array([[0.3, -0.2, scene.GROUND_TOP]]))
    assert ground[0, 1] == pytest.approx(0.0)
    assert np.allclose(scene.drake_to_ipcsim_vector([0.0, 0.0, 1.0]), [0.0, 1.0, 0.0])  # Drake's up is ours


def test_motion_closes_lifts_and_holds(scene):
    q0, v0 = scene.gripper_targets(0.0)
    q1, _ = scene.gripper_targets(1.5)
    q2, v2 = scene.gripper_targets(3.0)
    assert np.allclose(q0, [0.0, -0.06]) and np.allclose(q1, [0.0, -0.02]) and np.allclose(q2, [0.12, -0.02])
    assert v0[1] == pytest.approx(0.08 / 1.5 / 2) and np.all(v2 == 0.0)


def test_drake_scene_builds_and_steps_once(scene, tmp_path):
    pytest.importorskip("pydrake")
    grasp = scene.build_grasp(scene.GraspConfig(dt=0.01))
    xs0 = grasp.positions()
    assert [len(x) for x in xs0] == [410, 67, 67] and [len(b.tets) for b in grasp.bodies] == [1207, 212, 212]
    # Drake's placement: the bubbles' flat bases at y = -+0.09, their tips 0.106 m apart (to 3.9e-6 m: the SDF's
    # rounded angles 1.5707 and 3.1416 tilt the bubbles), the teddy 5.8 mm above the ground
    assert xs0[1][:, 1].min() == pytest.approx(-0.09, abs=1e-5) and xs0[2][:, 1].max() == pytest.approx(0.09, abs=1e-5)
    assert xs0[2][:, 1].min() - xs0[1][:, 1].max() == pytest.approx(0.106, abs=1e-5)
    assert xs0[0][:, 2].min() - scene.GROUND_TOP == pytest.approx(0.0058, abs=1e-4)
    assert np.all(scene.min_jacobians(xs0, grasp.bodies) > 0.999)
    grasp.advance(0.01)
    xs1 = grasp.positions()
    q = grasp.joint_positions()
    target, _ = scene.gripper_targets(0.01)
    assert abs(q[1] - target[1]) < 1e-4 and q[2] == pytest.approx(-q[1], abs=1e-6)  # fingers follow (measured 4e-7)
    left = grasp.bodies[1]
    assert len(left.fixed) == 17 and np.allclose(xs0[1][left.fixed, 1], -0.09, atol=1e-5)  # the flat base
    moved = xs1[1][left.fixed, 1] - xs0[1][left.fixed, 1]
    assert np.all(moved > 0.4 * (q[1] + 0.06))  # with the finger (SAP's regularized constraint: half in step 1)
    assert xs1[0][:, 2].mean() < xs0[0][:, 2].mean()  # the teddy (5.8 mm above the ground) starts falling
    count, forces = grasp.contacts()
    assert count == 0 and np.all(forces == 0.0)
    for k in range(2, 11):
        grasp.advance(0.01 * k)
    assert grasp.fixed_error(grasp.positions()) < 1e-5  # measured 3e-7 after 10 steps (1.3e-4 after the first)


def test_drake_run_writes_ipcsim_run_layout_that_ipcsim_plot_reads(scene, tmp_path):
    pytest.importorskip("pydrake")
    from ipcsim.io import frames as io_frames
    from ipcsim.app import plots, runner

    bench = load_benchmark("drake_grasp")
    out = tmp_path / "drake"
    s = bench.run_drake(scene.GraspConfig(dt=0.01), 0.03, out, every=1)
    assert s["steps"] == 3 and s["wall"] > 0 and s["cpu"] > 0
    frames = runner.list_frames(out)
    assert len(frames) == 4
    v, f, body = io_frames.read_ply(frames[-1], with_body=True)
    assert set(body.tolist()) == {0, 1, 2} and len(f) == 620 + 2 * 80
    assert v[body == 0, 1].min() > 0.0  # our frame: y up, the teddy above the ground (y = 0)
    run = plots.load_run(out, body="left_bubble")
    assert run.body == "1 left_bubble" and len(run.time) == 3 and np.all(np.isnan(run.friction))
    with open(out / "stats.csv") as fh:
        assert tuple(fh.readline().strip().split(",")) == runner.STATS_COLUMNS
