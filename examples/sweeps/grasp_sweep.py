"""The teddy grasp over friction and teddy stiffness (examples/sweeps/grasp_sweep.json): 15 runs on a local Dask
cluster (one worker per core), then a plot of lift success over the grid.

    python examples/sweeps/grasp_sweep.py [OUT] [--workers N] [--resume]     (1 to 4 minutes on 2 cores)

The same from the command line: ``ipcsim sweep examples/sweeps/grasp_sweep.json -o OUT``.
"""
import argparse
from pathlib import Path

from ipcsim.sweep import run_sweep
from ipcsim.sweep.plot import plot_success

HERE = Path(__file__).resolve().parent

if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("out", nargs="?", help="output directory (default: the spec's, examples/sweeps/sweep-out/grasp)")
    ap.add_argument("--workers", type=int)
    ap.add_argument("--resume", action="store_true")
    args = ap.parse_args()
    result = run_sweep(HERE / "grasp_sweep.json", workers=args.workers, output=args.out, resume=args.resume)
    print(f"{result.done} runs done, {result.failed} failed, {result.skipped} kept in {result.wall_seconds:.0f} s; "
          f"table {result.table}")
    png = plot_success(result.table, "friction.mu", "bodies[teddy].material.youngs_modulus", "lifted_teddy",
                       value="rise_teddy", log_x=True, log_y=True)
    print(f"plot: {png}")
