"""000 Eq. 7's triangular split of the Schur/Woodbury global step, measured against the two K11 solves ipcsim does.

The 'schur' and 'woodbury' global steps (``face.global_step``) solve K11 twice per global step:

    u2 = r2 - K21 K11^-1 r1,   p2 = Sigma_hat^-1 u2,   p1 = K11^-1 (r1 - K12 p2)

000 §3.1 (Eq. 7) writes the same step with the block factor of K: with K11 = P^T L L^T P and M = L^-1 P K12
(n1, n2), a forward substitution, the dense solve and a backward substitution:

    y1 = L^-1 P r1,   u2 = r2 - M^T y1,   p2 = Sigma_hat^-1 u2,   p1 = P^T L^-T (y1 - M p2)

that is two triangular passes instead of four, plus two products with M. Whether that is faster depends on how
much of L^-1 the columns of K12 fill. This script builds the face's K11 and K12 (``FacePDSolver`` with the
woodbury step, automatic x2), factors K11 with MKL pardiso (``linalg.pardiso.PardisoSPD``; ``forward`` and
``backward`` are its phases 331 and 333), forms M by forward substitution of K12's columns, checks that
K22 - M^T M is the solver's S and that both ways give the same p1, and times the two ways on the same right-hand
sides (3 columns, as the global step's), alternating, best of ``--repeats``. Printed: n1, n2, nnz(M), the times
[ms] and the last line

    triangular split over two K11 solves: X     (the split's time / the two solves'; below 1: the split is faster)

    python benchmarks/face_schur_split.py [--size large|small] [--model face.npz] [--repeats 5]

Needs pypardiso (MKL).
"""
from __future__ import annotations

import argparse
import time

import numpy as np
import scipy.sparse as sp

BLOCK = 256  # columns of K12 substituted at once


def split_factor(k11, k12):
    """(PardisoSPD of k11 (n1, n1), M = L^-1 P k12 (n1, n2) CSR with its exact zeros dropped)."""
    from ipcsim.linalg.pardiso import PardisoSPD

    f = PardisoSPD()
    if not f.factor(k11):
        raise SystemExit("error: K11 is not positive definite")
    cols = []
    for lo in range(0, k12.shape[1], BLOCK):
        cols.append(sp.csc_matrix(f.forward(k12[:, lo:lo + BLOCK].toarray())))  # exact zeros stay zero
    return f, sp.hstack(cols).tocsr()


def two_solves(f, k12, k21, r1, r2, p2):
    """The solver's way: (u2, p1) by two K11 solves."""
    u2 = r2 - k21 @ f.solve(r1)
    return u2, f.solve(r1 - k12 @ p2)


def triangular_split(f, m, mt, r1, r2, p2):
    """000 Eq. 7's way: (u2, p1) by one forward and one backward substitution and two products with M."""
    y1 = f.forward(r1)
    u2 = r2 - mt @ y1
    return u2, f.backward(y1 - m @ p2)


def best_time(fn, repeats: int) -> float:
    best = np.inf
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def main() -> None:
    from ipcsim.face import FacePDSolver

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--size", default="large", choices=("small", "large"))
    ap.add_argument("--model", help="read the face from this .npz (face.data.save_face) instead of building it")
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    from bench_face import load_model

    model = load_model(args.size, args.model, None)
    g = FacePDSolver(model, "woodbury").solver
    k11 = g.k[g.x1][:, g.x1].tocsr()
    k11.sort_indices()
    t0 = time.perf_counter()
    f, m = split_factor(k11, g.k12)
    t_m = time.perf_counter() - t0
    mt = m.T.tocsr()
    k22 = g.k[g.x2][:, g.x2].toarray()
    s_split = k22 - (mt @ m).toarray()
    print(f"n1 = {g.n1}, n2 = {g.n2}, nnz(K12) = {g.k12.nnz}, nnz(M) = {m.nnz} "
          f"({m.nnz / (g.n1 * g.n2):.1%} of n1 x n2), M formed in {t_m:.1f} s")
    print(f"  |K22 - M^T M - S| / |S| = {np.abs(s_split - g.s).max() / np.abs(g.s).max():.1e}")
    rng = np.random.default_rng(0)
    r1, r2, p2 = rng.normal(size=(g.n1, 3)), rng.normal(size=(g.n2, 3)), rng.normal(size=(g.n2, 3))
    a = two_solves(f, g.k12, g.k21, r1, r2, p2)
    b = triangular_split(f, m, mt, r1, r2, p2)
    print("  relative difference of u2, p1: " + ", ".join(
        f"{np.abs(x - y).max() / np.abs(x).max():.1e}" for x, y in zip(a, b)))
    t_two = t_split = np.inf
    for _ in range(args.repeats):  # alternating, so load changes hit both
        t_two = min(t_two, best_time(lambda: two_solves(f, g.k12, g.k21, r1, r2, p2), 1))
        t_split = min(t_split, best_time(lambda: triangular_split(f, m, mt, r1, r2, p2), 1))
    t_fwd = best_time(lambda: f.forward(r1), args.repeats)
    t_bwd = best_time(lambda: f.backward(r1), args.repeats)
    t_mt = best_time(lambda: mt @ r1, args.repeats)
    t_mp = best_time(lambda: m @ p2, args.repeats)
    print(f"  two K11 solves {1e3 * t_two:.1f} ms; split {1e3 * t_split:.1f} ms (forward {1e3 * t_fwd:.1f}, "
          f"backward {1e3 * t_bwd:.1f}, M^T y1 {1e3 * t_mt:.1f}, M p2 {1e3 * t_mp:.1f})")
    print(f"triangular split over two K11 solves: {t_split / t_two:.2f}")


if __name__ == "__main__":
    main()
