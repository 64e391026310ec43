"""``ipcsim sweep SPEC``: every run of a parameter sweep on a Dask cluster (docs/sweeps.md)."""
from __future__ import annotations

from .common import UserError


def add_parser(sub, debug) -> None:
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
    sweep.set_defaults(func=command)


def command(args) -> int:
    """``ipcsim sweep SPEC [-o OUT] [--workers N | --address ADDR] [--resume] [--quiet]`` (docs/sweeps.md)."""
    try:
        from ..sweep import load_spec, run_sweep
        import distributed  # noqa: F401  (checked up front: the sweep's engine)
    except ImportError:
        raise UserError("ipcsim sweep needs Dask distributed: pip install 'ipcsim[sweep]'") from None
    if args.workers is not None and args.address:
        raise UserError("--workers and --address exclude each other (a running cluster has its own workers)")
    if args.workers is not None and args.workers < 1:
        raise UserError(f"--workers must be at least 1, got {args.workers}")
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
