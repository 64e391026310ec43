"""The `ipcsim` command line."""
from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np


def _demo(args) -> int:
    from .contact.intersection import has_intersections
    from .demo import DEFAULT_SCENE, SCENES
    from .energies.surface_check import count_inverted_tets
    from .io_frames import write_ply
    from .solvers.implicit_euler import ContactParameters, ImplicitEulerSolver

    name = args.name or DEFAULT_SCENE
    if name not in SCENES:
        raise _UserError(f"unknown demo {name!r}; choose from {', '.join(sorted(SCENES))}")
    for flag, value in (("--dt", args.dt), ("--end-time", args.end_time)):
        if not (value > 0.0 and np.isfinite(value)):
            raise _UserError(f"{flag} must be a positive number of seconds, got {value}")
    model, state = SCENES[name]()
    out = args.output or os.path.join("ipcsim-out", name)
    os.makedirs(os.path.join(out, "frames"), exist_ok=True)
    mesh = model.collision_mesh
    solver = ImplicitEulerSolver(model, ContactParameters(dhat=1e-3, kappa=1e4))
    dt = args.dt
    n_steps = int(round(args.end_time / dt))
    write_ply(os.path.join(out, "frames", "surface_00000.ply"), mesh.surface_positions(state.x), mesh.faces)
    print(f"demo {name}: {model.n_vertices} vertices, {len(model.tets)} tets, {n_steps} steps of {dt} s -> {out}")
    t0 = time.perf_counter()
    for k in range(1, n_steps + 1):
        new = state.copy()
        st = solver.step(state, new, dt)
        state = new
        write_ply(os.path.join(out, "frames", f"surface_{k:05d}.ply"), mesh.surface_positions(state.x), mesh.faces)
        if not args.quiet:
            print(f"  step {k:4d}  t={state.t:.3f} s  newton={st.newton_iterations:3d}  "
                  f"line-search={st.line_search_steps:3d}  contacts={st.n_contacts:5d}  "
                  f"lowest y={state.x[:, 1].min():+.5f} m", flush=True)
        xs = mesh.surface_positions(state.x)
        if has_intersections(mesh, xs):
            raise _UserError(f"step {k}: surfaces intersect (this is a bug)")
        inverted = count_inverted_tets(state.x, model.tets)
        if inverted:
            raise _UserError(f"step {k}: {inverted} tets inverted (this is a bug)")
    print(f"done in {time.perf_counter() - t0:.1f} s: every frame intersection-free and inversion-free "
          f"(lowest point y = {state.x[:, 1].min():.5f} m, ground at 0)")
    return 0


class _UserError(Exception):
    """An error reported as one line on stderr with exit code 2."""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="ipcsim", description="Incremental Potential Contact simulation.")
    parser.add_argument("--debug", action="store_true", help="show tracebacks")
    sub = parser.add_subparsers(dest="command", required=True)
    demo = sub.add_parser("demo", help="run a built-in scene")
    demo.add_argument("name", nargs="?", help="scene name (default: two-cubes)")
    demo.add_argument("-o", "--output", help="output directory (default ./ipcsim-out/<name>)")
    demo.add_argument("--end-time", type=float, default=0.5, help="simulated time [s] (default 0.5)")
    demo.add_argument("--dt", type=float, default=0.01, help="time step [s] (default 0.01)")
    demo.add_argument("--quiet", action="store_true", help="no per-step lines")
    demo.set_defaults(func=_demo)
    return parser


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except (_UserError, ValueError, OSError) as exc:
        if args.debug:
            raise
        print(f"error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
