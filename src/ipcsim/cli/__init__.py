"""The ``ipcsim`` command line: ``run``, ``demo``, ``sweep``, ``render``, ``view``, ``plot``, ``export``, ``info``
(``ipcsim --help``), one module per command (``add_parser(sub, debug)`` and ``command(args)``); what they share
is in ``common``.

Errors in the user's input (scene files, meshes, parameters, output directories) are reported as one line
``error: ...`` on stderr with exit status 2, and nothing but complete files is written: the scene is loaded,
built and checked before the output directory is touched. ``--debug`` shows the traceback instead.
"""
from __future__ import annotations

import argparse
import sys
import warnings

from . import demo, export, info, plot, render, run, sweep, view
from .common import EXIT_USAGE, UserError, load_simulation  # noqa: F401  (the package's API)

#: the sub-commands in the order ``ipcsim --help`` lists them
COMMANDS = (run, demo, sweep, render, view, plot, export, info)


class _Parser(argparse.ArgumentParser):
    """ArgumentParser whose usage errors are one line ``error: ...`` (exit status 2) like every other error."""

    def error(self, message):
        self.exit(EXIT_USAGE, f"error: {self.prog}: {message} (see {self.prog} --help)\n")


def build_parser(argv=None) -> argparse.ArgumentParser:
    """The argument parser of ``ipcsim`` (sub-commands run, demo, sweep, render, view, plot, export, info) for the
    arguments argv (None: sys.argv[1:]). The demos' own options are collected (which imports the demo modules and
    the model stack, about 0.6 s) only when argv's command is ``demo``."""
    words = [a for a in (sys.argv[1:] if argv is None else argv) if not a.startswith("-")]
    debug = _Parser(add_help=False)
    debug.add_argument("--debug", action="store_true", default=argparse.SUPPRESS,
                       help="show tracebacks instead of one-line errors")
    parser = _Parser(prog="ipcsim", description="Incremental Potential Contact simulation: intersection-free soft "
                                                "and stiff bodies (inversion: see the README).", parents=[debug])
    parser.set_defaults(debug=False)
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for command in COMMANDS:
        if command is demo:
            demo.add_parser(sub, debug, with_demo_options=bool(words) and words[0] == "demo")
        else:
            command.add_parser(sub, debug)
    return parser


def _one_line_warning(message, category, filename, lineno, file=None, line=None):
    print(f"warning: {message}", file=sys.stderr)


def main(argv=None) -> int:
    """Entry point of ``ipcsim``; returns the exit status (0 ok, 1 failed check, 2 bad input, 130 Ctrl-C)."""
    parser = build_parser(argv)
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
    except (UserError, ValueError, OSError) as exc:
        if args.debug:
            raise
        text = " ".join(str(exc).split()) or type(exc).__name__
        print(f"error: {text}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        return _interrupted(args)
    except SystemError as exc:
        if not _caused_by_interrupt(exc):
            raise
        return _interrupted(args)


def _caused_by_interrupt(exc: BaseException) -> bool:
    """Whether a KeyboardInterrupt is in exc's chain of causes: Ctrl-C that lands while a Numba kernel runs
    reaches the caller as SystemError("CPUDispatcher(...) returned a result with an exception set") caused by
    the KeyboardInterrupt the signal handler raised."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        if isinstance(exc, KeyboardInterrupt):
            return True
        seen.add(id(exc))
        exc = exc.__cause__ or exc.__context__
    return False


def _interrupted(args) -> int:
    """Ctrl-C: one stderr line and exit status 130."""
    hint = "" if getattr(args, "face_run", False) else " (continue with --resume)"
    print(f"error: interrupted{hint}", file=sys.stderr)
    return 130


if __name__ == "__main__":
    sys.exit(main())
