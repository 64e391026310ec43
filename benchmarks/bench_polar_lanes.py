"""The face's PD local step, tet by tet against in lanes (``energies.polar_lanes``), side by side in one run.

On the face's targets at an expression frame (``FaceModel.blend``; positions: the rest shape, or the state after
``--frames`` frames of the woodbury solver), times, one thread, medians of ``--repeats`` alternated calls:

    tet by tet   a loop over ``shape_targeting.best_rotation_into`` (compiled here: the loop the package ran before
                 the lanes), F and M = F A^T per tet, then the scaled Newton polar iteration or the SVD
    lanes        ``shape_targeting._local_step_kernel.serial``: the same per tet, the iteration for LANES tets
                 in lockstep
    pass         ``shape_targeting.energy_gradient``: the face solver's energy-and-gradient pass (lanes)

and checks that both local steps give the same bits. The last line is ``polar lanes speedup: X`` (tet by tet
over lanes).

    python benchmarks/bench_polar_lanes.py [--size small|large] [--model face.npz] [--frames 3] [--repeats 9]
"""
from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np
from numba import njit

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_face  # noqa: E402  (load_model)

from ipcsim.energies import shape_targeting as st  # noqa: E402
from ipcsim.energies.tet_blocks import deformation_gradient_into, shape_gradients_into  # noqa: E402


@njit(cache=True)
def _tet_by_tet(x, tets, dm_inv, a, r_out):
    """The local step one tet at a time (the loop before the lanes)."""
    f, m, u = np.empty((3, 3)), np.empty((3, 3)), np.empty((3, 3))
    v, b, r = np.empty((3, 3)), np.empty((3, 3)), np.empty((3, 3))
    sigma = np.empty(3)
    for e in range(tets.shape[0]):
        deformation_gradient_into(x, tets, dm_inv, e, f)
        st.mul_target_into(f, a, e, m)
        st.best_rotation_into(m, r, u, sigma, v, b)
        for i in range(3):
            for j in range(3):
                r_out[e, i, j] = r[i, j]


@njit(cache=True)
def _pass_tet_by_tet(x, tets, dm_inv, a, w, e_out, g_out):
    """The energy-and-gradient pass one tet at a time (the loop before the lanes): the local step of
    ``_tet_by_tet``, then the residual, the energy and the gradient scattered in tet order."""
    f, m, u = np.empty((3, 3)), np.empty((3, 3)), np.empty((3, 3))
    v, b, r = np.empty((3, 3)), np.empty((3, 3)), np.empty((3, 3))
    sigma, d, g = np.empty(3), np.empty((3, 3)), np.empty((4, 3))
    g_out[:] = 0.0
    for e in range(tets.shape[0]):
        deformation_gradient_into(x, tets, dm_inv, e, f)
        st.mul_target_into(f, a, e, m)
        st.best_rotation_into(m, r, u, sigma, v, b)
        acc = 0.0
        for i in range(3):
            for j in range(3):
                dij = f[i, j] - (r[i, 0] * a[e, 0, j] + r[i, 1] * a[e, 1, j] + r[i, 2] * a[e, 2, j])
                d[i, j] = dij
                acc += dij * dij
        e_out[e] = w[e] * acc
        shape_gradients_into(dm_inv, e, g)
        c = 2.0 * w[e]
        for q in range(4):
            for i in range(3):
                g_out[tets[e, q], i] += c * (d[i, 0] * g[q, 0] + d[i, 1] * g[q, 1] + d[i, 2] * g[q, 2])


def _times_ms(fn, repeats: int) -> list[float]:
    """Wall times [ms] of repeats calls of fn."""
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(1e3 * (time.perf_counter() - t0))
    return times


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", default="small", choices=("small", "large"))
    ap.add_argument("--model", default=None, help="a face .npz (face.data.save_face) instead of --size")
    ap.add_argument("--frames", type=int, default=3, help="woodbury frames solved first (0: the rest shape)")
    ap.add_argument("--repeats", type=int, default=9)
    args = ap.parse_args(argv)
    from ipcsim.face import FacePDSolver

    model = bench_face.load_model(args.size, args.model, None)
    solver = FacePDSolver(model, "woodbury")
    for weights in model.sequence[:args.frames]:
        solver.frame(weights)
    a, _ = model.blend(model.sequence[args.frames])
    x, tets, dm_inv, a = st._arrays(solver.x, solver.tets, solver.dm_inv, a)
    w = np.ascontiguousarray(solver.w)
    t, same = _measure(x, tets, dm_inv, a, w, args.repeats)
    print(f"{len(tets)} tets, {args.frames} frames solved first; one thread, medians of {args.repeats}")
    print(f"  local step, tet by tet: {t['step_old']:8.2f} ms ({1e6 * t['step_old'] / len(tets):.0f} ns a tet)")
    print(f"  local step, lanes:      {t['step_new']:8.2f} ms ({1e6 * t['step_new'] / len(tets):.0f} ns a tet)")
    print(f"  energy and gradient pass, tet by tet: {t['pass_old']:8.2f} ms; lanes: {t['pass_new']:8.2f} ms "
          f"({t['pass_old'] / t['pass_new']:.2f}x)")
    print(f"  same rotations, energies and gradient bit for bit: {same}")
    print(f"polar lanes speedup: {t['step_old'] / t['step_new']:.2f}")


def _measure(x, tets, dm_inv, a, w, repeats: int) -> tuple[dict, bool]:
    """({step_old, step_new, pass_old, pass_new: median ms}, whether old and new agree bit for bit), one thread,
    the four calls alternated so that a change of load hits all alike."""
    m_t = len(tets)
    old, new = np.empty((m_t, 3, 3)), np.empty((m_t, 3, 3))
    e_old, e_new, g_old, g_new = np.empty(m_t), np.empty(m_t), np.empty_like(x), np.empty_like(x)
    calls = {"step_old": lambda: _tet_by_tet(x, tets, dm_inv, a, old),
             "step_new": lambda: st._local_step_kernel.serial(x, tets, dm_inv, a, new),
             "pass_old": lambda: _pass_tet_by_tet(x, tets, dm_inv, a, w, e_old, g_old),
             "pass_new": lambda: st._energy_gradient_fused(x, tets, dm_inv, a, w, e_new, g_new)}
    times = {k: [] for k in calls}
    with st.numba_threads(1):
        for fn in calls.values():  # compile / load
            fn()
        same = all(p.tobytes() == q.tobytes() for p, q in ((old, new), (e_old, e_new), (g_old, g_new)))
        for _ in range(repeats):
            for k, fn in calls.items():
                times[k] += _times_ms(fn, 1)
    return {k: float(np.median(v)) for k, v in times.items()}, same

if __name__ == "__main__":
    main()
