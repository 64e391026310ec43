"""benchmarks/drake_plate_rack.py and its scene builder benchmarks/_drake_plate_scene.py (issue #24 item 6): the
gripper plan, the rack's tubes and the frame judge on hand-made frames (no Drake needed), and the pydrake scene
built from ipcsim's placement and stepped (skips only without pydrake)."""
import sys
from pathlib import Path

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from ipcsim.io import frames as io_frames
from ipcsim.app import runner
from ipcsim.geometry.trajectory import Trajectory, quaternion_matrix
from ipcsim.demos.plate_rack_parts import plate_mesh, rack_for_plate, upright_plate_rotation
from _benchmarks import load_benchmark



@pytest.fixture(scope="module")
def scene():
    return load_benchmark("_drake_plate_scene")


@pytest.fixture(scope="module")
def bench(scene):
    return load_benchmark("drake_plate_rack")


def test_gripper_plan_follows_the_trajectory_without_gimbal_lock(scene):
    # a quarter turn about x then about y: XYZ keeps its middle (y) angle at 90 degrees, a locked order
    half = np.sqrt(0.5)
    q = [[1, 0, 0, 0], [half, half, 0, 0], [0.5, 0.5, 0.5, 0.5]]
    traj = Trajectory([0.0, 0.5, 1.0], [[0, 0, 0], [0.1, 0.2, 0.0], [0.1, 0.2, 0.3]], q, [0.05, 0.02, 0.0])
    plan = scene.GripperPlan(traj, 0.01, 100)
    assert plan.order[1] != "Y"
    rel = np.stack([traj.pose(t).rotation @ quaternion_matrix(q[0]).T for t in np.arange(101) * 0.01])
    assert np.max(np.abs(Rotation.from_matrix(rel).as_euler(plan.order)[:, 1])) < np.radians(46)
    for k in (0, 25, 50, 73, 100):
        pose = traj.pose(k * 0.01)
        assert np.allclose(plan.q[k, :3], pose.position) and np.allclose(plan.rotation(plan.q[k, 3:6]), pose.rotation)
        assert np.allclose(plan.q[k, 6:], [-0.5 * pose.width, 0.5 * pose.width])
    d = plan.desired(0.25)  # the end of the step starting at 0.25 s, with the step's mean velocity
    assert np.allclose(d[:8], plan.q[26]) and np.allclose(d[8:], (plan.q[26] - plan.q[25]) / 0.01)
    assert np.allclose(d[8:11], [0.2, 0.4, 0.0])  # linear position interpolation: 0.1 m / 0.5 s in x


def test_rack_tubes_are_the_generated_wires_and_bars(scene):
    rack = rack_for_plate()
    tubes = scene.rack_tubes(rack)
    assert len(tubes) == rack.params["n_tubes"] == 14
    radii = sorted(round(r, 9) for _, _, r in tubes)
    assert radii == [0.00175] * 8 + [0.002] * 6  # 8 divider wires of 3.5 mm, 4 rungs + 2 rails of 4 mm
    wires = [(a, b) for a, b, r in tubes if r < 0.0019]
    assert all(abs(a[0] - b[0]) < 1e-12 and abs(max(a[1], b[1]) - rack.params["wire_height"]) < 1e-12
               for a, b in wires)


def test_convex_surface_of_a_box_is_closed_and_outward(scene):
    corners = np.array([[x, y, z] for x in (0, 0.2) for y in (0, 0.1) for z in (0, 0.05)], float)
    v, f = scene.convex_surface(corners)
    p = v[f]
    volume = np.einsum("ij,ij->i", p[:, 0], np.cross(p[:, 1], p[:, 2])).sum() / 6.0
    assert len(v) == 8 and len(f) == 12 and volume == pytest.approx(0.2 * 0.1 * 0.05, rel=1e-12)


def _plate_in_slot_frame(out: Path, shift: float):
    """Frame 0 of a plate standing in the rack's middle slot, its foot-to-rim extent centred on the slot, moved
    by shift [m] across it (x); returns the rack's tubes."""
    bench = sys.modules["drake_plate_rack"]
    rack = rack_for_plate()
    v, f = plate_mesh()
    height, radius = np.ptp(v[:, 1]), np.abs(v[:, 0]).max()
    c = rack.slot_centers[1]
    plate = v @ upright_plate_rotation().T + [c[0] - 0.5 * height + shift, c[1] + 0.01 + radius, 0.0]
    used = np.unique(rack.triangles)
    remap = np.full(len(rack.vertices), -1)
    remap[used] = np.arange(len(used))
    bench.dr.write_surface_frame(out, 0, [(plate, f), (rack.vertices[used], remap[rack.triangles])])
    return bench.dps.rack_tubes(rack)


@pytest.mark.parametrize("shift, hit", [(0.0, False), (0.002, False), (0.004, True), (-0.004, True)])
def test_frame_judge_sees_the_plate_rim_in_a_wire(bench, tmp_path, shift, hit):
    # the slot is the plate's height + 6 mm wide: 3 mm clearance a side, so 4 mm across puts the rim 1 mm into
    # the divider's wires
    tubes = _plate_in_slot_frame(tmp_path, shift)
    frame = runner.list_frames(tmp_path)[0]
    judge = bench.FrameJudge(frame, tubes)
    v, _ = io_frames.read_ply(frame)
    pairs = judge.pairs(v)
    in_wire, in_plate = judge.depths(v)
    assert judge.oracle_hit(v) in (None, hit)  # ipctk, where installed, agrees
    if hit:
        assert set(pairs) == {(0, 1)} and pairs[(0, 1)] > 0
        assert 0.5e-3 < in_plate <= 1.0e-3 + 1e-9  # measured 0.85 mm: the rounded rim, at most the 1 mm overlap
    else:
        assert pairs == {} and in_wire == 0.0 and in_plate == 0.0


def test_winding_numbers_and_rigid_fit(bench):
    corners = np.array([[x, y, z] for x in (0, 1) for y in (0, 1) for z in (0, 1)], float)
    v, f = sys.modules["_drake_plate_scene"].convex_surface(corners)
    w = bench.winding_numbers(np.array([[0.5, 0.5, 0.5], [0.9, 0.1, 0.2], [1.5, 0.5, 0.5], [0.5, -0.1, 0.5]]), v[f])
    assert np.allclose(w, [1, 1, 0, 0], atol=1e-12)
    r = quaternion_matrix(np.array([0.9, 0.1, -0.3, 0.2]) / np.linalg.norm([0.9, 0.1, -0.3, 0.2]))
    fit_r, fit_t = bench.rigid_fit(corners, corners @ r.T + [0.1, 0.2, 0.3])
    assert np.allclose(fit_r, r, atol=1e-12) and np.allclose(fit_t, [0.1, 0.2, 0.3], atol=1e-12)


def test_bad_time_step_is_an_error_before_drake_runs(bench):
    with pytest.raises(ValueError):
        bench.main(["--dt", "-0.01", "--out", "unused"])


def test_drake_scene_is_ipcsims_placement_and_steps(scene):
    pytest.importorskip("pydrake")
    from ipcsim.demos.plate_rack_scene import finger_meshes, scene_geometry

    setup = scene.setup_from_scene("clean")
    sim = scene.build_plate_rack(setup, 20)
    geo = scene_geometry()
    xs = dict(zip(sim.names(), sim.positions()))
    assert sim.names() == ["plate", "rack", "left_finger", "right_finger", "stand"]
    assert np.abs(xs["plate"] - (geo.plate[0] @ geo.plate_rotation.T + geo.plate_translation)).max() < 1e-12
    fine, _ = finger_meshes()["fine"]
    for name, side in (("left_finger", "left"), ("right_finger", "right")):
        rot, t = geo.fingers[side]
        placed = fine @ rot.T + t
        assert np.allclose(xs[name].min(axis=0), placed.min(axis=0)) and np.allclose(xs[name].max(axis=0),
                                                                                    placed.max(axis=0))
    for k in range(1, 21):
        sim.advance(0.01 * k)
    error = np.abs(sim.joint_positions() - sim.plan.q[20])
    assert error[:6].max() < 1e-4  # the gripper's pose joints track (measured 6e-6 m over the whole run)
    c = sim.contacts()
    assert c["count"] > 0 and c["plate_rack_depth"] == 0.0
    weight = scene.PLATE_MASS * 9.81
    # the plate rests on the table and leans on the stand: the contacts carry its weight (measured at 0.2 s:
    # 3.6783 N of 3.6788 N)
    assert c["forces"][0, 1] == pytest.approx(weight, rel=1e-2)


def test_drake_run_writes_ipcsims_run_layout(bench, tmp_path):
    pytest.importorskip("pydrake")
    from ipcsim.app import plots

    setup = bench.dps.setup_from_scene("offset")
    out = tmp_path / "drake"
    s = bench.run_drake(setup, bench.dps.DrakePlateConfig(dt=0.01), 0.04, out, every=2)
    assert s["steps"] == 4 and s["frames"] == 3 and s["wall"] > 0 and s["hit_frames"] == 0
    v, f, body = io_frames.read_ply(runner.list_frames(out)[-1], with_body=True)
    assert set(body.tolist()) == {0, 1, 2, 3, 4} and len(f) == 896 + 2 * 8 + 2 * 12 + len(rack_for_plate().triangles)
    run = plots.load_run(out, body="plate")
    assert run.body == "0 plate" and len(run.time) == 4 and np.all(np.isnan(run.friction))
    table = bench.dr.read_table(out / "drake_plate.csv")
    assert list(table["frame"]) == [0, 1, 2] and np.all(table["plate_wire_pairs"] == 0)


def test_rigid_fingers_following_the_width_column_squeeze_the_plate_out(scene):
    pytest.importorskip("pydrake")
    setup = scene.setup_from_scene("clean")
    sim = scene.build_plate_rack(setup, 200, scene.DrakePlateConfig(finger_force=float("inf")))
    y0 = sim.positions()[0][:, 1].mean()
    for k in range(1, 101):
        sim.advance(0.01 * k)
    c = sim.contacts()
    left, right = c["forces"][2], c["forces"][3]
    # t = 1.0 s, the pads 4 mm past first contact: they squeeze the lip from both sides along x (measured -300 N
    # and +301 N), and follow the width column while they do (measured 1.7e-4 m behind)
    assert left[0] < -100.0 and right[0] > 100.0
    assert np.abs(sim.joint_positions() - sim.plan.q[100])[6:].max() < 1e-3
    for k in range(101, 201):
        sim.advance(0.01 * k)
    # t = 2.0 s, the gripper 0.13 m up: the lip was squeezed out of the pinch, the plate stayed in its stand
    # (measured: its vertices' mean height 3.9 mm lower than at the start)
    assert sim.positions()[0][:, 1].mean() - y0 < 0.01


def test_force_limited_fingers_carry_the_plate(scene):
    pytest.importorskip("pydrake")
    setup = scene.setup_from_scene("clean")
    sim = scene.build_plate_rack(setup, 200)  # the default: each finger's driver capped at GRIP_FORCE
    assert sim.config.finger_force == scene.GRIP_FORCE == 40.0
    y0 = sim.positions()[0][:, 1].mean()
    for k in range(1, 201):
        sim.advance(0.01 * k)
    c = sim.contacts()
    # t = 2.0 s, the gripper 0.13 m up: the pinch holds the plate with the capped grip (measured |F| 40.4 and
    # 40.7 N on the fingers, the plate's vertices' mean height 0.127 m higher)
    assert 0.12 < sim.positions()[0][:, 1].mean() - y0 < 0.14
    for f in c["forces"][2:4]:
        assert 30.0 < np.linalg.norm(f) < 45.0


def test_where_it_ends_finds_the_slot_of_the_plates_lowest_point(bench, tmp_path):
    tubes = _plate_in_slot_frame(tmp_path, 0.0)
    frame = runner.list_frames(tmp_path)[0]
    judge = bench.FrameJudge(frame, tubes)
    v, _ = io_frames.read_ply(frame)
    setup = bench.dps.PlateRackSetup(None, np.eye(3)[0], [], np.eye(3), np.zeros(3), rack_for_plate(), np.zeros(3))
    ends = bench.where_it_ends(v, judge, setup)
    # rack_turn: arccos near 1 (measured 1.2e-6 deg of round-off)
    assert ends["foot_slot"] == 1 and np.allclose(ends["rack_shift"], 0.0) and ends["rack_turn"] < 1e-4
    rack = judge.sel[bench.RACK]
    v[rack] += [-0.0272, 0.0, 0.0]  # the rack one slot pitch (plate height + 6 mm + 3.5 mm wire) along -x
    ends = bench.where_it_ends(v, judge, setup)
    assert ends["foot_slot"] == 2 and np.allclose(ends["rack_shift"], [-0.0272, 0.0, 0.0])
