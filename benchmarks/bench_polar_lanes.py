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
from ipcsim.energies.tet_blocks import deformation_gradient_into  # noqa: E402


@njit(cache=True)
def _tet_by_tet(x, tets, dm_inv, a, r_out):
    """The local step one tet at a time (the loop before the lanes)."""
    f, m, u = np.empty((3, 3)), np.empty((3, 3)), np.empty((3, 3))
    v, b, r = np.empty((3, 3)), np.empty((3, 3)), np.empty((3, 3))
    sigma = np.empty(3)
    for e in range(tets.shape[0]):
        deformation_gradient_into(x, tets, dm_inv, e, f)
        st._mul_into(f, a, e, m)
        st.best_rotation_into(m, r, u, sigma, v, b)
        for i in range(3):
            for j in range(3):
                r_out[e, i, j] = r[i, j]


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
    old, new = np.empty((len(tets), 3, 3)), np.empty((len(tets), 3, 3))
    lanes = st._local_step_kernel.serial
    with st.numba_threads(1):
        _tet_by_tet(x, tets, dm_inv, a, old)  # compile / load
        lanes(x, tets, dm_inv, a, new)
        st.energy_gradient(x, tets, dm_inv, a, w)
        same = old.tobytes() == new.tobytes()
        t_old, t_new, t_pass = [], [], []
        for _ in range(args.repeats):  # alternated, so that a change of load hits all three alike
            t_old += _times_ms(lambda: _tet_by_tet(x, tets, dm_inv, a, old), 1)
            t_new += _times_ms(lambda: lanes(x, tets, dm_inv, a, new), 1)
            t_pass += _times_ms(lambda: st.energy_gradient(x, tets, dm_inv, a, w), 1)
    m_old, m_new, m_pass = np.median(t_old), np.median(t_new), np.median(t_pass)
    print(f"{len(tets)} tets, {args.frames} frames solved first; one thread, medians of {args.repeats}")
    print(f"  local step, tet by tet: {m_old:8.2f} ms ({1e6 * m_old / len(tets):.0f} ns a tet)")
    print(f"  local step, lanes:      {m_new:8.2f} ms ({1e6 * m_new / len(tets):.0f} ns a tet)")
    print(f"  energy and gradient pass (lanes): {m_pass:8.2f} ms")
    print(f"  same rotations bit for bit: {same}")
    print(f"polar lanes speedup: {m_old / m_new:.2f}")


if __name__ == "__main__":
    main()
