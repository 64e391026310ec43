"""What the commands of ``ipcsim`` share: the one-line user error, the options of the commands that simulate,
loading and checking a scene, running a built simulation or a face scene into OUT and its preview."""
from __future__ import annotations

import copy
import math
import os
import re
import sys
from pathlib import Path

EXIT_USAGE = 2


class UserError(Exception):
    """An error reported as one line on stderr with exit code 2."""


def positive(flag: str, value):
    """value if it is None or a finite number > 0, else UserError naming the flag."""
    if value is not None and not (value > 0.0 and math.isfinite(value)):
        raise UserError(f"{flag} must be a positive finite number of seconds, got {value}")
    return value


def simulate_arguments(p, default_out: str) -> None:
    """The options of the commands that simulate (run, demo): -o, --end-time, --dt, --resume, --volume, --quiet."""
    p.add_argument("-o", "--output", metavar="OUT", help=f"output directory (default {default_out})")
    p.add_argument("--end-time", type=float, metavar="T", help="simulated time [s] (default: the scene's)")
    p.add_argument("--dt", type=float, metavar="H", help="time step [s] (default: the scene's)")
    p.add_argument("--resume", action="store_true", help="continue from OUT/checkpoint.npz")
    p.add_argument("--volume", action="store_true", help="also write frames/volume_*.vtu (tets, J, body)")
    p.add_argument("--quiet", action="store_true", help="no progress bar, warnings or summary")


def load_simulation(path, end_time=None, dt=None, volume=None, render=None):
    """Load, override and build a scene file (.json or IPC .txt).

    Returns (Simulation, resolved scene dict). end_time, dt [s] replace the scene's time; volume, render
    (bool) replace output.volume / output.render; None keeps the scene's value. Raises ValueError
    (SceneError) for any problem in the file or its meshes.
    """
    from ..scene import load_scene

    return build_scene(load_scene(path), path, end_time, dt, volume, render)


def build_scene(scene, path, end_time=None, dt=None, volume=None, render=None):
    """``load_simulation`` after loading: override and build the loaded ``Scene``."""
    from ..face.scene import FaceScene
    from ..scene import Scene

    if isinstance(scene, FaceScene):
        raise UserError(f"{path}: a face scene ({scene.data['format']}) runs with 'ipcsim run' only")
    path = Path(path)
    data = copy.deepcopy(scene.data)
    changed = False
    for section, key, value in (("time", "end", end_time), ("time", "dt", dt), ("output", "volume", volume),
                                ("output", "render", render)):
        if value is not None and data.setdefault(section, {}).get(key) != value:
            data[section][key] = value
            changed = True
    if changed:  # the loaded data's mesh paths are already joined to the scene's folder (relative to the cwd)
        scene = Scene.from_dict(data, base_dir=Path("."), source=os.fspath(path))
    return scene.build(), scene.data


def _name_bodies(text: str, sim) -> str:
    """Append the scene's names to "body N" mentions in a sanity-check message."""
    names = list(sim.body_names) + list(sim.obstacle_names)

    def named(match):
        i = int(match.group(1))
        return f"{match.group(0)} ({names[i]})" if 0 <= i < len(names) else match.group(0)

    return re.sub(r"\bbody (\d+)", named, text)


def _check(sim, source: str, quiet: bool) -> None:
    """The pre-simulation sanity check (errors raise UserError naming the scene ``source``; warnings go to
    stderr unless quiet). The run is then told so (``RunOptions.scene_checked``): the solver's own first-step
    check would repeat this one."""
    from ..model.sanity import check_scene

    dhat = getattr(getattr(sim.solver, "contact", None), "dhat", None)
    report = check_scene(sim.model, sim.state, dhat, raise_on_error=False, warn=False)
    try:
        report.raise_if_errors()
    except ValueError as exc:
        raise UserError(f"{source}: {_name_bodies(str(exc), sim)}") from None
    if not quiet:
        for w in report.warnings:
            print(f"warning: {source}: {_name_bodies(w, sim)}", file=sys.stderr)


def execute(sim, data, args, source: str, demo: str | None = None) -> int:
    """Run a built simulation into args.output (or ./ipcsim-out/<name>), render if asked, print a summary.
    ``demo``: the demo's name, whose kernels are compiled up front on a cold cache (others: the common ones)."""
    from ..app.runner import RunOptions, run
    from ..app.warmup import prepare_kernels
    from ..io.output import default_output_dir, scene_fingerprint

    prepare_kernels(demo, quiet=args.quiet)  # before the check, which calls the broad phase
    _check(sim, source, args.quiet)
    out = Path(args.output) if args.output else default_output_dir(sim.name)
    opts = RunOptions.from_output(out, sim.output, resume=args.resume, progress=not args.quiet,
                                  fingerprint=scene_fingerprint(data), scene_checked=True)
    result = run(sim, opts, data)
    if not args.quiet:
        done = "resumed at step %d, " % result.first_step if result.first_step else ""
        print(f"{sim.name}: {done}{result.steps} steps of {sim.dt:g} s to t = {result.final_time:.6g} s in "
              f"{result.wall_seconds:.1f} s; {result.frames} frames in {out / 'frames'}")
        if result.unconverged_steps:
            bad = result.unconverged_steps
            print(f"warning: {len(bad)} step(s) stopped at max_newton_iterations before converging (first: step "
                  f"{bad[0]}); see the 'converged' column of stats.csv", file=sys.stderr)
    return render_preview(sim, out, args)


def render_preview(sim, out: Path, args) -> int:
    """Write OUT's preview when the scene's output asks for it (``render``); the command's exit status 0."""
    if sim.output.get("render", False):
        from ..app.render import render_run
        from ..app.viewer import write_viewer
        from ..scene.simulation import Simulation

        written = [*render_run(out, sim=sim if isinstance(sim, Simulation) else None), write_viewer(out)]
        if not args.quiet:
            print("preview: " + ", ".join(str(p) for p in written))
    return 0


def refuse_options(args, what: str, refused) -> None:
    """UserError naming the first of the simulate options ``refused`` (--dt, --end-time, --resume) given on the
    command line: a face scene runs frames, not time steps."""
    given = {"--dt": args.dt is not None, "--end-time": args.end_time is not None, "--resume": args.resume}
    for flag in refused:
        if given[flag]:
            raise UserError(f"{what} has no {flag} (frames, not time steps: see docs/face.md)")


def execute_face(scene, args) -> int:
    """Run a ``FaceScene`` into args.output (or ./ipcsim-out/<name>), render if asked, print a summary (the
    kernels compiled up front on a cold cache are the face demo's)."""
    from ..app.warmup import prepare_kernels
    from ..face.runner import frames_summary, run_face
    from ..io.output import default_output_dir

    args.face_run = True  # no --resume after Ctrl-C
    scene.check_device()  # a missing CuPy or GPU is reported before any kernel is compiled
    prepare_kernels("face", quiet=args.quiet)
    sim = scene.build()  # loads the face and checks its proxy before OUT is touched
    out = Path(args.output) if args.output else default_output_dir(sim.name)
    if out.exists() and not out.is_dir():
        raise UserError(f"output path {str(out)!r} exists and is not a directory")
    result = run_face(sim, out, scene.data, progress=not args.quiet)
    if not args.quiet:
        print(frames_summary(result, sim.name))
        if result.unconverged:
            print(f"warning: {len(result.unconverged)} frame(s) stopped before converging (first: sequence frame "
                  f"{result.unconverged[0]}); see the 'converged' column of stats.csv", file=sys.stderr)
    return render_preview(sim, out, args)
