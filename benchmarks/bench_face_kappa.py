"""The kappa x10 experiment of 000 §4 for the Woodbury solver alone, repeated (issue #14 item 6).

``bench_face.py`` runs every configuration once per frame; on this shared 2-core machine one pass swings by
+-30 %, too much to decide "diamond within 1.1x of itself at kappa x10". This script runs only diamond at kappa
and at 10 kappa on the large face, frames 3-7 from the same start state (frames 0-2 solved once), alternating the
order, --repeat times, and compares the best pass of each (total frame time and global step).

    PYTHONPATH=src python benchmarks/bench_face_kappa.py [--repeat 3]

Last line: ``diamond at kappa x10: X x total, Y x G-step (best of N)``.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_face  # noqa: E402  (make_solver: the benchmark's own configurations)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--start", type=int, default=3)
    ap.add_argument("--frames", type=int, default=5)
    args = ap.parse_args()
    from ipcsim.face.ict import build_face

    model = build_face("large")
    seq = model.sequence
    solvers = {"kappa": bench_face.make_solver(model, "woodbury")[0],
               "10 kappa": bench_face.make_solver(model, "woodbury", 10.0)[0]}
    first = solvers["kappa"]
    for w in seq[:args.start]:
        first.frame(w)
    x0 = first.x.copy()
    best = {name: (float("inf"), float("inf")) for name in solvers}
    for rep in range(args.repeat):
        order = list(solvers) if rep % 2 == 0 else list(solvers)[::-1]
        for name in order:
            s = solvers[name]
            s.start_from(x0)
            total = glob = 0.0
            its = 0
            for w in seq[args.start:args.start + args.frames]:
                st = s.frame(w)
                total, glob, its = total + st.time_total, glob + st.time_global, its + st.iterations
            print(f"pass {rep}: diamond at {name}: total {total:.2f} s, G-step {glob:.2f} s, {its} global steps",
                  flush=True)
            best[name] = (min(best[name][0], total), min(best[name][1], glob))
    (t1, g1), (t10, g10) = best["kappa"], best["10 kappa"]
    print(f"diamond at kappa x10: {t10 / t1:.3f} x total, {g10 / g1:.3f} x G-step (best of {args.repeat})")


if __name__ == "__main__":
    main()
