"""JSON schema (Draft 2020-12) of the ipcsim scene format v1 and its validation with one-line errors.

``SCHEMA`` is a plain dict; ``validate(data, source)`` checks a scene dict against it (plus the checks a schema
cannot express: finite numbers, time ranges in order, box corners in order, rotation matrices, unique names) and raises ``SceneError`` naming the key path, e.g.
``scene.json: bodies[0].material.youngs_modulus: expected a number > 0, got -1``.

Schema nodes may carry two annotations that jsonschema ignores and the error messages use:
``x-expected`` (what the value should be, for "expected X, got Y") and ``x-message`` (the whole message for a
failing oneOf/not rule).
"""
from __future__ import annotations

import json
import math

import numpy as np

from ..model.core import INVERSION_MODES
from ..errors import SceneError, key_path, scene_error

SCENE_FORMAT = "ipcsim-scene/1"
MATERIAL_MODELS = ("NH", "SNH", "FCR", "LCR", "LCR_LAGGED", "LE")
INTEGRATORS = ("implicit_euler", "newmark", "quasi_static")
LINEAR_SOLVERS = ("auto", "pardiso", "supernodal", "scipy")
EMBEDDED_MASSES = ("lumped", "consistent")


def _number(lo=None, lo_open=False, hi=None, hi_open=False, null=False) -> dict:
    """A number schema with optional bounds; its x-expected text states the range."""
    node: dict = {"type": ["number", "null"] if null else "number"}
    words = []
    if lo is not None:
        node["exclusiveMinimum" if lo_open else "minimum"] = lo
        words.append(f"{'>' if lo_open else '>='} {lo}")
    if hi is not None:
        node["exclusiveMaximum" if hi_open else "maximum"] = hi
        words.append(f"{'<' if hi_open else '<='} {hi}")
    text = "a number" + (" " + " and ".join(words) if words else "")
    node["x-expected"] = text + (" or null" if null else "")
    return node


def _integer(lo: int) -> dict:
    return {"type": "integer", "minimum": lo, "x-expected": f"an integer >= {lo}"}


def _array(items: dict, n: int | None = None, what: str = "numbers", min_items: int = 0) -> dict:
    node: dict = {"type": "array", "items": items}
    if n is not None:
        node.update(minItems=n, maxItems=n, **{"x-expected": f"a list of {n} {what}"})
    else:
        node.update(minItems=min_items, **{"x-expected": f"a list of {what}" + (
            f" (at least {min_items})" if min_items else "")})
    return node


def _obj(properties: dict, required=(), *rules: dict) -> dict:
    node: dict = {"type": "object", "properties": properties, "additionalProperties": False,
                  "x-expected": "an object"}
    if required:
        node["required"] = list(required)
    if rules:
        node["allOf"] = list(rules)
    return node


def _exactly_one(*keys: str) -> dict:
    """Rule: exactly one of the keys."""
    names = ", ".join(f"'{k}'" for k in keys[:-1]) + f" and '{keys[-1]}'"
    return {"oneOf": [{"required": [k]} for k in keys], "x-message": f"give exactly one of {names}"}


def _one_of_keys(a: str, b: str, exactly: bool) -> dict:
    """Rule: exactly one (or at most one) of the keys a and b."""
    if exactly:
        return {"oneOf": [{"required": [a]}, {"required": [b]}], "x-message": f"give exactly one of '{a}' and '{b}'"}
    return {"not": {"required": [a, b]}, "x-message": f"give either '{a}' or '{b}', not both"}


NUMBER = _number()
POSITIVE = _number(0, lo_open=True)
NON_NEGATIVE = _number(0)
VEC3 = _array(NUMBER, 3)
VEC3_OR_NULL = {"oneOf": [VEC3, {"type": "null"}], "x-expected": "a list of 3 numbers or null"}
CENTER = {"oneOf": [VEC3, {"type": "null"}, {"const": "bbox"}], "x-expected": 'a list of 3 numbers, null or "bbox"'}
NAME = {"type": "string", "minLength": 1, "x-expected": "a non-empty string"}
PATH = {"type": "string", "minLength": 1, "x-expected": "a file path"}
BOOL = {"type": "boolean", "x-expected": "true or false"}
TIME_RANGE = {"type": "array", "prefixItems": [_number(0), _number(0, null=True)], "items": False,
              "minItems": 2, "x-expected": "[start, end] in seconds (start >= 0, end >= start or null)"}

BOX_MESH = _obj({"box": _obj({"size": _array(POSITIVE, 3, "numbers > 0"),
                               "resolution": _array(_integer(1), 3, "integers >= 1")}, ["size"])}, ["box"])
RING = _integer(3)
HALF_ELLIPSOID_MESH = _obj({"half_ellipsoid": _obj({
    "semi_axes": _array(POSITIVE, 2, "numbers > 0"), "depth": POSITIVE, "rim": RING,
    "dome": _array(RING, what="ring vertex counts (integers >= 3)"),
    "base": _array(RING, what="ring vertex counts (integers >= 3)"),
    "layers": _array(_number(0, lo_open=True, hi=1, hi_open=True), what="scales in (0, 1)"),
}, ["semi_axes", "depth"])}, ["half_ellipsoid"])
MESH = {"oneOf": [PATH, BOX_MESH, HALF_ELLIPSOID_MESH],
        "x-expected": 'a mesh file path, {"box": {"size": [sx, sy, sz], ...}} or {"half_ellipsoid": {"semi_axes": '
                      '[a, b], "depth": d, ...}}'}

TRANSFORM = _obj({
    "scale": {"oneOf": [POSITIVE, _array(POSITIVE, 3)], "x-expected": "a number > 0 or a list of 3 numbers > 0"},
    "rotation": {"oneOf": [VEC3, _array(VEC3, 3, "rows of 3 numbers")],
                 "x-expected": "3 angles in degrees [rx, ry, rz] or a 3x3 rotation matrix"},
    "translation": VEC3,
})

MATERIAL = _obj({
    "model": {"enum": list(MATERIAL_MODELS)},
    "density": POSITIVE,
    "youngs_modulus": POSITIVE,
    "poisson_ratio": _number(0, hi=0.5, hi_open=True),
})

SELECT_BOX = _obj({"min": VEC3, "max": VEC3, "relative": BOOL}, ["min", "max"])
INDICES = _array(_integer(0), what="vertex indices", min_items=1)

DIRICHLET_KEYFRAMES = _obj({
    "times": _array(NON_NEGATIVE, what="times [s] (numbers >= 0)", min_items=1),
    "translations": _array(VEC3, what="translations [x, y, z] [m]", min_items=1),
    "positions": _array(_array(VEC3, what="positions [x, y, z] [m]", min_items=1), what="frames of positions",
                        min_items=1),
}, ["times"], _exactly_one("translations", "positions"))

DIRICHLET = _obj({
    "box": SELECT_BOX, "indices": INDICES,
    "velocity": VEC3, "angular_velocity": VEC3, "center": CENTER, "time_range": TIME_RANGE,
    "keyframes": DIRICHLET_KEYFRAMES,
}, (), _one_of_keys("box", "indices", exactly=True))

NEUMANN = _obj({
    "box": SELECT_BOX, "indices": INDICES,
    "acceleration": VEC3, "force": VEC3, "time_range": TIME_RANGE,
}, (), _one_of_keys("box", "indices", exactly=True), _one_of_keys("acceleration", "force", exactly=True))

EMBEDDING = _obj({
    "resolution": POSITIVE, "vertices": _integer(4), "mesh": MESH, "mass": {"enum": list(EMBEDDED_MASSES)},
}, (), _exactly_one("resolution", "vertices", "mesh"))
AFFINE = _obj({"stiffness": POSITIVE, "fixed": BOOL})

BODY = _obj({
    "name": NAME,
    "mesh": MESH,
    "transform": TRANSFORM,
    "material": MATERIAL,
    "embedding": EMBEDDING,
    "affine": AFFINE,
    "inversion": {"enum": list(INVERSION_MODES)},
    "initial_velocity": _obj({"linear": VEC3, "angular": VEC3}),
    "self_contact": BOOL,
    "damping": _obj({"stiffness": NON_NEGATIVE}),
    "dirichlet": _array(DIRICHLET, what="Dirichlet sets"),
    "neumann": _array(NEUMANN, what="Neumann loads"),
}, ["mesh"], _one_of_keys("embedding", "affine", exactly=False))

KEYFRAMES = _obj({"files": _array(PATH, what="file paths", min_items=1), "dt": POSITIVE,
                  "times": _array(_number(0), what="times [s]", min_items=1),
                  "translations": _array(VEC3, what="translations [m]", min_items=1)}, (),
                 {"oneOf": [{"required": ["files", "dt"], "not": {"anyOf": [{"required": ["times"]},
                                                                           {"required": ["translations"]}]}},
                            {"required": ["times", "translations"], "not": {"anyOf": [{"required": ["files"]},
                                                                                     {"required": ["dt"]}]}}],
                  "x-message": "give either 'files' and 'dt' or 'times' and 'translations'"})

OBSTACLE = _obj({
    "name": NAME,
    "mesh": MESH,
    "transform": TRANSFORM,
    "velocity": VEC3, "angular_velocity": VEC3, "center": CENTER, "time_range": TIME_RANGE,
    "keyframes": {"oneOf": [KEYFRAMES, {"type": "null"}],
                  "x-expected": '{"files": [...], "dt": number > 0}, {"times": [...], "translations": [...]} '
                                'or null'},
    "friction": _number(0, null=True),
}, ["mesh"])

GRIPPER_ATTACHMENT = _obj({"body": NAME, "obstacle": NAME, "box": SELECT_BOX, "indices": INDICES,
                           "side": {"enum": [-1, 0, 1]}}, (), _one_of_keys("body", "obstacle", exactly=True),
                          _one_of_keys("box", "indices", exactly=False))
GRIPPER = _obj({"name": NAME, "trajectory": PATH, "axis": VEC3,
                "attachments": _array(GRIPPER_ATTACHMENT, what="attachments", min_items=1)},
               ["trajectory", "attachments"])

FRICTION_PAIR = _obj({"bodies": _array(NAME, 2, what="names of bodies or obstacles"), "mu": NON_NEGATIVE},
                     ["bodies", "mu"])

HALF_SPACE = _obj({"origin": VEC3, "normal": VEC3, "friction": NON_NEGATIVE})

SCHEMA: dict = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "$id": "https://ipcsim.invalid/schemas/ipcsim-scene-1.json",
    "title": "ipcsim scene (format ipcsim-scene/1)",
    **_obj({
        "format": {"const": SCENE_FORMAT},
        "name": NAME,
        "time": _obj({"end": POSITIVE, "dt": POSITIVE}),
        "gravity": VEC3,
        "integrator": _obj({"type": {"enum": list(INTEGRATORS)},
                            "beta": _number(0, lo_open=True, hi=1.0), "gamma": _number(0, lo_open=True, hi=1.0),
                            "damping_ratio": NON_NEGATIVE}),
        "contact": _obj({"dhat": POSITIVE, "dhat_relative": POSITIVE, "kappa": _number(0, lo_open=True, null=True),
                         "convergent": BOOL}, (), _one_of_keys("dhat", "dhat_relative", exactly=False)),
        "friction": _obj({"mu": NON_NEGATIVE, "eps_v": POSITIVE, "eps_v_relative": POSITIVE,
                          "lagging_iterations": _integer(0), "pairs": _array(FRICTION_PAIR, what="friction pairs")},
                         (), _one_of_keys("eps_v", "eps_v_relative", False)),
        "solver": _obj({"tol": POSITIVE, "max_newton_iterations": _integer(1),
                        "linear_solver": {"enum": list(LINEAR_SOLVERS)}, "warm_start": BOOL}),
        "bodies": _array(BODY, what="bodies", min_items=1),
        "obstacles": _array(OBSTACLE, what="obstacles"),
        "half_spaces": _array(HALF_SPACE, what="half spaces"),
        "grippers": _array(GRIPPER, what="grippers"),
        "output": _obj({"every": _integer(1), "volume": BOOL, "render": BOOL, "checkpoint_every": _integer(1)}),
    }, ["bodies"]),
}


def _show(value) -> str:
    """A short JSON rendering of a value for messages."""
    try:
        text = json.dumps(value, allow_nan=True)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _deepest(error):
    """For a failing oneOf/anyOf: the sub-error that reached deepest into the value, when it is deeper than the
    rule itself and only one alternative got that deep (otherwise None: the rule's own message is clearer)."""
    deep = [e for e in error.context if len(e.relative_path) > 0]
    if not deep:
        return None
    depth = max(len(e.absolute_path) for e in deep)
    deepest = [e for e in deep if len(e.absolute_path) == depth]
    if len({e.relative_schema_path[0] for e in deepest}) > 1:
        return None
    best = deepest[0]
    if best.validator in ("oneOf", "anyOf") and "x-message" not in best.schema:
        return _deepest(best) or best
    return best


def _describe(error) -> tuple[list, str]:
    """(key path, message) of a jsonschema ValidationError."""
    if error.validator in ("oneOf", "anyOf") and "x-message" not in error.schema:
        sub = _deepest(error)
        if sub is not None:
            return _describe(sub)
    path = list(error.absolute_path)
    schema, value, v = error.schema, error.instance, error.validator
    if "x-message" in schema:
        return path, schema["x-message"]
    if v == "additionalProperties":
        allowed = sorted(schema.get("properties", {}))
        unknown = sorted(k for k in value if k not in allowed)
        return path + [unknown[0]], f"unknown key (allowed: {', '.join(allowed)})"
    if v == "required":
        missing = [k for k in error.validator_value if k not in value]
        return path + [missing[0]], "missing required key"
    if v == "enum":
        return path, f"expected one of {', '.join(map(_show, error.validator_value))}, got {_show(value)}"
    if v == "const":
        return path, f"expected {_show(error.validator_value)}, got {_show(value)}"
    if "x-expected" in schema:
        return path, f"expected {schema['x-expected']}, got {_show(value)}"
    return path, error.message


def _check_finite(value, path: list, source: str) -> None:
    """Reject NaN and infinities anywhere (Python's json reads NaN/Infinity; JSON itself has no such literal)."""
    if isinstance(value, float) and not math.isfinite(value):
        raise scene_error(source, path, f"expected a finite number, got {value}")
    if isinstance(value, dict):
        for k, v in value.items():
            _check_finite(v, path + [k], source)
    elif isinstance(value, list):
        for i, v in enumerate(value):
            _check_finite(v, path + [i], source)


def _rotation_matrix_ok(rows) -> bool:
    r = np.asarray(rows, dtype=np.float64)
    return bool(np.allclose(r @ r.T, np.eye(3), atol=1e-6) and np.linalg.det(r) > 0)


def _check_mesh(mesh, path: list, err) -> None:
    """A generated half ellipsoid's layers must decrease (each inner copy inside the previous one)."""
    layers = mesh.get("half_ellipsoid", {}).get("layers", []) if isinstance(mesh, dict) else []
    if any(b >= a for a, b in zip(layers, layers[1:])):
        raise err(path + ["half_ellipsoid", "layers"], f"expected decreasing scales, got {_show(layers)}")


def _check_dirichlet_keyframes(d: dict, path: list, err) -> None:
    """A keyframed Dirichlet set: no velocity, angular_velocity, center or time_range; strictly increasing
    times; one translation or frame of positions per time, every frame with as many positions."""
    for k in ("velocity", "angular_velocity", "center", "time_range"):
        if k in d:
            raise err(path + [k], f"a keyframed Dirichlet set follows its keyframes: give no {k}")
    kf = d["keyframes"]
    times = kf["times"]
    if any(b <= a for a, b in zip(times, times[1:])):
        raise err(path + ["keyframes", "times"], f"expected strictly increasing times [s], got {_show(times)}")
    key = "translations" if "translations" in kf else "positions"
    if len(kf[key]) != len(times):
        raise err(path + ["keyframes", key], f"expected one entry per time ({len(times)}), got {len(kf[key])}")
    for j, frame in enumerate(kf.get("positions", [])):
        if len(frame) != len(kf["positions"][0]):
            raise err(path + ["keyframes", "positions", j], f"{len(frame)} positions, frame 0 has "
                                                            f"{len(kf['positions'][0])}")


def _check_body(body: dict, path: list, err) -> None:
    """A body's generated meshes, an affine body's material (density only) and keyframed Dirichlet sets."""
    _check_mesh(body.get("mesh"), path + ["mesh"], err)
    if "embedding" in body:
        _check_mesh(body["embedding"].get("mesh"), path + ["embedding", "mesh"], err)
    if "affine" in body:
        for k in body.get("material", {}):
            if k != "density":
                raise err(path + ["material", k], "an affine body takes only 'density' from its material (its "
                                                  "stiffness is 'affine.stiffness' [Pa])")
    for j, d in enumerate(body.get("dirichlet", [])):
        if "keyframes" in d:
            _check_dirichlet_keyframes(d, path + ["dirichlet", j], err)


def _check_semantics(data: dict, source: str) -> None:
    """Checks the schema cannot express; raises SceneError naming the key path."""
    def err(path, message):
        return scene_error(source, path, message)

    integ = data.get("integrator", {})
    if integ.get("type", "implicit_euler") != "newmark":
        for k in ("beta", "gamma"):
            if k in integ:
                raise err(["integrator", k], "only used by the newmark integrator")
    names: dict[str, list] = {}

    def check_name(item: dict, path: list) -> None:
        if "name" in item:
            if item["name"] in names:
                raise err(path + ["name"], f"duplicate name {_show(item['name'])} (also {key_path(names[item['name']])})")
            names[item["name"]] = path

    def check_range(item: dict, path: list) -> None:
        tr = item.get("time_range")
        if tr is not None and tr[1] is not None and tr[1] < tr[0]:
            raise err(path + ["time_range"], f"end before start, got {_show(tr)}")

    def check_transform(item: dict, path: list) -> None:
        rot = item.get("transform", {}).get("rotation")
        if rot is not None and isinstance(rot[0], list) and not _rotation_matrix_ok(rot):
            raise err(path + ["transform", "rotation"], "expected a rotation matrix (orthonormal rows, det +1)")

    def check_box(sel: dict, path: list) -> None:
        box = sel.get("box")
        if box is not None and any(a > b for a, b in zip(box["min"], box["max"])):
            raise err(path + ["box"], f"min > max in some axis: min {_show(box['min'])}, max {_show(box['max'])}")

    for i, body in enumerate(data.get("bodies", [])):
        p = ["bodies", i]
        check_name(body, p)
        check_transform(body, p)
        for kind in ("dirichlet", "neumann"):
            for j, sel in enumerate(body.get(kind, [])):
                check_box(sel, p + [kind, j])
                check_range(sel, p + [kind, j])
        _check_body(body, p, err)
    for i, obs in enumerate(data.get("obstacles", [])):
        p = ["obstacles", i]
        _check_mesh(obs.get("mesh"), p + ["mesh"], err)
        check_name(obs, p)
        check_transform(obs, p)
        check_range(obs, p)
        if obs.get("keyframes") is not None:
            for k in ("velocity", "angular_velocity"):
                if any(obs.get(k, (0, 0, 0))):
                    raise err(p + [k], "a keyframed obstacle follows its keyframes: give no velocity")
            if obs.get("time_range", [0, None]) != [0, None]:
                raise err(p + ["time_range"], "a keyframed obstacle follows its keyframes: give no time_range")
            kf = obs["keyframes"]
            if "times" in kf:
                if len(kf["times"]) != len(kf["translations"]):
                    raise err(p + ["keyframes", "translations"], f"expected one translation per time "
                                                                 f"({len(kf['times'])}), got {len(kf['translations'])}")
                if any(b <= a for a, b in zip(kf["times"], kf["times"][1:])):
                    raise err(p + ["keyframes", "times"], "expected strictly increasing times [s]")
    for i, g in enumerate(data.get("grippers", [])):
        check_name(g, ["grippers", i])
        if "axis" in g and not any(g["axis"]):
            raise err(["grippers", i, "axis"], "expected a nonzero axis, got [0, 0, 0]")
        for j, a in enumerate(g.get("attachments", [])):
            if "obstacle" in a and ("box" in a or "indices" in a):
                raise err(["grippers", i, "attachments", j], "an obstacle attaches whole: give no box or indices")
            check_box(a, ["grippers", i, "attachments", j])
    for i, hs in enumerate(data.get("half_spaces", [])):
        if "normal" in hs and not any(hs["normal"]):
            raise err(["half_spaces", i, "normal"], "expected a nonzero normal, got [0, 0, 0]")


_VALIDATOR = None


def _validator():
    global _VALIDATOR
    if _VALIDATOR is None:
        from jsonschema import Draft202012Validator

        Draft202012Validator.check_schema(SCHEMA)
        _VALIDATOR = Draft202012Validator(SCHEMA)
    return _VALIDATOR


def validate(data, source: str = "<scene>") -> None:
    """Check a scene dict (format v1) and raise ``SceneError`` (one line naming ``source`` and the key path) at
    the first problem: non-finite numbers, schema violations, then the semantic checks of ``_check_semantics``."""
    if not isinstance(data, dict):
        raise scene_error(source, [], f"expected a JSON object at the top level, got {_show(data)}")
    _check_finite(data, [], source)
    errors = sorted(_validator().iter_errors(data), key=lambda e: [str(p) for p in e.absolute_path])
    if errors:
        path, message = _describe(errors[0])
        raise scene_error(source, path, message)
    _check_semantics(data, source)


__all__ = ["SCHEMA", "SCENE_FORMAT", "MATERIAL_MODELS", "INTEGRATORS", "LINEAR_SOLVERS", "validate", "SceneError"]
