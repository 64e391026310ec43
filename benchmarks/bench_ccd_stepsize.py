"""Collision-free step size on two 100 x 100 vertex sheets (one moving onto the other): ipcsim vs ipctk.

Run: python benchmarks/bench_ccd_stepsize.py [n] [repeats]. Prints the best-of-repeats wall times [s] of
ipctk.compute_collision_free_stepsize (AdditiveCCD narrow phase, its default broad phase), ipcsim's
narrow phase alone (candidates given), ipcsim's broad phase alone and both together, and the step sizes.
"""
from __future__ import annotations

import sys
import time

import numpy as np

import ipctk
from ipcsim.contact.ccd import compute_collision_free_stepsize
from ipcsim.contact.broad_phase import build_candidates
from ipcsim.geometry.collision_mesh import CollisionMesh


def sheet(n, size=1.0, y=0.0):
    s = np.linspace(-size / 2, size / 2, n)
    X, Z = np.meshgrid(s, s, indexing="ij")
    v = np.stack([X.ravel(), np.full(n * n, y), Z.ravel()], axis=1)
    idx = np.arange(n * n).reshape(n, n)
    a, b, c, d = idx[:-1, :-1].ravel(), idx[1:, :-1].ravel(), idx[1:, 1:].ravel(), idx[:-1, 1:].ravel()
    return v, np.concatenate([np.stack([a, b, c], 1), np.stack([a, c, d], 1)])


def scene(n, hard=False):
    """Parallel sheets 0.5e-3 apart, the top one moving 2e-3 down (contact at t = 1/4), as in
    bench_contact.py; hard=True: 2 grid spacings apart, falling 4 spacings with noisy displacements."""
    rng = np.random.default_rng(0)
    v, f = sheet(n)
    h = 1.0 / (n - 1)  # grid spacing
    gap, fall, noise = (2.0 * h, 4.0 * h, 0.1 * h) if hard else (0.5e-3, 2e-3, 0.0)
    bottom = CollisionMesh.from_triangle_mesh(v, f, body=0)
    top = CollisionMesh.from_triangle_mesh(v + [0.0, gap, 0.0], f, body=1)
    mesh = CollisionMesh.concatenate([bottom, top])
    x0 = mesh.rest_positions
    x1 = x0 + rng.normal(0.0, noise, x0.shape)
    x1[bottom.n_vertices:, 1] -= fall
    return mesh, x0, x1


def best_time(fn, repeats):
    best, out = np.inf, None
    for _ in range(repeats):
        t = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t)
    return best, out


def run(n, repeats, hard):
    mesh, x0, x1 = scene(n, hard)
    im = ipctk.CollisionMesh(np.asfortranarray(x0), np.asfortranarray(mesh.edges.astype(np.int32)),
                             np.asfortranarray(mesh.faces.astype(np.int32)))
    f0, f1 = np.asfortranarray(x0), np.asfortranarray(x1)
    accd = ipctk.AdditiveCCD()
    compute_collision_free_stepsize(mesh, x0, x1)  # compile
    t_ipc, a_ipc = best_time(lambda: ipctk.compute_collision_free_stepsize(im, f0, f1, narrow_phase_ccd=accd), repeats)
    t_bp, cand = best_time(lambda: build_candidates(mesh, x0, x1), repeats)
    t_np, a_np = best_time(lambda: compute_collision_free_stepsize(mesh, x0, x1, cand), repeats)
    t_all, a_all = best_time(lambda: compute_collision_free_stepsize(mesh, x0, x1), repeats)
    print(f"{'noisy fall' if hard else 'parallel sheets'} {n}x{n}: {mesh.n_vertices} vertices, {mesh.n_faces} faces, "
          f"{len(cand)} candidates (vf {len(cand.vf)}, ee {len(cand.ee)})")
    print(f"  ipctk AdditiveCCD step size      {t_ipc:.4f} s  alpha = {a_ipc:.6f}")
    print(f"  ipcsim narrow phase (candidates)  {t_np:.4f} s  alpha = {a_np:.6f}")
    print(f"  ipcsim broad phase                {t_bp:.4f} s")
    print(f"  ipcsim broad + narrow phase       {t_all:.4f} s  alpha = {a_all:.6f}")


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 100
    repeats = int(sys.argv[2]) if len(sys.argv) > 2 else 7
    run(n, repeats, hard=False)
    run(n, repeats, hard=True)


if __name__ == "__main__":
    main()
