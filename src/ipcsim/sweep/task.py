"""One run of a sweep, as executed on a worker: the simulation (``ipcsim run``) runs in a child process, forked
from a per-worker fork server with the modules preloaded or started fresh (``_simulate``), with one thread, a
hard time limit and its own memory, so a run that raises, hangs or crashes cannot take the worker (or the other
runs) with it.

Directory protocol inside RUNS (the sweep's ``runs/`` folder)::

    RUNS/.tmp-<name>/        while the run is going (removed when it fails, at the next start of the sweep)
    RUNS/<name>/             a complete run: the usual layout (docs/output.md) + result.json, renamed into place
    RUNS/<name>.failed/      a failed run: error.txt and result.json only (partial frames removed)

``result.json`` is written last inside the temporary directory, and the directory is renamed as a whole, so a
directory ``RUNS/<name>`` exists only for a complete run.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

from ..io import frames as io_frames
from .metrics import compute_metrics, run_statistics

RESULT = "result.json"
#: exit status of an ``ipcsim`` command stopped by Ctrl-C (SIGINT): the run is "interrupted", not failed
INTERRUPTED_STATUS = 130
FAILED_SUFFIX = ".failed"
TMP_PREFIX = ".tmp-"
#: environment of the simulation process: one thread for Numba, OpenMP, MKL and OpenBLAS (one run per core)
THREAD_ENV = {"NUMBA_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
              "OPENBLAS_NUM_THREADS": "1", "IPCSIM_COMPILE_PROCESSES": "1"}


def _die_with_parent():
    """preexec_fn: the child gets SIGKILL when the worker thread that started it goes away (Linux prctl), so a
    killed worker or an interrupted sweep leaves no simulation running behind."""
    try:
        import ctypes
        import signal

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def _simulate(scene_file: Path, out: Path, time_limit: float | None, launcher: str = "auto") -> tuple[str, str, str]:
    """Run ``ipcsim run scene_file -o out --quiet`` in a child process; (status, error, launcher used):
    status, error ("ok", ""),
    ("failed", last stderr line), ("timeout", ...), ("died", ...) for a child killed by a signal, or ("interrupted",
    ...) for a child stopped by SIGINT (exit status 130).
    launcher: "forkserver" (forked from a server with the modules loaded; Linux/macOS), "process" (a fresh
    ``python -m ipcsim``) or "auto" (forkserver where this process may have children, else process)."""
    kind, used = None, "forkserver"
    if launcher in ("auto", "forkserver") and sys.platform != "win32":
        try:
            kind, rc, stderr = _simulate_forked(scene_file, out, time_limit)
        except AssertionError:  # a daemonic worker may not start children this way
            if launcher == "forkserver":
                raise
    if kind is None:
        kind, rc, stderr = _simulate_process(scene_file, out, time_limit)
        used = "process"
    if kind == "timeout":
        return "timeout", f"exceeded the time limit of {time_limit:g} s", used
    if rc == 0:
        return "ok", "", used
    if rc == INTERRUPTED_STATUS:  # Ctrl-C in a terminal reaches the whole process group, the simulation too
        return "interrupted", "the simulation was interrupted (SIGINT)", used
    lines = [ln.strip() for ln in stderr.splitlines() if ln.strip()]
    errors = [ln for ln in lines if ln.startswith("error:")]
    text = (errors or lines or [f"exit status {rc}"])[-1]
    if rc is None or rc < 0:
        return "died", f"the simulation process died (signal {-(rc or 0)}): {text}", used
    return "failed", text.removeprefix("error: ").replace(str(scene_file), "scene"), used


# ----------------------------------------------------------------------------------------------- fork server
#: modules the fork server imports once, so that a run's process starts with them loaded (about 1.5 s saved per
#: run); ``preload`` also loads the cached Numba kernels of the demos
PRELOAD = ["ipcsim.cli", "ipcsim.scene", "ipcsim.app.runner", "ipcsim.solvers.integrator_solvers", "ipcsim.model.sanity",
           "ipcsim.app.warmup", "meshio", "ipcsim.sweep.preload"]
_FORKSERVER = None
#: the simulation processes this process has started and not yet collected, and the flag that stops it from
#: starting more (``stop_runs``): a sweep on a local cluster (worker threads in the sweep's own process) kills
#: them itself when it is interrupted
_LIVE: set = set()
_LIVE_LOCK = threading.Lock()
_STOPPING = threading.Event()
#: held while a child starts and while its exit status is read (``run_child``). The forkserver's ``Popen.poll`` is
#: not thread-safe: every ``Process.start`` polls all the process's unjoined children (``multiprocessing.process.
#: _cleanup``), and when it does so while another thread's ``join`` reads the same child's status pipe, the loser
#: reads EOF and overwrites the exit status with 255 (CPython gh-130895; a run that ended well was recorded
#: "failed: exit status 255" about once in 50 interrupted-and-resumed sweeps on 2 busy cores)
_REAP_LOCK = threading.Lock()


def allow_runs() -> None:
    """Clear the stop flag of ``stop_runs`` (at the start of a sweep in this process)."""
    _STOPPING.clear()


def stop_runs() -> None:
    """Kill every simulation process this process has running and start no new one until ``allow_runs``; the
    tasks waiting on them return at once with status "interrupted" and leave their temporary directories."""
    _STOPPING.set()
    with _LIVE_LOCK:
        live = list(_LIVE)
    for proc in live:
        try:
            proc.kill()
        except (OSError, ValueError):  # already gone
            pass


def _track(proc) -> None:
    """Register a started child (killed by ``stop_runs``); kills it at once when the sweep is stopping."""
    with _LIVE_LOCK:
        _LIVE.add(proc)
    if _STOPPING.is_set():
        proc.kill()


def _untrack(proc) -> None:
    with _LIVE_LOCK:
        _LIVE.discard(proc)


def start_forkserver() -> None:
    """Start this process's fork server now (``launcher`` "forkserver"/"auto"): it imports and loads its kernels
    in the background, beside whatever this process does next (a local cluster's start), instead of when the first
    run asks for it. Best effort: a failure shows again, with its reason, at the first run."""
    if sys.platform != "win32":
        try:
            _forkserver_context()
        except Exception:  # noqa: BLE001 - the first run reports it
            pass


def _forkserver_context():
    """The multiprocessing "forkserver" context of this process, its server started on first use with the
    modules of ``PRELOAD`` imported and ``THREAD_ENV`` in its environment (so that Numba imports single-threaded
    there; this process's own environment is left as it was)."""
    global _FORKSERVER
    if _FORKSERVER is None:
        import multiprocessing
        from multiprocessing import forkserver

        ctx = multiprocessing.get_context("forkserver")
        ctx.set_forkserver_preload(PRELOAD)
        saved = {k: os.environ.get(k) for k in THREAD_ENV}
        os.environ.update(THREAD_ENV)
        try:
            forkserver.ensure_running()
        finally:
            for k, v in saved.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v
        _FORKSERVER = ctx
    return _FORKSERVER


def _forked_main(scene_file: str, out: str, err_file: str) -> None:
    """Body of a forked run: the ``ipcsim`` command (``python -m ipcsim run SCENE -o OUT --quiet``, run as the
    module ``ipcsim.__main__`` would be) with stderr to err_file; exits with its status (1 with the exception's
    line for an uncaught exception)."""
    _die_with_parent()
    import contextlib
    import runpy
    import signal
    import traceback

    signal.signal(signal.SIGALRM, signal.SIG_DFL)  # the server's parent watch (``preload.exit_with_parent``)

    rc = 1
    sys.argv = ["ipcsim", "run", scene_file, "-o", out, "--quiet"]
    with open(err_file, "w") as fh, contextlib.redirect_stderr(fh):
        try:
            runpy.run_module("ipcsim", run_name="__main__", alter_sys=True)
            rc = 0
        except SystemExit as exc:
            rc = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        except BaseException as exc:  # noqa: BLE001 - reported through err_file and the exit status
            fh.write(traceback.format_exception_only(type(exc), exc)[-1])
    sys.exit(rc)  # through multiprocessing: its clean-up runs


def _simulate_forked(scene_file: Path, out: Path, time_limit: float | None) -> tuple[str, int | None, str]:
    """Run the simulation in a process forked from the worker's fork server: (kind, exit status, stderr)
    with kind "exit" or "timeout". Raises AssertionError where this process may not have children (a daemonic
    Dask worker)."""
    err_file = out / ".stderr.txt"
    kind, rc = run_child(_forkserver_context(), _forked_main, (str(scene_file), str(out), str(err_file)),
                         time_limit)
    if kind == "timeout":
        return "timeout", None, ""
    try:
        text = err_file.read_text(errors="replace")
        err_file.unlink()
    except OSError:
        text = ""
    return "exit", rc, text


def run_child(ctx, target, args: tuple, time_limit: float | None) -> tuple[str, int | None]:
    """Run target(*args) in a process of the multiprocessing context ctx, killed after time_limit [s] (None: no
    limit); ("exit", its exit status) or ("timeout", the status of the killed process). Safe to call from several
    threads at once (``_REAP_LOCK``): the process is registered for ``stop_runs`` while it runs."""
    from multiprocessing.connection import wait

    proc = ctx.Process(target=target, args=args, daemon=False)
    with _REAP_LOCK:
        proc.start()
    _track(proc)
    try:
        kind = "exit" if wait([proc.sentinel], time_limit) else "timeout"  # waits without reading the status
        if kind == "timeout":
            proc.kill()
            wait([proc.sentinel])
        with _REAP_LOCK:
            proc.join()
    finally:
        _untrack(proc)
    return kind, proc.exitcode


def _simulate_process(scene_file: Path, out: Path, time_limit: float | None) -> tuple[str, int | None, str]:
    """Run ``python -m ipcsim run`` as a fresh child process: (kind, exit status, stderr)."""
    env = {**os.environ, **THREAD_ENV}
    cmd = [sys.executable, "-m", "ipcsim", "run", str(scene_file), "-o", str(out), "--quiet"]
    proc = subprocess.Popen(cmd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True, errors="replace",
                            preexec_fn=_die_with_parent if sys.platform.startswith("linux") else None)
    _track(proc)
    try:
        _, stderr = proc.communicate(timeout=time_limit)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        return "timeout", None, ""
    finally:
        _untrack(proc)
    return "exit", proc.returncode, stderr


def _clear(*paths: Path) -> None:
    """Remove each path (a directory with its contents) if it exists."""
    for p in paths:
        if p.is_dir():
            shutil.rmtree(p, ignore_errors=True)
        elif p.exists():
            p.unlink()


def execute_run(job: dict) -> dict:
    """Run one job and return its result (also written to result.json).

    job: {"name", "index", "params" {key: value}, "scene" (resolved scene dict), "fingerprint", "runs_dir",
    "metrics" (parsed spec metrics), "time_limit" [s] or None, "retries" (re-runs of a child that died),
    "launcher" ("auto", "forkserver" or "process": see ``_simulate``)}.
    Result: {"run", "index", "status" ("ok" | "failed" | "timeout" | "died"), "error", "params",
    "fingerprint", "wall_seconds", "attempts", "steps", "newton_iterations", "unconverged_steps",
    "min_distance", "metrics" {column: value}, "launcher" (the one used)}. Never raises for a failing
    simulation.
    """
    runs = Path(job["runs_dir"])
    name = job["name"]
    final, failed, tmp = runs / name, runs / (name + FAILED_SUFFIX), runs / (TMP_PREFIX + name)
    _clear(tmp, failed, final)
    t0 = time.perf_counter()
    attempts, status, error, used = 0, "died", "", ""
    while status == "died" and attempts <= int(job.get("retries", 0)):
        attempts += 1
        _clear(tmp)
        tmp.mkdir(parents=True)
        scene_file = tmp / ".scene-input.json"
        io_frames.write_json(scene_file, job["scene"])
        status, error, used = _simulate(scene_file, tmp, job.get("time_limit"), job.get("launcher", "auto"))
        scene_file.unlink(missing_ok=True)
        if _STOPPING.is_set():  # killed by stop_runs (or at its start, ``_track``): no retry
            status, error = "interrupted", "the sweep was stopped"
    result = {"run": name, "index": job["index"], "status": status, "error": error, "params": job["params"],
              "fingerprint": job["fingerprint"], "wall_seconds": time.perf_counter() - t0, "attempts": attempts,
              "launcher": used}
    if status == "interrupted":  # no result.json: the sweep removes RUNS/.tmp-<name>
        return result
    try:
        result.update(run_statistics(tmp))
        if status == "ok":
            result["metrics"] = compute_metrics(tmp, job.get("metrics", []))
    except (OSError, ValueError, KeyError) as exc:  # unreadable output: the run failed after all
        status, result["status"], result["error"] = "failed", "failed", f"cannot read its output: {exc}"
    if status == "ok":
        io_frames.write_text(tmp / RESULT, _dumps(result))
        os.replace(tmp, final)
    else:
        _write_failed(tmp, failed, result)
    return result


def _write_failed(tmp: Path, failed: Path, result: dict) -> None:
    """Replace the partial output by RUNS/<name>.failed/ holding error.txt and result.json (built in tmp and
    renamed into place)."""
    _clear(tmp)
    tmp.mkdir(parents=True)
    io_frames.write_text(tmp / "error.txt", result["error"] + "\n")
    io_frames.write_text(tmp / RESULT, _dumps(result))
    os.replace(tmp, failed)


def _dumps(result: dict) -> str:
    """JSON of a result (inf/nan as strings, which JSON lacks)."""
    def clean(v):
        if isinstance(v, float) and not (v == v and abs(v) != float("inf")):
            return repr(v)
        if isinstance(v, dict):
            return {k: clean(x) for k, x in v.items()}
        return v

    return json.dumps(clean(result), indent=2) + "\n"


def read_result(path: Path) -> dict | None:
    """A result.json as a dict ('inf'/'nan' strings back to floats), None if missing or unreadable."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    for key in ("min_distance", "wall_seconds"):
        if isinstance(data.get(key), str):
            data[key] = float(data[key])
    return data
