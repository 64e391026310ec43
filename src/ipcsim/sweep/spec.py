"""Sweep specifications: reading a spec file, addressing scene keys by path, expanding the parameter grid or
random samples into runs (format in docs/sweeps.md).

A spec is a JSON object::

    {"scene": "../scenes/two_cubes.json",          # base scene: ipcsim JSON or IPC .txt script (relative to the spec)
     "end_time": 0.1,                              # [s], optional: replaces the scene's time.end
     "parameters": {"friction.mu": [0.0, 0.5],     # key path -> list of values, or a distribution
                    "bodies[top].material.youngs_modulus": {"log_uniform": [1e4, 1e6], "samples": 3}},
     "sampling": "grid",                           # "grid" (cartesian product) or "random" ("samples" runs)
     "samples": 8, "seed": 0,                      # random sampling only
     "metrics": [{"centre": "top"}, {"lifted": {"body": "teddy", "min_rise": 0.06}}],
     "output": "sweep-out",                        # relative to the spec file
     "time_limit": 600, "retries": 1, "render": false, "launcher": "auto"}

Key paths are those of docs/scenes.md, applied to the *resolved* scene (every default filled in), so any key
the resolved scene holds can vary: ``friction.mu``, ``time.dt``, ``bodies[0].material.youngs_modulus``; a list
element may also be picked by its ``name`` (``bodies[teddy]``). A path the scene does not have is an error
naming it. Every error here is ``SpecError`` (a ValueError), one line naming the spec file and the key.
"""
from __future__ import annotations

import copy
import hashlib
import itertools
import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

SPEC_KEYS = {"scene", "end_time", "parameters", "sampling", "samples", "seed", "metrics", "output", "time_limit",
             "retries", "render", "launcher"}
DISTRIBUTIONS = ("values", "uniform", "log_uniform")
METRICS = ("centre", "lifted")


class SpecError(ValueError):
    """A sweep spec that cannot be used: one line ``SPEC: key: what is wrong``."""


@dataclass
class RunSpec:
    """One run of a sweep: index (0-based, the order of the table), name (its directory: index and parameter
    values), params {key path: value}, scene: the resolved base scene with the values set (dict),
    fingerprint: SHA-256 of that scene (a resumed sweep redoes a run whose scene changed)."""

    index: int
    name: str
    params: dict
    scene: dict
    fingerprint: str


@dataclass
class SweepSpec:
    """A parsed spec: source (file name for messages), base_scene (resolved dict), parameters
    {key path: list of values (grid) or distribution dict}, sampling, samples, seed, metrics (list of dicts),
    output (Path), time_limit [s] or None, retries (worker deaths retried per run), render (bool), end_time [s]
    or None, launcher (how a run's process starts: "auto", "forkserver", "process"; ``task._simulate``)."""

    source: str
    scene_path: Path
    base_scene: dict
    parameters: dict
    sampling: str = "grid"
    samples: int = 0
    seed: int = 0
    metrics: list = field(default_factory=list)
    output: Path = Path("sweep-out")
    time_limit: float | None = None
    retries: int = 1
    render: bool = False
    end_time: float | None = None
    launcher: str = "auto"

    def runs(self) -> list[RunSpec]:
        """Every run of the sweep, in table order (see ``expand``)."""
        return expand(self)


# ----------------------------------------------------------------------------------------------- key paths
def parse_key_path(path: str) -> list:
    """'bodies[0].material.mu' -> ['bodies', 0, 'material', 'mu']; a bracket holding a non-integer becomes
    ("name", text): the list element with that "name". ValueError for an empty or malformed path."""
    parts = []
    for seg in str(path).split("."):
        m = re.fullmatch(r"([^\[\]]+)((?:\[[^\[\]]+\])*)", seg.strip())
        if not m:
            raise ValueError(f"malformed key path {path!r}")
        parts.append(m.group(1))
        for idx in re.findall(r"\[([^\[\]]+)\]", m.group(2)):
            idx = idx.strip()
            parts.append(int(idx) if re.fullmatch(r"-?\d+", idx) else ("name", idx))
    return parts


def _step(node, part, path: str):
    """The child of ``node`` at one key-path part; KeyError naming ``path`` if absent."""
    if isinstance(part, str) and isinstance(node, dict) and part in node:
        return part
    if isinstance(part, int) and isinstance(node, list) and -len(node) <= part < len(node):
        return part
    if isinstance(part, tuple) and isinstance(node, list):
        for i, item in enumerate(node):
            if isinstance(item, dict) and item.get("name") == part[1]:
                return i
    raise KeyError(path)


def set_key(data: dict, path: str, value) -> None:
    """Set the existing key ``path`` of ``data`` to ``value`` in place; KeyError(path) if the scene has no such
    key, ValueError if the path is malformed."""
    parts = parse_key_path(path)
    node = data
    for part in parts[:-1]:
        node = node[_step(node, part, path)]
    node[_step(node, parts[-1], path)] = value


def get_key(data: dict, path: str):
    """The value at ``path`` of ``data`` (KeyError(path) if absent)."""
    node = data
    for part in parse_key_path(path):
        node = node[_step(node, part, path)]
    return node


# ----------------------------------------------------------------------------------------------- reading
def load_spec(path, output=None) -> SweepSpec:
    """Read and check a spec file; load (and resolve) its base scene. ``output`` overrides the spec's output
    directory. Raises SpecError (or the scene's SceneError), both ValueError with a one-line message."""
    path = Path(path)
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise SpecError(f"{path}: cannot read the sweep spec ({exc.strerror or exc})") from None
    except json.JSONDecodeError as exc:
        raise SpecError(f"{path}:{exc.lineno}:{exc.colno}: invalid JSON: {exc.msg}") from None
    return spec_from_dict(raw, base_dir=path.resolve().parent, source=str(path), output=output)


def spec_from_dict(raw: dict, base_dir=".", source: str = "<spec>", output=None) -> SweepSpec:
    """A SweepSpec from a spec dict (paths relative to ``base_dir``); see ``load_spec``."""
    from ..scene import load_scene

    def err(key, message):
        return SpecError(f"{source}: {key}: {message}" if key else f"{source}: {message}")

    if not isinstance(raw, dict):
        raise err("", "a sweep spec is a JSON object")
    unknown = sorted(set(raw) - SPEC_KEYS)
    if unknown:
        raise err(unknown[0], f"unknown key (expected one of {', '.join(sorted(SPEC_KEYS))})")
    base_dir = Path(base_dir)
    if not isinstance(raw.get("scene"), str):
        raise err("scene", "expected the path of a scene file (.json or IPC .txt)")
    if not isinstance(raw.get("output", ""), str) or raw.get("output") == "":
        raise err("output", f"expected the path of the output directory, got {raw['output']!r}")
    scene_path = (base_dir / raw["scene"]).resolve()
    scene = load_scene(scene_path)
    spec = SweepSpec(source=source, scene_path=scene_path, base_scene=copy.deepcopy(scene.data), parameters={},
                     output=Path(output) if output is not None else base_dir / raw.get("output", "sweep-out"))
    _read_options(spec, raw, err)
    _read_parameters(spec, raw.get("parameters"), err)
    spec.metrics = _read_metrics(raw.get("metrics", []), spec.base_scene, err)
    return spec


def _number(raw, key, err, default, kind=float, minimum=0.0, allow_none=False):
    """raw[key] (or default) as a finite ``kind`` >= minimum; None allowed with allow_none; else err(key, ...)."""
    value = raw.get(key, default)
    if value is None and allow_none:
        return None
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    if not ok or value < minimum or (kind is int and value != int(value)):
        raise err(key, f"expected {'an integer' if kind is int else 'a number'} >= {minimum:g}, got {value!r}")
    return kind(value)


def _read_options(spec: SweepSpec, raw: dict, err) -> None:
    """Check and set sampling, samples, seed, retries, time_limit, end_time, launcher and render."""
    spec.sampling = raw.get("sampling", "grid")
    if spec.sampling not in ("grid", "random"):
        raise err("sampling", f"expected 'grid' or 'random', got {spec.sampling!r}")
    spec.samples = _number(raw, "samples", err, 0 if spec.sampling == "grid" else None, int, 1 if
                           spec.sampling == "random" else 0)
    spec.seed = _number(raw, "seed", err, 0, int)
    spec.retries = _number(raw, "retries", err, 1, int)
    spec.time_limit = _number(raw, "time_limit", err, None, float, 1e-3, allow_none=True)
    spec.end_time = _number(raw, "end_time", err, None, float, 1e-12, allow_none=True)
    spec.launcher = raw.get("launcher", "auto")
    if spec.launcher not in ("auto", "forkserver", "process"):
        raise err("launcher", f"expected 'auto', 'forkserver' or 'process', got {spec.launcher!r}")
    render = raw.get("render", False)
    if not isinstance(render, bool):
        raise err("render", f"expected true or false, got {render!r}")
    spec.render = render
    if spec.end_time is not None:
        spec.base_scene["time"]["end"] = spec.end_time
    spec.base_scene.setdefault("output", {})["render"] = spec.render


def _read_parameters(spec: SweepSpec, params, err) -> None:
    """Check every key path against the resolved base scene and read its values."""
    if not isinstance(params, dict) or not params:
        raise err("parameters", "expected an object {key path: values} with at least one key")
    for key, values in params.items():
        where = f"parameters.{key}"
        try:
            get_key(spec.base_scene, key)
        except ValueError as exc:
            raise err(where, str(exc)) from None
        except KeyError:
            raise err(where, f"the scene {spec.scene_path.name} has no key {key!r} (key paths as in "
                             f"docs/scenes.md, e.g. friction.mu, bodies[0].material.youngs_modulus)") from None
        spec.parameters[key] = _read_values(values, spec.sampling, where, err)


def _finite(value) -> bool:
    """False when a JSON value holds a NaN or infinite number (at any depth)."""
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, list):
        return all(_finite(v) for v in value)
    if isinstance(value, dict):
        return all(_finite(v) for v in value.values())
    return True


def _read_values(values, sampling: str, where: str, err):
    """A list of values, or a distribution {"uniform"|"log_uniform": [lo, hi], "samples": n} /
    {"values": [...]}; grid sampling needs "samples" for a distribution."""
    if isinstance(values, list):
        values = {"values": values}
    if not isinstance(values, dict) or len(set(values) & set(DISTRIBUTIONS)) != 1:
        raise err(where, "expected a list of values or {\"uniform\"|\"log_uniform\": [lo, hi], \"samples\": n}")
    extra = set(values) - set(DISTRIBUTIONS) - {"samples"}
    if extra:
        raise err(f"{where}.{sorted(extra)[0]}", "unknown key")
    if "values" in values:
        if not isinstance(values["values"], list) or not values["values"]:
            raise err(where, "expected a non-empty list of values")
        for i, value in enumerate(values["values"]):
            if not _finite(value):  # NaN/Infinity: JSON's writers refuse them (the run's scene, the tables)
                raise err(f"{where}[{i}]", f"expected finite numbers, got {value!r}")
        return {"values": list(values["values"])}
    kind = "uniform" if "uniform" in values else "log_uniform"
    bounds = values[kind]
    good = (isinstance(bounds, list) and len(bounds) == 2 and all(isinstance(b, (int, float)) and
            not isinstance(b, bool) and math.isfinite(b) for b in bounds) and bounds[0] <= bounds[1])
    if not good or (kind == "log_uniform" and bounds[0] <= 0):
        raise err(f"{where}.{kind}", f"expected [lo, hi] with lo <= hi{' and lo > 0' if kind == 'log_uniform' else ''}"
                                     f", got {bounds!r}")
    out = {kind: [float(bounds[0]), float(bounds[1])]}
    if sampling == "grid":
        out["samples"] = _number(values, "samples", lambda k, m: err(f"{where}.samples", m), None, int, 1)
    return out


def _read_metrics(metrics, scene: dict, err) -> list:
    """[{"centre": body}] / [{"lifted": {"body": b, "min_rise": m, "axis": 1}}], bodies checked by name."""
    names = [b.get("name") for b in scene.get("bodies", [])] + [o.get("name") for o in scene.get("obstacles", [])]
    if not isinstance(metrics, list):
        raise err("metrics", "expected a list of metrics")
    out = []
    for i, m in enumerate(metrics):
        where = f"metrics[{i}]"
        if not isinstance(m, dict) or len(m) != 1 or next(iter(m)) not in METRICS:
            raise err(where, f"expected {{\"centre\": BODY}} or {{\"lifted\": {{\"body\": BODY, \"min_rise\": M}}}}")
        kind, arg = next(iter(m.items()))
        if kind == "centre":
            arg = {"body": arg}
        elif not isinstance(arg, dict):
            raise err(f"{where}.lifted", f"expected {{\"body\": BODY, \"min_rise\": M}}, got {arg!r}")
        elif set(arg) - {"body", "min_rise", "axis"}:
            raise err(f"{where}.lifted.{sorted(set(arg) - {'body', 'min_rise', 'axis'})[0]}",
                      "unknown key (expected body, min_rise, axis)")
        if arg.get("body") not in names:
            raise err(where, f"unknown body {arg.get('body')!r} (the scene has {', '.join(map(str, names))})")
        item = {"kind": kind, "body": arg["body"], "index": names.index(arg["body"])}
        if kind == "lifted":
            item["min_rise"] = _number(arg, "min_rise", lambda k, msg: err(f"{where}.lifted.min_rise", msg), 0.05)
            item["axis"] = _number(arg, "axis", lambda k, msg: err(f"{where}.lifted.axis", msg), 1, int)
            if item["axis"] > 2:
                raise err(f"{where}.lifted.axis", "expected 0, 1 or 2")
        out.append(item)
    return out


# ----------------------------------------------------------------------------------------------- expanding
def _grid_values(dist: dict) -> list:
    """A key's values in a grid: its list, or ``samples`` evenly (geometrically for log_uniform) spaced."""
    if "values" in dist:
        return dist["values"]
    lo, hi = dist.get("uniform") or dist["log_uniform"]
    n = dist["samples"]
    pts = np.linspace(lo, hi, n) if "uniform" in dist else np.geomspace(lo, hi, n)
    return [float(f"{x:.12g}") for x in pts]  # 5e4, not 49999.99999999999 (geomspace's rounding)


def _random_value(dist: dict, rng: np.random.Generator):
    """One draw of a key's value (a list: uniform choice)."""
    if "values" in dist:
        return dist["values"][int(rng.integers(len(dist["values"])))]
    if "uniform" in dist:
        return float(rng.uniform(*dist["uniform"]))
    lo, hi = dist["log_uniform"]
    return float(math.exp(rng.uniform(math.log(lo), math.log(hi))))


def parameter_sets(spec: SweepSpec) -> list[dict]:
    """[{key path: value}] in run order: the cartesian product of the keys' values (grid, the last key varying
    fastest) or ``samples`` independent draws (random, numpy default_rng(seed), the same for the same spec)."""
    keys = list(spec.parameters)
    if spec.sampling == "grid":
        return [dict(zip(keys, combo)) for combo in
                itertools.product(*(_grid_values(spec.parameters[k]) for k in keys))]
    rng = np.random.default_rng(spec.seed)
    return [{k: _random_value(spec.parameters[k], rng) for k in keys} for _ in range(spec.samples)]


def _short_names(keys: list[str]) -> dict:
    """Directory-name label per key: its last part, or the whole path where two keys share it."""
    last = {k: str(parse_key_path(k)[-1]) for k in keys}
    return {k: (last[k] if list(last.values()).count(last[k]) == 1 else k) for k in keys}


def _format(value) -> str:
    """A value as written in a run name (floats with 4 significant digits)."""
    if isinstance(value, float):
        return f"{value:.4g}"
    return json.dumps(value) if not isinstance(value, str) else value


def run_name(index: int, params: dict) -> str:
    """The run's directory name: ``r<index>_<key>=<value>_...`` (index zero-padded to 3 digits; values with 4
    significant digits; characters other than letters, digits and ``-_.=+`` replaced by ``_``)."""
    short = _short_names(list(params))
    text = f"r{index:03d}_" + "_".join(f"{short[k]}={_format(v)}" for k, v in params.items())
    return re.sub(r"[^A-Za-z0-9\-_.=+]", "_", text)[:200]


def fingerprint(data: dict) -> str:
    """SHA-256 of a scene dict (sorted-key JSON)."""
    return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()


def expand(spec: SweepSpec) -> list[RunSpec]:
    """The runs of a sweep: each parameter set written into a copy of the resolved base scene (its name
    becomes the run's name). Values are not checked here: a run with an invalid value fails alone."""
    runs = []
    for i, params in enumerate(parameter_sets(spec)):
        data = copy.deepcopy(spec.base_scene)
        for key, value in params.items():
            set_key(data, key, value)
        name = run_name(i, params)
        data["name"] = name
        runs.append(RunSpec(i, name, params, data, fingerprint(data)))
    return runs
