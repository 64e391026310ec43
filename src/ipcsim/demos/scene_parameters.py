"""The parameters of a demo built in Python, read back from the OUT/scene.json its run wrote (``ipcsim run
OUT/scene.json``): the parameter fields at the top level, the end time and step under "time"."""
from __future__ import annotations


def parameters_from_scene(cls, data: dict, demo: str, **defaults):
    """cls (a parameters dataclass with ``end_time`` and ``dt`` fields [s]) from a run's scene.json ``data``;
    defaults: values for fields the file lacks. ValueError naming the first unknown key (demo: its name)."""
    given = {k: v for k, v in data.items() if k not in ("name", "demo", "time", "output")}
    time = data.get("time", {})
    known = set(cls.__dataclass_fields__) - {"end_time", "dt"}
    unknown = sorted(set(given) - known) + sorted(set(time) - {"end", "dt"})
    if unknown:
        raise ValueError(f"{demo} scene: unknown key {unknown[0]!r} (allowed: time.end, time.dt, "
                         f"{', '.join(sorted(known))})")
    if "end" in time:
        given["end_time"] = float(time["end"])
    if "dt" in time:
        given["dt"] = float(time["dt"])
    return cls(**{**defaults, **given})


def apply_run_options(p, args):
    """p with the options every Python-built demo shares applied where given: --dt and --end-time [s], and --mu
    [1] (an ``ipcsim demo`` option only, absent from ``ipcsim run``'s args); ValueError for a negative mu."""
    if args.dt is not None:
        p.dt = float(args.dt)
    if args.end_time is not None:
        p.end_time = float(args.end_time)
    mu = getattr(args, "mu", None)
    if mu is not None:
        if not mu >= 0:
            raise ValueError(f"--mu must be >= 0, got {mu}")
        p.mu = float(mu)
    return p
