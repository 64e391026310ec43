"""Running a sweep on Dask distributed: a LocalCluster of single-threaded worker threads in this process by default
(one run per core), or a running cluster given its address; progress bar, bookkeeping, resume and Ctrl-C.

Output directory (OUT, the spec's "output")::

    OUT/sweep.json          the runs (name, parameters) and where they came from
    OUT/summary.csv         one row per run (``table.columns``), rewritten atomically after every finished run
    OUT/summary.parquet     the same, when pyarrow is importable
    OUT/runs/<name>/        each complete run: the usual layout (docs/output.md) and result.json
    OUT/runs/<name>.failed/ each failed run: error.txt and result.json
"""
from __future__ import annotations

import logging
import os
import shutil
import sys
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from ..io import frames as io_frames
from .spec import SweepSpec, load_spec
from .table import columns, row, write_table
from .task import (FAILED_SUFFIX, RESULT, TMP_PREFIX, _write_failed, allow_runs, execute_run, read_result,
                   start_forkserver, stop_runs)

log = logging.getLogger(__name__)


@dataclass
class SweepResult:
    """out_dir; table: OUT/summary.csv; rows: the table's rows (dicts); done, failed, skipped: run counts
    (skipped: complete runs a --resume kept); wall_seconds [s]; workers: worker threads used."""

    out_dir: Path
    table: Path
    rows: list
    done: int
    failed: int
    skipped: int
    wall_seconds: float
    workers: int


#: Dask's own sampling, switched off or slowed down on the local cluster: a worker's statistical profiler (a stack
#: sample every 10 ms), the GIL monitor (every 1 ms), the system monitor (every 0.5 s) and the event loops' tick
#: (every 20 ms) run beside each simulation and take CPU from it; a sweep's tasks are whole simulations in child
#: processes, which none of them can see. On 2 cores, 8 two_cubes runs on 2 workers, five sweeps each, alternating:
#: 5.8-6.3 s (mean 6.1) with these, 6.2-6.9 s (mean 6.5) without; bench_sweep.py's scaling 1.56 against 1.51.
QUIET_WORKERS = {"distributed.worker.profile.enabled": False, "distributed.admin.system-monitor.gil.enabled": False,
                 "distributed.admin.system-monitor.interval": "2s", "distributed.admin.tick.interval": "500ms"}


def default_workers() -> int:
    """The cores this process may use (one simulation per core)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


@contextmanager
def dask_client(workers: int | None = None, address: str | None = None, retries: int = 1):
    """A ``distributed.Client``: to the scheduler at ``address``, or to a new LocalCluster of ``workers`` worker
    threads (default: one per core) in this process, which forgives a task ``retries`` worker deaths
    (``distributed.scheduler.allowed-failures``). Closed (cluster included) on exit; leaving a local cluster by an
    exception (Ctrl-C) first kills the simulations its workers are waiting on (``task.stop_runs``).

    Why threads, not worker processes: a task only starts the simulation as a child process and waits for it
    (``task``), so a worker needs no process of its own; in-process workers share this process's fork server,
    started here before the cluster so that it imports and loads its kernels while the cluster starts, where
    worker processes each started one at their first run. On 2 cores, 8 runs of 0.9 s: 3.5-3.8 s on 2 workers
    against 5.1-5.7 s, 6.7-7.3 s on 1 against 8.0-9.4 (``benchmarks/bench_sweep.py``; docs/sweeps.md)."""
    import dask
    from distributed import Client, LocalCluster

    if address:
        client = Client(address)
        try:
            yield client
        finally:
            client.close()
        return
    allow_runs()
    start_forkserver()
    with dask.config.set({"distributed.scheduler.allowed-failures": int(retries), **QUIET_WORKERS}):
        cluster = LocalCluster(n_workers=workers or default_workers(), threads_per_worker=1, processes=False,
                               dashboard_address=None, silence_logs=logging.ERROR)
        try:
            client = Client(cluster)
            try:
                yield client
            except BaseException:
                stop_runs()  # the worker threads return as their simulations die; then the cluster closes
                raise
            finally:
                client.close()
        finally:
            cluster.close()


def _job(spec: SweepSpec, run, runs_dir: Path) -> dict:
    """The job dict of one run (``task.execute_run``)."""
    return {"name": run.name, "index": run.index, "params": run.params, "scene": run.scene,
            "fingerprint": run.fingerprint, "runs_dir": str(runs_dir), "metrics": spec.metrics,
            "time_limit": spec.time_limit, "retries": spec.retries, "launcher": spec.launcher}


def _clear_temporaries(runs_dir: Path) -> None:
    """Remove RUNS/.tmp-* (runs that were going when a sweep stopped)."""
    for p in runs_dir.glob(TMP_PREFIX + "*"):
        for _ in range(3):
            shutil.rmtree(p, ignore_errors=True)
            if not p.exists():
                break
            time.sleep(0.2)


def completed(spec: SweepSpec, runs: list, runs_dir: Path) -> dict:
    """{index: result} of the runs already complete in RUNS with this very scene (what --resume skips)."""
    out = {}
    for run in runs:
        res = read_result(runs_dir / run.name / RESULT)
        if res and res.get("status") == "ok" and res.get("fingerprint") == run.fingerprint:
            out[run.index] = res
    return out


class _Book:
    """The sweep's bookkeeping: results so far, the table, the progress bar."""

    def __init__(self, spec: SweepSpec, runs: list, runs_dir: Path, results: dict, progress: bool):
        self.spec, self.runs, self.runs_dir, self.results = spec, runs, runs_dir, results
        self.cols = columns(list(spec.parameters), spec.metrics)
        self.bar = None
        if progress:
            from tqdm import tqdm

            self.bar = tqdm(total=len(runs), initial=len(results), desc="sweep", unit="run", file=sys.stderr,
                            dynamic_ncols=True, bar_format="{desc}: {n_fmt}/{total_fmt} runs |{bar}| "
                                                           "[{elapsed}<{remaining}{postfix}]")

    def directory(self, run) -> str:
        """The run's directory relative to OUT ("" while it has no result, or was interrupted)."""
        res = self.results.get(run.index)
        if res is None or res.get("status") == "interrupted":  # no directory: an interrupted run leaves none
            return ""
        return f"runs/{run.name}{'' if res.get('status') == 'ok' else FAILED_SUFFIX}"

    def rows(self) -> list[dict]:
        """The table rows of every run, in run order."""
        return [row(r, self.results.get(r.index), self.spec.metrics, self.directory(r)) for r in self.runs]

    def write(self) -> Path:
        """Rewrite the table (atomically); returns OUT/summary.csv."""
        return write_table(self.spec.output, self.cols, self.rows())[0]

    def finished(self, result: dict) -> None:
        """Record a finished run's result, rewrite the table, advance the bar."""
        self.results[result["index"]] = result
        self.write()
        if self.bar is not None:
            self.bar.update(1)

    def show(self, running: int) -> None:
        """Show done, failed and running counts on the bar."""
        if self.bar is not None:
            failed = sum(1 for r in self.results.values() if r.get("status") != "ok")
            self.bar.set_postfix_str(f"done={len(self.results) - failed} failed={failed} running={running}")

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def _lost(run, runs_dir: Path, exc: BaseException) -> dict:
    """The result of a run whose task itself failed (its worker died more often than allowed, or the task
    raised): recorded as RUNS/<name>.failed."""
    kind = type(exc).__name__
    status = "died" if kind == "KilledWorker" else "failed"
    text = " ".join(str(exc).split()) or kind
    result = {"run": run.name, "index": run.index, "status": status, "error": f"{kind}: {text}",
              "params": run.params, "fingerprint": run.fingerprint, "wall_seconds": float("nan"), "attempts": ""}
    _write_failed(runs_dir / (TMP_PREFIX + run.name), runs_dir / (run.name + FAILED_SUFFIX), result)
    return result


def _drive(client, book: _Book, todo: list, runs_dir: Path) -> None:
    """Submit every run, collect results as they finish (failures recorded, the others go on). Checks for finished
    runs every 20 ms (a check is a look at a queue: no CPU taken from the simulations worth measuring; the former
    0.2 s let a sweep end up to 0.2 s after its last run) and refreshes the running count once a second."""
    from distributed import as_completed

    futures = {client.submit(execute_run, _job(book.spec, r, runs_dir), key=f"ipcsim-{r.name}", pure=False): r
               for r in todo}
    slots = client.nthreads()
    pending = as_completed(list(futures))
    last_show = 0.0
    while not pending.is_empty():
        batch = pending.next_batch(block=False)
        for fut in batch:
            run = futures[fut]
            try:
                result = fut.result()
            except Exception as exc:  # noqa: BLE001 - recorded in the table, the sweep goes on
                result = _lost(run, runs_dir, exc)
            book.finished(result)
        now = time.monotonic()
        if batch or now - last_show > 1.0:
            # tasks a worker holds, at most one running per worker thread (the rest wait in its queue)
            running = sum(min(len(v), slots.get(w, 1)) for w, v in client.processing().items())
            book.show(running)
            last_show = now
        if not batch:
            time.sleep(0.02)


def run_sweep(spec, workers: int | None = None, address: str | None = None, resume: bool = False,
              progress: bool = True, output=None) -> SweepResult:
    """Run a sweep: ``spec`` is a SweepSpec or the path of a spec file (``output`` overrides its output
    directory). workers: local workers (threads; default one per core); address: a running Dask scheduler
    (``tcp://host:8786``) instead; resume: keep the runs complete in OUT/runs (same scene) and do the rest.
    Every run gets OUT/runs/<name>; failures are recorded, never raised. KeyboardInterrupt propagates after
    the cluster is closed, temporary run directories are removed and the table holds the finished runs."""
    if not isinstance(spec, SweepSpec):
        spec = load_spec(spec, output=output)
    elif output is not None:
        spec.output = Path(output)
    if workers is not None and workers < 1:
        raise ValueError(f"--workers must be at least 1, got {workers}")
    t0 = time.perf_counter()
    runs = spec.runs()
    out, runs_dir = Path(spec.output), Path(spec.output) / "runs"
    if out.exists() and not out.is_dir():
        raise ValueError(f"sweep output {str(out)!r} exists and is not a directory")
    runs_dir.mkdir(parents=True, exist_ok=True)
    _clear_temporaries(runs_dir)
    io_frames.write_json(out / "sweep.json", {"spec": spec.source, "scene": str(spec.scene_path),
                                              "sampling": spec.sampling, "seed": spec.seed,
                                              "runs": [{"name": r.name, "params": r.params} for r in runs]})
    results = completed(spec, runs, runs_dir) if resume else {}
    skipped = len(results)
    book = _Book(spec, runs, runs_dir, results, progress)
    book.write()
    todo = [r for r in runs if r.index not in results]
    n_workers = 0
    try:
        if todo:
            with dask_client(workers, address, spec.retries) as client:
                n_workers = sum(client.nthreads().values())
                _drive(client, book, todo, runs_dir)
    finally:
        book.close()
        _clear_temporaries(runs_dir)
        for index, res in completed(spec, runs, runs_dir).items():  # finished while the sweep was stopping
            results.setdefault(index, res)
        table = book.write()
    failed = sum(1 for r in results.values() if r.get("status") != "ok")
    return SweepResult(out, table, book.rows(), len(results) - failed - skipped, failed, skipped,
                       time.perf_counter() - t0, n_workers)
