"""Sweep throughput (issue #15): 8 short runs (two_cubes to t = 4 s: 400 steps, about 1.5 s of compute each) as a
sweep on a local Dask cluster of 1 and then 2 workers, against two plain loops over the same 8 scenes: in this one
process (runner.run, no engine) and as one fresh ``python -m ipcsim run`` process per run (the sweep's
``launcher: process``; by default a sweep forks its runs from a fork server with the modules and kernels loaded).

    python benchmarks/bench_sweep.py [--runs 8] [--end-time 4.0] [--repeat 2]

Each sweep runs --repeat times (1 and 2 workers interleaved) and the fastest counts. Prints runs per minute for
each, the engine's overhead per run (sweep with 1 worker minus the plain loops, per
run; cluster start-up included) and, last, ``sweep scaling: X`` = (runs/min with 2 workers) / (runs/min with 1
worker). CPU-bound: on a shared machine the figures depend on the load (printed with them).
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

for _var in ("NUMBA_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
    os.environ[_var] = "1"  # the plain loop runs single-threaded, like each sweep task

REPO = Path(__file__).resolve().parents[1]
SCENE = REPO / "examples" / "scenes" / "two_cubes.json"


def spec(n: int, end_time: float) -> dict:
    """n runs: friction.mu on a grid of n values (the runs differ, the work per run is alike)."""
    return {"scene": str(SCENE), "end_time": end_time, "parameters": {"friction.mu": [0.05 * i for i in range(n)]},
            "metrics": [{"centre": "top"}], "time_limit": 600, "retries": 0}


def plain_loop(runs, out: Path) -> float:
    """Seconds to run every scene in this process, one after the other (runner.run, no engine)."""
    from ipcsim.app.runner import RunOptions, run
    from ipcsim.scene import Scene

    t0 = time.perf_counter()
    for r in runs:
        sim = Scene.from_dict(r.scene).build()
        run(sim, RunOptions.from_output(out / r.name, sim.output, progress=False), r.scene)
    return time.perf_counter() - t0


def process_loop(runs, out: Path) -> float:
    """Seconds to run every scene as its own ``python -m ipcsim run`` child, one after the other."""
    t0 = time.perf_counter()
    for r in runs:
        path = out / f"{r.name}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(r.scene))
        subprocess.run([sys.executable, "-m", "ipcsim", "run", str(path), "-o", str(out / r.name), "--quiet"],
                       check=True)
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=8)
    ap.add_argument("--end-time", type=float, default=4.0)
    ap.add_argument("--repeat", type=int, default=2, help="sweeps per worker count (the best counts)")
    args = ap.parse_args()
    from ipcsim.sweep import run_sweep, spec_from_dict

    s = spec_from_dict(spec(args.runs, args.end_time), base_dir=REPO)
    runs = s.runs()
    load = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="bench-sweep-") as tmp:
        tmp = Path(tmp)
        plain_loop(runs[:1], tmp / "warm")  # Numba's cache loaded / compiled outside the timings
        times = {}
        for rep in range(args.repeat):  # 1 and 2 workers interleaved; the best of each (the machine is shared)
            for workers in (1, 2):
                res = run_sweep(s, workers=workers, output=tmp / f"sweep{workers}-{rep}", progress=False)
                assert res.failed == 0, res.rows
                key = f"sweep, {workers} worker(s)"
                per_run = sum(float(r["wall_seconds"]) for r in res.rows) / len(res.rows)
                print(f"  {key}: {res.wall_seconds:.1f} s, {per_run:.2f} s per run (its own wall time), load "
                      f"average {os.getloadavg()[0]:.2f}", flush=True)
                times[key] = min(times.get(key, float("inf")), res.wall_seconds)
        times["plain loop, one process"] = plain_loop(runs, tmp / "plain")
        times["plain loop, a process per run"] = process_loop(runs, tmp / "procs")
    n = len(runs)
    print(f"best of {args.repeat}: {n} runs of two_cubes to t = {args.end_time:g} s; load average {load:.2f} before, "
          f"{os.getloadavg()[0]:.2f} after, on {os.cpu_count()} cores")
    for name, t in times.items():
        print(f"  {name:<32} {t:7.1f} s  {60 * n / t:6.1f} runs/min")
    one = times["sweep, 1 worker(s)"]
    plain = times["plain loop, one process"]
    print(f"engine overhead per run (1-worker sweep minus plain loop): {(one - plain) / n:.2f} s "
          f"vs one process, {(one - times['plain loop, a process per run']) / n:.2f} s vs a process per run")
    print(f"sweep scaling: {one / times['sweep, 2 worker(s)']:.2f}")


if __name__ == "__main__":
    main()
