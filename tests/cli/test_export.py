"""`ipcsim export OUT --format usd|pvd|obj` (ipcsim.app.export): a real short run (two cubes, a static and a moving
obstacle) exported and read back: the USD with pxr (every point of every frame against the PLY frames), the PVD
with xml.etree and meshio, the OBJ sequence by hand; bad input -> one line, exit 2, nothing written."""
import copy
import csv
import json
import shutil
import sys
import xml.etree.ElementTree as ET

import meshio
import numpy as np
import pytest

from ipcsim.app import export as ex
from ipcsim.cli import main
from ipcsim.io.frames import read_ply, write_ply

from _cli_helpers import CUBE, TINY, frames_of, write_scene

#: TINY's cubes (the bottom one renamed with a space: no valid USD identifier) on a static obstacle plate instead
#: of the ground, and a block moving at 0.5 m/s in z far from them
SCENE = copy.deepcopy(TINY)
SCENE["bodies"][0]["name"] = "bottom cube"
SCENE.pop("half_spaces")
SCENE["obstacles"] = [
    {"name": "floor", "mesh": {"box": {"size": [0.3, 0.01, 0.3], "resolution": [1, 1, 1]}},
     "transform": {"translation": [-0.1, -0.0095, -0.1]}},
    {"name": "pusher", "mesh": CUBE, "transform": {"translation": [0.4, 0.0, 0.0], "scale": 0.5},
     "velocity": [0.0, 0.0, 0.5]}]
SCENE["output"] = {"every": 2, "checkpoint_every": 10, "volume": True}
SCENE["time"] = {"end": 0.06, "dt": 0.01}  # 6 steps, frames after 0, 2, 4 and 6 of them


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    """The run directory of SCENE."""
    d = tmp_path_factory.mktemp("export")
    out = d / "out"
    assert main(["run", str(write_scene(d, SCENE)), "-o", str(out), "--quiet"]) == 0
    return out


def ply_frames(out):
    """[(vertices (n, 3), faces, body)] of the run's frames."""
    return [read_ply(p, with_body=True) for p in frames_of(out)]


def stats_times(out):
    """{step: time [s]} of OUT/stats.csv."""
    with open(out / "stats.csv", newline="") as fh:
        return {int(r["step"]): float(r["time"]) for r in csv.DictReader(fh)}


def no_temporaries(directory):
    return not any(p.name.startswith(".tmp") for p in directory.rglob("*"))


# ----------------------------------------------------------------------------------------------- USD
def test_usd_round_trip_every_point_of_every_frame(run_dir, cli, tmp_path):
    from pxr import Usd, UsdGeom

    rc, out, err = cli("export", run_dir, "--format", "usd", "-o", tmp_path / "run.usd")
    assert rc == 0, err
    assert out.strip() == f"export: {tmp_path / 'run.usd'}"
    stage = Usd.Stage.Open(str(tmp_path / "run.usd"))
    frames = ply_frames(run_dir)
    assert len(frames) == 4
    layer = stage.GetRootLayer()
    assert layer.HasTimeCodesPerSecond() and layer.HasFramesPerSecond()  # both authored
    assert layer.timeCodesPerSecond == layer.framesPerSecond == pytest.approx(50.0)  # 1 / (2 * 0.01 s)
    assert (stage.GetStartTimeCode(), stage.GetEndTimeCode()) == (0, 3)
    assert UsdGeom.GetStageUpAxis(stage) == UsdGeom.Tokens.y and UsdGeom.GetStageMetersPerUnit(stage) == 1.0
    assert stage.GetDefaultPrim().GetPath() == "/World"
    names = ["bottom cube", "top", "floor", "pusher"]
    prims = list(stage.GetDefaultPrim().GetChildren())
    assert [p.GetName() for p in prims] == ["bottom_cube", "top", "floor", "pusher"]
    assert [p.GetAttribute("ipcsim:name").Get() for p in prims] == names
    assert prims[0].GetDisplayName() == "bottom cube"
    assert [p.GetAttribute("ipcsim:obstacle").Get() for p in prims] == [False, False, True, True]
    worst = 0.0
    for b, prim in enumerate(prims):
        mesh = UsdGeom.Mesh(prim)
        points = mesh.GetPointsAttr()
        v0, f0, body = frames[0]
        mine = np.flatnonzero(body == b)
        local = -np.ones(len(body), int)
        local[mine] = np.arange(len(mine))
        assert np.array_equal(np.array(mesh.GetFaceVertexIndicesAttr().Get()).reshape(-1, 3),
                              local[f0[np.isin(f0[:, 0], mine)]])
        # the bodies and the moving obstacle: one sample per frame; the static floor: one value, no sample
        assert points.GetNumTimeSamples() == (0 if names[b] == "floor" else 4)
        for k, (v, _, _) in enumerate(frames):
            p = np.array(points.Get(Usd.TimeCode(k)), np.float64)
            assert p.shape == (len(mine), 3)
            worst = max(worst, float(np.abs(p - v[mine]).max()))
            assert np.array_equal(p, v[mine].astype(np.float32))  # float32 rounding of the PLY, nothing else
        moved = float(np.abs(frames[-1][0][mine] - v0[mine]).max())
        assert (moved == 0.0) == (names[b] == "floor")  # top falls 7 mm, the pusher moves 30 mm
    assert worst <= 1e-6  # the bound; measured 1.2e-8 m (float32 rounding of coordinates up to 0.45 m)


def test_usd_z_up_rotates_points_and_sets_the_axis(run_dir, cli, tmp_path):
    from pxr import Usd, UsdGeom

    assert cli("export", run_dir, "--format", "usd", "--up", "z", "-o", tmp_path / "z.usda")[0] == 0
    assert (tmp_path / "z.usda").read_text().startswith("#usda")
    stage = Usd.Stage.Open(str(tmp_path / "z.usda"))
    assert UsdGeom.GetStageUpAxis(stage) == UsdGeom.Tokens.z
    v, _, body = ply_frames(run_dir)[-1]
    top = UsdGeom.Mesh(stage.GetPrimAtPath("/World/top")).GetPointsAttr().Get(Usd.TimeCode(3))
    p = np.array(top, np.float64)
    expected = np.stack([v[body == 1, 0], -v[body == 1, 2], v[body == 1, 1]], axis=1)  # (x, y, z) -> (x, -z, y)
    assert np.abs(p - expected).max() <= 1e-6  # measured 1.2e-8 m over all bodies
    floor = np.array(UsdGeom.Mesh(stage.GetPrimAtPath("/World/floor")).GetPointsAttr().Get())
    assert p[:, 2].min() > floor[:, 2].max()  # what was above in y is above in z: the top cube over the floor


def test_usd_passes_pxr_validation(run_dir, tmp_path):
    """usd-core ships no usdchecker script: its validators (UsdValidation, what usdchecker runs) find nothing
    in the export, and they do flag a stage without the metadata the export sets."""
    from pxr import Sdf, Usd, UsdValidation

    path = ex.export_run(run_dir, "usd", tmp_path / "run.usdc")[0]
    validators = UsdValidation.ValidationRegistry().GetOrLoadAllValidators()
    errors = UsdValidation.ValidationContext(validators).Validate(Usd.Stage.Open(str(path)))
    assert [e.GetMessage() for e in errors] == []
    assert "def Mesh \"top\"" in Sdf.Layer.FindOrOpen(str(path)).ExportToString()  # what usdcat prints
    bare = Usd.Stage.CreateInMemory()
    bare.DefinePrim("/World", "Xform")
    assert len(UsdValidation.ValidationContext(validators).Validate(bare)) >= 2  # upAxis, metersPerUnit missing


# ----------------------------------------------------------------------------------------------- PVD, OBJ
def test_pvd_lists_every_frame_with_its_time_in_seconds(run_dir, cli):
    rc, out, err = cli("export", run_dir, "--format", "pvd")
    assert rc == 0, err
    pvd = run_dir / "export" / "tiny.pvd"
    assert out.strip() == f"export: {pvd}, {run_dir / 'export' / 'tiny_volume.pvd'}"
    root = ET.parse(pvd).getroot()
    assert root.get("type") == "Collection"
    sets = root.findall("./Collection/DataSet")
    frames = ply_frames(run_dir)
    assert len(sets) == len(frames) == 4
    times = stats_times(run_dir)
    for k, (ds, (v, f, body)) in enumerate(zip(sets, frames)):
        t = float(ds.get("timestep"))
        assert t == (0.0 if k == 0 else pytest.approx(times[2 * k], abs=1e-12))  # frame k: after 2k steps
        mesh = meshio.read(pvd.parent / ds.get("file"))
        assert np.array_equal(mesh.points, v) and np.array_equal(mesh.cells_dict["triangle"], f)
        assert np.array_equal(mesh.point_data["body"], body)
    volume = ET.parse(run_dir / "export" / "tiny_volume.pvd").getroot().findall("./Collection/DataSet")
    assert [(run_dir / "export" / d.get("file")).resolve() for d in volume] == \
        [p.resolve() for p in frames_of(run_dir, "volume")]
    assert [float(d.get("timestep")) for d in volume] == [float(d.get("timestep")) for d in sets]


def read_obj(path):
    """{object name: (vertices (k, 3), faces (m, 3) 1-based)} of an OBJ file, objects in file order."""
    objects, name = {}, None
    for line in path.read_text().splitlines():
        tag, *rest = line.split(" ", 1)
        if tag == "o":
            name = rest[0]
            objects[name] = ([], [])
        elif tag in ("v", "f"):
            objects[name][tag == "f"].append([float(x) if tag == "v" else int(x) for x in rest[0].split()])
    return {n: (np.array(v, float).reshape(-1, 3), np.array(f, int).reshape(-1, 3)) for n, (v, f) in objects.items()}


def test_obj_sequence_one_file_per_frame_one_object_per_body(run_dir, cli, tmp_path):
    (tmp_path / "objs").mkdir()
    (tmp_path / "objs" / "tiny_00009.obj").write_text("an earlier export's frame\n")
    assert cli("export", run_dir, "--format", "obj", "-o", tmp_path / "objs")[0] == 0  # replaces that export
    assert no_temporaries(tmp_path) and [p.name for p in tmp_path.iterdir()] == ["objs"]
    files = sorted((tmp_path / "objs").glob("*.obj"))
    frames = ply_frames(run_dir)
    assert [p.name for p in files] == [f"tiny_{k:05d}.obj" for k in range(len(frames))]
    for path, (v, f, body) in zip(files, frames):
        objects = read_obj(path)
        assert list(objects) == ["bottom cube", "top", "floor", "pusher"]
        order = np.argsort(body, kind="stable")
        allv = np.concatenate([o[0] for o in objects.values()])
        allf = np.concatenate([o[1] for o in objects.values()]) - 1
        assert np.abs(allv - v[order]).max() <= 1e-9  # 9 significant digits; measured 5.0e-10 m
        assert np.array_equal(order[allf], f[np.argsort(body[f[:, 0]], kind="stable")])


# ----------------------------------------------------------------------------------------------- errors
def test_bad_input_is_one_line_exit_2_and_writes_nothing(run_dir, cli, tmp_path, monkeypatch):
    rc, _, err = cli("export", tmp_path, "--format", "obj")
    assert rc == 2 and err == f"error: {tmp_path}: no frames/surface_*.ply (is it the output directory of a run?)\n"
    rc, _, err = cli("export", tmp_path / "none", "--format", "pvd")
    assert rc == 2 and err.startswith("error:") and "is not a directory" in err and err.count("\n") == 1
    rc, _, err = cli("export", run_dir, "--format", "fbx")
    assert rc == 2 and err.startswith("error: ipcsim export: argument --format: invalid choice: 'fbx'")
    with pytest.raises(ex.ExportError, match="unknown export format 'fbx'"):
        ex.export_run(run_dir, "fbx")
    rc, _, err = cli("export", run_dir, "--format", "usd", "-o", tmp_path / "a.obj")
    assert rc == 2 and err == f"error: {tmp_path / 'a.obj'}: a USD file ends in .usd, .usda or .usdc\n"
    (tmp_path / "scene.json").write_text("[1, 2]")
    (tmp_path / "frames").mkdir()
    write_ply(tmp_path / "frames" / "surface_00000.ply", *ply_frames(run_dir)[0])
    rc, _, err = cli("export", tmp_path, "--format", "obj")
    assert rc == 2 and err == f"error: {tmp_path / 'scene.json'}: not a JSON object\n"
    (tmp_path / "scene.json").unlink()
    shutil.rmtree(tmp_path / "frames")
    monkeypatch.setitem(sys.modules, "pxr", None)  # usd-core not installed
    rc, _, err = cli("export", run_dir, "--format", "usd", "-o", tmp_path / "b.usd")
    assert rc == 2 and err == "error: USD export needs usd-core: pip install 'ipcsim[usd]' (or pip install usd-core)\n"
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("fmt, target", [("usd", "x.usd"), ("pvd", "x.pvd"), ("obj", "x")])
def test_a_bad_frame_midway_leaves_nothing_half_written(run_dir, cli, tmp_path, fmt, target):
    broken = tmp_path / "run"
    (broken / "frames").mkdir(parents=True)
    for k, (v, f, body) in enumerate(ply_frames(run_dir)):
        write_ply(broken / "frames" / f"surface_{k:05d}.ply", v if k < 2 else v[:-1], f if k < 2 else f[:-1],
                  body if k < 2 else body[:-1])
    out = tmp_path / "exports"
    out.mkdir()
    rc, _, err = cli("export", broken, "--format", fmt, "-o", out / target)
    assert rc == 2 and err == (f"error: {broken / 'frames' / 'surface_00002.ply'}: its surface differs from "
                               "surface_00000.ply (vertex count or faces)\n")
    assert list(out.iterdir()) == [] and no_temporaries(tmp_path)
    assert cli("export", broken, "--format", fmt)[0] == 2
    assert sorted(p.name for p in broken.iterdir()) == ["frames"]  # no OUT/export left behind


def test_frame_times_follow_dt_and_every():
    times, fps = ex.frame_times({"time": {"dt": 0.005}, "output": {"every": 4}}, 3)
    assert np.allclose(times, [0.0, 0.02, 0.04], rtol=0, atol=1e-15) and fps == pytest.approx(50.0)
    times, fps = ex.frame_times({"time": {"dt": 0.005}}, 3, timing=(0.01, 3))  # the checkpoint's win
    assert np.allclose(times, [0.0, 0.03, 0.06], rtol=0, atol=1e-15) and fps == pytest.approx(100 / 3)
    times, fps = ex.frame_times({"format": "ipcsim-face/1"}, 3)  # no time step: DEFAULT_FPS
    assert np.array_equal(times, [0.0, 0.1, 0.2]) and fps == ex.DEFAULT_FPS


def test_a_demo_run_whose_scene_json_holds_parameters_only(run_dir, tmp_path):
    """The teddy grasp's scene.json holds the demo's parameters, no bodies and no output.every: the names come
    from forces.csv and the frame spacing from checkpoint.npz (every = 2 here, not scene.json's default 1)."""
    from pxr import Usd

    demo = tmp_path / "demo"
    shutil.copytree(run_dir, demo, ignore=shutil.ignore_patterns("export"))
    (demo / "scene.json").write_text(json.dumps({"name": "grasp", "demo": "teddy-grasp", "time": SCENE["time"]}))
    pvd = ex.export_run(demo, "pvd")[0]
    times = stats_times(demo)
    assert [float(d.get("timestep")) for d in ET.parse(pvd).getroot().findall("./Collection/DataSet")] == \
        pytest.approx([0.0] + [times[2 * k] for k in (1, 2, 3)], abs=1e-12)
    stage = Usd.Stage.Open(str(ex.export_run(demo, "usd")[0]))
    prims = list(stage.GetDefaultPrim().GetChildren())
    assert [p.GetAttribute("ipcsim:name").Get() for p in prims] == ["bottom cube", "top", "floor", "pusher"]
    assert stage.GetRootLayer().timeCodesPerSecond == pytest.approx(50.0)
    # which ids are obstacles is unknown here: every prim is a time-sampled body
    assert [p.GetAttribute("ipcsim:obstacle").Get() for p in prims] == [False] * 4
    assert prims[2].GetAttribute("points").GetNumTimeSamples() == 4


def test_frames_only_directory_gets_default_names_and_fps(run_dir, tmp_path):
    """Without scene.json, forces.csv or checkpoint.npz (what a face run lacks but scene.json): bodies body<i>,
    DEFAULT_FPS frames per second."""
    bare = tmp_path / "bare"
    shutil.copytree(run_dir / "frames", bare / "frames")
    folder = ex.export_run(bare, "obj")[0]
    assert folder == bare / "export" / "obj"
    text = (folder / "bare_00002.obj").read_text()
    assert text.startswith("# ipcsim frame 2 of bare, t = 0.2 s\n")
    assert list(read_obj(folder / "bare_00002.obj")) == ["body0", "body1", "body2", "body3"]


def test_help(cli):
    rc, stdout, _ = cli("export", "--help")
    assert rc == 0 and stdout.startswith("usage: ipcsim export") and "--up {y,z}" in stdout
    assert "export" in cli("--help")[1]
