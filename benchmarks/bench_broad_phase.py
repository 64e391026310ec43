"""Broad-phase timings: ipcsim's cell join vs ipctk's broad phases.

Scenes: two 100 x 100-vertex unit-square sheets at z = 0 and z = 0.5e-3 (20,000 vertices), d-hat = 1e-3;
and (when ../shared/data is there) bunny.msh on a copy of itself, as in bench_contact.py.
Prints timings (best and median of several runs, alternating the methods); asserts nothing.
Run: python benchmarks/bench_broad_phase.py [n]   (n: sheet resolution, default 100)
"""
from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import numpy as np

from ipcsim.contact.broad_phase import build_candidates
from ipcsim.geometry import CollisionMesh


def sheet(n: int, z: float):
    """A regular n x n-vertex triangulated unit square at height z: (vertices (n*n, 3), faces)."""
    g = np.linspace(0.0, 1.0, n)
    X, Y = np.meshgrid(g, g, indexing="ij")
    V = np.stack([X.ravel(), Y.ravel(), np.full(n * n, z)], axis=1)
    idx = np.arange(n * n).reshape(n, n)
    a, b, c, d = idx[:-1, :-1].ravel(), idx[1:, :-1].ravel(), idx[1:, 1:].ravel(), idx[:-1, 1:].ravel()
    F = np.concatenate([np.stack([a, b, c], 1), np.stack([a, c, d], 1)])
    return V, F


def two_sheets(n: int = 100, gap: float = 0.5e-3) -> CollisionMesh:
    """Two parallel n x n-vertex unit sheets at z = 0 and z = gap [m], bodies 0 and 1."""
    V0, F0 = sheet(n, 0.0)
    V1, F1 = sheet(n, gap)
    return CollisionMesh.concatenate(
        [CollisionMesh.from_triangle_mesh(V0, F0, body=0), CollisionMesh.from_triangle_mesh(V1, F1, body=1)]
    )


def round_robin(fns: dict, reps: int = 9) -> dict:
    """Run each callable ``reps`` times, alternating between them (the machine may be shared, so
    the load changes over time). Returns {name: (best wall [s], median wall [s], best CPU [s])}."""
    for fn in fns.values():
        fn()  # warm-up (JIT compile / load from cache)
    wall = {k: [] for k in fns}
    cpu = {k: [] for k in fns}
    for _ in range(reps):
        for k, fn in fns.items():
            t, c = time.perf_counter(), time.process_time()
            fn()
            wall[k].append(time.perf_counter() - t)
            cpu[k].append(time.process_time() - c)
    return {k: (min(wall[k]), float(np.median(wall[k])), min(cpu[k])) for k in fns}


def bunnies():
    """bench_contact's bunny-on-bunny scene, or None without the shared data."""
    data = Path(__file__).resolve().parents[1].parent / "shared" / "data"
    if not (data / "ipc").is_dir():
        return None
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from bench_contact import bunny_scene

    mesh, x, _ = bunny_scene(data)
    return mesh


def main() -> None:
    """Print the timings (argument: sheet resolution n, default 100)."""
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 100
    scene("two sheets", two_sheets(n), 1e-3)
    mesh = bunnies()
    if mesh is not None:
        scene("bunny on bunny", mesh, 1e-3)


def scene(name: str, mesh: CollisionMesh, dhat: float) -> None:
    """Time the broad phases on one scene (static boxes inflated by dhat, and a short trajectory)."""
    x = mesh.rest_positions
    x1 = x + np.array([0.0, 0.0, -0.2e-3])
    print(f"\n{name}: {mesh.n_vertices} vertices, {mesh.n_edges} edges, {mesh.n_faces} faces; "
          f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}")
    fns = {
        "ipcsim cell join, r = dhat": lambda: build_candidates(mesh, x, None, dhat),
        "ipcsim cell join, r = dhat/2": lambda: build_candidates(mesh, x, None, 0.5 * dhat),
        "ipcsim cell join, trajectory, r = dhat": lambda: build_candidates(mesh, x, x1, dhat),
    }
    c = build_candidates(mesh, x, None, dhat)
    print(f"ipcsim candidates: vf={len(c.vf)} ee={len(c.ee)}")
    try:
        import ipctk
    except ImportError:
        ipctk = None
        print("ipctk not installed: no comparison")
    if ipctk is not None:
        cm = ipctk.CollisionMesh(x, mesh.edges.astype(np.int32), mesh.faces.astype(np.int32))

        def ipctk_build(make, r):
            def run():
                cand = ipctk.Candidates()
                if make is None:
                    cand.build(cm, x, r)
                else:
                    cand.build(cm, x, r, make())
                return cand
            return run

        cand = ipctk_build(None, dhat)()
        print(f"ipctk candidates:  fv={len(cand.fv_candidates)} ee={len(cand.ee_candidates)}")
        for kind, make in [("default", None), ("LBVH", ipctk.LBVH), ("HashGrid", ipctk.HashGrid)]:
            fns[f"ipctk Candidates.build {kind}, r = dhat"] = ipctk_build(make, dhat)

        def collisions():
            col = ipctk.NormalCollisions()
            col.build(cm, x, dhat)
            return col

        fns["ipctk NormalCollisions.build"] = collisions
    for label, (best, median, cpu) in round_robin(fns).items():
        print(f"{label:45s} best {best * 1e3:7.1f} ms   median {median * 1e3:7.1f} ms   CPU {cpu * 1e3:7.1f} ms")


if __name__ == "__main__":
    main()
