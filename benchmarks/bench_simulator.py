"""Simulator benchmark (issue #3): Newton-iteration cost against one sparse factorisation, the per-step time
split, linear backends side by side, the old vs the current Newton linear algebra, and cost vs mesh size.

(a) "several bunnies dropped in a bowl": --bunnies copies of bunny.msh (19,379 tets each, scaled by --scale)
    falling at 3 m/s into the static bowl.obj obstacle, so contact starts in the first step. One warm-up step
    (Numba cache loading / compilation), then --steps measured steps. After each measured step the Newton
    matrix H_ff at the step's end is factorised once, so Newton iterations and factorisations are timed
    under the same machine load. Printed:
        newton/factorization ratio: X     mean Newton iteration time / median time of one factorisation of
                                          H_ff from scratch (pardiso analysis + numerical Cholesky, the solver's
                                          backend); target <= 1.5
    and the stricter ratio against the numerical factorisation alone (the solver reuses the analysis).
(b) the per-step time split of 000 Table 1 from StepStats (contact = active set + barrier/friction
    derivatives, linear solve = H_ff assembly + solve, CCD, line search, other = elastic energy derivatives,
    broad phases, bookkeeping), as fractions of the measured steps' time.
(c) linear backends on the same H_ff: pardiso SPD with analysis reuse (ours), pypardiso.spsolve (general LU,
    the former call), SciPy spsolve (SuperLU), cholespy (CHOLMOD) when installed.
(d) old vs current Newton linear algebra on the same state, alternating: elastic Hessian COO->CSR, SciPy sums,
    ``H[free][:, free]`` and pypardiso.spsolve (the code before this benchmark) against the fixed-pattern
    assembly, ``SystemMatrix.free_block`` and the solver's ``Factorization`` (symbolic analysis reused).
(e) cost growth: a cantilever bar (bar-186, bar-2523, bar-2523 subdivided once: 1 tet -> 8) sagging under
    gravity; time per Newton iteration vs number of tets, exponent fitted by log-log least squares.

Usage: python benchmarks/bench_simulator.py [--data ../shared/data] [--bunnies 3] [--steps 2] [--quick] [--only-newton]
"""
from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from ipcsim.contact.broad_phase import build_candidates
from ipcsim.energies.materials import elastic_gradient_and_hessian_blocks
from ipcsim.geometry.mesh_io import read_mesh
from ipcsim.model import ModelBuilder
from ipcsim.solvers.integrator_solvers import ContactParameters, ImplicitEulerSolver
from ipcsim.linalg.factorization import Factorization, available_backends
from ipcsim.solvers.reduction import SystemMatrix

REPO = Path(__file__).resolve().parents[1]


# ------------------------------------------------------------------------------------------ meshes and scenes
def subdivide_tets(vertices: np.ndarray, tets: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Regular refinement 1 tet -> 8 tets (edge midpoints; the inner octahedron is cut along its shortest
    diagonal). Returns (vertices (n + n_edges, 3), tets (8m, 4) int64), all positively oriented if the input is.
    """
    v = np.asarray(vertices, np.float64)
    t = np.asarray(tets, np.int64)
    pairs = [(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)]
    e = np.stack([np.sort(t[:, list(p)], axis=1) for p in pairs], 1).reshape(-1, 2)
    uniq, inv = np.unique(e, axis=0, return_inverse=True)
    mid = len(v) + inv.reshape(-1, 6)                    # mid[:, k]: midpoint vertex of edge pairs[k]
    v2 = np.vstack([v, 0.5 * (v[uniq[:, 0]] + v[uniq[:, 1]])])
    m01, m02, m03, m12, m13, m23 = (mid[:, k] for k in range(6))
    a, b, c, d = (t[:, k] for k in range(4))
    corners = [(a, m01, m02, m03), (m01, b, m12, m13), (m02, m12, c, m23), (m03, m13, m23, d)]
    diags = [(m01, m23), (m02, m13), (m03, m12)]
    length = np.stack([np.linalg.norm(v2[p] - v2[q], axis=1) for p, q in diags], 1)
    choice = np.argmin(length, axis=1)
    octa = []
    for k, (p, q) in enumerate(diags):                   # 4 tets around diagonal (p, q): the ring of the others
        ring = [x for j, (r, s) in enumerate(diags) if j != k for x in (r, s)]
        r0, r1, s0, s1 = ring                             # ring order r0, s0, r1, s1 around the diagonal
        quad = [(r0, s0), (s0, r1), (r1, s1), (s1, r0)]
        octa.append([np.stack([p, q, u, w], 1) for u, w in quad])
    out = [np.stack(cn, 1) for cn in corners]
    sel = [np.where((choice == k)[:, None], octa[k][j], 0) for j in range(4) for k in range(3)]
    for j in range(4):
        out.append(sel[3 * j] + sel[3 * j + 1] + sel[3 * j + 2])
    t2 = np.vstack(out)
    p0, p1, p2, p3 = (v2[t2[:, k]] for k in range(4))
    neg = np.einsum("ij,ij->i", np.cross(p1 - p0, p2 - p0), p3 - p0) < 0
    t2[neg] = t2[neg][:, [0, 2, 1, 3]]
    return v2, t2


def _tet_volumes(v, t):
    p0, p1, p2, p3 = (v[t[:, k]] for k in range(4))
    return np.einsum("ij,ij->i", np.cross(p1 - p0, p2 - p0), p3 - p0) / 6.0


def bunnies_in_bowl(data: Path, n_bunnies: int = 3, scale: float = 0.6):
    """n_bunnies NH bunnies (E = 1e5 Pa, nu = 0.4) on a ring inside the static bowl, falling at 3 m/s."""
    bp, bc = read_mesh(data / "ipc/input/tetMeshes/bunny.msh")
    wp, wc = read_mesh(data / "ipc/input/triMeshes/bowl.obj")
    b = ModelBuilder()
    b.add_obstacle(wp, wc["triangle"])
    for k in range(n_bunnies):
        ang = 2 * np.pi * k / n_bunnies
        radius = 1.7 if n_bunnies > 1 else 0.0
        c = np.array([radius * np.cos(ang), -2.5 + 0.35 * scale + 0.25, radius * np.sin(ang)])
        b.add_body(bp, bc["tetra"], scale=scale, translation=c, velocity=(0.0, -3.0, 0.0), material="NH",
                   youngs_modulus=1e5, poisson_ratio=0.4)
    return b.finalize()


def cantilever(vertices, tets):
    """A bar (10 x 0.5 x 1 m) clamped at x <= 0.01 m, sagging under gravity (NH, E = 1e6 Pa, nu = 0.4)."""
    b = ModelBuilder()
    b.add_body(vertices, tets, material="NH", youngs_modulus=1e6, poisson_ratio=0.4,
               fixed=vertices[:, 0] <= 0.01)
    return b.finalize()


# ------------------------------------------------------------------------------------------ helpers
def _median_time(fn, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def newton_system(solver: ImplicitEulerSolver, state, h: float):
    """(SystemMatrix, gradient (3n,), free (3n,) bool) of the incremental potential at the state's x."""
    m = solver.model
    x = state.x
    cand = build_candidates(m.collision_mesh, solver._surface(x), None, inflation_radius=0.5 * solver.contact.dhat)
    pot = solver.potential(state, h)
    grad, hess, _ = pot.gradient_hessian(pot.evaluation(x, cand))
    free = ~np.repeat(m.control.prescribed_mask(m.fixed, state.t, state.t + h), 3)
    return hess, grad, free


def _fresh_factorization(a: sp.csr_matrix) -> tuple[float, float]:
    """(analysis + numerical Cholesky, numerical Cholesky only) [s] of a with MKL pardiso (mtype 2)."""
    import pypardiso

    u = sp.triu(a, format="csr")
    u.sort_indices()
    s = pypardiso.PyPardisoSolver(mtype=2)
    b = np.zeros(a.shape[0])
    s.set_phase(12)
    t0 = time.perf_counter()
    s._call_pardiso(u, b)
    t1 = time.perf_counter()
    s.set_phase(22)
    s._call_pardiso(u, b)
    t2 = time.perf_counter()
    s.free_memory(everything=True)
    return t1 - t0, t2 - t1


# ------------------------------------------------------------------------------------------ (a), (b)
def bench_bunnies(data: Path, n_bunnies: int, scale: float, steps: int, h: float):
    model, state = bunnies_in_bowl(data, n_bunnies, scale)
    n_free = 3 * int((~model.fixed).sum())
    print(f"scene: {n_bunnies} bunnies in the bowl, {len(model.tets)} tets, {model.n_vertices} vertices, "
          f"{n_free} unknowns, h = {h} s, dhat = 1e-2 m")
    solver = ImplicitEulerSolver(model, ContactParameters(dhat=1e-2), sanity_check=False)
    t0 = time.perf_counter()
    new = state.copy()
    st = solver.step(state, new, None, h)
    state = new
    print(f"  warm-up step: {time.perf_counter() - t0:.2f} s, {st.newton_iterations} Newton iterations, "
          f"{st.n_contacts} contacts")
    split = dict(contact=0.0, linear_solve=0.0, ccd=0.0, line_search=0.0, other=0.0)
    total_time, total_iters, fact_full, fact_num = 0.0, 0, [], []
    for k in range(steps):
        new = state.copy()
        t0 = time.perf_counter()
        st = solver.step(state, new, None, h)
        wall = time.perf_counter() - t0
        state = new
        total_time += wall
        total_iters += st.newton_iterations
        for key in split:
            split[key] += getattr(st, "time_" + key)
        hess, _, free = newton_system(solver, state, h)
        a = hess.free_block(free)
        full, num = _fresh_factorization(a)
        fact_full.append(full)
        fact_num.append(num)
        print(f"  step {k + 1}: {wall:.2f} s, {st.newton_iterations} Newton iterations "
              f"({wall / st.newton_iterations:.3f} s each), {st.n_contacts} contacts, H_ff {a.shape[0]} rows "
              f"{a.nnz} nonzeros; factorisation {full:.3f} s (numerical only {num:.3f} s)")
    per_iter = total_time / total_iters
    f_full, f_num = statistics.median(fact_full), statistics.median(fact_num)
    print(f"  Newton iteration: {per_iter:.3f} s; one factorisation of H_ff: {f_full:.3f} s "
          f"(analysis + numerical), {f_num:.3f} s (numerical only)")
    if solver.linear.backend == "pardiso":
        ps = solver.linear
        print(f"  pardiso: {ps.analyses} symbolic analyses ({ps.given_orderings} with the model's contact-free "
              f"ordering, {ps.ordering_reuses} reusing the previous one) for {ps.factorizations} numerical "
              f"factorisations")
    print(f"newton/factorization ratio: {per_iter / f_full:.2f}")
    print(f"newton/numerical-factorization ratio: {per_iter / f_num:.2f}")
    print("time split (000 Table 1): " + ", ".join(f"{k} {v / total_time:.2f}" for k, v in split.items()))
    return solver, state, h


# ------------------------------------------------------------------------------------------ (c)
def bench_backends(a: sp.csr_matrix, b: np.ndarray, repeats: int):
    print(f"linear backends on H_ff ({a.shape[0]} rows, {a.nnz} nonzeros), factorisation + solve, "
          f"median of {repeats}:")
    results = {}
    spd = Factorization("pardiso" if "pardiso" in available_backends() else "auto")
    spd.factor(a).solve(b)

    def ours():
        return spd.factor(a).solve(b)

    results["pardiso SPD, analysis reused (ipcsim)"] = ours
    if "pardiso" in available_backends():
        import pypardiso

        def fresh():
            return Factorization("pardiso").factor(a).solve(b)

        results["pardiso SPD, fresh analysis"] = fresh
        results["pypardiso general LU (former call)"] = lambda: pypardiso.PyPardisoSolver().solve(a, b)
    results["scipy spsolve (SuperLU)"] = lambda: spla.spsolve(a.tocsc(), b)
    try:
        import cholespy

        def chol():
            f = cholespy.CholeskySolverD(a.shape[0], a.indptr.astype(np.int32), a.indices.astype(np.int32),
                                         a.data.copy(), cholespy.MatrixType.CSR)
            x = np.zeros((a.shape[0], 1))
            f.solve(b.reshape(-1, 1).copy(), x)
            return x.ravel()

        results["cholespy (CHOLMOD)"] = chol
    except ImportError:
        print("  cholespy: not installed (pip install cholespy)")
    base = None
    for name, fn in results.items():
        x = fn()
        res = np.linalg.norm(a @ x - b) / np.linalg.norm(b)
        t = _median_time(fn, repeats)
        base = base or t
        print(f"  {name:40s} {t:8.3f} s  ratio {t / base:5.2f}  residual {res:.1e}")


# ------------------------------------------------------------------------------------------ (d)
def old_linear_algebra(solver, x, wp, diagonal, surface_terms, free, rhs):
    """The code before the fixed-pattern assembly: COO->CSR elastic Hessian, SciPy sums, fancy slicing,
    pypardiso.spsolve (general LU, analysis every call)."""
    import pypardiso

    m = solver.model
    n3 = 3 * m.n_vertices
    data, rows, cols = [], [], []
    grad = np.zeros(n3)
    for name, idx in m.material_groups:
        t = np.ascontiguousarray(m.tets[idx])
        r = (3 * t[:, :, None] + np.arange(3)).reshape(len(t), 12)
        g, h = elastic_gradient_and_hessian_blocks(name, x, t, m.dm_inv[idx], m.volume[idx], m.mu[idx],
                                                   m.lam[idx], True, True)
        np.add.at(grad, r.ravel(), g.ravel())
        data.append(h.ravel())
        rows.append(np.repeat(r, 12, axis=1).ravel())
        cols.append(np.tile(r, (1, 12)).ravel())
    he = sp.csr_matrix((np.concatenate(data), (np.concatenate(rows), np.concatenate(cols))), shape=(n3, n3))
    hess = wp * he + sp.diags(diagonal)
    for w, c in surface_terms:
        hess = hess + w * m.surface_map.pull_hessian(c)
    hess = hess.tocsr()
    # a fresh solver: pypardiso.spsolve would skip the factorisation of a matrix it has just factorised
    return pypardiso.PyPardisoSolver().solve(hess[free][:, free], rhs)


def new_linear_algebra(solver, x, wp, diagonal, surface_terms, free, rhs):
    """The current code: fixed-pattern elastic assembly, SystemMatrix.free_block, the solver's Factorization
    (analysis reuse)."""
    _, he = solver.elastic.gradient_and_hessian(x)
    hess = SystemMatrix(solver.model.surface_map, he, wp, diagonal, solver.patterns)
    for w, c in surface_terms:
        hess.add_surface(w, c)
    return solver.linear.factor(hess.free_block(free)).solve(rhs)


def bench_old_vs_new(solver, state, h, repeats: int):
    hess, grad, free = newton_system(solver, state, h)
    x = state.x
    wp = h * h
    args = (solver, x, wp, hess.diagonal_term, hess.surface_terms, free, -grad[free])
    p_new = new_linear_algebra(*args)
    p_old = old_linear_algebra(*args)
    diff = np.linalg.norm(p_new - p_old) / np.linalg.norm(p_old)
    t_old, t_new = [], []
    for _ in range(repeats):  # alternate so that both see the same machine load
        t_old.append(_median_time(lambda: old_linear_algebra(*args), 1))
        t_new.append(_median_time(lambda: new_linear_algebra(*args), 1))
    to, tn = statistics.median(t_old), statistics.median(t_new)
    print(f"Newton linear algebra (elastic derivatives + H_ff assembly + solve), median of {repeats}, "
          f"{len(hess.surface_terms)} surface terms: old {to:.3f} s, current {tn:.3f} s, "
          f"old/current ratio: {to / tn:.2f} (directions differ by {diff:.1e} relative)")
    parts = {"elastic gradient + Hessian": [], "H_ff assembly (free_block)": [], "factorise + solve": []}
    rhs = -grad[free]
    for _ in range(repeats):
        t0 = time.perf_counter()
        _, he = solver.elastic.gradient_and_hessian(x)
        t1 = time.perf_counter()
        sm = SystemMatrix(solver.model.surface_map, he, wp, hess.diagonal_term, solver.patterns)
        for w, c in hess.surface_terms:
            sm.add_surface(w, c)
        a = sm.free_block(free)
        t2 = time.perf_counter()
        solver.linear.factor(a).solve(rhs)
        t3 = time.perf_counter()
        for key, t in zip(parts, (t1 - t0, t2 - t1, t3 - t2)):
            parts[key].append(t)
    print("  current split: " + ", ".join(f"{k} {statistics.median(v):.3f} s" for k, v in parts.items()))


# ------------------------------------------------------------------------------------------ (e)
def bench_scaling(data: Path, steps: int, h: float, min_seconds: float = 2.0):
    meshes = []
    for name in ("bar-186", "bar-2523"):
        v, c = read_mesh(data / f"ipc/input/tetMeshes/{name}.msh")
        meshes.append((name, v, c["tetra"].astype(np.int64)))
    v, t = subdivide_tets(meshes[-1][1], meshes[-1][2])
    vol0, vol1 = _tet_volumes(meshes[-1][1], meshes[-1][2]), _tet_volumes(v, t)
    if not (np.all(vol1 > 0) and abs(vol1.sum() - vol0.sum()) < 1e-9 * vol0.sum()):
        raise RuntimeError("subdivide_tets: inverted tets or volume not conserved")
    meshes.append(("bar-2523 subdivided", v, t))
    print(f"cost vs mesh size: cantilever bar under gravity, h = {h} s; after a warm-up step, steps until "
          f"{min_seconds} s (at least {steps}); median over steps of the time per Newton iteration")
    n_tets, per_iter = [], []
    for name, v, t in meshes:
        model, state = cantilever(v, t)
        solver = ImplicitEulerSolver(model, ContactParameters(dhat=1e-2), sanity_check=False)
        new = state.copy()
        solver.step(state, new, None, h)
        state = new
        samples, total, iters = [], 0.0, 0
        while len(samples) < steps or total < min_seconds:
            new = state.copy()
            t0 = time.perf_counter()
            st = solver.step(state, new, None, h)
            wall = time.perf_counter() - t0
            total += wall
            iters += st.newton_iterations
            samples.append(wall / st.newton_iterations)
            state = new
        n_tets.append(len(t))
        per_iter.append(statistics.median(samples))
        print(f"  {name:22s} {len(t):7d} tets  {len(samples):3d} steps  {iters:4d} Newton iterations  "
              f"{per_iter[-1] * 1e3:8.2f} ms each")
    slope = np.polyfit(np.log(n_tets), np.log(per_iter), 1)[0]
    print(f"fitted exponent (time per Newton iteration ~ tets^k): k = {slope:.2f}")


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data")
    ap.add_argument("--bunnies", type=int, default=3)
    ap.add_argument("--scale", type=float, default=0.6)
    ap.add_argument("--steps", type=int, default=2)
    ap.add_argument("--dt", type=float, default=0.02)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="one bunny, one step (a smoke run, not the benchmark)")
    ap.add_argument("--only-newton", action="store_true", help="run only (a) and (b): the Newton/factorisation "
                    "ratio and the time split")
    args = ap.parse_args(argv)
    if args.quick:
        args.bunnies, args.steps, args.repeats = 1, 1, 1
    print(f"linear backends available: {available_backends()}")
    solver, state, h = bench_bunnies(args.data, args.bunnies, args.scale, args.steps, args.dt)
    if args.only_newton:
        return
    hess, grad, free = newton_system(solver, state, h)
    bench_backends(hess.free_block(free), -grad[free], args.repeats)
    bench_old_vs_new(solver, state, h, args.repeats)
    bench_scaling(args.data, 1 if args.quick else 2, 0.04)


if __name__ == "__main__":
    main()
