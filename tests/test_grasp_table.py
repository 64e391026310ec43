"""benchmarks/grasp_table.py (issue #23 item 6) on a short real teddy-grasp run and on itself: the row's figures
against the run's own files, and E(h) of a run against itself and against a shifted copy."""
import csv
import importlib.util
import shutil
from pathlib import Path

import numpy as np
import pytest

from ipcsim.io.frames import read_ply, write_ply

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "grasp_table.py"


@pytest.fixture(scope="module")
def table():
    spec = importlib.util.spec_from_file_location("grasp_table", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    from ipcsim.cli import main

    out = tmp_path_factory.mktemp("grasp") / "low"
    assert main(["demo", "teddy-grasp", "--mode", "low", "--end-time", "0.1", "--no-render", "--quiet",
                 "-o", str(out)]) == 0
    return out


def test_row_reads_the_runs_own_figures(table, run):
    r = table.row(run, at=0.06, ref=None)
    with open(run / "stats.csv") as f:
        stats = list(csv.DictReader(f))
    assert r["h"] == pytest.approx(0.02) and r["contacts"] == int(stats[2]["n_contacts"])
    assert float(r["it/step"]) == pytest.approx(np.mean([int(s["newton_iterations"]) for s in stats]), abs=5e-3)
    assert r["distance"] == min(float(s["min_distance"]) for s in stats)
    with open(run / "forces.csv") as f:
        left = [x for x in csv.DictReader(f) if x["name"] == "left_bubble" and abs(float(x["time"]) - 0.06) < 1e-9]
    total = [float(left[0][f"contact_{a}"]) + float(left[0][f"friction_{a}"]) for a in "xyz"]
    assert r["|F|"] == pytest.approx(np.linalg.norm(total), rel=1e-12) and r["F_x"] == pytest.approx(total[0])
    frames = sorted((run / "frames").glob("surface_*.ply"))
    (v0, _, b), (v1, _, _) = read_ply(frames[0], with_body=True), read_ply(frames[-1], with_body=True)
    assert r["rise"] == pytest.approx(v1[b == 0, 1].mean() - v0[b == 0, 1].mean(), rel=1e-12)


def test_error_is_zero_against_itself_and_the_shift_against_a_shifted_copy(table, run, tmp_path):
    ref = table.teddy_frames(run)
    assert table.error(ref, ref) == 0.0
    moved = tmp_path / "moved"
    shutil.copytree(run, moved)
    for p in sorted((moved / "frames").glob("surface_*.ply"))[1:]:  # frame 0 is not compared
        v, f, body = read_ply(p, with_body=True)
        v[body == 0] += [3e-4, 0.0, 4e-4]  # 0.5 mm away at every sample
        write_ply(p, v, f, body=body)
    assert table.error(table.teddy_frames(moved), ref) == pytest.approx(5e-4, rel=1e-6)
