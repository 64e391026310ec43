"""How the barrier Hessian reaches the Newton matrix (issue #11 item 1): per stencil straight into the cached
free-coordinate pattern, against the solver's two stages (the stencils summed into a surface CSR,
``linalg.sparse.assemble_symmetric_block_csr``, then J^T C J added to the pattern row by row,
``solvers.reduction._scatter_mapped`` / ``_scatter_surface``).

The direct path is written here as a prototype: for every stencil s, every block (a, b) of its local Hessian and
every pair of node coordinates (J's up to 4 weights per surface coordinate on each side), one binary search in the
pattern's row. The inputs are captured from real Newton iterations: the teddy grasp (``ipcsim.demos.teddy_grasp``, low
embedding, 4 weights per teddy vertex; step 80, in the squeeze) and the small-scene teddy on the ground
(``bench_small_scene.py``: full space, a selection). Both paths give the same matrix (checked, printed).

    python benchmarks/bench_hessian_scatter.py

Prints, per scene, the stencils, the pattern and surface-matrix sizes, the median time of each path over 200 calls,
and last ``direct/two-stage time ratio (grasp): X``.
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np
from numba import njit

import ipcsim.contact.barrier_potential as bp
import ipcsim.solvers.reduction as red_mod
from ipcsim.linalg.sparse import UPPER_BLOCK, assemble_symmetric_block_csr, csr_lower_bound


@njit(cache=True)
def _find(indptr, indices, r, c):
    k = csr_lower_bound(indptr, indices, r, c)
    return k if k < indptr[r + 1] and indices[k] == c else -1


@njit(cache=True)
def direct(weight, verts, nverts, upper, ub, red, wm, indptr, indices, data):
    """data += weight * J^T H_s J for every stencil s, entry by entry; returns the entries outside the pattern."""
    k = red.shape[1]
    miss = 0
    for s in range(len(nverts)):
        n = nverts[s]
        for a in range(n):
            for b in range(n):
                bi = ub[min(a, b), max(a, b)]
                for i in range(3):
                    si = 3 * verts[s, a] + i
                    for j in range(3):
                        sj = 3 * verts[s, b] + j
                        v = upper[s, bi, i, j] if a <= b else upper[s, bi, j, i]
                        for p in range(k):
                            r = red[si, p]
                            if r < 0:
                                continue
                            for q in range(k):
                                c = red[sj, q]
                                if c < 0:
                                    continue
                                pos = _find(indptr, indices, r, c)
                                if pos < 0:
                                    miss += 1
                                else:
                                    data[pos] += weight * wm[si, p] * v * wm[sj, q]
    return miss


def capture(solver, state, steps: int, dt: float):
    """Step the solver; return the last barrier stencils (verts, nverts, upper) and the last (SystemMatrix,
    pattern) filled with surface terms."""
    cap = {}
    hessian_range, fill = bp._hessian_range, red_mod.SystemMatrix._fill

    def grab(st, geo, sc, method, lo, hi, upper, nverts):
        hessian_range(st, geo, sc, method, lo, hi, upper, nverts)
        cap["stencils"] = (st[1].copy(), nverts[:hi].copy(), upper[:hi].copy())

    def grab_fill(self, pat):
        out = fill(self, pat)
        if self.surface_terms:
            cap["fill"] = (self, pat)
        return out

    bp._hessian_range, red_mod.SystemMatrix._fill = grab, grab_fill
    try:
        for _ in range(steps):
            new = state.copy()
            solver.step(state, new, None, dt)
            state = new
    finally:
        bp._hessian_range, red_mod.SystemMatrix._fill = hessian_range, fill
    return cap["stencils"], cap["fill"]


def compare(name: str, stencils, filled) -> float:
    """Time both paths on one captured matrix; returns direct / two-stage."""
    verts, nverts, upper = stencils
    hess, pat = filled
    weight = hess.surface_terms[0][0]  # the barrier term's weight
    jmap = hess.surface_map
    if jmap.is_selection:
        red = pat.full_to_free[(3 * jmap.index[:, None] + np.arange(3)).ravel()].reshape(-1, 1)
        wm, jt = np.ones(red.shape), None
    else:
        red, wm, jt = hess.cache.mapped(jmap, pat)

    def two_stage():
        c = assemble_symmetric_block_csr(verts, nverts, upper, jmap.n_surface)
        d = np.zeros(pat.nnz)
        size = c.nnz * red.shape[1] ** 2
        mr, mc, mv = np.empty(size, np.int64), np.empty(size, np.int64), np.empty(size)
        if jt is None:
            red_mod._scatter_surface(weight, c.indptr, c.indices, c.data, red.ravel(), pat.indptr, pat.indices, d,
                                     mr, mc, mv)
        else:
            red_mod._scatter_mapped(weight, c.indptr, c.indices, c.data, red, wm, *jt, pat.indptr, pat.indices, d,
                                    mr, mc, mv)
        return d

    def one_pass():
        d = np.zeros(pat.nnz)
        direct(weight, verts, nverts, upper, UPPER_BLOCK, red, wm, pat.indptr, pat.indices, d)
        return d

    a, b = one_pass(), two_stage()
    diff = np.abs(a - b).max() / max(np.abs(b).max(), 1e-300)
    times = {}
    for label, f in (("direct", one_pass), ("two-stage", two_stage)):
        ts = []
        for _ in range(200):
            t0 = time.perf_counter()
            f()
            ts.append(time.perf_counter() - t0)
        times[label] = float(np.median(ts))
    print(f"{name}: {len(nverts)} barrier stencils, pattern {pat.nnz} entries, {red.shape[1]} weight(s) per surface "
          f"coordinate; same matrix to {diff:.1e} (relative); direct {1e6 * times['direct']:.0f} us, two-stage "
          f"{1e6 * times['two-stage']:.0f} us")
    return times["direct"] / times["two-stage"]


def main() -> None:
    from ipcsim.demos.teddy_grasp import GraspParameters, teddy_grasp

    sim, _ = teddy_grasp(GraspParameters(mode="low"))
    ratio = compare("teddy grasp (low, step 80)", *capture(sim.solver, sim.state, 80, 0.02))
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import bench_small_scene
    from ipcsim.solvers.integrator_solvers import ContactParameters, FrictionParameters, ImplicitEulerSolver

    data = Path(__file__).resolve().parents[2] / "shared" / "data"
    model, state = bench_small_scene.teddy_on_ground(data)
    solver = ImplicitEulerSolver(model, ContactParameters(dhat=1e-3, kappa=1e4),
                                 friction=FrictionParameters(mu=1.0, eps_v=1e-3))
    small = compare("small-scene teddy (full space, step 25)", *capture(solver, state, 25, 0.02))
    print(f"direct/two-stage time ratio (small scene): {small:.2f}")
    print(f"direct/two-stage time ratio (grasp): {ratio:.2f}")


if __name__ == "__main__":
    main()
