"""ipcsim sweep (issue #15) on a local Dask cluster of 2 workers: frames equal to solo runs of the same scenes,
a bad parameter failing alone, an interrupted and resumed sweep giving the uninterrupted table, the time limit,
and spec errors as one line with nothing written."""
from __future__ import annotations

import copy
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import distributed  # noqa: F401  (a test dependency: the sweep's runs need it)
import pytest

from ipcsim import cli
from ipcsim.scene import load_scene
from ipcsim.sweep import load_spec, run_sweep
from ipcsim.sweep.table import read_table
from ipcsim.sweep.task import execute_run

REPO = Path(__file__).resolve().parents[2]
SCENE = REPO / "examples" / "scenes" / "two_cubes.json"
END = 0.04  # [s]: 4 steps of 0.01 s, frames 0, 1, 2
PARAMS = {"friction.mu": [0.0, 0.5], "bodies[bottom].material.youngs_modulus": [5e4, 2e5],
          "bodies[bottom].material.density": [800.0, 1200.0]}
UNSTABLE = ("wall_seconds",)  # columns that differ between identical sweeps


def _write_spec(path: Path, params=PARAMS, **extra) -> Path:
    spec = {"scene": os.path.relpath(SCENE, path.parent), "end_time": END, "parameters": params,
            # generous: on a cold Numba cache (a fresh install) a run first compiles its kernels (minutes)
            "metrics": [{"centre": "top"}, {"lifted": {"body": "bottom", "min_rise": 0.01}}], "time_limit": 900,
            **extra}
    path.write_text(json.dumps(spec))
    return path


@pytest.fixture(scope="module")
def sweep(tmp_path_factory):
    """The 8-run sweep, once, on 2 local workers: (spec path, SweepResult)."""
    d = tmp_path_factory.mktemp("sweep")
    spec = _write_spec(d / "spec.json")
    return spec, run_sweep(spec, workers=2, output=d / "out", progress=False)


def _solo(tmp: Path, params: dict) -> Path:
    """Run the base scene with ``params`` set by hand (not by the sweep's key paths) alone, in this process."""
    data = copy.deepcopy(json.loads(SCENE.read_text()))
    data["time"]["end"] = END
    data["friction"] = {"mu": params["friction.mu"]}
    bottom = next(b for b in data["bodies"] if b["name"] == "bottom")
    bottom["material"]["youngs_modulus"] = params["bodies[bottom].material.youngs_modulus"]
    bottom["material"]["density"] = params["bodies[bottom].material.density"]
    for b in data["bodies"]:  # make the mesh path absolute for the file written elsewhere
        b["mesh"] = str((SCENE.parent / b["mesh"]).resolve())
    tmp.mkdir(parents=True, exist_ok=True)
    scene = tmp / "scene.json"
    scene.write_text(json.dumps(data))
    assert cli.main(["run", str(scene), "-o", str(tmp / "out"), "--quiet"]) == 0
    return tmp / "out"


def _frames(out: Path) -> dict:
    return {p.name: p.read_bytes() for p in sorted((out / "frames").iterdir())}


def test_sweep_frames_equal_solo_runs(sweep, tmp_path):
    spec, result = sweep
    rows = read_table(result.table)
    assert len(rows) == 8 and result.workers == 2
    assert {r["status"] for r in rows} == {"ok"}
    frames = {}
    for i, r in enumerate(rows):
        params = {k: float(r[k]) for k in PARAMS}
        out = result.out_dir / r["directory"]
        res = json.loads((out / "result.json").read_text())
        assert res["params"] == params and res["launcher"] == "forkserver"
        solo = _solo(tmp_path / f"solo{i}", params)
        frames[i] = _frames(out)
        assert len(frames[i]) == 6  # 3 surface + 3 volume frames
        assert frames[i] == _frames(solo), r["run"]
        assert int(r["steps"]) == 4 and int(r["newton_iterations"]) >= 4
    # the parameters reach the simulation: another stiffness of the bottom cube gives other frames
    assert frames[0]["surface_00002.ply"] != frames[2]["surface_00002.ply"]


def test_table_metrics_match_frames(sweep):
    from ipcsim.io.frames import read_ply

    _, result = sweep
    r = read_table(result.table)[0]
    v, _, body = read_ply(result.out_dir / r["directory"] / "frames" / "surface_00002.ply", with_body=True)
    top = v[body == 1].mean(axis=0)
    assert [float(r[f"centre_top_{a}"]) for a in "xyz"] == pytest.approx(top, abs=1e-12)
    v0, _, _ = read_ply(result.out_dir / r["directory"] / "frames" / "surface_00000.ply", with_body=True)
    rise = top[1] * 0 + v[body == 0].mean(axis=0)[1] - v0[body == 0].mean(axis=0)[1]
    assert float(r["rise_bottom"]) == pytest.approx(rise, abs=1e-12)
    assert r["lifted_bottom"] == "False"  # the resting cube does not rise by 1 cm


def test_plot_success(sweep, tmp_path):
    from ipcsim.sweep.plot import plot_success

    _, result = sweep
    png = plot_success(result.table, "friction.mu", "bodies[bottom].material.youngs_modulus", "lifted_bottom",
                       output=tmp_path / "p.png", value="rise_bottom")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_bad_parameter_fails_alone(tmp_path):
    # launcher "process": fresh `python -m ipcsim run` children (the other tests fork them from a fork server)
    spec = _write_spec(tmp_path / "bad.json", params={"friction.mu": [0.2, -1.0, 0.4]}, end_time=0.02,
                       launcher="process")
    code = cli.main(["sweep", str(spec), "-o", str(tmp_path / "out"), "--workers", "2", "--quiet"])
    assert code == 1  # a run failed
    rows = read_table(tmp_path / "out" / "summary.csv")
    assert [r["status"] for r in rows] == ["ok", "failed", "ok"]
    assert "friction.mu" in rows[1]["error"] and rows[0]["error"] == rows[2]["error"] == ""
    assert json.loads((tmp_path / "out" / rows[0]["directory"] / "result.json").read_text())["launcher"] == "process"
    failed = tmp_path / "out" / rows[1]["directory"]
    assert failed.name.endswith(".failed")
    assert sorted(p.name for p in failed.iterdir()) == ["error.txt", "result.json"]  # no partial frames
    assert not list((tmp_path / "out" / "runs").glob(".tmp-*"))


def _stable(rows):
    return [{k: v for k, v in r.items() if k not in UNSTABLE} for r in rows]


def test_interrupted_sweep_resumes_to_the_same_table(sweep, tmp_path):
    spec, result = sweep
    out = tmp_path / "out"
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    proc = subprocess.Popen([sys.executable, "-m", "ipcsim", "sweep", str(spec), "-o", str(out), "--workers",
                             "2", "--quiet"], env=env, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and proc.poll() is None:
        done = [p for p in (out / "runs").glob("r*") if (p / "result.json").is_file()] if out.exists() else []
        if len(done) >= 1:
            break
        time.sleep(0.1)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "interrupted" in err
    rows = read_table(out / "summary.csv")
    assert len(rows) == 8 and {r["status"] for r in rows} <= {"ok", "pending"} and "pending" in {
        r["status"] for r in rows}
    assert not list((out / "runs").glob(".tmp-*"))  # nothing half-written
    for r in rows:
        if r["status"] == "ok":
            assert (out / r["directory"] / "result.json").is_file()
    kept = sum(r["status"] == "ok" for r in rows)
    resumed = run_sweep(spec, workers=2, output=out, resume=True, progress=False)
    assert resumed.skipped == kept
    assert _stable(read_table(out / "summary.csv")) == _stable(
        [{**r, "directory": r["directory"]} for r in read_table(result.table)])


def test_a_real_grasp_run_lifts_the_teddy(tmp_path):
    """The shipped grasp scene (the teddy grasp, low, friction 1) through a sweep run and its ``lifted`` metric,
    stopped at 2.3 s: the bubbles have squeezed (1.5 s) and lifted by 0.064 m (0.08 m/s). Measured: rise 0.0510 m,
    the teddy moving up with the bubbles at 0.0796 m/s in the last step; with mu = 0 it stays on the ground
    (-0.0024 m, tests/test_demo_grasp.py) and the metric says False."""
    grasp = REPO / "examples" / "scenes" / "teddy_grasp.json"
    spec = {"scene": str(grasp), "end_time": 2.3, "parameters": {"friction.mu": [1.0]},
            "metrics": [{"lifted": {"body": "teddy", "min_rise": 0.04}}], "time_limit": 900}
    (tmp_path / "grasp.json").write_text(json.dumps(spec))
    spec = load_spec(tmp_path / "grasp.json")
    (run,) = spec.runs()
    job = {"name": run.name, "index": 0, "params": run.params, "scene": run.scene, "fingerprint": run.fingerprint,
           "runs_dir": str(tmp_path / "runs"), "metrics": spec.metrics, "time_limit": 900, "retries": 0}
    res = execute_run(job)
    assert res["status"] == "ok" and res["unconverged_steps"] == 0, res
    assert res["metrics"]["lifted_teddy"] is True
    assert 0.04 <= res["metrics"]["rise_teddy"] <= 0.12 * 0.8 / 1.5  # at most the bubbles' own rise


def _running(out: Path) -> list:
    """The runs of a sweep into OUT whose simulation is going (a temporary directory holding the scene input)."""
    return [p for p in (out / "runs").glob(".tmp-*") if (p / ".scene-input.json").exists()]


def _sweep_with_two_running_simulations(tmp_path):
    """Start ``ipcsim sweep`` (a subprocess) of two long runs on 2 workers; return (the process, OUT, the processes
    it has started) once both simulations have run for a second."""
    import psutil

    spec = _write_spec(tmp_path / "spec.json", params={"friction.mu": [0.0, 0.5]}, end_time=60.0)  # minutes each
    out = tmp_path / "out"
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    with open(tmp_path / "stderr.txt", "w") as err:  # a file: a process left behind would hold a pipe open
        proc = subprocess.Popen([sys.executable, "-m", "ipcsim", "sweep", str(spec), "-o", str(out), "--workers",
                                 "2", "--quiet"], env=env, stderr=err)
    try:
        deadline, started = time.monotonic() + 120, []
        while time.monotonic() < deadline and proc.poll() is None:
            if len(_running(out)) == 2:
                started = psutil.Process(proc.pid).children(recursive=True)
                if len(started) >= 3:  # the fork server and the two simulations
                    break
            time.sleep(0.1)
        assert proc.poll() is None and len(started) >= 3, started
        time.sleep(1.0)  # both simulations running
    except BaseException:
        proc.kill()
        proc.wait()
        raise
    return proc, out, started


def _stop(proc, sig, started) -> tuple[float, list]:
    """Send ``sig`` to the sweep; (seconds until it exited, the processes it started still alive 10 s later: killed
    here, so that a failing test leaves none behind)."""
    import psutil

    t0 = time.monotonic()
    try:
        proc.send_signal(sig)
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    seconds = time.monotonic() - t0
    _, alive = psutil.wait_procs(started, timeout=10)
    for p in alive:
        p.kill()
    return seconds, alive


def test_sigterm_stops_the_sweep_like_ctrl_c(tmp_path):
    """SIGTERM (a batch system's stop, ``kill``) reaches the sweep's process alone, not its simulations: the sweep
    kills them, removes the temporary run directories, writes the table (every run pending) and exits with 130
    within seconds; no process it started is left behind."""
    proc, out, started = _sweep_with_two_running_simulations(tmp_path)
    seconds, alive = _stop(proc, signal.SIGTERM, started)
    err = (tmp_path / "stderr.txt").read_text()
    assert proc.returncode == 130, err
    assert err.splitlines() == ["error: interrupted (continue with --resume)"], err
    assert seconds < 10.0
    assert not alive, [p.pid for p in alive]
    assert not list((out / "runs").glob(".tmp-*"))  # nothing half-written
    assert [r["status"] for r in read_table(out / "summary.csv")] == ["pending", "pending"]


def test_sweep_killed_outright_leaves_no_simulation_running(tmp_path):
    """SIGKILL gives the sweep no chance to stop its runs: its fork server notices that it is gone and exits, and
    the simulations forked from it die with it (docs/sweeps.md, Faults). Measured: every process gone within about
    0.5 s of the kill (the server's check interval); without the check they ran on to their end."""
    proc, _, started = _sweep_with_two_running_simulations(tmp_path)
    _, alive = _stop(proc, signal.SIGKILL, started)
    assert proc.returncode == -signal.SIGKILL
    assert not alive, [p.pid for p in alive]


def test_resume_redoes_a_run_whose_base_scene_changed(tmp_path):
    """--resume keeps a complete run only when its resolved scene is the same (docs/sweeps.md): after the base
    scene's file changed, the run is done again and its result records the new scene."""
    data = json.loads(SCENE.read_text())
    for b in data["bodies"]:
        b["mesh"] = str((SCENE.parent / b["mesh"]).resolve())
    scene = tmp_path / "scene.json"
    scene.write_text(json.dumps(data))
    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps({"scene": "scene.json", "end_time": 0.02, "parameters": {"friction.mu": [0.0]}}))
    out = tmp_path / "out"
    first = run_sweep(spec, workers=1, output=out, progress=False)
    (row,) = first.rows
    result = out / row["directory"] / "result.json"
    old = json.loads(result.read_text())["fingerprint"]
    again = run_sweep(spec, workers=1, output=out, resume=True, progress=False)
    assert (again.skipped, again.done) == (1, 0)
    data["bodies"][1]["material"]["density"] = 2 * data["bodies"][1]["material"].get("density", 1000.0)
    scene.write_text(json.dumps(data))
    changed = run_sweep(spec, workers=1, output=out, resume=True, progress=False)
    assert (changed.skipped, changed.done, changed.failed) == (0, 1, 0)
    new = json.loads(result.read_text())["fingerprint"]
    assert new != old and new == load_spec(spec).runs()[0].fingerprint
    assert not list((out / "runs").glob(".tmp-*"))


def test_time_limit_records_timeout_and_removes_partial_output(tmp_path):
    # 3,000 steps: about a minute; stopped after 1 s (the fork server's start, about 2 s, is not counted)
    spec = load_spec(_write_spec(tmp_path / "s.json", params={"friction.mu": [0.0]}, end_time=30.0))
    run = spec.runs()[0]
    job = {"name": run.name, "index": 0, "params": run.params, "scene": run.scene, "fingerprint": run.fingerprint,
           "runs_dir": str(tmp_path / "runs"), "metrics": [], "time_limit": 1.0, "retries": 1}
    res = execute_run(job)
    assert res["status"] == "timeout" and "time limit" in res["error"]
    assert sorted(p.name for p in (tmp_path / "runs").iterdir()) == [run.name + ".failed"]


def _stopped_run(tmp_path, stop, launcher="auto") -> tuple[dict, str]:
    """Start a long run (about 12 s warm) as a worker thread would (``execute_run``), call ``stop(proc)`` once its
    simulation process has run for a while, and return (the result, the run's name) once the task returned;
    asserts that it returned within 5 s of the stop."""
    import threading

    from ipcsim.sweep import task

    spec = load_spec(_write_spec(tmp_path / "s.json", params={"friction.mu": [0.0]}, end_time=60.0))
    run = spec.runs()[0]
    job = {"name": run.name, "index": 0, "params": run.params, "scene": run.scene, "fingerprint": run.fingerprint,
           "runs_dir": str(tmp_path / "runs"), "metrics": [], "time_limit": 600, "retries": 2, "launcher": launcher}
    out = {}
    worker = threading.Thread(target=lambda: out.update(execute_run(job)))
    task.allow_runs()
    worker.start()
    try:
        deadline = time.monotonic() + 60
        while not task._LIVE and time.monotonic() < deadline:
            time.sleep(0.02)
        (proc,) = list(task._LIVE)
        time.sleep(1.0)  # the command is running (its Ctrl-C handler installed)
        t0 = time.monotonic()
        stop(proc)
        worker.join(30)
        assert not worker.is_alive() and time.monotonic() - t0 < 5
    finally:
        task.stop_runs()
        worker.join()
        task.allow_runs()
    assert not task._LIVE
    return out, run.name


@pytest.mark.parametrize("launcher", ["forkserver", "process"])
def test_stop_runs_kills_the_running_simulation_without_a_retry(tmp_path, launcher):
    """Ctrl-C on a local cluster (worker threads in the sweep's process): ``task.stop_runs`` kills the simulation a
    task waits on; the task returns at once as interrupted, retries nothing and leaves only its temporary
    directory (removed by the sweep)."""
    from ipcsim.sweep import task

    out, name = _stopped_run(tmp_path, lambda proc: task.stop_runs(), launcher)
    assert (out["status"], out["attempts"]) == ("interrupted", 1), out
    assert [p.name for p in (tmp_path / "runs").iterdir()] == [".tmp-" + name]


def test_simulation_stopped_by_sigint_is_interrupted_not_failed(tmp_path):
    """Ctrl-C in a terminal reaches the simulation as well (its process group): a child that exits with the
    command's Ctrl-C status 130 leaves no .failed directory and is not retried."""
    out, name = _stopped_run(tmp_path, lambda proc: os.kill(proc.pid, signal.SIGINT))
    assert (out["status"], out["attempts"]) == ("interrupted", 1), out
    assert [p.name for p in (tmp_path / "runs").iterdir()] == [".tmp-" + name]


@pytest.mark.parametrize("params, message", [
    ({"friction.nope": [1.0]}, "parameters.friction.nope: the scene two_cubes.json has no key"),
    ({"bodies[nobody].material.density": [1.0]}, "has no key"),
    ({"friction.mu": {"uniform": [1.0, 0.0], "samples": 2}}, "parameters.friction.mu.uniform"),
])
def test_spec_errors_one_line_nothing_written(tmp_path, capsys, params, message):
    spec = _write_spec(tmp_path / "spec.json", params=params)
    code = cli.main(["sweep", str(spec), "-o", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("error: ") and err.count("\n") == 1 and message in err, err
    assert not (tmp_path / "out").exists()


def _one_line_error(code, err, *needles):
    """Exit status 2 and exactly one stderr line ``error: ...`` holding every needle, no traceback."""
    lines = err.splitlines()
    assert code == 2 and len(lines) == 1 and lines[0].startswith("error: "), err
    assert "Traceback" not in err
    for n in needles:
        assert n in lines[0], (n, lines[0])


#: spec keys set to bad values -> what the one-line error says after "SPEC: "
SPEC_OPTION_ERRORS = [
    ({"sampling": "sobol"}, "sampling: expected 'grid' or 'random', got 'sobol'"),
    ({"sampling": "random"}, "samples: expected an integer >= 1, got None"),
    ({"sampling": "random", "samples": 0}, "samples: expected an integer >= 1, got 0"),
    ({"samples": 2.5}, "samples: expected an integer >= 0, got 2.5"),
    ({"seed": -1}, "seed: expected an integer >= 0, got -1"),
    ({"retries": True}, "retries: expected an integer >= 0, got True"),
    ({"time_limit": 0}, "time_limit: expected a number >= 0.001, got 0"),
    ({"end_time": -1}, "end_time: expected a number >= 1e-12, got -1"),
    ({"end_time": "1"}, "end_time: expected a number >= 1e-12, got '1'"),
    ({"launcher": "thread"}, "launcher: expected 'auto', 'forkserver' or 'process', got 'thread'"),
    ({"render": "yes"}, "render: expected true or false, got 'yes'"),
    ({"output": 3}, "output: expected the path of the output directory, got 3"),
    ({"scene": 5}, "scene: expected the path of a scene file"),
    ({"colour": "red"}, "colour: unknown key (expected one of end_time, launcher,"),
    ({"parameters": {}}, "parameters: expected an object {key path: values} with at least one key"),
    ({"parameters": {"friction.mu": []}}, "parameters.friction.mu: expected a non-empty list of values"),
    ({"parameters": {"friction..mu": [1.0]}}, "parameters.friction..mu: malformed key path 'friction..mu'"),
    ({"parameters": {"friction.mu": 0.5}}, "parameters.friction.mu: expected a list of values or"),
    ({"parameters": {"friction.mu": [0.1, float("nan")]}},
     "parameters.friction.mu[1]: expected finite numbers, got nan"),
    ({"parameters": {"gravity": [[0, -9.81, 0], [0, float("-inf"), 0]]}},
     "parameters.gravity[1]: expected finite numbers, got [0, -inf, 0]"),
    ({"parameters": {"friction.mu": {"normal": [0, 1]}}}, "parameters.friction.mu: expected a list of values or"),
    ({"parameters": {"friction.mu": {"uniform": [0, 1]}}}, "parameters.friction.mu.samples: expected an integer"),
    ({"parameters": {"friction.mu": {"uniform": [0, 1], "samples": 2, "step": 1}}},
     "parameters.friction.mu.step: unknown key"),
    ({"parameters": {"friction.mu": {"log_uniform": [0, 1], "samples": 2}}},
     "parameters.friction.mu.log_uniform: expected [lo, hi] with lo <= hi and lo > 0, got [0, 1]"),
    ({"metrics": {"centre": "top"}}, "metrics: expected a list of metrics"),
    ({"metrics": [{"speed": "top"}]}, "metrics[0]: expected {\"centre\": BODY} or {\"lifted\""),
    ({"metrics": [{"centre": "top", "lifted": {"body": "top"}}]}, "metrics[0]: expected {\"centre\": BODY}"),
    ({"metrics": [{"centre": "top"}, {"centre": "nobody"}]},
     "metrics[1]: unknown body 'nobody' (the scene has bottom, top)"),
    ({"metrics": [{"lifted": "top"}]}, "metrics[0].lifted: expected {\"body\": BODY, \"min_rise\": M}, got 'top'"),
    ({"metrics": [{"lifted": {"body": "top", "min_rize": 0.1}}]}, "metrics[0].lifted.min_rize: unknown key"),
    ({"metrics": [{"lifted": {"body": "top", "min_rise": -1}}]},
     "metrics[0].lifted.min_rise: expected a number >= 0, got -1"),
    ({"metrics": [{"lifted": {"body": "top", "axis": 3}}]}, "metrics[0].lifted.axis: expected 0, 1 or 2"),
    ({"metrics": [{"lifted": {"body": "top", "axis": 1.5}}]},
     "metrics[0].lifted.axis: expected an integer >= 0, got 1.5"),
]


@pytest.mark.parametrize("changes, message", SPEC_OPTION_ERRORS,
                         ids=[m.split(":")[0] + f"-{i}" for i, (_, m) in enumerate(SPEC_OPTION_ERRORS)])
def test_spec_option_and_metric_errors(tmp_path, capsys, changes, message):
    """Every option and metric of a spec is checked before anything is written: one line naming the spec file
    and the key, exit status 2, no output directory."""
    spec = _write_spec(tmp_path / "spec.json", **{"end_time": 0.02, **changes})
    code = cli.main(["sweep", str(spec), "-o", str(tmp_path / "out")])
    _one_line_error(code, capsys.readouterr().err, f"error: {spec}: {message}")
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("argv, message", [
    (["--workers", "0"], "error: --workers must be at least 1, got 0"),
    (["--workers", "-2"], "error: --workers must be at least 1, got -2"),
    (["--workers", "2", "--address", "tcp://127.0.0.1:8786"], "error: --workers and --address exclude each other"),
    (["--workers", "two"], "--workers: invalid int value: 'two'"),
])
def test_sweep_option_errors(tmp_path, capsys, argv, message):
    spec = _write_spec(tmp_path / "spec.json", end_time=0.02)
    try:
        code = cli.main(["sweep", str(spec), "-o", str(tmp_path / "out")] + argv)
    except SystemExit as exc:  # argparse's own usage errors
        code = exc.code
    _one_line_error(code, capsys.readouterr().err, message)
    assert not (tmp_path / "out").exists()


def test_spec_file_errors(tmp_path, capsys):
    """A missing, malformed or non-object spec, and a spec whose scene is missing or broken: one line naming the
    file (and line:column, or key), nothing written."""
    out = tmp_path / "out"
    (tmp_path / "list.json").write_text("[1, 2]\n")
    (tmp_path / "malformed.json").write_text('{"scene": "a.json",\n "parameters": }\n')
    bad_scene = tmp_path / "bad_scene.json"
    bad_scene.write_text(json.dumps({"bodies": [{"mesh": "nowhere.msh"}]}))
    cases = [(tmp_path / "absent.json", [f"{tmp_path / 'absent.json'}: cannot read the sweep spec"]),
             (tmp_path / "list.json", [f"{tmp_path / 'list.json'}: a sweep spec is a JSON object"]),
             (tmp_path / "malformed.json", [f"{tmp_path / 'malformed.json'}:2:16: invalid JSON"]),
             (_write_spec(tmp_path / "s1.json", scene="nope.json"), [f"{tmp_path / 'nope.json'}: cannot read"]),
             (_write_spec(tmp_path / "s2.json", scene="bad_scene.json"),
              [f"{bad_scene}: bodies[0].mesh", "nowhere.msh"])]
    for spec, needles in cases:
        code = cli.main(["sweep", str(spec), "-o", str(out)])
        _one_line_error(code, capsys.readouterr().err, *needles)
        assert not out.exists()
    out.write_text("a file\n")  # OUT is a file: left as it was
    code = cli.main(["sweep", str(_write_spec(tmp_path / "s3.json", end_time=0.02)), "-o", str(out)])
    _one_line_error(code, capsys.readouterr().err, f"sweep output {str(out)!r} exists and is not a directory")
    assert out.read_text() == "a file\n"


def test_random_sampling_is_seeded_and_in_range(tmp_path):
    params = {"friction.mu": {"uniform": [0.1, 0.9]},
              "bodies[0].material.youngs_modulus": {"log_uniform": [1e4, 1e6]}}
    runs = [load_spec(_write_spec(tmp_path / f"r{i}.json", params=params, sampling="random", samples=5,
                                  seed=seed)).runs() for i, seed in enumerate((3, 3, 4))]
    assert [r.params for r in runs[0]] == [r.params for r in runs[1]] != [r.params for r in runs[2]]
    assert len(runs[0]) == 5 and len({r.name for r in runs[0]}) == 5
    for r in runs[0]:
        assert 0.1 <= r.params["friction.mu"] <= 0.9
        assert 1e4 <= r.scene["bodies"][0]["material"]["youngs_modulus"] <= 1e6
        assert r.scene["friction"]["mu"] == r.params["friction.mu"]
    assert load_scene(SCENE).data["friction"]["mu"] == 0.0  # the base scene is untouched


def test_dead_simulation_process_is_retried_a_bounded_number_of_times(tmp_path, monkeypatch):
    from ipcsim.sweep import task

    spec = load_spec(_write_spec(tmp_path / "s.json", params={"friction.mu": [0.0]}, end_time=0.02))
    run = spec.runs()[0]
    real, calls = task._simulate, []

    def dies_first(scene_file, out, limit, deaths):
        calls.append(out)
        return ("died", "the simulation process died (signal 9)", "process") if len(calls) <= deaths else real(
            scene_file, out, limit)

    for deaths, retries, status in ((1, 1, "ok"), (2, 1, "died")):
        calls.clear()
        monkeypatch.setattr(task, "_simulate", lambda s, o, t, launcher="auto", d=deaths: dies_first(s, o, t, d))
        job = {"name": run.name, "index": 0, "params": run.params, "scene": run.scene,
               "fingerprint": run.fingerprint, "runs_dir": str(tmp_path / f"runs{deaths}"), "metrics": [],
               "time_limit": 60, "retries": retries}
        res = execute_run(job)
        assert (res["status"], res["attempts"], len(calls)) == (status, 2, 2)
        assert (Path(job["runs_dir"]) / (run.name + ("" if status == "ok" else ".failed"))).is_dir()


def test_cli_needs_distributed_only_for_sweep(tmp_path, capsys, monkeypatch):
    code = "import sys, ipcsim.cli, ipcsim.app.runner, ipcsim.scene; sys.exit('distributed' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], env={**os.environ, "PYTHONPATH": str(REPO / "src")}
                          ).returncode == 0
    monkeypatch.setitem(sys.modules, "distributed", None)  # not installed
    assert cli.main(["sweep", str(_write_spec(tmp_path / "s.json")), "-o", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ipcsim sweep needs Dask distributed") and not (tmp_path / "out").exists()
    with pytest.raises(SystemExit) as exc:
        cli.main(["sweep", "--help"])
    assert exc.value.code == 0 and "--address" in capsys.readouterr().out


def test_sweep_on_a_running_cluster_by_address(tmp_path):
    from distributed import LocalCluster

    spec = _write_spec(tmp_path / "s.json", params={"friction.mu": [0.0, 0.3]}, end_time=0.02)
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        result = run_sweep(spec, address=cluster.scheduler_address, output=tmp_path / "out", progress=False)
        assert len(cluster.scheduler.workers) == 1  # still running: the sweep does not close a cluster it did not start
    assert result.workers == 1 and result.done == 2
    for r in result.rows:
        res = json.loads((result.out_dir / r["directory"] / "result.json").read_text())
        assert res["launcher"] == "process"  # Dask's default workers are daemonic: fresh processes


@pytest.mark.parametrize("allowed, status", [(1, "ok"), (0, "died")])
def test_worker_death_is_retried_then_recorded(tmp_path, allowed, status):
    """A worker killed (SIGKILL) while its run is going: the cluster restarts it and Dask runs the task again
    when the scheduler allows a failure (``retries``), else the run is recorded as died with KilledWorker."""
    import threading

    import dask
    from distributed import Client, LocalCluster

    spec = _write_spec(tmp_path / "s.json", params={"friction.mu": [0.0]}, end_time=1.0)
    with dask.config.set({"distributed.scheduler.allowed-failures": allowed}), \
            LocalCluster(n_workers=1, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        def kill_once():
            with Client(cluster.scheduler_address) as client:
                deadline = time.monotonic() + 30
                while not any(client.processing().values()) and time.monotonic() < deadline:
                    time.sleep(0.05)
                time.sleep(0.5)  # the run's process has started
                for pid in client.run(os.getpid).values():
                    os.kill(pid, signal.SIGKILL)

        killer = threading.Thread(target=kill_once)
        killer.start()
        result = run_sweep(spec, address=cluster.scheduler_address, output=tmp_path / "out", progress=False)
        killer.join()
    (r,) = result.rows
    assert r["status"] == status, r
    runs = sorted(p.name for p in (tmp_path / "out" / "runs").iterdir())
    if status == "ok":
        assert runs == [r["run"]] and int(r["steps"]) == 100
    else:
        assert "KilledWorker" in r["error"] and runs == [r["run"] + ".failed"]


def test_shipped_example_specs_load():
    grasp = load_spec(REPO / "examples" / "sweeps" / "grasp_sweep.json")
    runs = grasp.runs()
    assert len(runs) == 15 and len({r.name for r in runs}) == 15
    assert {r.scene["bodies"][0]["material"]["youngs_modulus"] for r in runs} == {1e4, 5e4, 2.5e5}
    assert [m["kind"] for m in grasp.metrics] == ["centre", "lifted"] and grasp.metrics[1]["body"] == "teddy"
    assert len(load_spec(REPO / "examples" / "sweeps" / "two_cubes_sweep.json").runs()) == 4


def test_parquet_table_with_pyarrow(sweep):
    pq = pytest.importorskip("pyarrow.parquet")
    _, result = sweep
    table = pq.read_table(result.out_dir / "summary.parquet").to_pylist()
    rows = read_table(result.table)
    assert [r["run"] for r in table] == [r["run"] for r in rows]
    assert [r["friction.mu"] for r in table] == [float(r["friction.mu"]) for r in rows]
