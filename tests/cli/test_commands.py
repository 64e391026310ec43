"""`ipcsim demo | info | render | --help` (plot: test_plot.py), the progress bar, and the installed entry point."""
import json
import subprocess
import sys
from pathlib import Path

import ipctk
import numpy as np
import pytest
from PIL import Image

from _cli_helpers import MIXED, TINY, frames_of, read_frames, write_scene


def test_default_demo_runs_and_renders(tmp_path, cli):
    out = tmp_path / "demo"
    rc, stdout, err = cli("demo", "-o", out, "--end-time", "0.02", "--quiet")
    assert rc == 0, err
    assert stdout == "" and err == ""
    frames = read_frames(out)
    assert len(frames) == 3
    v0, f0 = frames[0]
    for v, f in frames:
        assert np.array_equal(f, f0)
        assert not ipctk.has_intersections(ipctk.CollisionMesh(v0, ipctk.edges(f0.astype(np.int32)),
                                                               f0.astype(np.int32)), v)
    assert json.loads((out / "scene.json").read_text())["name"] == "two-cubes"
    assert (out / "preview.png").is_file()
    assert (out / "preview.mp4").is_file() or (out / "preview.gif").is_file()
    assert (out / "viewer.html").is_file()  # the browser viewer beside the preview (docs/viewer.md)


def test_demo_list_and_default_output_dir(tmp_path, cli, monkeypatch):
    rc, stdout, _ = cli("demo", "--list")
    assert rc == 0 and "two-cubes" in stdout and "(default)" in stdout
    monkeypatch.chdir(tmp_path)
    rc, stdout, err = cli("demo", "--end-time", "0.01", "--no-render")
    assert rc == 0, err
    out = tmp_path / "ipcsim-out" / "two-cubes"
    assert len(frames_of(out)) == 2 and not (out / "preview.png").exists() and not (out / "viewer.html").exists()
    assert "two-cubes: 1 steps" in stdout and str(Path("ipcsim-out") / "two-cubes" / "frames") in stdout


def test_progress_bar_on_stderr_and_summary(tmp_path, cli):
    rc, stdout, err = cli("run", write_scene(tmp_path), "-o", tmp_path / "out")
    assert rc == 0
    last = err.replace("\r", "\n").strip().splitlines()[-1]
    assert last.startswith("tiny: 100%") and "4/4" in last and "newton=" in last and "contacts=" in last
    assert "t=0.04s" in last
    assert stdout.startswith("tiny: 4 steps of 0.01 s to t = 0.04 s")


def test_info_describes_and_checks(tmp_path, cli):
    rc, stdout, _ = cli("info", write_scene(tmp_path))
    assert rc == 0
    assert "[0] bottom: 27 vertices, 48 tets, 48 surface triangles, NH" in stdout
    assert "[1] top: 27 vertices, 48 tets" in stdout
    assert "dt 0.01 s (4 steps)" in stdout and "dhat 0.001 m" in stdout and "half spaces (1)" in stdout
    assert "sanity check: ok" in stdout
    data = json.loads(json.dumps(TINY))
    data["bodies"][1]["transform"]["translation"] = [0.02, 0.05, 0.01]
    rc, stdout, _ = cli("info", write_scene(tmp_path, data, "overlap.json"))
    assert rc == 1
    assert "sanity check: " in stdout and "error: initial intersection" in stdout


def test_info_describes_embedded_and_affine_bodies(tmp_path, cli):
    rc, stdout, _ = cli("info", write_scene(tmp_path, MIXED, "mixed.json"))
    assert rc == 0, stdout
    assert "[0] bottom: " in stdout and "embedded, NH E 100000 Pa" in stdout
    assert "[1] top: 4 vertices, 1 tets, 48 surface triangles, affine (ABD) stiffness 1e+06 Pa density 500" in stdout
    assert "sanity check: ok" in stdout


def _run_tiny(tmp_path, cli):
    out = tmp_path / "out"
    assert cli("run", write_scene(tmp_path, output={"every": 1}), "-o", out, "--quiet")[0] == 0
    return out


def test_render_gif_without_ffmpeg(tmp_path, cli, monkeypatch):
    out = _run_tiny(tmp_path, cli)
    assert not (out / "preview.png").exists()  # rendering is off unless asked
    monkeypatch.setitem(sys.modules, "imageio_ffmpeg", None)  # import fails: Pillow GIF fallback
    rc, stdout, err = cli("render", out)
    assert rc == 0, err
    png = Image.open(out / "preview.png")
    assert png.size == (640, 480)
    pixels = np.asarray(png.convert("RGB")).reshape(-1, 3)
    # shaded bodies (two palette hues), the checkered ground and the background: many distinct colors
    assert len(np.unique(pixels, axis=0)) > 20
    bluish = (pixels[:, 2].astype(int) - pixels[:, 0] > 60).sum()
    orange = (pixels[:, 0].astype(int) - pixels[:, 2] > 60).sum()
    assert bluish > 500 and orange > 500
    gif = Image.open(out / "preview.gif")
    assert gif.n_frames == len(frames_of(out)) == 5
    assert not (out / "preview.mp4").exists()


def test_render_mp4_with_ffmpeg(tmp_path, cli):
    imageio_ffmpeg = pytest.importorskip("imageio_ffmpeg")
    out = _run_tiny(tmp_path, cli)
    (out / "preview.gif").write_bytes(b"stale")
    rc, _, err = cli("render", out, "--max-frames", "3")
    assert rc == 0, err
    reader = imageio_ffmpeg.read_frames(str(out / "preview.mp4"))
    meta = next(reader)
    assert meta["size"] == (640, 480)
    assert sum(1 for _ in reader) == 3
    assert not (out / "preview.gif").exists()


def test_render_errors(tmp_path, cli):
    rc, _, err = cli("render", tmp_path / "absent")
    assert rc == 2 and len(err.splitlines()) == 1 and "absent" in err
    rc, _, err = cli("render", tmp_path)
    assert rc == 2 and len(err.splitlines()) == 1 and "no frames" in err


@pytest.mark.parametrize("argv", [[], ["run"], ["demo"], ["render"], ["plot"], ["info"]])
def test_help(cli, argv):
    rc, stdout, _ = cli(*argv, "--help")
    assert rc == 0 and stdout.startswith("usage: ipcsim")
    if not argv:
        assert all(c in stdout for c in ("run", "demo", "render", "plot", "info"))


@pytest.mark.parametrize("argv, heavy", [(["--help"], False), (["run", "--help"], False),
                                         (["demo", "--help"], True)])
def test_only_the_demo_command_imports_the_demos(argv, heavy):
    """Building the parser for any command but ``demo`` imports no demo module and not the model stack (measured:
    ``ipcsim --help`` 0.05 s against 0.84 s for ``ipcsim demo --help``, which collects the demos' options)."""
    code = ("import sys; from ipcsim.cli import build_parser; build_parser(sys.argv[1:]); "
            "print(sorted(m for m in sys.modules if m.startswith(('ipcsim.demos', 'ipcsim.model'))))")
    out = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True, check=True).stdout
    assert ("ipcsim.demos.teddy_grasp" in out) == heavy and ("ipcsim.model" in out) == heavy


def test_debug_shows_traceback(tmp_path, cli):
    with pytest.raises(ValueError, match="youngs_modulus"):
        data = json.loads(json.dumps(TINY))
        data["bodies"][0]["material"] = {"youngs_modulus": -5}
        cli("run", write_scene(tmp_path, data), "--debug", "-o", tmp_path / "out")


def test_installed_entry_point_runs_a_scene(tmp_path):
    exe = Path(sys.executable).with_name("ipcsim")
    if not exe.exists():
        pytest.skip(f"no ipcsim script next to {sys.executable} (package not installed)")
    out = tmp_path / "out"
    r = subprocess.run([str(exe), "run", str(write_scene(tmp_path)), "-o", str(out), "--quiet"],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    assert r.stdout == "" and r.stderr == ""
    assert len(frames_of(out)) == 3 and (out / "stats.csv").read_text().count("\n") == 5


@pytest.mark.parametrize("name", ["two-cubes", "cube-slide", "pinned-mat", "cubes-in-bowl"])
def test_every_demo_checks_and_steps(tmp_path, cli, name):
    from ipcsim.demos.builtin import DEMOS, demo_path

    assert name in DEMOS  # the list above is the shipped one
    rc, stdout, _ = cli("info", demo_path(name))
    assert rc == 0 and "sanity check: ok" in stdout
    if name == "cubes-in-bowl":  # IPC's bowl.obj
        assert "[0] bowl: 1321 collision vertices, 2560 triangles, 0 segments, static" in stdout
    rc, _, err = cli("demo", name, "-o", tmp_path / name, "--end-time", "0.001", "--no-render", "--quiet")
    assert rc == 0, err
    assert len(frames_of(tmp_path / name)) == 2


def test_demo_list_matches_package_data():
    from ipcsim.demos.builtin import DEMOS, demo_path

    shipped = {p.stem for p in demo_path("two-cubes").parent.glob("*.json")}
    assert shipped == set(DEMOS)


def test_render_draws_segment_obstacles(tmp_path, cli, shared_data):
    """Edge obstacles have no triangles in the PLY frames; the renderer takes them from OUT/scene.json."""
    from ipcsim.app.render import _codimensional

    script = shared_data / "ipc" / "input" / "tutorialExamples" / "MCO" / "2cubesFall_rotateCO_edges.txt"
    out = tmp_path / "out"
    assert cli("run", script, "-o", out, "--quiet", "--end-time", "0.025", "--render")[0] == 0
    v, _ = read_frames(out)[0]
    segments, points = _codimensional(out, len(v))
    assert segments.shape == (3, 2) and len(points) == 0  # the wire triangle
    dark = np.asarray(Image.open(out / "preview.png").convert("RGB")).astype(int)
    assert np.sum(np.all(np.abs(dark - [64, 64, 76]) < 12, axis=2)) > 200  # the wire (~440 px; ~50 without it)
