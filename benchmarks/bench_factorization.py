"""The Newton matrices of a demo factorised by MKL pardiso and by ipcsim's supernodal Cholesky, side by side.

    python benchmarks/bench_factorization.py [--scene grasp|grasp-full|plate] [--steps N] [--repeats R]
    python benchmarks/bench_factorization.py --grid 6 8 10 12 14     # bulky factors: k x k x k grids of nodes

1. Runs the scene for --steps steps with the pardiso backend and keeps every Newton matrix with the ordering it was
   factorised under (``NewtonSolver._ordering_for``: MKL's, of the contact-free pattern).
2. Times, on every 10th kept matrix (median of 15 calls each, in turn): pardiso's numerical factorisation of the
   same pattern, its analysis plus factorisation under the given ordering, one solve; the same for
   ``SupernodalCholesky``; and the largest residual |A x - b| / |b| of each.
3. Runs the scene from the start R times with backend "pardiso" and R times with "supernodal", alternated, and
   prints the wall times, the Newton iterations and the time inside ``Factorization.factor`` / ``solve``.

Last line: ``supernodal speedup: X``, the median whole-run wall time with pardiso over that with the supernodal
factorisation (same scene, same steps). With --grid: per k, the numerical factorisation of a 3x3-block SPD matrix
coupling each node of a k x k x k grid with its 26 neighbours (the bulky factors where MKL's BLAS-3 kernels win),
under MKL's ordering, median of 10 calls each. Needs pypardiso (MKL). One thread each: run it on a quiet machine, alone.
"""
from __future__ import annotations

import argparse
import os
import sys
import time

if __name__ == "__main__":  # one thread each, set before the libraries load (not when a test imports grid_matrix)
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


def grid_matrix(shape, seed: int = 0):
    """An SPD (3 n, 3 n) CSR, n = kx ky kz: 3x3 blocks between every node of a kx x ky x kz grid (shape) and its 26
    neighbours, small random values, a dominant diagonal. Also tests/solvers/test_supernodal.py's matrices."""
    import scipy.sparse as sp

    rng = np.random.default_rng(seed)
    dims = np.array(shape)
    idx = np.arange(dims.prod()).reshape(shape)
    rows, cols = [], []
    for d in np.ndindex(3, 3, 3):
        d = np.array(d) - 1
        lo, hi = np.maximum(0, -d), dims - np.maximum(0, d)
        src = idx[lo[0]:hi[0], lo[1]:hi[1], lo[2]:hi[2]].ravel()
        rows.append(src)
        cols.append(src + (d[0] * dims[1] + d[1]) * dims[2] + d[2])
    r, c = np.concatenate(rows), np.concatenate(cols)
    rr = (3 * r[:, None] + np.arange(3)).repeat(3, 1).ravel()
    cc = np.tile(3 * c[:, None] + np.arange(3), (1, 3)).ravel()
    n = 3 * int(dims.prod())
    a = sp.csr_matrix((rng.uniform(0.0, 0.01, len(rr)), (rr, cc)), shape=(n, n))
    a = a + a.T
    a = sp.csr_matrix(a + sp.diags(np.asarray(abs(a).sum(axis=1)).ravel() + 1.0))
    a.sum_duplicates()
    a.sort_indices()
    return a


def grids(ks) -> None:
    """The --grid timings."""
    from ipcsim.linalg.pardiso import compute_ordering

    for k in ks:
        a = grid_matrix((k, k, k))
        ordering = compute_ordering(a)
        perm = np.asarray(ordering[0], np.int64) - 1
        p, s = PardisoSPD(), SupernodalCholesky()
        p.factor(a, ordering)
        s.factor(a, perm)
        tp = _median_us(lambda: p.factor(a, ordering), 10) / 1e3
        ts = _median_us(lambda: s.factor(a, perm), 10) / 1e3
        print(f"k = {k:2d} ({a.shape[0]:5d} rows): pardiso {tp:8.2f} ms, supernodal {ts:8.2f} ms, "
              f"{s.factor_entries / a.shape[0]:.0f} stored entries of L a row")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scene", choices=("grasp", "grasp-full", "plate"), default="grasp")
    ap.add_argument("--steps", type=int, default=None, help="default: 200 (grasp), 40 (grasp-full), 300 (plate)")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--grid", type=int, nargs="+", metavar="K", help="time k x k x k grids of nodes instead")
    args = ap.parse_args(argv)
    if not pardiso_available():
        print("error: this benchmark compares against MKL pardiso: pip install pypardiso", file=sys.stderr)
        return 2
    if args.grid:
        grids(args.grid)
        return 0
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
