"""Every IPC tutorial script and every built-in demo runs through the command line (shortened with --end-time),
and every output frame is intersection-free by ipctk's judgement."""
import warnings

import ipctk
import numpy as np
import pytest

from ipcsim.scene.ipc_script import parse_script

from _cli_helpers import frames_of, read_frames, stats_rows


TUTORIALS = [
    "2cubesFall.txt", "2cubesFall_full.txt", "2cubesFall_heavyTop.txt", "2cubesFall_largerDt.txt",
    "2cubesFall_smallerDt.txt", "2cubesFall_stiffer.txt", "BC/2cubesFall_DBC.txt", "BC/2cubesFall_DBC_timeRange.txt",
    "BC/2cubesFall_NBC.txt", "BC/2cubesFall_NBC_timeRange.txt", "MCO/2cubesFall_rotateCO.txt",
    "MCO/2cubesFall_rotateCO_closedSurface.txt", "MCO/2cubesFall_rotateCO_edges.txt",
    "MCO/2cubesFall_rotateCO_points.txt", "MCO/2cubesFall_rotateCO_triangle.txt", "MCO/2cubesFall_translateCO.txt",
    "advanced/2cubesFall_BE.txt", "advanced/2cubesFall_NM.txt", "advanced/2cubesFall_attach.txt",
    "advanced/2cubesFall_rotateCO_meshSeq.txt", "initVel/2cubesFall_initRot.txt", "initVel/2cubesFall_initVel.txt",
]


def test_the_list_covers_every_tutorial(shared_data):
    root = shared_data / "ipc/input/tutorialExamples"
    assert {p.relative_to(root).as_posix() for p in root.rglob("*.txt")} == set(TUTORIALS)


def _assert_frames_intersection_free(out, n_frames):
    frames = read_frames(out)
    assert len(frames) == n_frames
    v0, f0 = frames[0]
    faces = f0.astype(np.int32)
    tk = ipctk.CollisionMesh(v0, ipctk.edges(faces), faces)
    for k, (v, f) in enumerate(frames):
        assert np.array_equal(f, f0) and v.shape == v0.shape
        assert not ipctk.has_intersections(tk, v), f"frame {k}"


@pytest.mark.parametrize("name", TUTORIALS)
def test_tutorial_script_runs_from_the_command_line(tmp_path, cli, shared_data, name):
    script = shared_data / "ipc/input/tutorialExamples" / name
    out = tmp_path / "out"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        dt = parse_script(script)["time"]["dt"]  # three steps of the script's own time step
    rc, _, err = cli("run", script, "-o", out, "--end-time", 3 * dt, "--quiet")
    assert rc == 0, err
    _, rows = stats_rows(out)
    assert len(rows) == 3
    _assert_frames_intersection_free(out, 4)


@pytest.mark.parametrize("name", ["two-cubes", "cube-slide", "pinned-mat", "cubes-in-bowl"])
def test_demo_frames_are_intersection_free(tmp_path, cli, name):
    out = tmp_path / name
    rc, _, err = cli("demo", name, "-o", out, "--end-time", 0.06, "--no-render", "--quiet")
    assert rc == 0, err
    n = len(frames_of(out))
    assert n >= 4
    _assert_frames_intersection_free(out, n)
