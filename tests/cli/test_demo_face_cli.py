"""``ipcsim demo face`` and face scenes (format ipcsim-face/1) run by ``ipcsim run``: frames, stats, errors."""
import csv
import json
import sys
from pathlib import Path

import ipctk
import numpy as np
import pytest
from _cli_helpers import frames_of

from ipcsim.io.frames import read_ply

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "face" / "face_sequence.json"


def _stats(out):
    with open(out / "stats.csv", newline="") as fh:
        return list(csv.DictReader(fh))


def _intersecting(out) -> list:
    """Per surface frame of a run: whether the proxy (bodies 0 and 1; body 2, the skin, left out) intersects
    itself (ipctk)."""
    found = []
    for p in frames_of(out):
        v, f, body = read_ply(p, with_body=True)
        f = f[body[f[:, 0]] < 2]
        v = v[:f.max() + 1]  # the proxy's vertices come first
        found.append(bool(ipctk.has_intersections(ipctk.CollisionMesh(v, ipctk.edges(f), f), v)))
    return found


def _scene(directory, name="face.json", **changes):
    data = {**json.loads(EXAMPLE.read_text()), "frames": [0, 3], "every": 3, "output": {"render": False},
            **changes}
    path = directory / name
    path.write_text(json.dumps(data))
    return path


@pytest.fixture(scope="module")
def demo_run(tmp_path_factory):
    """The demo's first two frames (sequence frames 0 and 3: the lips start pressing)."""
    from ipcsim.cli import main

    out = tmp_path_factory.mktemp("face") / "demo"
    assert main(["demo", "face", "--frames", "2", "-o", str(out), "--no-render", "--quiet"]) == 0
    return out


def test_demo_writes_frames_and_stats_intersection_free(demo_run):
    paths = frames_of(demo_run)
    assert [p.name for p in paths] == ["surface_00000.ply", "surface_00001.ply"]
    (v0, f0, b0), (v1, f1) = read_ply(paths[0], with_body=True), read_ply(paths[1])
    assert np.array_equal(f0, f1) and set(np.unique(b0)) == {0, 1, 2}  # the upper and lower lip side, the skin
    assert np.abs(v1 - v0).max() > 1e-3  # the lips moved (mm), ...
    rows = _stats(demo_run)
    assert [r["sequence_frame"] for r in rows] == ["0", "3"] and all(r["converged"] == "1" for r in rows)
    assert int(rows[1]["n_contacts"]) > 0 and 0 < float(rows[1]["min_distance"]) < 1e-3  # ... pressed together
    assert float(rows[1]["time_total"]) >= float(rows[1]["time_global"]) > 0
    assert not any(_intersecting(demo_run))
    scene = json.loads((demo_run / "scene.json").read_text())
    assert scene["format"] == "ipcsim-face/1" and scene["frames"] == [0, 3] and scene["solver"] == "woodbury"
    assert not (demo_run / "preview.png").exists()


@pytest.fixture(scope="module")
def demo_states(demo_run):
    """The shipped small face and the solver's own states of the demo's frames (sequence frames 0 and 3)."""
    from ipcsim.face import FacePDSolver, load_face

    model = load_face("small")
    solver, states = FacePDSolver(model, "woodbury"), []
    for k in range(len(frames_of(demo_run))):
        solver.frame(model.sequence[3 * k])
        states.append(solver.x.copy())
    return model, states


def _skin_of(path):
    v, f, body = read_ply(path, with_body=True)
    skin = np.flatnonzero(body == 2)
    return v[skin], f[body[f[:, 0]] == 2] - skin[0]


def test_demo_frames_carry_the_skin(demo_run, demo_states):
    """Body 2 of every frame is the visible skin (``FaceModel.skin``: the ICT face's fine skin embedded in the
    simulation tets, 1,150 vertices, 2,112 triangles on the small face) at W_skin x of the solver's states,
    after the proxy, which is the same as without the skin; the skin's vertices of the proxy are the proxy."""
    from ipcsim.app.export import load_run
    from ipcsim.face.runner import skin_surface
    from ipcsim.io.frames import read_ply_names

    model, states = demo_states
    skin = model.skin
    assert skin_surface(model)[0] is skin.map and (len(skin.vertices), len(skin.faces)) == (1150, 2112)
    p = len(model.proxy_vertices)
    frames = []
    for path, x in zip(frames_of(demo_run), states, strict=True):
        v, f, body = read_ply(path, with_body=True)
        assert read_ply_names(path) == ["upper lip", "lower lip", "skin"]
        assert np.flatnonzero(body == 2).tolist() == list(range(p, p + 1150))
        assert np.array_equal(f[body[f[:, 0]] == 2], skin.faces + p)
        assert np.array_equal(v[:p], model.proxy_map.apply(x))  # the proxy, bit for bit
        w_x = np.einsum("sa,saj->sj", skin.map.weights, x[skin.map.nodes])  # W_skin x, summed apart
        assert np.abs(v[p:] - w_x).max() < 1e-15  # measured 0 (50 sequence frames)
        assert np.array_equal(v[p:][skin.proxy_index], v[:p])  # at the mouth the skin is the proxy
        frames.append(v[p:])
    assert np.abs(frames[1] - frames[0]).max() > 1e-3  # the skin moved (mm)
    run = load_run(demo_run)  # exports and the viewer name the bodies from the frames' header
    assert run.names == ["upper lip", "lower lip", "skin"] and run.n_bodies == 3


def _has_intersections(v, f) -> bool:
    return bool(ipctk.has_intersections(ipctk.CollisionMesh(v, ipctk.edges(f), f), v))


def test_demo_skin_is_intersection_free(demo_run, demo_states):
    """The visible skin of the demo's frames does not cross itself (ipctk); the simulation mesh's outer surface,
    the skin drawn before (``FaceModel.skin`` None), crosses itself along the lips' line once they press."""
    import dataclasses

    from ipcsim.face.runner import skin_surface

    assert not any(_has_intersections(*_skin_of(path)) for path in frames_of(demo_run))
    model, states = demo_states
    old_map, old_faces = skin_surface(dataclasses.replace(model, skin=None))
    assert old_map.n_surface == 540
    assert [_has_intersections(old_map.apply(x), old_faces) for x in states] == [False, True]


def test_scene_file_runs_the_same_frames(tmp_path, cli, demo_run):
    out = tmp_path / "run"
    rc, stdout, err = cli("run", _scene(tmp_path), "-o", out, "--quiet")
    assert rc == 0, err
    for a, b in zip(frames_of(out), frames_of(demo_run), strict=True):
        assert np.abs(read_ply(a)[0] - read_ply(b)[0]).max() < 1e-12
    rc, stdout, _ = cli("info", _scene(tmp_path))
    assert rc == 0 and "small face, 1620 vertices, 5940 tets" in stdout


def test_without_contact_the_lips_interpenetrate(tmp_path, cli):
    out = tmp_path / "free"
    rc, _, err = cli("run", _scene(tmp_path, contact={"enabled": False}), "-o", out, "--quiet")
    assert rc == 0, err
    assert _intersecting(out) == [False, True]  # what the demo's contact handling prevents
    assert _stats(out)[1]["n_contacts"] == "0"


def test_predicted_x2_is_smaller_and_still_intersection_free(tmp_path, cli, demo_run):
    out = tmp_path / "x2"
    rc, _, err = cli("run", _scene(tmp_path, x2={"radius": 5e-4, "rings": 0}), "-o", out, "--quiet")
    assert rc == 0, err
    exact, predicted = _stats(demo_run)[1], _stats(out)[1]
    assert int(predicted["n2"]) < int(exact["n2"]) and int(predicted["n_contacts"]) > 0
    assert not any(_intersecting(out))


def test_demo_is_listed(cli):
    rc, stdout, _ = cli("demo", "--list")
    assert rc == 0 and any(line.startswith("face ") for line in stdout.splitlines())


@pytest.mark.parametrize("argv, expected", [
    (["demo", "face", "--frames", "0"], "error: --frames must be an integer from 1 to 17"),
    (["demo", "face", "--frames", "18"], "error: --frames must be an integer from 1 to 17"),
    (["demo", "face", "--solver", "lu"], "error: ipcsim demo: argument --solver: invalid choice: 'lu'"),
    (["demo", "face", "--dt", "0.1"], "error: demo face has no --dt"),
    (["demo", "face", "--resume"], "error: demo face has no --resume"),
    (["demo", "two-cubes", "--frames", "2"], "error: demo two-cubes: --frames, --solver and --device are options "
                                             "of the face demo"),
    (["demo", "two-cubes", "--device", "gpu"], "error: demo two-cubes: --frames, --solver and --device are "
                                               "options of the face demo"),
    (["demo", "face", "--device", "tpu"], "error: ipcsim demo: argument --device: invalid choice: 'tpu'"),
    (["demo", "face", "--device", "gpu", "--solver", "pcg"], "error: demo face: device: device 'gpu' runs the "
                                                            "dense algebra of the solvers 'schur' and 'woodbury' "
                                                            "only, got solver 'pcg'"),
])
def test_demo_errors_are_one_line(tmp_path, cli, argv, expected):
    out = tmp_path / "out"
    rc, _, err = cli(*argv, "-o", out)
    assert rc == 2 and err.startswith(expected) and err.count("\n") == 1, err
    assert not out.exists()


@pytest.mark.parametrize("changes, expected", [
    ({"frame": [0, 3]}, "face.json: frame: unknown key 'frame'"),
    ({"frames": [3, 50]}, "face.json: frames: expected \"all\" or [first, last]"),
    ({"solver": "lu"}, "face.json: solver: expected one of 'direct', 'pcg', 'schur', 'woodbury', got 'lu'"),
    ({"device": "tpu"}, "face.json: device: expected one of 'cpu', 'gpu', got 'tpu'"),
    ({"device": "gpu", "solver": "direct"}, "face.json: device: device 'gpu' runs the dense algebra of the solvers "
                                            "'schur' and 'woodbury' only, got solver 'direct'"),
    ({"face": "huge"}, "face.json: face: expected one of 'small', 'large'"),
    ({"every": 0}, "face.json: every: expected an integer >= 1"),
    ({"x2": {"radius": 0}}, "face.json: x2.radius: expected a positive finite number"),
    ({"contact": {"dhat": -1}}, "face.json: contact.dhat: expected a positive finite number or null"),
    ({"contact": {"kapa": 1}}, "face.json: contact.kapa: unknown key 'kapa'"),
    ({"output": {"render": "yes"}}, "face.json: output.render: expected true or false"),
    ({"output": {"preview_bodies": ["lips"]}}, "face.json: output.preview_bodies: expected a list of distinct "
                                               "names of 'upper lip', 'lower lip', 'skin', got ['lips']"),
])
def test_scene_errors_name_the_key(tmp_path, cli, changes, expected):
    out = tmp_path / "out"
    rc, _, err = cli("run", _scene(tmp_path, **changes), "-o", out)
    assert rc == 2 and err.startswith(f"error: {tmp_path}/{expected}") and err.count("\n") == 1, err
    assert not out.exists()


def test_gpu_device_without_cupy_is_one_line(tmp_path, cli, monkeypatch):
    monkeypatch.setitem(sys.modules, "cupy", None)  # import cupy raises ImportError, as where it is not installed
    out = tmp_path / "out"
    for argv, source in ((["demo", "face", "--device", "gpu"], "demo face"),
                         (["run", _scene(tmp_path, device="gpu")], f"{tmp_path}/face.json")):
        rc, _, err = cli(*argv, "-o", out)
        assert rc == 2 and err.count("\n") == 1, err
        assert err.startswith(f"error: {source}: device: device 'gpu' needs CuPy, which cannot be imported"), err
        assert "pip install 'ipcsim[gpu]'" in err and not out.exists()


def test_run_refuses_time_options_for_face_scenes(tmp_path, cli):
    out = tmp_path / "out"
    rc, _, err = cli("run", _scene(tmp_path), "--end-time", "1", "-o", out)
    assert rc == 2 and "a face scene has no --end-time" in err and not out.exists()


def test_docs_python_example_runs():
    import re

    text = (Path(__file__).resolve().parents[2] / "docs" / "face.md").read_text()
    (code,) = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    namespace = {}
    exec(compile(code.replace("model.sequence[:10]", "model.sequence[:2]"), "docs/face.md", "exec"), namespace)
    lips, model = namespace["lips"], namespace["model"]
    assert lips.shape == model.proxy_vertices.shape and namespace["stats"].converged


def test_face_kernels_are_recorded_apart():
    from ipcsim.app import warmup

    manifest = warmup.load_manifest()
    assert manifest.get("face") and warmup.scene_entries(manifest, "face") == manifest["face"]
    others = {name: entries for name, entries in manifest.items() if name != "face"}
    assert warmup.scene_entries(manifest, None) == warmup.scene_entries(others, None)  # scenes that are no demo
