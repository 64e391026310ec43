"""The Newton matrices of a demo factorised by MKL pardiso and by ipcsim's supernodal Cholesky, side by side.

    python benchmarks/bench_factorization.py [--scene grasp|grasp-full|plate] [--steps N] [--repeats R]

1. Runs the scene for --steps steps with the pardiso backend and keeps every Newton matrix with the ordering it was
   factorised under (``NewtonSolver._ordering_for``: MKL's, of the contact-free pattern).
2. Times, on every 10th kept matrix (median of 15 calls each, in turn): pardiso's numerical factorisation of the
   same pattern, its analysis plus factorisation under the given ordering, one solve; the same for
   ``SupernodalCholesky``; and the largest residual |A x - b| / |b| of each.
3. Runs the scene from the start R times with backend "pardiso" and R times with "supernodal", alternated, and
   prints the wall times, the Newton iterations and the time inside ``Factorization.factor`` / ``solve``.

Last line: ``supernodal speedup: X``, the median whole-run wall time with pardiso over that with the supernodal
factorisation (same scene, same steps). Needs pypardiso (MKL). One thread each: run it on a quiet machine, alone.
"""
from __future__ import annotations

import argparse
import os
import sys
import time

for _var in ("NUMBA_NUM_THREADS", "MKL_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402

from ipcsim.linalg import factorization as linear  # noqa: E402
from ipcsim.linalg.pardiso import PardisoSPD, pardiso_available  # noqa: E402
from ipcsim.linalg.supernodal import SupernodalCholesky  # noqa: E402


def build(scene: str):
    """(simulation, steps' dt) of the scene."""
    if scene == "plate":
        from ipcsim.demos.plate_rack import plate_rack
        sim, _ = plate_rack()
        return sim, 0.01
    from ipcsim.demos.teddy_grasp import GraspParameters, teddy_grasp
    mode = "full" if scene == "grasp-full" else "low"
    sim, _ = teddy_grasp(GraspParameters(mode=mode, dt=0.02, end_time=4.0, setup="paper"))
    return sim, 0.02


def run(scene: str, steps: int, backend: str, keep=None) -> dict:
    """One run from the start: wall [s], Newton iterations, seconds in factor / solve; keep: a list that gets
    (matrix copy, ordering) of every factorisation."""
    sim, dt = build(scene)
    sim.solver.linear_backend = backend
    f = sim.solver.linear = linear.Factorization(backend)
    spent = {"factor": 0.0, "solve": 0.0}
    factor, solve = f.factor, f.solve

    def timed_factor(a, ordering=None):
        if keep is not None:
            keep.append((a.copy(), ordering))
        t = time.perf_counter()
        out = factor(a, ordering)
        spent["factor"] += time.perf_counter() - t
        return out

    def timed_solve(b):
        t = time.perf_counter()
        out = solve(b)
        spent["solve"] += time.perf_counter() - t
        return out

    f.factor, f.solve = timed_factor, timed_solve
    state, its = sim.state, 0
    t0 = time.perf_counter()
    for _ in range(steps):
        new = state.copy()
        its += sim.solver.step(state, new, None, dt).newton_iterations
        state = new
    return {"wall": time.perf_counter() - t0, "its": its, **spent, "analyses": f.analyses}


def _median_us(fn, calls: int = 15) -> float:
    times = []
    for _ in range(calls):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return float(np.median(times)) * 1e6


def per_matrix(kept) -> None:
    """The isolated timings of step 2 on every 10th kept matrix."""
    print(f"{'matrix':>6} {'rows':>6} {'nnz':>7} | {'pardiso: numeric':>16} {'analyse+numeric':>15} {'solve':>6} | "
          f"{'supernodal: numeric':>19} {'analyse+numeric':>15} {'solve':>6}   [us]")
    worst = {"pardiso": 0.0, "supernodal": 0.0}
    for k in range(0, len(kept), 10):
        a, ordering = kept[k]
        perm = np.asarray(ordering[0], np.int64) - 1
        b = np.random.default_rng(k).normal(size=a.shape[0])
        p, s = PardisoSPD(), SupernodalCholesky()
        p.factor(a, ordering)
        s.factor(a, perm)
        row = [_median_us(lambda: p.factor(a, ordering)),
               _median_us(lambda: (p.reset(), p.factor(a, ordering)), 5), _median_us(lambda: p.solve(b)),
               _median_us(lambda: s.factor(a, perm)),
               _median_us(lambda: (s.analyse(a, perm), s.factor(a, perm)), 5), _median_us(lambda: s.solve(b))]
        p.factor(a, ordering)
        s.factor(a, perm)
        for name, solver in (("pardiso", p), ("supernodal", s)):
            worst[name] = max(worst[name], float(np.linalg.norm(a @ solver.solve(b) - b) / np.linalg.norm(b)))
        print(f"{k:6d} {a.shape[0]:6d} {a.nnz:7d} | {row[0]:16.0f} {row[1]:15.0f} {row[2]:6.0f} | "
              f"{row[3]:19.0f} {row[4]:15.0f} {row[5]:6.0f}")
    print(f"largest residual |A x - b| / |b|: pardiso {worst['pardiso']:.1e}, supernodal {worst['supernodal']:.1e}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scene", choices=("grasp", "grasp-full", "plate"), default="grasp")
    ap.add_argument("--steps", type=int, default=None, help="default: 200 (grasp), 40 (grasp-full), 300 (plate)")
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args(argv)
    if not pardiso_available():
        print("error: this benchmark compares against MKL pardiso: pip install pypardiso", file=sys.stderr)
        return 2
    steps = args.steps or {"grasp": 200, "grasp-full": 40, "plate": 300}[args.scene]
    kept = []
    run(args.scene, steps, "pardiso", keep=kept)
    print(f"{args.scene}, {steps} steps: {len(kept)} Newton matrices")
    per_matrix(kept)
    run(args.scene, steps, "supernodal")  # compiled and cached before the timed runs
    walls = {"pardiso": [], "supernodal": []}
    for _ in range(args.repeats):
        for backend in walls:
            r = run(args.scene, steps, backend)
            walls[backend].append(r["wall"])
            print(f"{backend:10s} wall {r['wall']:6.2f} s  Newton iterations {r['its']}  analyses {r['analyses']}  "
                  f"factor {r['factor']:.3f} s  solve {r['solve']:.3f} s", flush=True)
    ratio = float(np.median(walls["pardiso"]) / np.median(walls["supernodal"]))
    print(f"supernodal speedup: {ratio:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
