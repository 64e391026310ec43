"""The ``ipcsim`` command line: ``run``, ``demo``, ``sweep``, ``render``, ``view``, ``plot``, ``export``, ``info``
(``ipcsim --help``).

Errors in the user's input (scene files, meshes, parameters, output directories) are reported as one line
``error: ...`` on stderr with exit status 2, and nothing but complete files is written: the scene is loaded,
built and checked before the output directory is touched. ``--debug`` shows the traceback instead.
"""
from __future__ import annotations

import argparse
import copy
import json
import math
import os
import re
import sys
import warnings
from pathlib import Path

EXIT_USAGE = 2


class _UserError(Exception):
    """An error reported as one line on stderr with exit code 2."""


# ----------------------------------------------------------------------------------------------- helpers
def _positive(flag: str, value):
    """value if it is None or a finite number > 0, else _UserError naming the flag."""
    if value is not None and not (value > 0.0 and math.isfinite(value)):
        raise _UserError(f"{flag} must be a positive finite number of seconds, got {value}")
    return value


def load_simulation(path, end_time=None, dt=None, volume=None, render=None):
    """Load, override and build a scene file (.json or IPC .txt).

    Returns (Simulation, resolved scene dict). end_time, dt [s] replace the scene's time; volume, render
    (bool) replace output.volume / output.render; None keeps the scene's value. Raises ValueError
    (SceneError) for any problem in the file or its meshes.
    """
    from ..scene import load_scene

    return _build_scene(load_scene(path), path, end_time, dt, volume, render)


def _build_scene(scene, path, end_time=None, dt=None, volume=None, render=None):
    """``load_simulation`` after loading: override and build the loaded ``Scene``."""
    from ..face.scene import FaceScene
    from ..scene import Scene

    if isinstance(scene, FaceScene):
        raise _UserError(f"{path}: a face scene ({scene.data['format']}) runs with 'ipcsim run' only")
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
    """The pre-simulation sanity check (errors raise _UserError naming the scene ``source``; warnings go to
    stderr unless quiet). The run is then told so (``RunOptions.scene_checked``): the solver's own first-step
    check would repeat this one."""
    from ..model.sanity import check_scene

    dhat = getattr(getattr(sim.solver, "contact", None), "dhat", None)
    report = check_scene(sim.model, sim.state, dhat, raise_on_error=False, warn=False)
    try:
        report.raise_if_errors()
    except ValueError as exc:
        raise _UserError(f"{source}: {_name_bodies(str(exc), sim)}") from None
    if not quiet:
        for w in report.warnings:
            print(f"warning: {source}: {_name_bodies(w, sim)}", file=sys.stderr)


def _execute(sim, data, args, source: str, demo: str | None = None) -> int:
    """Run a built simulation into args.output (or ./ipcsim-out/<name>), render if asked, print a summary.
    ``demo``: the demo's name, whose kernels are compiled up front on a cold cache (others: the common ones)."""
    from ..app.runner import RunOptions, run
    from ..io.output import default_output_dir, scene_fingerprint
    from ..app.warmup import prepare_kernels

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
    return _render_preview(sim, out, args)


def _render_preview(sim, out: Path, args) -> int:
    """Write OUT's preview when the scene's output asks for it (``render``); the command's exit status 0."""
    if sim.output.get("render", False):
        from ..app.render import render_run
        from ..scene.simulation import Simulation
        from ..app.viewer import write_viewer

        written = [*render_run(out, sim=sim if isinstance(sim, Simulation) else None), write_viewer(out)]
        if not args.quiet:
            print("preview: " + ", ".join(str(p) for p in written))
    return 0


# ----------------------------------------------------------------------------------------------- commands
def _run(args) -> int:
    from ..face.scene import FaceScene
    from ..scene import load_scene

    _positive("--dt", args.dt)
    _positive("--end-time", args.end_time)
    demo = _demo_scene(args.scene)
    if demo is not None and demo.get("demo") == "teddy-grasp":  # an ``ipcsim demo teddy-grasp`` run's scene.json
        return _teddy_grasp(args, (args.scene, demo))
    scene = load_scene(args.scene)
    if isinstance(scene, FaceScene):
        _face_options(args, f"{args.scene}: a face scene", ("--dt", "--end-time", "--resume"))
        for key, flag in (("volume", args.volume), ("render", args.render)):
            scene.data["output"][key] = scene.data["output"][key] or flag
        return _execute_face(scene, args)
    sim, data = _build_scene(scene, args.scene, args.end_time, args.dt, args.volume or None, args.render or None)
    return _execute(sim, data, args, str(args.scene))


def _face_options(args, what: str, refused) -> None:
    """_UserError naming the first of the options ``refused`` given on the command line."""
    given = {"--dt": args.dt is not None, "--end-time": args.end_time is not None, "--resume": args.resume,
             "--mode": getattr(args, "mode", None) is not None, "--mu": getattr(args, "mu", None) is not None,
             "--setup": getattr(args, "setup", None) is not None}
    for flag in refused:
        if given[flag]:
            raise _UserError(f"{what} has no {flag} (frames, not time steps: see docs/face.md)")


def _face_demo(args) -> int:
    """``ipcsim demo face [--frames N] [--solver direct|pcg|schur|woodbury] [--device cpu|gpu]``."""
    from ..face.demo import DEFAULT_FRAMES, demo_scene

    _face_options(args, "demo face", ("--dt", "--end-time", "--resume", "--mode", "--mu", "--setup"))
    frames = DEFAULT_FRAMES if args.frames is None else args.frames
    scene = demo_scene(frames, args.solver or "woodbury", render=not args.no_render, device=args.device or "cpu")
    if args.volume:
        scene.data["output"]["volume"] = True
    return _execute_face(scene, args)


def _execute_face(scene, args) -> int:
    """Run a ``FaceScene`` into args.output (or ./ipcsim-out/<name>), render if asked, print a summary (the
    kernels compiled up front on a cold cache are the face demo's)."""
    from ..face.runner import frames_summary, run_face
    from ..io.output import default_output_dir
    from ..app.warmup import prepare_kernels

    args.face_run = True  # no --resume after Ctrl-C
    scene.check_device()  # a missing CuPy or GPU is reported before any kernel is compiled
    prepare_kernels("face", quiet=args.quiet)
    sim = scene.build()  # loads the face and checks its proxy before OUT is touched
    out = Path(args.output) if args.output else default_output_dir(sim.name)
    if out.exists() and not out.is_dir():
        raise _UserError(f"output path {str(out)!r} exists and is not a directory")
    result = run_face(sim, out, scene.data, progress=not args.quiet)
    if not args.quiet:
        print(frames_summary(result, sim.name))
        if result.unconverged:
            print(f"warning: {len(result.unconverged)} frame(s) stopped before converging (first: sequence frame "
                  f"{result.unconverged[0]}); see the 'converged' column of stats.csv", file=sys.stderr)
    return _render_preview(sim, out, args)


def _demo(args) -> int:
    from ..demos.builtin import BUILT_DEMOS, DEFAULT_SCENE, DEMOS, demo_path

    if args.list:
        width = max(len(n) for n in {**DEMOS, **BUILT_DEMOS})
        for name, text in {**DEMOS, **BUILT_DEMOS}.items():
            print(f"{name:<{width}}  {text}{'  (default)' if name == DEFAULT_SCENE else ''}")
        return 0
    _positive("--dt", args.dt)
    _positive("--end-time", args.end_time)
    name = args.name or DEFAULT_SCENE
    if name == "face":
        return _face_demo(args)
    if args.frames is not None or args.solver is not None or args.device is not None:
        raise _UserError(f"demo {name}: --frames, --solver and --device are options of the face demo")
    if name == "teddy-grasp":
        return _teddy_grasp(args)
    if name == "plate-rack":
        return _plate_rack(args)
    if args.trajectory is not None:
        raise _UserError(f"demo {name}: --trajectory is an option of the plate-rack demo")
    if args.mode is not None or args.mu is not None or args.bubble_material is not None or args.setup is not None:
        raise _UserError(f"demo {name}: --setup, --mode, --mu and --bubble-material are options of the teddy-grasp "
                         "demo")
    path = demo_path(name)
    sim, data = load_simulation(path, args.end_time, args.dt, args.volume or None, False if args.no_render else None)
    return _execute(sim, data, args, f"demo {name}", demo=name)


def _plate_rack(args) -> int:
    """``ipcsim demo plate-rack [--trajectory clean|offset] [--dt H] [--end-time T] [--mu MU]``."""
    from ..demos.plate_rack import PlateRackParameters, plate_rack

    if args.mode is not None or args.setup is not None or args.bubble_material is not None:
        raise _UserError("demo plate-rack: --setup, --mode and --bubble-material are options of the teddy-grasp demo")
    p = PlateRackParameters(trajectory=args.trajectory or "clean", end_time=args.end_time)
    if args.dt is not None:
        p.dt = float(args.dt)
    if args.mu is not None:
        if not args.mu >= 0:
            raise _UserError(f"--mu must be >= 0, got {args.mu}")
        p.mu = float(args.mu)
    sim, data = plate_rack(p)
    if args.volume:
        sim.output["volume"] = True
    if args.no_render:
        sim.output["render"] = False
    return _execute(sim, data, args, "demo plate-rack", demo="plate-rack")


def _demo_scene(path) -> dict | None:
    """The parsed JSON of a scene written by a demo run (a dict with a "demo" key, e.g. OUT/scene.json of
    ``ipcsim demo teddy-grasp``), else None (other files go to the scene loader, which reports their problems)."""
    path = Path(path)
    if path.suffix.lower() != ".json" or not path.is_file():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) and isinstance(data.get("demo"), str) else None


def _teddy_grasp(args, scene=None) -> int:
    """``ipcsim demo teddy-grasp [--setup paper|legacy] [--mode full|medium|low] [--dt H] [--mu MU]
    [--bubble-material M] [--end-time T]``, or ``ipcsim run OUT/scene.json`` of such a run (scene: (its path, its
    parsed data); then the options)."""
    from ..demos.teddy_grasp import GraspParameters, grasp_parameters, teddy_grasp

    scene_file = None if scene is None else scene[0]
    if scene is None:
        p = GraspParameters(mode=args.mode or "low", setup=args.setup or "paper")
    else:
        try:
            p = grasp_parameters(scene[1])
        except (TypeError, ValueError) as exc:
            raise _UserError(f"{scene_file}: {exc}") from None
    if args.dt is not None:
        p.dt = float(args.dt)
    if args.end_time is not None:
        p.end_time = float(args.end_time)
    mu, material = getattr(args, "mu", None), getattr(args, "bubble_material", None)  # demo options only
    if mu is not None:
        if not mu >= 0:
            raise _UserError(f"--mu must be >= 0, got {mu}")
        p.mu = float(mu)
    if material is not None:
        p.bubble_material = material
    sim, data = teddy_grasp(p)
    if args.volume:
        sim.output["volume"] = True
    if getattr(args, "no_render", False) or (scene_file is not None and not args.render):
        sim.output["render"] = False  # ``ipcsim run`` renders only with --render
    source = "demo teddy-grasp" if scene_file is None else str(scene_file)
    return _execute(sim, data, args, source, demo="teddy-grasp")


def _sweep(args) -> int:
    """``ipcsim sweep SPEC [-o OUT] [--workers N | --address ADDR] [--resume] [--quiet]`` (docs/sweeps.md)."""
    try:
        from ..sweep import load_spec, run_sweep
        import distributed  # noqa: F401  (checked up front: the sweep's engine)
    except ImportError:
        raise _UserError("ipcsim sweep needs Dask distributed: pip install 'ipcsim[sweep]'") from None
    if args.workers is not None and args.address:
        raise _UserError("--workers and --address exclude each other (a running cluster has its own workers)")
    if args.workers is not None and args.workers < 1:
        raise _UserError(f"--workers must be at least 1, got {args.workers}")
    spec = load_spec(args.spec, output=args.output)
    import signal

    def stop(signum, frame):  # SIGTERM (a batch system, kill) stops the sweep as cleanly as Ctrl-C
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, stop)
    try:
        result = run_sweep(spec, workers=args.workers, address=args.address, resume=args.resume,
                           progress=not args.quiet)
    finally:
        signal.signal(signal.SIGTERM, previous)
    if not args.quiet:
        kept = f", {result.skipped} kept from before" if result.skipped else ""
        print(f"sweep: {len(result.rows)} runs: {result.done} done, {result.failed} failed{kept} in "
              f"{result.wall_seconds:.1f} s on {result.workers or 'no'} worker(s); table {result.table}")
    return 0 if result.failed == 0 else 1


def _render(args) -> int:
    from ..app.render import render_run

    out = Path(args.out)
    if args.max_frames < 1:
        raise _UserError(f"--max-frames must be at least 1, got {args.max_frames}")
    if not out.is_dir():
        raise _UserError(f"{str(out)!r} is not a directory (give a run's output directory)")
    written = render_run(out, max_frames=args.max_frames, view=_view_arg(args.view))
    print("preview: " + ", ".join(str(p) for p in written))
    return 0


def _view(args) -> int:
    from ..app.viewer import open_in_browser, write_viewer

    path = write_viewer(args.out, output=args.output)
    opened = args.no_open or open_in_browser(path)
    print(f"viewer: {path}" + ("" if opened else " (no browser found: open it yourself)"))
    return 0


def _view_arg(text: str | None):
    """--view: None, a name ("auto", "front", "side", ...) or "x,y,z" (a direction from the scene to the eye)."""
    if text is None or "," not in text:
        return text
    try:
        return [float(x) for x in text.split(",")]
    except ValueError:
        raise _UserError(f"--view: {text!r} is not x,y,z (three numbers)") from None


def _plot(args) -> int:
    from ..app.plots import parse_labels, plot_runs

    path = plot_runs(args.out, body=args.body, output=args.output, labels=parse_labels(args.labels))
    print(f"plot: {path}")
    return 0


def _export(args) -> int:
    from ..app.export import export_run

    written = export_run(args.out, args.format, output=args.output, up=args.up)
    print("export: " + ", ".join(str(p) for p in written))
    return 0


def _info(args) -> int:
    from ..face.scene import FaceScene
    from ..scene import load_scene

    scene = load_scene(args.scene)
    if isinstance(scene, FaceScene):
        from ..face.runner import describe_face

        print(describe_face(scene.build(), scene.data))
        return 0
    from ..app.info import describe

    sim, data = _build_scene(scene, args.scene)
    text, ok = describe(sim, data)
    print(text)
    return 0 if ok else 1


# ----------------------------------------------------------------------------------------------- parser
class _Parser(argparse.ArgumentParser):
    """ArgumentParser whose usage errors are one line ``error: ...`` (exit status 2) like every other error."""

    def error(self, message):
        self.exit(EXIT_USAGE, f"error: {self.prog}: {message} (see {self.prog} --help)\n")


def _face_demo_arguments(demo) -> None:
    """The face demo's options of ``ipcsim demo``: --frames, --solver, --device."""
    demo.add_argument("--frames", type=int, metavar="N", help="face: frames to run (every third of the sequence "
                                                              "from the neutral face; default 10, at most 17)")
    demo.add_argument("--solver", choices=("direct", "pcg", "schur", "woodbury"), default=None,
                      help="face: the global-step solver (default woodbury)")
    demo.add_argument("--device", choices=("cpu", "gpu"), default=None,
                      help="face: where schur/woodbury run their dense algebra (default cpu; gpu needs CuPy and an "
                           "NVIDIA GPU: pip install 'ipcsim[gpu]')")


def _result_parsers(sub, debug) -> None:
    """The sub-commands that read a finished run's directory: render, view, plot, export."""
    render = sub.add_parser("render", parents=[debug], help="(re)render a finished run's preview",
                            description="Render OUT/frames into OUT/preview.png and preview.mp4 (or .gif).")
    render.add_argument("out", metavar="OUT", help="output directory of a run")
    render.add_argument("--max-frames", type=int, default=80, help="movie frames at most (default 80)")
    render.add_argument("--view", metavar="V", help="camera: auto (default: across the moving bodies), front, back, "
                        "left, right, side, top, or x,y,z (direction from the scene to the eye)")
    render.set_defaults(func=_render)

    view = sub.add_parser("view", parents=[debug], help="write a run's browser viewer (OUT/viewer.html) and open it",
                          description="Write OUT/viewer.html, one self-contained page that plays the run in a "
                                      "browser from disk, offline (docs/viewer.md), and open it in the browser.")
    view.add_argument("out", metavar="OUT", help="output directory of a run")
    view.add_argument("-o", "--output", metavar="FILE.html", help="the page (default OUT/viewer.html)")
    view.add_argument("--no-open", action="store_true", help="only write the page")
    view.set_defaults(func=_view)

    plot = sub.add_parser("plot", parents=[debug], help="plot forces and contact pairs of finished runs (PNG)",
                          description="Plot the contact force (x, y, z; friction dashed) on one body and the "
                                      "number of contact pairs over time from OUT/forces.csv and OUT/stats.csv, "
                                      "one colour per run, into a PNG.")
    plot.add_argument("out", nargs="+", metavar="OUT", help="output directories of runs (overlaid)")
    plot.add_argument("--body", metavar="NAME_OR_INDEX",
                      help="collision body whose force is plotted: its name or index (default 0)")
    plot.add_argument("-o", "--output", metavar="FILE.png",
                      help="the PNG (default OUT/forces.png for one run, ./forces.png for several)")
    plot.add_argument("--labels", metavar="A,B,...", help="legend names, one per run (default the directory names)")
    plot.set_defaults(func=_plot)

    export = sub.add_parser("export", parents=[debug], help="export a run's frames as USD, ParaView PVD or OBJ",
                            description="Export a run's surface frames as an animation (docs/export.md): one USD "
                                        "stage (time-sampled mesh per body; needs usd-core), a ParaView collection "
                                        "(.pvd over VTU frames, times in seconds) or an OBJ sequence.")
    export.add_argument("out", metavar="OUT", help="output directory of a run")
    export.add_argument("--format", required=True, choices=("usd", "pvd", "obj"), help="usd, pvd or obj")
    export.add_argument("-o", "--output", metavar="PATH", help="the .usd/.usda/.usdc or .pvd file, or the OBJ "
                                                                "folder (default OUT/export/<scene name>.usd|.pvd, "
                                                                "OUT/export/obj)")
    export.add_argument("--up", choices=("y", "z"), default="y",
                        help="up axis of the export (default y, ipcsim's; z rotates (x, y, z) -> (x, -z, y))")
    export.set_defaults(func=_export)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``ipcsim`` (sub-commands run, demo, sweep, render, plot, export, info)."""
    debug = _Parser(add_help=False)
    debug.add_argument("--debug", action="store_true", default=argparse.SUPPRESS,
                       help="show tracebacks instead of one-line errors")
    parser = _Parser(prog="ipcsim", description="Incremental Potential Contact simulation: intersection-free soft "
                                                "and stiff bodies (inversion: see the README).", parents=[debug])
    parser.set_defaults(debug=False)
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def common(p, default_out):
        p.add_argument("-o", "--output", metavar="OUT", help=f"output directory (default {default_out})")
        p.add_argument("--end-time", type=float, metavar="T", help="simulated time [s] (default: the scene's)")
        p.add_argument("--dt", type=float, metavar="H", help="time step [s] (default: the scene's)")
        p.add_argument("--resume", action="store_true", help="continue from OUT/checkpoint.npz")
        p.add_argument("--volume", action="store_true", help="also write frames/volume_*.vtu (tets, J, body)")
        p.add_argument("--quiet", action="store_true", help="no progress bar, warnings or summary")

    run = sub.add_parser("run", parents=[debug], help="simulate a scene file (.json or IPC .txt script)",
                         description="Simulate a scene file (ipcsim JSON scene or IPC .txt script).")
    run.add_argument("scene", metavar="SCENE", help="scene file (.json or .txt)")
    common(run, "./ipcsim-out/<scene name>")
    run.add_argument("--render", action="store_true", help="write preview.png and preview.mp4/.gif at the end")
    run.set_defaults(func=_run)

    demo = sub.add_parser("demo", parents=[debug], help="run a built-in scene",
                          description="Run a built-in scene (renders a preview unless --no-render).")
    demo.add_argument("name", nargs="?", metavar="NAME", help="demo name (default two-cubes; see --list)")
    demo.add_argument("--list", action="store_true", help="list the demos and exit")
    common(demo, "./ipcsim-out/<name>")
    demo.add_argument("--no-render", action="store_true", help="skip the preview")
    demo.add_argument("--mode", choices=("full", "medium", "low"), default=None,
                      help="teddy-grasp: the teddy in full space, or embedded at medium or low resolution "
                           "(default low)")
    demo.add_argument("--mu", type=float, metavar="MU", help="teddy-grasp: friction coefficient (default 1)")
    demo.add_argument("--setup", choices=("paper", "legacy"), default=None,
                      help="teddy-grasp: paper (default: Drake's bubbles, poses and gripper motion, 004 §IV-A) or "
                           "legacy (issue #12's hand-made bubbles)")
    demo.add_argument("--bubble-material", choices=("NH", "SNH", "LCR", "FCR"), default=None,
                      help="teddy-grasp: the bubbles' material (default: LCR, the paper's, in the paper set-up; NH "
                           "in the legacy one)")
    demo.add_argument("--trajectory", choices=("clean", "offset"), default=None,
                      help="plate-rack: the gripper trajectory (default clean; offset places the plate 5 mm off the "
                           "slot's centre)")
    _face_demo_arguments(demo)
    demo.set_defaults(func=_demo)

    sweep = sub.add_parser("sweep", parents=[debug], help="run a parameter sweep on a Dask cluster",
                           description="Run every run of a sweep spec (JSON: base scene, parameters by key path, "
                                       "metrics; docs/sweeps.md) on a local Dask cluster (one worker thread per "
                                       "core, each run its own process) or a running one, into OUT/runs/<run> "
                                       "with OUT/summary.csv. Exit status 1 when a run failed (its error is in "
                                       "the table).")
    sweep.add_argument("spec", metavar="SPEC", help="sweep spec (.json)")
    sweep.add_argument("-o", "--output", metavar="OUT", help="output directory (default: the spec's \"output\")")
    sweep.add_argument("--workers", type=int, metavar="N", help="local workers (default: one per core)")
    sweep.add_argument("--address", metavar="ADDR", help="a running Dask scheduler, e.g. tcp://host:8786")
    sweep.add_argument("--resume", action="store_true", help="skip the runs already complete in OUT")
    sweep.add_argument("--quiet", action="store_true", help="no progress bar or summary")
    sweep.set_defaults(func=_sweep)

    _result_parsers(sub, debug)

    info = sub.add_parser("info", parents=[debug], help="describe a scene and check it",
                          description="Print a scene's bodies, sizes and parameters and its sanity check "
                                      "(exit status 1 when the check finds errors).")
    info.add_argument("scene", metavar="SCENE", help="scene file (.json or .txt)")
    info.set_defaults(func=_info)
    return parser


def _one_line_warning(message, category, filename, lineno, file=None, line=None):
    print(f"warning: {message}", file=sys.stderr)


def main(argv=None) -> int:
    """Entry point of ``ipcsim``; returns the exit status (0 ok, 1 failed check, 2 bad input, 130 Ctrl-C)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    with warnings.catch_warnings():
        warnings.showwarning = _one_line_warning
        if getattr(args, "quiet", False):
            warnings.simplefilter("ignore")
        return _dispatch(args)


def _dispatch(args) -> int:
    """Run the sub-command; map user errors to one stderr line and exit status 2."""
    try:
        return args.func(args)
    except (_UserError, ValueError, OSError) as exc:
        if args.debug:
            raise
        text = " ".join(str(exc).split()) or type(exc).__name__
        print(f"error: {text}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        hint = "" if getattr(args, "face_run", False) else " (continue with --resume)"
        print(f"error: interrupted{hint}", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
