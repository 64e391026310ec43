"""Small-scene benchmark (issue #11): wall time per Newton iteration, with its split, on the Embedded IPC
paper's high-resolution teddy (../shared/data/meshes/teddy/teddy.vtk: 410 vertices, 1,207 tets; linear
corotated, E = 5e4 Pa, nu = 0.45, rho = 1e3 kg/m^3) dropped on a ground with friction 1, h = 0.02 s,
dhat = 1e-3 m, kappa = 1e4 Pa (the grasp's parameters, 004 §IV-A).

The teddy starts 2 mm above the ground at rest and falls; the run takes --warmup steps (Numba cache loading,
first contact), then --steps measured steps. Per measured step the StepStats time split (contact = active set
and barrier/friction derivatives, linear solve = H_ff assembly + factorisation + solve, CCD = trajectory broad
phase + step bound, line search = energy evaluations, other = elastic derivatives, friction lagging, broad
phases, bookkeeping) is summed and divided by the Newton iterations. Small scenes are where the real-time goal
of Embedded IPC lives; the last line is

    small-scene newton iteration: X ms       (target: 3 ms or less on this 2-core machine)

Usage: python benchmarks/bench_small_scene.py [--data ../shared/data] [--steps 30] [--warmup 5]
"""
from __future__ import annotations

import argparse
import time
from pathlib import Path

import inspect

import numpy as np

from ipcsim.geometry.mesh_io import load_tet_mesh
from ipcsim.model import ModelBuilder
from ipcsim.solvers.integrator_solvers import ContactParameters, FrictionParameters, ImplicitEulerSolver

SPLIT = ("contact", "linear_solve", "ccd", "line_search", "other")


def teddy_on_ground(data: Path):
    """(model, state): the teddy at rest 2 mm above a ground y >= 0."""
    v, t = load_tet_mesh(data / "meshes" / "teddy" / "teddy.vtk")
    b = ModelBuilder()
    b.add_ground(0.0)
    b.add_body(v, t, translation=(0.0, 2e-3 - float(v[:, 1].min()), 0.0), material="LCR", density=1e3,
               youngs_modulus=5e4, poisson_ratio=0.45)
    return b.finalize()


def run(data: Path, steps: int, warmup: int, h: float = 0.02) -> float:
    model, state = teddy_on_ground(data)
    solver = ImplicitEulerSolver(model, ContactParameters(dhat=1e-3, kappa=1e4),
                                 friction=FrictionParameters(mu=1.0, eps_v=1e-3))
    # step(state_in, state_out, control, dt); the code before issue #11 had step(state_in, state_out, dt), kept
    # here so that the old and the new code can be timed back to back with this same script
    with_control = "control" in inspect.signature(solver.step).parameters

    def step(state_in, state_out):
        return solver.step(state_in, state_out, None, h) if with_control else solver.step(state_in, state_out, h)

    print(f"teddy: {model.n_vertices} vertices, {len(model.tets)} tets, "
          f"{model.collision_mesh.n_vertices} surface vertices; h = {h} s, mu = 1, kappa = 1e4 Pa")
    for _ in range(warmup):
        new = state.copy()
        step(state, new)
        state = new
    split = dict.fromkeys(SPLIT, 0.0)
    iters, wall, contacts = 0, 0.0, []
    for _ in range(steps):
        new = state.copy()
        t0 = time.perf_counter()
        st = step(state, new)
        wall += time.perf_counter() - t0
        state = new
        iters += st.newton_iterations
        contacts.append(st.n_contacts)
        for k in SPLIT:
            split[k] += getattr(st, "time_" + k)
    per = wall / iters
    print(f"{steps} steps: {iters} Newton iterations ({iters / steps:.1f} per step), {np.mean(contacts):.0f} "
          f"contacts on average, {wall:.3f} s ({wall / steps * 1e3:.1f} ms per step)")
    print("per iteration: " + ", ".join(f"{k} {split[k] / iters * 1e3:.2f} ms" for k in SPLIT))
    return per


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=Path(__file__).resolve().parents[2] / "shared" / "data")
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--warmup", type=int, default=5)
    args = ap.parse_args(argv)
    per = run(args.data, args.steps, args.warmup)
    print(f"small-scene newton iteration: {per * 1e3:.2f} ms")


if __name__ == "__main__":
    main()
