"""The stress suite's long form: ``python tests/stress/run.py --scenes N [--first S]`` runs the scenes of seeds
S .. S + N - 1 (``stress_scenes.make_scene``), prints one line per scene and last
``stress: N scenes, K intersecting, F failed, U unconverged steps``; with ``--kind K`` the N scenes are the
seeds of that kind (S, S + 1, ... counted within the kind). Exit status 1 when a scene intersects or
fails. Needs ipcsim importable (installed, or PYTHONPATH=src) and ipctk."""
from __future__ import annotations

import argparse
import sys

from stress_runner import inversion_note, run_scene, summary
from stress_scenes import KINDS


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--scenes", type=int, default=300, help="number of scenes (default 300)")
    ap.add_argument("--first", type=int, default=0, help="seed of the first scene (default 0)")
    ap.add_argument("--kind", default=None, help="run only the scenes of this kind (stress_scenes.KINDS)")
    args = ap.parse_args(argv)
    if args.scenes < 1:
        print("error: --scenes must be at least 1", file=sys.stderr)
        return 2
    if args.kind is not None and args.kind not in KINDS:
        print(f"error: --kind {args.kind!r} is not one of {', '.join(KINDS)}", file=sys.stderr)
        return 2
    seeds = range(args.first, args.first + args.scenes)
    if args.kind is not None:  # the kind of a seed is KINDS[seed % len(KINDS)]: N scenes of that kind
        k = KINDS.index(args.kind)
        seeds = [s * len(KINDS) + k for s in range(args.first, args.first + args.scenes)]
    results = []
    for seed in seeds:
        res = run_scene(seed)
        results.append(res)
        print(res.line(), flush=True)
    print(inversion_note(results), flush=True)
    print(summary(results), flush=True)
    return 1 if any(r.intersecting or r.failed for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
