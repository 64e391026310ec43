"""benchmarks/convergence_grasp.py (issue #12 item 7) on tiny synthetic cases: the sample step indices, the
error metrics, the observed orders and, with the grasp replaced by explicit Euler on x' = -x (first order), the
whole study from runs to results.json, tables and figures (no simulation of the grasp here)."""
import importlib.util
import json
import math
from pathlib import Path

import numpy as np
import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "convergence_grasp.py"


@pytest.fixture(scope="module")
def conv():
    spec = importlib.util.spec_from_file_location("convergence_grasp", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.parametrize("dt, every", [(5e-4, 40), (1e-3, 20), (0.005, 4), (0.01, 2), (0.02, 1)])
def test_sample_steps_are_integer_multiples_landing_on_the_common_times(conv, dt, every):
    at = conv.sample_steps(4.0, dt)
    assert at.dtype.kind == "i" and len(at) == 200
    assert at[0] == every and at[-1] == int(round(4.0 / dt))
    np.testing.assert_allclose(at * dt, 0.02 * np.arange(1, 201), rtol=0, atol=1e-12)


@pytest.mark.parametrize("dt, end", [(0.003, 4.0), (0.04, 4.0), (0.01, 0.05)])
def test_steps_that_do_not_divide_the_interval_or_end_time_are_refused(conv, dt, end):
    with pytest.raises(ValueError):
        conv.sample_steps(end, dt)


def test_record_samples_after_the_listed_steps(conv):
    count = {"n": 0}

    def step():
        count["n"] += 1

    got = conv.record(step, lambda: [count["n"]], 10, np.array([2, 5, 10]))
    assert count["n"] == 10
    np.testing.assert_array_equal(got[:, 0], [2, 5, 10])
    with pytest.raises(ValueError):
        conv.record(step, lambda: [0], 4, np.array([2, 5]))


def test_error_metrics_on_known_offsets(conv):
    ref = np.zeros((2, 4, 3))
    x = ref.copy()
    x[0, :, 0] = 3.0  # sample 0: every vertex off by 3 -> RMS 3
    x[1, :2, 1] = 4.0  # sample 1: two of four off by 4 -> RMS sqrt(16 / 2)
    rms = conv.rms_per_sample(x, ref)
    np.testing.assert_allclose(rms, [3.0, math.sqrt(8.0)])
    assert conv.time_averaged_error(x, ref) == pytest.approx(0.5 * (3.0 + math.sqrt(8.0)))
    assert conv.paper_error(x, ref) == pytest.approx(math.sqrt(0.5 * (9.0 + 8.0)))
    with pytest.raises(ValueError):
        conv.rms_per_sample(x[:1], ref)


def test_orders_of_a_power_law(conv):
    hs = [0.02, 0.005, 0.01]
    es = [3.0 * h ** 1.5 for h in hs]
    assert conv.observed_orders(hs, es) == pytest.approx([1.5, 1.5])
    assert conv.fitted_order(hs, es) == pytest.approx(1.5)
    assert math.isnan(conv.fitted_order([0.01], [1.0]))


def _euler_run(conv, mode, dt, end_time, fine=None):
    """The study's run record for explicit Euler on x' = -x (3 'vertices' in 3D): first-order in dt; with fine,
    also E_004's step samples (``step_grid``)."""
    x = {"v": np.arange(9.0).reshape(3, 3) + 1.0}

    def step():
        x["v"] = x["v"] - dt * x["v"]

    at = conv.sample_steps(end_time, dt)
    n = conv.steps_per(end_time, dt, "the end time")
    fine_at = conv.step_grid(end_time, dt, fine) if fine is not None else at
    every = np.union1d(at, fine_at)
    got = conv.record(step, lambda: x["v"], n, every)
    samples = got[np.isin(every, at)]
    extra = {"step_samples": got[np.isin(every, fine_at)], "step_times": fine_at * dt} if fine is not None else {}
    return {**extra, "mode": mode, "dt": dt, "end_time": end_time, "samples": samples, "times": at * dt,
            "wall": n * 1e-4,
            "steps": n, "iterations": n, "unconverged": 0, "min_distance": 1e-3, "n_vertices": 3,
            "load": [0.0, 0.0]}


def test_the_whole_study_on_a_first_order_integrator(conv, tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(conv, "run_grasp",
                        lambda mode, dt, end, tol, fine, lagging: _euler_run(conv, mode, dt, end, fine))
    args = ["--modes", "low", "--ref-dt", "2.5e-4", "--dts", "0.005,0.01,0.02", "--end-time", "0.4",
            "--out", str(tmp_path), "--no-warmup"]
    conv.main(args)
    res = json.loads((tmp_path / "results.json").read_text())["low"]
    assert [r["h"] for r in res["runs"]] == [0.005, 0.01, 0.02]
    assert res["n_samples"] == 20 and res["reference"]["steps"] == 1600
    assert all(0.85 < o < 1.15 for o in res["orders"])
    assert 0.85 < res["order"] < 1.15
    assert all(r["E_004"] > 0 for r in res["runs"]) and 0.85 < res["order_004"] < 1.15
    out = capsys.readouterr().out
    assert out.strip().splitlines()[-1] == f"convergence order (low): {res['order']:.2f}"
    assert f"convergence order, 004's E over every step (low): {res['order_004']:.2f}" in out
    for name in ("convergence_error.png", "convergence_wall.png", "convergence_error_wall.png",
                 "convergence_error_time.png"):
        assert (tmp_path / name).stat().st_size > 0
    # a second call reuses the saved runs; --plot-only redraws without any run
    monkeypatch.setattr(conv, "run_grasp", lambda *a, **k: pytest.fail("should not simulate"))
    conv.main(args)
    assert "reusing" in capsys.readouterr().out
    (tmp_path / "convergence_error.png").unlink()
    conv.main(["--plot-only", "--modes", "low", "--out", str(tmp_path), "--no-warmup"])
    assert (tmp_path / "convergence_error.png").exists()
    assert json.loads((tmp_path / "results.json").read_text())["low"] == res


def test_run_files_carry_a_non_default_tolerance(conv, tmp_path):
    assert conv.run_path(tmp_path, "low", 5e-4).name == "low_h0.0005.npz"
    assert conv.run_path(tmp_path, "full", 0.01, tol=1e-4).name == "full_h0.01_tol0.0001.npz"


def test_run_files_carry_a_non_default_friction_lagging(conv, tmp_path):
    assert conv.run_path(tmp_path, "full", 0.01, lagging=0).name == "full_h0.01_lag0.npz"
    assert conv.run_path(tmp_path, "full", 0.01, tol=1e-4, lagging=2).name == "full_h0.01_tol0.0001_lag2.npz"
    assert conv.run_path(tmp_path, "full", 0.01, lagging=1).name == "full_h0.01.npz"


@pytest.mark.parametrize("dt, expect", [(5e-4, np.arange(10, 81, 10)), (0.005, np.arange(1, 9)),
                                        (0.01, np.arange(1, 5)), (0.02, np.arange(1, 3))])
def test_step_grid_is_every_step_or_the_smallest_coarse_step(conv, dt, expect):
    np.testing.assert_array_equal(conv.step_grid(0.04, dt, 0.005), expect)
    with pytest.raises(ValueError):
        conv.step_grid(0.04, 0.003, 0.005)


def test_step_error_is_004s_formula_over_every_step_of_the_run(conv):
    # the reference on the 0.005 s grid, a run with h = 0.01: its steps at 0.01, 0.02 meet reference rows 1, 3
    ref = {"dt": 5e-4, "step_times": 0.005 * np.arange(1, 5), "step_samples": np.zeros((4, 2, 3))}
    ref["step_samples"][1, :, 0] = 1.0  # the reference moved at t = 0.01
    run = {"dt": 0.01, "step_times": np.array([0.01, 0.02]), "step_samples": np.zeros((2, 2, 3))}
    run["step_samples"][1, 0, 2] = 2.0  # one of two vertices off by 2 at t = 0.02
    # squared RMS per step: t = 0.01: 1 (the reference's offset), t = 0.02: 4 / 2
    assert conv.step_error(run, ref) == pytest.approx(math.sqrt(0.5 * (1.0 + 2.0)))
    assert conv.step_error({"dt": 0.01}, ref) is None
    with pytest.raises(ValueError):
        conv.step_error({**run, "step_times": np.array([0.0125, 0.02])}, ref)


def test_saved_runs_on_another_step_grid_are_run_again(conv, tmp_path, monkeypatch):
    calls = []

    def fake(mode, dt, end, tol, fine, lagging):
        calls.append((dt, fine))
        return _euler_run(conv, mode, dt, end, fine)

    monkeypatch.setattr(conv, "run_grasp", fake)
    conv.load_or_run(tmp_path, "low", 5e-4, 0.04, False, fine=0.005)
    conv.load_or_run(tmp_path, "low", 5e-4, 0.04, False, fine=0.005)  # reused
    conv.load_or_run(tmp_path, "low", 5e-4, 0.04, False, fine=0.001)  # a finer grid: run again
    assert calls == [(5e-4, 0.005), (5e-4, 0.001)]


def test_common_step_of_the_coarse_steps(conv):
    assert conv.common_step([0.005, 0.01, 0.02], 5e-4) == pytest.approx(0.005)
    assert conv.common_step([0.001, 0.0025, 0.02], 5e-4) == pytest.approx(5e-4)
    assert conv.common_step([0.004, 0.01], 5e-4) == pytest.approx(0.002)
    with pytest.raises(ValueError):
        conv.common_step([0.0012], 5e-4)


def test_a_friction_lagging_reaches_the_run_and_names_its_file(conv, tmp_path, monkeypatch):
    calls = []

    def fake(mode, dt, end, tol, fine, lagging=1):
        calls.append(lagging)
        return {**_euler_run(conv, mode, dt, end, fine), "friction_lagging": lagging}

    monkeypatch.setattr(conv, "run_grasp", fake)
    conv.load_or_run(tmp_path, "low", 5e-4, 0.04, False, fine=0.005, lagging=0)
    conv.load_or_run(tmp_path, "low", 5e-4, 0.04, False, fine=0.005, lagging=0)  # reused
    conv.load_or_run(tmp_path, "low", 5e-4, 0.04, False, fine=0.005)  # the default lagging: its own file
    assert calls == [0, 1]
    assert {p.name for p in tmp_path.glob("*.npz")} == {"low_h0.0005_lag0.npz", "low_h0.0005.npz"}
