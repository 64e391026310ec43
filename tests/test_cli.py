import subprocess
import sys

import numpy as np

from ipcsim.io_frames import read_ply


def _run(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "ipcsim.cli", *args], capture_output=True, text=True, cwd=cwd,
                          timeout=600)


def test_demo_writes_consistent_frames(tmp_path):
    out = tmp_path / "demo"
    r = _run("demo", "--end-time", "0.03", "-o", str(out), "--quiet")
    assert r.returncode == 0, r.stderr
    frames = sorted((out / "frames").glob("surface_*.ply"))
    assert [f.name for f in frames] == [f"surface_{k:05d}.ply" for k in range(4)]
    v0, f0 = read_ply(frames[0])
    for f in frames[1:]:
        v, faces = read_ply(f)
        assert v.shape == v0.shape and np.array_equal(faces, f0)
    assert "intersection-free" in r.stdout


def test_unknown_demo_is_one_line_exit_2(tmp_path):
    r = _run("demo", "no-such-scene", "-o", str(tmp_path / "x"))
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: unknown demo 'no-such-scene'")
    assert "Traceback" not in r.stderr
    assert not (tmp_path / "x").exists()


def test_bad_time_step_is_one_line_exit_2(tmp_path):
    r = _run("demo", "--dt", "-1", "-o", str(tmp_path / "y"))
    assert r.returncode == 2
    assert len(r.stderr.strip().splitlines()) == 1 and r.stderr.startswith("error:")
