"""``ipcsim demo [NAME]``: run a built-in scene. The JSON demos (``ipcsim.demos.builtin``) take the simulate
options only; each demo built in Python declares its own options (``add_arguments(parser)`` in its module,
``BUILT_DEMO_MODULES``), collected here into one parser: an option shared by several demos is added once, and an
option given to a demo that does not declare it is a one-line error naming the demo it belongs to."""
from __future__ import annotations

import importlib

from .common import UserError, execute, execute_face, load_simulation, positive, refuse_options, simulate_arguments


class _Declared:
    """The options the demos declare: {flag: {"kwargs": argparse keywords of the first declaration, "owners":
    [(demo, help), ...]}} in declaration order; a demo module's ``add_arguments`` is given one ``_Recorder``."""

    def __init__(self):
        from ..demos.builtin import BUILT_DEMO_MODULES

        self.modules = {name: importlib.import_module(m) for name, m in BUILT_DEMO_MODULES.items()}
        self.options: dict[str, dict] = {}
        for name, module in self.modules.items():
            module.add_arguments(_Recorder(self.options, name))

    def owners(self, flag: str) -> list[str]:
        return [demo for demo, _ in self.options[flag]["owners"]]

    def add_to(self, parser) -> None:
        """One argparse option per declared flag, its help prefixed by the demos that own it."""
        for flag, spec in self.options.items():
            helps = "; ".join(f"{demo}: {text}" for demo, text in spec["owners"])
            parser.add_argument(flag, **{**spec["kwargs"], "help": helps})

    def check(self, args, name: str) -> None:
        """UserError when an option of another demo, and not of ``name``, is given (an option several demos
        declare is named as the first one's)."""
        own = {flag for flag in self.options if name in self.owners(flag)}
        for demo in self.modules:
            theirs = [f for f in self.options if self.owners(f)[0] == demo and f not in own]
            if demo != name and any(getattr(args, _dest(f)) is not None for f in theirs):
                listed = (f"{theirs[0]} is an option" if len(theirs) == 1 else
                          f"{', '.join(theirs[:-1])} and {theirs[-1]} are options")
                raise UserError(f"demo {name}: {listed} of the {demo} demo")


class _Recorder:
    """Stands in for the parser in a demo's ``add_arguments``: records its options under the demo's name."""

    def __init__(self, options: dict, demo: str):
        self.options, self.demo = options, demo

    def add_argument(self, flag: str, **kwargs) -> None:
        spec = self.options.setdefault(flag, {"kwargs": kwargs, "owners": []})
        spec["owners"].append((self.demo, kwargs.get("help", "")))


def _dest(flag: str) -> str:
    return flag.lstrip("-").replace("-", "_")


_DECLARED: list = []


def declared() -> _Declared:
    """The demos' options (collected once per process)."""
    if not _DECLARED:
        _DECLARED.append(_Declared())
    return _DECLARED[0]


def add_parser(sub, debug, with_demo_options: bool = True) -> None:
    """The ``demo`` sub-command; with_demo_options False (another command is run): without the options the demo
    modules declare, so that parsing another command imports none of them."""
    demo = sub.add_parser("demo", parents=[debug], help="run a built-in scene",
                          description="Run a built-in scene (renders a preview unless --no-render).")
    demo.add_argument("name", nargs="?", metavar="NAME", help="demo name (default two-cubes; see --list)")
    demo.add_argument("--list", action="store_true", help="list the demos and exit")
    simulate_arguments(demo, "./ipcsim-out/<name>")
    demo.add_argument("--no-render", action="store_true", help="skip the preview")
    if with_demo_options:
        declared().add_to(demo)
    demo.set_defaults(func=command)


def command(args) -> int:
    from ..demos.builtin import BUILT_DEMOS, DEFAULT_SCENE, DEMOS, demo_path

    if args.list:
        width = max(len(n) for n in {**DEMOS, **BUILT_DEMOS})
        for name, text in {**DEMOS, **BUILT_DEMOS}.items():
            print(f"{name:<{width}}  {text}{'  (default)' if name == DEFAULT_SCENE else ''}")
        return 0
    positive("--dt", args.dt)
    positive("--end-time", args.end_time)
    name = args.name or DEFAULT_SCENE
    module = declared().modules.get(name)
    refuse_options(args, f"demo {name}", getattr(module, "REFUSES", ()))
    declared().check(args, name)
    if name == "face":
        return execute_face(module.scene_from_arguments(args), args)
    if name == "teddy-grasp":
        return teddy_grasp(args)
    if name == "plate-rack":
        return plate_rack(args)
    path = demo_path(name)
    sim, data = load_simulation(path, args.end_time, args.dt, args.volume or None, False if args.no_render else None)
    return execute(sim, data, args, f"demo {name}", demo=name)


def plate_rack(args, scene=None) -> int:
    """``ipcsim demo plate-rack [--trajectory clean|offset] [--dt H] [--end-time T] [--mu MU]``, or ``ipcsim run
    OUT/scene.json`` of such a run (scene: (its path, its parsed data); then the options)."""
    from ..demos import plate_rack as demo

    return _built_demo(args, scene, "plate-rack", demo.parameters_from_arguments, demo.plate_rack)


def _built_demo(args, scene, name: str, parameters, build) -> int:
    """Run a demo built in Python from its options, or from an earlier run's OUT/scene.json (scene: (path,
    parsed data)): parameters(args, data or None) -> its parameters, build(parameters) -> (Simulation, data)."""
    scene_file = None if scene is None else scene[0]
    try:
        p = parameters(args, None if scene is None else scene[1])
    except (TypeError, ValueError) as exc:
        if scene is None:
            raise
        raise UserError(f"{scene_file}: {exc}") from None
    sim, data = build(p)
    if args.volume:
        sim.output["volume"] = True
    if getattr(args, "no_render", False) or (scene_file is not None and not args.render):
        sim.output["render"] = False  # ``ipcsim run`` renders only with --render
    source = f"demo {name}" if scene_file is None else str(scene_file)
    return execute(sim, data, args, source, demo=name)


def teddy_grasp(args, scene=None) -> int:
    """``ipcsim demo teddy-grasp [--setup paper|legacy] [--mode full|medium|low] [--dt H] [--mu MU]
    [--bubble-material M] [--end-time T]``, or ``ipcsim run OUT/scene.json`` of such a run (scene: (its path, its
    parsed data); then the options)."""
    from ..demos import teddy_grasp as demo

    return _built_demo(args, scene, "teddy-grasp", demo.parameters_from_arguments, demo.teddy_grasp)
