"""Contact-core benchmark: ipcsim vs ipctk, side by side in one process (ratios = ipcsim time / ipctk time).

Scenes: two parallel 100x100-vertex sheets 0.5*dhat apart (dhat = 1e-3, 20,000 vertices), and bunny.msh against
a copy of itself 0.5*dhat above its top. Ops: build the active set (broad phase + classification), barrier
gradient, PSD-projected barrier Hessian (sparse), collision-free step size with additive CCD (broad phase
included). Each op: one warm-up call (Numba compile; reported as "first call", in a fresh process it is the cost of
loading the Numba cache or compiling), then the median of several runs, ours and ipctk's alternating with a short
pause before each run. Two kinds of run per op (``timed_pair``): steady, a batch of back-to-back calls (the ratio
tracked), and single, one call right after the pause (printed too).
The last line is `worst ratio: X`, the largest of the four ratios on the sheets.

Usage: python benchmarks/bench_contact.py [--repeats N] [--data ../shared/data]
"""
from __future__ import annotations

import argparse
import math
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

import ipctk
from ipcsim.contact.barrier_potential import barrier_potential_gradient, barrier_potential_hessian
from ipcsim.contact.broad_phase import build_candidates
from ipcsim.contact.ccd import compute_collision_free_stepsize
from ipcsim.contact.collisions import build_collisions
from ipcsim.geometry import CollisionMesh
from ipcsim.geometry.mesh_io import read_mesh

DHAT = 1e-3


def grid_sheet(n: int, z: float) -> tuple[np.ndarray, np.ndarray]:
    """An n x n vertex grid on the unit square at height z, split into 2 (n-1)^2 triangles."""
    s = np.linspace(0.0, 1.0, n)
    gx, gy = np.meshgrid(s, s, indexing="ij")
    v = np.stack([gx.ravel(), gy.ravel(), np.full(n * n, z)], 1)
    idx = np.arange(n * n).reshape(n, n)
    a, b, c, d = idx[:-1, :-1].ravel(), idx[1:, :-1].ravel(), idx[1:, 1:].ravel(), idx[:-1, 1:].ravel()
    f = np.vstack([np.stack([a, b, c], 1), np.stack([a, c, d], 1)])
    return v, f


def sheets_scene():
    v0, f0 = grid_sheet(100, 0.0)
    v1, f1 = grid_sheet(100, 0.5 * DHAT)
    mesh = CollisionMesh.concatenate([CollisionMesh.from_triangle_mesh(v0, f0, body=0),
                                      CollisionMesh.from_triangle_mesh(v1, f1, body=1)])
    x = mesh.rest_positions.copy()
    disp = np.zeros_like(x)
    disp[len(v0):, 2] = -2.0 * DHAT  # the top sheet moves down through the other: contact at t = 1/4
    return mesh, x, x + disp


def bunny_scene(data: Path, overlapping: bool = False):
    """bunny.msh and a copy 0.5*dhat above: stacked on its top (default) or shifted up by 0.5*dhat (overlapping).

    The overlapping copy intersects the original along its silhouette but puts every surface vertex 0.5*dhat
    from its twin: a dense active set, as for the sheets.
    """
    pts, cells = read_mesh(data / "ipc" / "input" / "tetMeshes" / "bunny.msh")
    single = CollisionMesh.from_tet_mesh(pts, cells["tetra"])
    vs = single.rest_positions
    lift = 0.5 * DHAT if overlapping else vs[:, 1].max() - vs[:, 1].min() + 0.5 * DHAT
    top = CollisionMesh.from_tet_mesh(pts + np.array([0.0, lift, 0.0]), cells["tetra"], body=1)
    mesh = CollisionMesh.concatenate([single, top])
    x = mesh.rest_positions.copy()
    disp = np.zeros_like(x)
    disp[single.n_vertices:, 1] = -2.0 * DHAT
    return mesh, x, x + disp


PAUSE = 0.05  # [s] idle time between runs: ipctk's TBB workers spin for a while after a parallel call and
# would otherwise steal a core from whichever call comes next on a 2-core machine.
MIN_BATCH = 0.2  # [s] a steady-state run is a batch of back-to-back calls lasting at least this (``timed_pair``)


def _once(fn, batch: int = 1) -> float:
    """Seconds per call of fn, over ``batch`` back-to-back calls after the pause."""
    time.sleep(PAUSE)
    t0 = time.perf_counter()
    for _ in range(batch):
        fn()
    return (time.perf_counter() - t0) / batch


def timed_pair(ours, theirs, repeats):
    """Timings [s per call] of one op, ours and ipctk's alternating, medians of ``repeats`` runs each:
    (first call of ours, steady ours, steady theirs, single ours, single theirs).

    steady: each run is a batch of k back-to-back calls (k from one call of each after the warm-up, the same k
    for both libraries, at least MIN_BATCH long), as a solver calls them; single: each run is one call right
    after the pause. A single call of a two-threaded op also pays for waking the idle second virtual CPU
    (up to several ms on the development machine, for either library), so single-call times of ops of a few
    ms are bimodal; the steady ratio is the one tracked.
    """
    first = _once(ours)
    _once(theirs)
    single = min(_once(ours), _once(theirs))
    batch = max(1, min(1000, math.ceil(MIN_BATCH / max(single, 1e-7))))
    steady_ours, steady_theirs, single_ours, single_theirs = [], [], [], []
    for _ in range(repeats):
        steady_ours.append(_once(ours, batch))
        steady_theirs.append(_once(theirs, batch))
        single_ours.append(_once(ours))
        single_theirs.append(_once(theirs))
    med = statistics.median
    return first, med(steady_ours), med(steady_theirs), med(single_ours), med(single_theirs)


def bench(name, mesh, x0, x1, repeats):
    V = np.asfortranarray(x0)
    cm = ipctk.CollisionMesh(V, np.asfortranarray(mesh.edges.astype(np.int32)),
                             np.asfortranarray(mesh.faces.astype(np.int32)))
    bp = ipctk.BarrierPotential(DHAT, 1.0)
    tk_coll = ipctk.NormalCollisions()
    tk_coll.build(cm, V, DHAT)
    ours = {}

    def our_build():  # boxes inflated by dhat / 2, as ipctk's NormalCollisions.build (pairs closer than dhat)
        cands = build_candidates(mesh, x0, None, inflation_radius=0.5 * DHAT)
        ours["c"] = build_collisions(mesh, x0, DHAT, candidates=cands)

    our_build()
    coll = ours["c"]
    ops = [
        ("build active set", our_build, lambda: ipctk.NormalCollisions().build(cm, V, DHAT)),
        ("barrier gradient", lambda: barrier_potential_gradient(coll, mesh, x0),
         lambda: bp.gradient(tk_coll, cm, V)),
        ("PSD Hessian", lambda: barrier_potential_hessian(coll, mesh, x0, project="analytic"),
         lambda: bp.hessian(tk_coll, cm, V, project_hessian_to_psd=ipctk.PSDProjectionMethod.CLAMP)),
        ("CCD step (ACCD)", lambda: compute_collision_free_stepsize(mesh, x0, x1),
         lambda: ipctk.compute_collision_free_stepsize(cm, V, np.asfortranarray(x1),
                                                       narrow_phase_ccd=ipctk.AdditiveCCD())),
    ]
    print(f"\n== {name}: {mesh.n_vertices} vertices, {mesh.n_faces} faces, {mesh.n_edges} edges; "
          f"active set: ipcsim {len(coll)} stencils, ipctk {len(tk_coll)}")
    print(f"{'':<20}{'steady (batches of calls)':>33}{'':>16}{'single call after a pause':>35}")
    print(f"{'op':<20}{'ipcsim [ms]':>12}{'ipctk [ms]':>12}{'ratio':>9}{'first call [s]':>16}"
          f"{'ipcsim [ms]':>14}{'ipctk [ms]':>12}{'ratio':>9}")
    ratios = {}
    for op, ours_fn, theirs_fn in ops:
        first, t_ours, t_tk, s_ours, s_tk = timed_pair(ours_fn, theirs_fn, repeats)
        ratios[op] = t_ours / t_tk
        print(f"{op:<20}{1e3 * t_ours:>12.4g}{1e3 * t_tk:>12.4g}{ratios[op]:>9.2f}{first:>16.3f}"
              f"{1e3 * s_ours:>14.4g}{1e3 * s_tk:>12.4g}{s_ours / s_tk:>9.2f}")
    alpha = compute_collision_free_stepsize(mesh, x0, x1)
    alpha_tk = ipctk.compute_collision_free_stepsize(cm, V, np.asfortranarray(x1), narrow_phase_ccd=ipctk.AdditiveCCD())
    print(f"step size: ipcsim {alpha:.6f}, ipctk ACCD {alpha_tk:.6f}")
    return ratios


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    default_data = Path(os.environ.get("IPCSIM_SHARED_DATA", Path(__file__).resolve().parents[1].parent / "shared" / "data"))
    parser.add_argument("--data", type=Path, default=default_data)
    args = parser.parse_args(argv)
    print(f"threads: ipctk {ipctk.get_num_threads()}, numba {__import__('numba').get_num_threads()}")
    sheet = bench("two sheets", *sheets_scene(), args.repeats)
    if (args.data / "ipc").is_dir():
        stacked = bench("bunny stacked 0.5*dhat above its copy", *bunny_scene(args.data), args.repeats)
        print(f"\nworst ratio on the stacked bunny: {max(stacked.values()):.2f}")
        bench("bunny and its copy shifted up 0.5*dhat (overlapping)", *bunny_scene(args.data, True), args.repeats)
    else:
        print(f"(bunny scene skipped: no data at {args.data})", file=sys.stderr)
    print(f"worst ratio: {max(sheet.values()):.2f}")


if __name__ == "__main__":
    main()
