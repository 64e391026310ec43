"""Inversion benchmark (issue #22 item 2): how many tets the demos and benchmark scenes invert, and what the
"prevent" step bound costs in Newton iterations, with every body's ``inversion`` option set to --inversion.

Scenes (--scenes, comma-separated):
    two-cubes, cube-slide, cubes-in-bowl, pinned-mat    the JSON demos (``ipcsim demo NAME``), their full length
    grasp-low, grasp-medium, grasp-full                 ``ipcsim demo teddy-grasp --mode M`` (the scene of
                                                        benchmarks/bench_grasp.py), --bubble-material NH or LCR
    small-scene                                         benchmarks/bench_small_scene.py's teddy drop (5 + 30 steps)
    mat-on-board                                        benchmarks/bench_mat_on_board.py's IPC scene, --mat-steps

Per scene one line: steps, Newton iterations (per step), unconverged steps, steps that end with an inverted tet,
the most tets inverted at the end of a step, the smallest det F at the end of any step, wall time. Newton
iterations are deterministic; wall times depend on the machine's load.

"allow" reproduces the solver before the option existed (only neo-Hookean tets bounded: their energy is +inf
when inverted, so they are bounded under either setting); "prevent" is the default. The option is forced on
every body by wrapping ``ModelBuilder.add_body`` (which the embedded and affine bodies go through).

    python benchmarks/bench_inversion.py --inversion prevent --scenes grasp-low --bubble-material LCR
"""
from __future__ import annotations

import argparse
import contextlib
import sys
import time
import warnings
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
DEMOS = ("two-cubes", "cube-slide", "cubes-in-bowl", "pinned-mat")


@contextlib.contextmanager
def forced_inversion(mode: str):
    """Every ``ModelBuilder.add_body`` call inside gets inversion=mode."""
    from ipcsim.model.builder import ModelBuilder

    original = ModelBuilder.add_body

    def add_body(self, *args, **kw):
        kw["inversion"] = mode
        return original(self, *args, **kw)

    ModelBuilder.add_body = add_body
    try:
        yield
    finally:
        ModelBuilder.add_body = original


def _simulation(name: str, args):
    """(model, state, solver, dt, steps, warmup) of a scene name."""
    if name in DEMOS:
        from ipcsim.demos.builtin import demo_path
        from ipcsim.scene.loader import load_scene

        sim = load_scene(demo_path(name)).build()
        return sim.model, sim.state, sim.solver, sim.dt, int(round(sim.end_time / sim.dt)), 0
    if name.startswith("grasp-"):
        from ipcsim.demos.teddy_grasp import GraspParameters, teddy_grasp

        p = GraspParameters(mode=name.split("-", 1)[1], bubble_material=args.bubble_material)
        sim, _ = teddy_grasp(p)
        return sim.model, sim.state, sim.solver, sim.dt, int(round(sim.end_time / sim.dt)), 0
    if name == "small-scene":
        sys.path.insert(0, str(HERE))
        from bench_small_scene import teddy_on_ground

        from ipcsim.solvers.integrator_solvers import ContactParameters, FrictionParameters, ImplicitEulerSolver

        model, state = teddy_on_ground(args.data)
        solver = ImplicitEulerSolver(model, ContactParameters(dhat=1e-3, kappa=1e4),
                                     friction=FrictionParameters(mu=1.0, eps_v=1e-3))
        return model, state, solver, 0.02, 30, 5
    if name == "mat-on-board":
        sys.path.insert(0, str(HERE))
        from bench_mat_on_board import SCRIPT

        from ipcsim.scene.loader import load_scene

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            sim = load_scene(SCRIPT).build()
        return sim.model, sim.state, sim.solver, sim.dt, args.mat_steps, 0
    raise SystemExit(f"error: unknown scene {name!r}")


def run(name: str, args) -> str:
    """Run one scene under the forced option; returns its summary line."""
    with forced_inversion(args.inversion):
        model, state, solver, dt, steps, warmup = _simulation(name, args)
    for _ in range(warmup):
        new = state.copy()
        solver.step(state, new, None, dt)
        state = new
    steps = min(steps, args.steps or steps)
    its, unconverged, inverted_steps, most, worst = [], 0, 0, 0, np.inf
    t0 = time.perf_counter()
    for k in range(steps):
        new = state.copy()
        st = solver.step(state, new, None, dt)
        state = new
        its.append(st.newton_iterations)
        unconverged += not st.converged
        inverted_steps += st.n_inverted > 0
        most, worst = max(most, st.n_inverted), min(worst, st.min_volume_ratio)
        if args.verbose:
            print(f"  step {k + 1}: {st.newton_iterations} its, converged {st.converged}, {st.n_inverted} inverted, "
                  f"min det F {st.min_volume_ratio:.3g}", flush=True)
    wall = time.perf_counter() - t0
    label = name + (f" ({args.bubble_material} bubbles)" if name.startswith("grasp-") else "")
    return (f"{label}, inversion {args.inversion}: {steps} steps, {sum(its)} Newton iterations "
            f"({sum(its) / steps:.2f} per step, max {max(its)}), {unconverged} unconverged, {inverted_steps} steps "
            f"end inverted (at most {most} tets), min det F {worst:.3g}; {len(model.tets)} tets; wall {wall:.1f} s")


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--inversion", choices=("prevent", "allow"), default="prevent")
    ap.add_argument("--scenes", default="two-cubes,cube-slide,cubes-in-bowl,pinned-mat,grasp-low")
    ap.add_argument("--bubble-material", default="NH", help="grasp scenes: the bubbles' material (NH or LCR)")
    ap.add_argument("--data", type=Path, default=HERE.parents[1] / "shared" / "data")
    ap.add_argument("--mat-steps", type=int, default=30, help="mat-on-board: steps of 0.025 s (default 30)")
    ap.add_argument("--steps", type=int, default=0, help="run at most this many steps of each scene (0: all)")
    ap.add_argument("--verbose", action="store_true", help="one line per step")
    args = ap.parse_args(argv)
    for name in args.scenes.split(","):
        print(run(name.strip(), args), flush=True)


if __name__ == "__main__":
    main()
