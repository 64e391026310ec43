"""IPC 2020's animation scripts (``script <type>``): the motions checked against IPC's definitions
(src/AnimScripter.cpp: initAnimScript / stepAnimScript), the script-level switches (selfCollisionOff, QP/SQP,
timeStepper, batch lists), and a sample of IPC's scripts from outside the tutorial set (tests/scene/ipc_samples)
stepped with every frame intersection-free (the tutorial set itself runs in test_ipc_script.py)."""
import math
import shutil
import warnings
from pathlib import Path

import ipctk
import meshio
import numpy as np
import pytest

from ipcsim.model.control import rotation_matrix
from ipcsim.scene import SceneError, load_scene
from ipcsim.scene.ipc_script import IPCScriptWarning, parse_script
from ipcsim.scene.placement import place

SAMPLES = Path(__file__).parent / "ipc_samples"
PI = math.pi


@pytest.fixture
def ipc_dir(tmp_path, shared_data):
    """A folder whose input/ is the shared data's ipc/input (scripts there resolve 'input/tetMeshes/...')."""
    (tmp_path / "input").symlink_to(shared_data / "ipc" / "input")
    return tmp_path


def _write(folder, text, name="scene.txt"):
    path = folder / name
    path.write_text(text)
    return path


def _parse(path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", IPCScriptWarning)
        return parse_script(path)


def _warnings_of(path) -> list[str]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        parse_script(path)
    return [str(w.message) for w in caught if issubclass(w.category, IPCScriptWarning)]


def _points(shared, name):
    return np.asarray(meshio.read(shared / "ipc" / "input" / name).points, np.float64)


def _step(sim, n):
    states = [sim.state]
    for _ in range(n):
        new = states[-1].copy()
        stats = sim.solver.step(states[-1], new, None, sim.dt)
        assert stats.converged
        states.append(new)
    return states


def _build(path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", IPCScriptWarning)
        return load_scene(path).build()


# ------------------------------------------------------------------------------------------- fall family
def test_fall_lifts_the_shapes_by_half_their_bounding_box_diagonal(ipc_dir):
    shapes = ("shapes input 2\ninput/tetMeshes/cube.msh 0 0 0 0 0 0 1 1 1\n"
              "input/tetMeshes/cube.msh 0 2 0 0 0 0 1 1 1\nmeshCO input/triMeshes/plane.obj 0 -1 0 10 0 0\n")
    fall = _parse(_write(ipc_dir, "script fall\n" + shapes, "fall.txt"))
    still = _parse(_write(ipc_dir, "script fallNoShift\n" + shapes, "still.txt"))
    lift = 0.5 * math.sqrt(11.0)  # unit cubes at y in [0, 1] and [2, 3]: box 1 x 3 x 1
    np.testing.assert_allclose([b["transform"]["translation"] for b in fall["bodies"]],
                               [[0, lift, 0], [0, 2 + lift, 0]], rtol=0, atol=1e-12)
    assert [b["transform"]["translation"] for b in still["bodies"]] == [[0, 0, 0], [0, 2, 0]]
    assert fall["obstacles"] == still["obstacles"]  # meshCO objects are not part of IPC's mesh: not lifted
    assert all(b["dirichlet"] == [] and b["neumann"] == [] for b in fall["bodies"] + still["bodies"])


def test_animation_scripts_drop_the_shapes_own_conditions_with_a_warning(ipc_dir):
    path = _write(ipc_dir, "script fall\nshapes input 1\ninput/tetMeshes/cube.msh 0 0 0 0 0 0 1 1 1 "
                           "DBC 0 0 0 1 0.1 1 0 0 0 0 0 0 initVel 1 0 0 0 0 0\n")
    assert any("DBC, initVel ignored under 'script fall'" in w for w in _warnings_of(path))
    body = _parse(path)["bodies"][0]
    assert body["dirichlet"] == [] and body["initial_velocity"]["linear"] == [0, 0, 0]


def test_fall_with_a_codimensional_shape_is_refused(ipc_dir):
    path = _write(ipc_dir, "script fall\nshapes input 2\ninput/tetMeshes/cube.msh 0 0 0 0 0 0 1 1 1\n"
                           "input/triMeshes/plane.obj 0 -1 0 0 0 0 1 1 1\n")
    with pytest.raises(SceneError, match=r"scene\.txt:1: script fall: not supported with the \.obj/\.seg/\.pt "
                                         r"shape #2"):
        parse_script(path)


def test_dragdown_grabs_the_bottom_middle_after_the_lift(ipc_dir, shared_data):
    d = _parse(_write(ipc_dir, "script dragdown\nshapes input 1\ninput/tetMeshes/rod.msh 0 0 0 0 0 0 1 1 1\n"))
    p = _points(shared_data, "tetMeshes/rod.msh")
    lo, rg = p.min(axis=0), np.ptp(p, axis=0)
    sel = np.flatnonzero((p[:, 1] < lo[1] + 0.1 * rg[1]) & (p[:, 0] < lo[0] + 0.52 * rg[0])
                         & (p[:, 0] > lo[0] + 0.42 * rg[0]))
    (entry,) = d["bodies"][0]["dirichlet"]
    assert entry["indices"] == sel.tolist() and len(sel) > 0
    assert entry["velocity"] == [0, -1.5, 0] and entry["time_range"] == [0, None]
    assert d["bodies"][0]["transform"]["translation"][1] == pytest.approx(0.5 * np.linalg.norm(rg))


def test_dragright_releases_when_a_rigid_drag_clears_the_collision_objects(ipc_dir):
    text = ("script dragright\ntime 5 0.3\nshapes input 1\ninput/tetMeshes/cube.msh 0 0 0 0 0 0 1 1 1\n"
            "meshCO input/triMeshes/cube.obj 0.5 -3 0.5 1 0 0\n")
    path = _write(ipc_dir, text)
    (entry,) = _parse(path)["bodies"][0]["dirichlet"]
    assert entry["indices"] == [i for i, x in enumerate(_cube_x(ipc_dir)) if x > 1 - 0.04]
    # the mesh's min x (0) passes the meshCO's max x (1) at the start of step 7: 0.5 m/s * 7 * 0.3 s > 1 m
    assert entry["velocity"] == [0.5, 0, 0] and entry["time_range"] == pytest.approx([0, 7 * 0.3])
    assert any("released at t = 2.1 s" in w for w in _warnings_of(path))
    alone = _parse(_write(ipc_dir, text.split("meshCO")[0], "alone.txt"))  # no collision object: released at once
    assert alone["bodies"][0]["dirichlet"] == []


def _cube_x(ipc_dir):
    return np.asarray(meshio.read(ipc_dir / "input/tetMeshes/cube.msh").points)[:, 0]


# ------------------------------------------------------------------------------------------- handle strips
BAR = "shapes input 1\ninput/tetMeshes/bar-6.msh 0 0 0 0 0 0 1 1 1\n"


@pytest.mark.parametrize("script,expected", [
    ("stretch", [(-0.1, 0, 0), (0.1, 0, 0)]),
    ("squash", [(0.03, 0, 0), (-0.03, 0, 0)]),
])
def test_stretch_and_squash_move_the_end_strips(ipc_dir, shared_data, script, expected):
    p = _points(shared_data, "tetMeshes/bar-6.msh")  # 10 x 0.5 x 1 bar, x in [0, 10]
    d = _parse(_write(ipc_dir, f"script {script}\n{BAR}"))
    left, right = d["bodies"][0]["dirichlet"]
    assert left["indices"] == np.flatnonzero(p[:, 0] < 0.1).tolist()
    assert right["indices"] == np.flatnonzero(p[:, 0] > 9.9).tolist()
    assert [left["velocity"], right["velocity"]] == [list(v) for v in expected]


def test_bend_turns_each_strip_about_its_last_vertex(ipc_dir, shared_data):
    p = _points(shared_data, "tetMeshes/bar-6.msh")
    left, right = _parse(_write(ipc_dir, f"script bend\n{BAR}"))["bodies"][0]["dirichlet"]
    for entry, w in ((left, -0.05 * PI), (right, 0.05 * PI)):
        assert entry["angular_velocity"] == pytest.approx([0, 0, w])
        assert entry["center"] == p[entry["indices"][-1]].tolist()


@pytest.mark.parametrize("script,rule", [
    ("hang", lambda p: [int(np.flatnonzero(p[:, 0] < 0.1)[-1]), int(np.flatnonzero(p[:, 0] > 9.9)[-1])]),
    ("hangLeft", lambda p: np.flatnonzero(p[:, 0] < 0.1).tolist()),
    ("fixLowerHalf", lambda p: np.flatnonzero(p[:, 1] < 0.25).tolist()),
])
def test_fixed_handles(ipc_dir, shared_data, script, rule):
    entries = _parse(_write(ipc_dir, f"script {script}\n{BAR}"))["bodies"][0]["dirichlet"]
    assert sorted(i for e in entries for i in e["indices"]) == sorted(rule(_points(shared_data,
                                                                                   "tetMeshes/bar-6.msh")))
    assert all(e["velocity"] == [0, 0, 0] and e["angular_velocity"] == [0, 0, 0] for e in entries)


@pytest.mark.parametrize("script,rule", [
    ("hang2", lambda p: p[:, 1] > 0.495), ("stand", lambda p: p[:, 1] < 0.005),
    ("topbottomfix", lambda p: (p[:, 1] < 0.01) | (p[:, 1] > 0.49)), ("stamp", lambda p: p[:, 0] < 0.1),
    ("stampBoth", lambda p: (p[:, 0] < 0.1) | (p[:, 0] > 9.9)),
    ("stampTopLeft", lambda p: (p[:, 0] < 0.1) & (p[:, 1] > 0.495)),
    ("hangTopLeft", lambda p: (p[:, 0] < 0.1) & (p[:, 1] > 0.495) & ((p[:, 2] > 0.99) | (p[:, 2] < 0.01))),
    ("corner", lambda p: (p[:, 0] < 0.1) | (p[:, 1] < 0.005) | (p[:, 2] < 0.01)),
    ("fixRightMost1", lambda p: np.arange(len(p)) == np.flatnonzero(p[:, 0] > 9.99)[0]),
])
def test_more_fixed_handle_types(ipc_dir, shared_data, script, rule):
    p = _points(shared_data, "tetMeshes/bar-186.msh")  # 10 x 0.5 x 1 bar
    (entry,) = _parse(_write(ipc_dir, f"script {script}\nshapes input 1\n"
                                      "input/tetMeshes/bar-186.msh 0 0 0 0 0 0 1 1 1\n"))["bodies"][0]["dirichlet"]
    assert entry["indices"] == np.flatnonzero(rule(p)).tolist() and entry["velocity"] == [0, 0, 0]


def test_swing_drop_and_neumann_drag(ipc_dir, shared_data):
    p = _points(shared_data, "tetMeshes/bar-186.msh")
    text = "shapes input 1\ninput/tetMeshes/bar-186.msh 0 0 0 0 0 0 1 1 1\n"
    swing = _parse(_write(ipc_dir, "script swing\n" + text, "swing.txt"))["bodies"][0]
    assert swing["transform"]["translation"] == pytest.approx([0, 1.3 * 0.5, 0])
    assert swing["dirichlet"][0]["indices"] == np.flatnonzero(p[:, 0] < 0.5).tolist()
    drop = _parse(_write(ipc_dir, "script drop\n" + text, "drop.txt"))["bodies"][0]
    assert drop["initial_velocity"]["linear"] == [0, -1, 0]
    drag = _parse(_write(ipc_dir, "script NMFixBottomDragLeft\n" + text, "drag.txt"))["bodies"][0]
    assert drag["dirichlet"][0]["indices"] == np.flatnonzero(p[:, 1] < 0.025).tolist()
    assert drag["neumann"][0]["indices"] == np.flatnonzero(p[:, 1] > 0.475).tolist()
    assert drag["neumann"][0]["acceleration"] == [-600, 0, 0]


def test_handle_ratio_widens_the_strips(ipc_dir):
    d = _parse(_write(ipc_dir, "script hangLeft\nhandleRatio 0.3\nshapes input 1\n"
                               "input/tetMeshes/rod.msh 0 0 0 0 0 0 1 1 1\n"))
    p = np.asarray(meshio.read(ipc_dir / "input/tetMeshes/rod.msh").points)
    assert d["bodies"][0]["dirichlet"][0]["indices"] == np.flatnonzero(p[:, 0] < p[:, 0].min() + 0.3 *
                                                                        np.ptp(p[:, 0])).tolist()


def test_twist_rotates_the_handles_at_the_scripted_rate(ipc_dir, shared_data):
    """IPC's twist: the left strip turns at -0.4 pi rad/s, the right one at +0.4 pi rad/s about the x axis through
    the rest bounding-box center; checked on the simulated positions after each step."""
    path = _write(ipc_dir, "script twist\nturnOffGravity\ntime 1 0.05\nshapes input 1\n"
                           "input/tetMeshes/bar-186.msh 0 0 0 0 0 0 1 1 1\n")
    sim = _build(path)
    x0 = sim.state.x.copy()
    p = _points(shared_data, "tetMeshes/bar-186.msh")
    center = 0.5 * (p.min(axis=0) + p.max(axis=0))
    left, right = np.flatnonzero(p[:, 0] < 0.1), np.flatnonzero(p[:, 0] > 9.9)
    for k, state in enumerate(_step(sim, 3)):
        for idx, w in ((left, -0.4 * PI), (right, 0.4 * PI)):
            expected = center + (x0[idx] - center) @ rotation_matrix([w * k * 0.05, 0, 0]).T
            np.testing.assert_allclose(state.x[idx], expected, rtol=0, atol=1e-9)


def test_stretch_and_pause_switches_from_moving_to_holding(ipc_dir, shared_data):
    d = _parse(_write(ipc_dir, "script stretchAndPause\nshapes input 1\n"
                               "input/tetMeshes/rod.msh 0.5 0 0 0 0 0 1 1 1\n"))
    p = _points(shared_data, "tetMeshes/rod.msh") + [0.5, 0, 0]
    x0 = p[np.flatnonzero(p[:, 0] < p[:, 0].min() + 0.01 * np.ptp(p[:, 0]))[-1], 0]
    k = sum(1 for j in range(200) if x0 - j * 0.025 >= -0.28)  # IPC moves while that vertex is at x >= -0.28
    move_l, hold_l, move_r, hold_r = d["bodies"][0]["dirichlet"]
    assert (move_l["velocity"], move_r["velocity"]) == ([-1, 0, 0], [1, 0, 0])
    assert move_l["time_range"] == pytest.approx([0, k * 0.025]) and 10 < k < 14
    assert hold_l["time_range"] == pytest.approx([k * 0.025, None]) and hold_l["velocity"] == [0, 0, 0]
    assert hold_l["indices"] == move_l["indices"] and hold_r["indices"] == move_r["indices"]


def test_push_right_most1_and_utopia(ipc_dir, shared_data):
    p = _points(shared_data, "tetMeshes/cube.msh")
    push = _parse(_write(ipc_dir, "script pushRightMost1\nshapes input 1\n"
                                  "input/tetMeshes/cube.msh 0 0 0 0 0 0 1 1 1\n", "push.txt"))
    (entry,) = push["bodies"][0]["dirichlet"]
    assert entry["indices"] == [int(np.flatnonzero(p[:, 0] > 1 - 1e-3)[0])] and entry["velocity"] == [-0.15, 0, 0]
    uto = _parse(_write(ipc_dir, "script utopiaComparison\nshapes input 1\n"
                                 "input/tetMeshes/cube.msh 0 0 0 0 0 0 1 1 1\n", "uto.txt"))["bodies"][0]
    assert uto["neumann"][0]["indices"] == np.flatnonzero(p[:, 1] > 1 - 1e-4).tolist()
    assert uto["neumann"][0]["acceleration"] == [0, -1.5, 0]
    assert uto["dirichlet"][0]["indices"] == np.flatnonzero(p[:, 1] < 1e-4).tolist()


# ------------------------------------------------------------------------------------------- DCO scripts
def test_dco_rot_cylinders_turn_about_their_initial_box_centers(ipc_dir, shared_data):
    shutil.copy(SAMPLES / "sphere1K_DCORotCylinders.txt", ipc_dir)
    d = _parse(ipc_dir / "sphere1K_DCORotCylinders.txt")
    cyl = _points(shared_data, "triMeshes/cylinder.obj")
    rates = [[PI / 2, 0, 0], [-PI / 2, 0, 0], [0, 0, -PI / 2], [0, 0, PI / 2]]
    for obs, w in zip(d["obstacles"][:4], rates):
        x = place(cyl, obs["transform"])
        assert obs["angular_velocity"] == pytest.approx(w) and obs["velocity"] == [0, 0, 0]
        assert obs["center"] == pytest.approx(0.5 * (x.min(axis=0) + x.max(axis=0)))
    assert [b["name"] for b in d["bodies"]] == ["sphere1K_4"] and d["bodies"][0]["dirichlet"] == []


def test_dco_squash6_walls_reverse_when_the_x_gap_closes(ipc_dir):
    walls = "".join(f"input/triMeshes/cube.obj {x} {y} {z} 0 0 0 1 1 1\n" for x, y, z in
                    [(-2, 0, 0), (2, 0, 0), (0, -4, 0), (0, 4, 0), (0, 0, -4), (0, 0, 4)])
    d = _parse(_write(ipc_dir, f"script DCOSquash6\ntime 2 0.1\nshapes input 7\n{walls}"
                               "input/tetMeshes/cube.msh 0 0 0 0 0 0 0.5 0.5 0.5\n"))
    # x gap 3 m closing at 2 m/s: below 0.1 m first at the start of step 15 (t = 1.5 s), then all walls reverse
    for i, obs in enumerate(d["obstacles"]):
        kf = obs["keyframes"]
        v = np.zeros(3)
        v[i // 2] = 1.0 if i % 2 == 0 else -1.0
        assert kf["times"] == pytest.approx([0, 1.5, 2.0])
        np.testing.assert_allclose(kf["translations"], [[0, 0, 0], 1.5 * v, 1.0 * v], rtol=0, atol=1e-12)


def test_dco_squash6_walls_move_in_the_simulation(ipc_dir):
    walls = "".join(f"input/triMeshes/cube.obj {x} {y} {z} 0 0 0 1 1 1\n" for x, y, z in
                    [(-2, 0, 0), (2, 0, 0), (0, -4, 0), (0, 4, 0), (0, 0, -4), (0, 0, 4)])
    sim = _build(_write(ipc_dir, f"script DCOSquash6\nturnOffGravity\ntime 2 0.1\nshapes input 7\n{walls}"
                                 "input/tetMeshes/cube.msh 0 0 0 0 0 0 0.5 0.5 0.5\n"))
    states = _step(sim, 2)
    displacements = {tuple(np.round(r, 9) + 0.0) for r in states[-1].x - states[0].x}
    for i in range(6):  # wall i moves at 1 m/s along axis i // 2, + for even i: 0.2 m in two steps of 0.1 s
        v = np.zeros(3)
        v[i // 2] = 0.2 if i % 2 == 0 else -0.2
        assert tuple(v) in displacements


def test_dco_seg_bed_squash_and_squeeze_out_stop_at_their_gaps(ipc_dir):
    bed = _parse(_write(ipc_dir, "script DCOSegBedSquash\ntime 5 0.1\nshapes input 3\n"
                                 "input/tetMeshes/cube.msh 0 0 0 0 0 0 1 1 1\n"
                                 "input/triMeshes/triangle.seg 0 -1 0 0 0 0 1 1 1\n"
                                 "input/triMeshes/triangle.seg 0 3 0 0 0 0 1 1 1\n", "bed.txt"))
    bottom, top = bed["obstacles"]
    assert bottom["velocity"] == [0, 0, 0] and bottom["time_range"] == [0, None]
    # gap 4 m closing at 1 m/s: moves in the steps starting while the gap is > 0.1 m (k = 0..38)
    assert top["velocity"] == [0, -1, 0] and top["time_range"] == pytest.approx([0, 3.9])
    squeeze = _parse(_write(ipc_dir, "script DCOSqueezeOut\ntime 5 0.1\nshapes input 3\n"
                                     "input/triMeshes/plane.obj 0 1.215 0 0 0 0 1 1 1\n"
                                     "input/triMeshes/cube.obj 0 0 0 0 0 0 1 0.38 1\n"
                                     "input/tetMeshes/cube.msh 3 1 0 0 0 0 0.5 0.5 0.5\n", "squeeze.txt"))
    plate, box = squeeze["obstacles"]
    # the plate (at y = 1.215) moves down at 0.3 m/s while above 0.9 / 3.8 of the box's 0.38 m height (0.09 m):
    # in the steps k = 0..37 (1.215 - 0.03 k > 0.09)
    assert plate["velocity"] == [0, -0.3, 0] and plate["time_range"] == pytest.approx([0, 3.8])
    assert box["velocity"] == [0, 0, 0]


@pytest.mark.parametrize("line,speed", [("script DCOBallHitWall 1 67", 67.0), ("script DCOBallHitWall", 1000.0)])
def test_dco_ball_hit_wall_throws_the_bodies(ipc_dir, line, speed):
    d = _parse(_write(ipc_dir, f"{line}\nshapes input 2\ninput/triMeshes/plane.obj 3 0 0 0 0 90 1 1 1\n"
                               "input/tetMeshes/cube.msh 0 0 0 0 0 0 1 1 1\n"))
    assert d["bodies"][0]["initial_velocity"] == {"linear": [speed, 0, 0], "angular": [0, 0, 0]}
    assert d["obstacles"][0]["velocity"] == [0, 0, 0] and d["obstacles"][0]["angular_velocity"] == [0, 0, 0]


def test_dco_rot_cylinders_needs_collision_objects_first(ipc_dir):
    path = _write(ipc_dir, "script DCORotCylinders\nshapes input 1\ninput/tetMeshes/cube.msh 0 0 0 0 0 0 1 1 1\n")
    with pytest.raises(SceneError, match=r"scene\.txt:1: script DCORotCylinders: needs its first 4 shapes to be"):
        parse_script(path)


# ------------------------------------------------------------------------------------------- other commands
def test_qp_sqp_and_time_stepper_run_with_a_warning(ipc_dir):
    path = _write(ipc_dir, "constraintSolver SQP\ntimeStepper Newton\nselfCollisionOff\nshapes input 1\n"
                           "input/tetMeshes/cube.msh 0 0 0 0 0 0 1 1 1\n")
    found = _warnings_of(path)
    assert any("scene.txt:1: constraintSolver: SQP runs as interiorPoint (IPC)" in w for w in found)
    assert any("scene.txt:2: timeStepper: ignored" in w for w in found)
    assert not any("selfCollisionOff" in w for w in found)  # one shape: exactly IPC's meaning, no warning


def test_self_collision_off_switches_every_shapes_self_contact_off(ipc_dir):
    two = "shapes input 2\ninput/tetMeshes/cube.msh 0 0 0 0 0 0 1 1 1\ninput/tetMeshes/cube.msh 0 2 0 0 0 0 1 1 1\n"
    d = _parse(_write(ipc_dir, "selfCollisionOff\n" + two))
    assert [b["self_contact"] for b in d["bodies"]] == [False, False]
    found = _warnings_of(_write(ipc_dir, "selfCollisionOff\n" + two))
    assert any("scene.txt:1: selfCollisionOff: each shape's self contact is off; contact between different "
               "shapes stays on" in w for w in found)
    d = _parse(_write(ipc_dir, "selfCollisionOff\nselfCollisionOn\n" + two))
    assert "self_contact" not in d["bodies"][0]


def test_a_batch_list_gets_one_clear_error(ipc_dir):
    shutil.copy(SAMPLES / "17_ErlebenSpikes.txt", ipc_dir)
    with pytest.raises(SceneError) as info:
        parse_script(ipc_dir / "17_ErlebenSpikes.txt")
    assert str(info.value) == (f"{ipc_dir / '17_ErlebenSpikes.txt'}:1: ../../11_erleben/spikeSpikeCO.txt: this file "
                               "is a batch list of IPC scripts (1 listed, one a line), not a scene; run each listed "
                               "script on its own")


# ------------------------------------------------------------------------------------------- IPC's sample scripts
SAMPLE_RUNS = [
    ("07_cubePlaneCO.txt", 3), ("08_cubeCubeCO.txt", 3), ("10_cubeStack.txt", 2), ("SQPMemoryIssue2.txt", 2),
    ("rodsTwist.txt", 2), ("sphere1K_DCORotCylinders.txt", 2), ("20_pencilStickSlip.txt", 2),
    ("28_rodPlaneCO.txt", 3), ("slopeTest_highSchoolPhysics_0.5.txt", 2), ("barTwist_noCollisions.txt", 2),
]


@pytest.mark.parametrize("name,steps", SAMPLE_RUNS)
def test_ipc_sample_script_steps_intersection_free(ipc_dir, name, steps):
    shutil.copy(SAMPLES / name, ipc_dir)
    sim = _build(ipc_dir / name)
    mesh = sim.model.collision_mesh
    tk = ipctk.CollisionMesh(mesh.rest_positions, mesh.edges.astype(np.int32), mesh.faces.astype(np.int32))
    obstacle = np.asarray(mesh.is_obstacle, bool)
    if obstacle.any():  # obstacles may touch each other (IPC never tests them against each other): one patch
        tk.can_collide = ipctk.make_vertex_patches_filter(np.where(obstacle, -1, np.arange(len(obstacle)))
                                                          .astype(np.int32))
    for k, state in enumerate(_step(sim, steps)):
        assert not ipctk.has_intersections(tk, mesh.select_positions(state.x)), f"{name}: frame {k}"


# ------------------------------------------------------------------------------------------- scene format
def _keyframed(keyframes):
    return {"format": "ipcsim-scene/1", "bodies": [{"mesh": {"box": {"size": [1, 1, 1], "resolution": [1, 1, 1]}}}],
            "obstacles": [{"mesh": {"box": {"size": [1, 1, 1], "resolution": [1, 1, 1]},
                                    }, "transform": {"translation": [3, 0, 0]}, "keyframes": keyframes}]}


def test_obstacle_translation_keyframes_move_the_placed_mesh():
    from ipcsim.scene import Scene

    scene = Scene.from_dict(_keyframed({"times": [0, 1], "translations": [[0, 0, 0], [0, -2, 0]]}), ".", "s.json")
    sim = scene.build()
    start, end = sim.model.control.motions[0].positions_at(0.0), sim.model.control.motions[0].positions_at(0.5)
    np.testing.assert_allclose(end - start, np.tile([0.0, -1.0, 0.0], (len(start), 1)), atol=1e-12)
    assert start[:, 0].min() == pytest.approx(3.0)


@pytest.mark.parametrize("keyframes,message", [
    ({"times": [0, 1], "translations": [[0, 0, 0]]},
     "obstacles[0].keyframes.translations: expected one translation per time (2), got 1"),
    ({"times": [1, 1], "translations": [[0, 0, 0], [1, 0, 0]]},
     "obstacles[0].keyframes.times: expected strictly increasing times [s]"),
    ({"times": [0], "translations": [[0, 0, 0]], "dt": 1}, "obstacles[0].keyframes: expected {\"files\""),
])
def test_obstacle_translation_keyframes_errors(keyframes, message):
    from ipcsim.scene import Scene

    with pytest.raises(SceneError) as info:
        Scene.from_dict(_keyframed(keyframes), ".", "s.json")
    assert str(info.value).startswith("s.json: " + message)
