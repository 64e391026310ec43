"""`ipcsim run`: output layout, intersection-free frames, bit-for-bit reruns and resumes."""
import json

import ipctk
import numpy as np
import pytest

import ipcsim.solvers.integrator_solvers as ie
from ipcsim.io.frames import read_ply
from ipcsim.app.runner import STATS_COLUMNS
from ipcsim.scene import load_scene

from _cli_helpers import MIXED, frame_bytes, frames_of, read_frames, stats_rows, write_scene


def test_layout_frames_stats_scene_json(tmp_path, cli):
    scene = write_scene(tmp_path)
    out = tmp_path / "out"
    rc, stdout, err = cli("run", scene, "-o", out, "--quiet", "--volume")
    assert rc == 0, err
    assert stdout == "" and err == ""
    steps, every = 4, 2
    frames = read_frames(out)
    assert [p.name for p in frames_of(out)] == [f"surface_{k:05d}.ply" for k in range(1 + steps // every)]
    v0, f0 = frames[0]
    _, _, body = read_ply(frames_of(out)[0], with_body=True)
    assert set(body.tolist()) == {0, 1} and len(v0) == len(body)
    for v, f in frames:
        assert v.shape == v0.shape and np.array_equal(f, f0)
        tk = ipctk.CollisionMesh(v0, ipctk.edges(f0.astype(np.int32)), f0.astype(np.int32))
        assert not ipctk.has_intersections(tk, v)
    # the last frame moved: the top cube fell and hit the bottom one
    assert not np.array_equal(frames[-1][0], v0)
    header, rows = stats_rows(out)
    assert tuple(header) == STATS_COLUMNS
    assert [int(r[0]) for r in rows] == list(range(1, steps + 1))
    assert np.allclose([float(r[1]) for r in rows], 0.01 * np.arange(1, steps + 1))
    col = {c: i for i, c in enumerate(header)}
    assert all(int(r[col["newton_iterations"]]) >= 1 for r in rows)
    assert max(int(r[col["n_contacts"]]) for r in rows) > 0
    assert all(float(r[col["wall_seconds"]]) > 0 for r in rows)
    vols = frames_of(out, "volume")
    assert len(vols) == len(frames)
    import meshio

    m = meshio.read(vols[-1])
    assert m.cells_dict["tetra"].shape == (2 * 48, 4)
    assert np.all(m.cell_data["J"][0] > 0) and set(m.cell_data["body"][0].tolist()) == {0, 1}
    data = json.loads((out / "scene.json").read_text())
    assert data["name"] == "tiny" and data["time"] == {"end": 0.04, "dt": 0.01}
    mesh = load_scene(out / "scene.json").build().model.collision_mesh
    with np.load(out / "checkpoint.npz") as ck:
        assert int(ck["step"]) == steps and int(ck["frame"]) == len(frames)
        assert np.array_equal(mesh.select_positions(ck["x"]), frames[-1][0])
    assert not any(p.name.startswith(".tmp") for p in out.rglob("*"))


def test_rerun_from_scene_json_is_bit_identical(tmp_path, cli):
    scene = write_scene(tmp_path)
    a, b = tmp_path / "a", tmp_path / "b"
    assert cli("run", scene, "-o", a, "--quiet")[0] == 0
    assert cli("run", a / "scene.json", "-o", b, "--quiet")[0] == 0
    assert frame_bytes(a) == frame_bytes(b)
    assert (a / "scene.json").read_text() == (b / "scene.json").read_text()


def test_embedded_affine_and_keyframed_scene_reruns_and_resumes_bit_identically(tmp_path, cli):
    scene = write_scene(tmp_path, MIXED, "mixed.json")
    a, b, part = tmp_path / "a", tmp_path / "b", tmp_path / "part"
    rc, _, err = cli("run", scene, "-o", a, "--quiet")
    assert rc == 0, err
    data = json.loads((a / "scene.json").read_text())
    bottom, top, finger = data["bodies"]
    assert bottom["embedding"] == {"resolution": 0.06, "mass": "consistent"}
    assert top["affine"] == {"stiffness": 1e6, "fixed": False} and top["material"] == {"density": 500}
    assert finger["mesh"]["half_ellipsoid"]["rim"] == 20 and set(finger["dirichlet"][0]) == {"box", "keyframes"}
    assert cli("run", a / "scene.json", "-o", b, "--quiet")[0] == 0
    assert frame_bytes(a) == frame_bytes(b) and len(frames_of(a)) == 5
    assert (a / "scene.json").read_text() == (b / "scene.json").read_text()
    frames = read_frames(a)
    assert not np.array_equal(frames[-1][0], frames[0][0])  # the affine cube fell, the finger moved
    assert cli("run", scene, "-o", part, "--quiet", "--end-time", "0.02")[0] == 0
    rc, _, err = cli("run", scene, "-o", part, "--quiet", "--resume")
    assert rc == 0, err
    assert frame_bytes(part) == frame_bytes(a)


def test_resume_after_shorter_run_equals_uninterrupted(tmp_path, cli):
    scene = write_scene(tmp_path, output={"every": 1, "checkpoint_every": 2})
    full, part = tmp_path / "full", tmp_path / "part"
    assert cli("run", scene, "-o", full, "--quiet")[0] == 0
    assert cli("run", scene, "-o", part, "--quiet", "--end-time", "0.03")[0] == 0
    assert len(frames_of(part)) == 4
    rc, _, err = cli("run", scene, "-o", part, "--quiet", "--resume")
    assert rc == 0, err
    assert frame_bytes(part) == frame_bytes(full)
    assert [r[:7] for r in stats_rows(part)[1]] == [r[:7] for r in stats_rows(full)[1]]


def test_resume_after_crash_equals_uninterrupted(tmp_path, cli, monkeypatch):
    scene = write_scene(tmp_path, output={"every": 1, "checkpoint_every": 2})
    full, crashed = tmp_path / "full", tmp_path / "crashed"
    assert cli("run", scene, "-o", full, "--quiet")[0] == 0
    real_step = ie.ImplicitEulerSolver.step
    calls = []

    def dying_step(self, *args, **kw):
        calls.append(1)
        if len(calls) == 4:  # killed during step 4: frames 0..3 written, checkpoint at step 2
            raise KeyboardInterrupt
        return real_step(self, *args, **kw)

    monkeypatch.setattr(ie.ImplicitEulerSolver, "step", dying_step)
    rc, _, err = cli("run", scene, "-o", crashed, "--quiet")
    assert rc == 130 and "--resume" in err
    assert len(frames_of(crashed)) == 4 and len(stats_rows(crashed)[1]) == 3
    forces = (crashed / "forces.csv").read_text().splitlines()[1:]
    assert [r.split(",")[0] for r in forces] == ["1", "1", "2", "2", "3", "3"]  # per step, per body
    with np.load(crashed / "checkpoint.npz") as ck:
        assert int(ck["step"]) == 2
    monkeypatch.setattr(ie.ImplicitEulerSolver, "step", real_step)
    rc, _, err = cli("run", scene, "-o", crashed, "--quiet", "--resume")
    assert rc == 0, err
    assert frame_bytes(crashed) == frame_bytes(full)
    assert [r[0] for r in stats_rows(crashed)[1]] == ["1", "2", "3", "4"]
    assert [r[:7] for r in stats_rows(crashed)[1]] == [r[:7] for r in stats_rows(full)[1]]
    assert (crashed / "forces.csv").read_bytes() == (full / "forces.csv").read_bytes()  # cut back, redone


def test_resume_refuses_another_scene(tmp_path, cli):
    scene = write_scene(tmp_path)
    out = tmp_path / "out"
    assert cli("run", scene, "-o", out, "--quiet", "--end-time", "0.01")[0] == 0
    before = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    other = write_scene(tmp_path, name="other.json", gravity=[0.0, -5.0, 0.0])
    rc, _, err = cli("run", other, "-o", out, "--quiet", "--resume")
    assert rc == 2 and err.startswith("error: cannot resume") and len(err.splitlines()) == 1
    assert {p: p.read_bytes() for p in out.rglob("*") if p.is_file()} == before


def test_resume_newmark_with_damping_and_friction(tmp_path, cli):
    """Newmark carries the acceleration in the state: the checkpoint must hold it for a bit-identical resume."""
    scene = write_scene(tmp_path, integrator={"type": "newmark", "damping_ratio": 0.1},
                        friction={"mu": 0.2}, output={"every": 1, "checkpoint_every": 3})
    full, part = tmp_path / "full", tmp_path / "part"
    rc, _, err = cli("run", scene, "-o", full, "--quiet")
    assert rc == 0, err
    with np.load(full / "checkpoint.npz") as ck:
        assert "a" in ck.files and np.any(ck["a"] != 0)
    assert cli("run", scene, "-o", part, "--quiet", "--end-time", "0.02")[0] == 0
    assert cli("run", scene, "-o", part, "--quiet", "--resume")[0] == 0
    assert frame_bytes(part) == frame_bytes(full)


def test_ipc_script_runs(tmp_path, cli, shared_data):
    script = shared_data / "ipc" / "input" / "tutorialExamples" / "2cubesFall.txt"
    out = tmp_path / "out"
    rc, _, err = cli("run", script, "-o", out, "--quiet", "--end-time", "0.05")
    assert rc == 0, err
    frames = read_frames(out)
    assert len(frames) == 3  # 0.05 s of 0.025 s steps, every step written
    data = json.loads((out / "scene.json").read_text())
    assert data["name"] == "2cubesFall" and data["time"]["dt"] == 0.025
    v0, f0 = frames[0]
    for v, f in frames:
        assert np.array_equal(f, f0)
        assert not ipctk.has_intersections(ipctk.CollisionMesh(v0, ipctk.edges(f0.astype(np.int32)),
                                                               f0.astype(np.int32)), v)


def test_override_with_relative_scene_path_and_mesh_file(tmp_path, cli, monkeypatch):
    """--end-time on a scene given by a relative path whose body reads a mesh file beside it: the mesh is found
    (the loaded paths were joined to the scene's folder once; the override must not join them again)."""
    import meshio

    from ipcsim.model import box_tet_mesh

    (tmp_path / "scenes").mkdir()
    v, t = box_tet_mesh((0.1, 0.1, 0.1), (1, 1, 1))
    meshio.write(tmp_path / "scenes" / "cube.vtk", meshio.Mesh(v, [("tetra", t)]))
    write_scene(tmp_path / "scenes", name="s.json", bodies=[{"mesh": "cube.vtk", "transform": {"translation": [0, 0.01, 0]}}])
    monkeypatch.chdir(tmp_path)
    rc, _, err = cli("run", "scenes/s.json", "--end-time", "0.02", "-o", "out", "--quiet")
    assert rc == 0, err
    assert len(frames_of(tmp_path / "out")) == 2


def _interrupt_in_kernel():
    """What Ctrl-C inside a Numba kernel raises: CPython's SystemError caused by the handler's KeyboardInterrupt."""
    try:
        raise KeyboardInterrupt
    except KeyboardInterrupt as exc:
        raise SystemError("CPUDispatcher(<function merge>) returned a result with an exception set") from exc


def test_ctrl_c_inside_a_compiled_kernel_is_an_interruption(tmp_path, cli, monkeypatch):
    """Ctrl-C that lands in a Numba kernel reaches the command as a SystemError caused by the KeyboardInterrupt:
    exit status 130, as for Ctrl-C anywhere else (a sweep counts the run as interrupted, not failed); a
    SystemError of another cause is not taken for one."""
    scene = write_scene(tmp_path)
    monkeypatch.setattr(ie.ImplicitEulerSolver, "step", lambda self, *a, **k: _interrupt_in_kernel())
    rc, _, err = cli("run", scene, "-o", tmp_path / "a", "--quiet")
    assert rc == 130 and err.startswith("error: interrupted"), err

    def other(self, *a, **k):
        raise SystemError("something else")

    monkeypatch.setattr(ie.ImplicitEulerSolver, "step", other)
    with pytest.raises(SystemError, match="something else"):
        cli("run", scene, "-o", tmp_path / "b", "--quiet")
