"""Loading scenes (JSON format v1 or IPC scripts) into a resolved dict, and building simulations from it.

``load_scene(path)`` validates the file (``ipcsim.scene.schema``), reads every mesh, fills every default, makes
mesh paths absolute and turns relative dhat/eps_v into absolute values; the result is ``Scene.data``, a dict
that reloads to the identical Scene. ``Scene.build()`` assembles the Model with ``ModelBuilder`` and configures
the solver. All user errors are ``SceneError`` with one line naming the file and the key path.
"""
from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np

from ..energies.neohookean import rest_shape_data
from .bodies import add_body, add_conditions, resolve_body
from .common import DEFAULTS, Geometry, abs_path, accepts, filled, time_range
from ..errors import SceneError, key_path, scene_error
from ..face.scene import FACE_FORMAT, FaceScene
from .generated import generated_mesh
from .mesh_files import (MeshFileError, closed_surface, read_body_mesh, read_coarse_mesh, read_keyframe,
                         read_mesh_data, read_solid_mesh)
from .placement import bbox_diagonal, place
from .schema import SCENE_FORMAT, validate

DHAT_RELATIVE = 1e-3  # default dhat: this fraction of the scene's bounding-box diagonal (IPC)
EPS_V_RELATIVE = 1e-3  # default eps_v: this fraction of the diagonal per second (IPC)
NEWMARK = {"beta": 0.25, "gamma": 0.5}


class Scene:
    """A validated, fully resolved scene.

    Attributes:
        data: the resolved scene dict (format v1): every default filled in, absolute mesh paths, absolute
            "dhat" [m] and "eps_v" [m/s], "format" and "name" set. ``json.dumps(data)`` reloads identically.
        source: the file name used in error messages; base_dir: directory relative mesh paths were read from.
        bbox_diagonal: [m] of all placed bodies and obstacles together (half spaces excluded).
    """

    def __init__(self, data: dict, source: str, base_dir: Path, geometry: dict, bbox: float):
        self.data = data
        self.source = source
        self.base_dir = base_dir
        self.bbox_diagonal = bbox
        self._geometry = geometry

    @classmethod
    def from_dict(cls, data: dict, base_dir=".", source: str = "<dict>") -> "Scene":
        """Validate and resolve a scene dict; relative mesh paths are taken from base_dir. ``source`` names the
        scene in error messages and gives the default name (its file stem). Raises SceneError."""
        data = _plain(data)
        validate(data, source)
        return _Resolver(data, Path(base_dir), source).resolve()

    def to_json(self, indent: int | None = 2) -> str:
        """The resolved scene as JSON text (what ``OUT/scene.json`` holds)."""
        return json.dumps(self.data, indent=indent)

    @property
    def name(self) -> str:
        """The scene name."""
        return self.data["name"]

    def build(self):
        """Assemble the simulation: ``ipcsim.app.runner.Simulation`` with model, initial state, solver (an
        ``ImplicitEulerSolver`` configured from contact/friction/solver/integrator), dt and end_time [s], output
        dict, name, body_names and obstacle_names. Raises SceneError naming the key path when the model
        rejects something (e.g. a selection box holding no vertex)."""
        return _build(self)

    def __repr__(self) -> str:
        d = self.data
        return (f"Scene({d['name']!r}: {len(d['bodies'])} bodies, {len(d['obstacles'])} obstacles, "
                f"{len(d['half_spaces'])} half spaces)")


def _plain(value):
    """A deep copy of a scene dict with JSON types only: tuples and arrays become lists, NumPy scalars numbers."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, np.ndarray)):
        return [_plain(v) for v in value]
    if isinstance(value, np.generic):
        return value.item()
    return value


def _json_pairs(source: str):
    def hook(pairs):
        out = {}
        for k, v in pairs:
            if k in out:
                raise scene_error(source, [], f"duplicate key {k!r} in a JSON object")
            out[k] = v
        return out
    return hook


def load_scene(path) -> Scene | FaceScene:
    """Load a scene file: .json (format v1, see docs/scenes.md; format ipcsim-face/1 gives a ``FaceScene``, see
    docs/face.md) or .txt (an IPC 2020 script, converted by ``ipcsim.scene.ipc_script.parse_script``). Raises
    SceneError (a ValueError) with a one-line message."""
    path = Path(path)
    source = os.fspath(path)
    suffix = path.suffix.lower()
    if suffix == ".txt":
        try:
            from .ipc_script import parse_script
        except ModuleNotFoundError as exc:
            if exc.name != f"{__package__}.ipc_script":
                raise
            raise scene_error(source, [], "IPC scripts need ipcsim.scene.ipc_script, which this build lacks") from None
        return Scene.from_dict(parse_script(path), path.parent, source)
    if suffix != ".json":
        raise scene_error(source, [], f"unknown scene file type {path.suffix or '(none)'!r}: expected .json "
                                      "(ipcsim scene) or .txt (IPC script)")
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise scene_error(source, [], f"cannot read scene file: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise scene_error(source, [], f"not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    try:
        data = json.loads(text, object_pairs_hook=_json_pairs(source))
    except json.JSONDecodeError as exc:
        raise SceneError(f"{source}:{exc.lineno}:{exc.colno}: invalid JSON: {exc.msg}") from None
    if isinstance(data, dict) and data.get("format") == FACE_FORMAT:
        return FaceScene.from_dict(data, source)  # a face scene (docs/face.md)
    return Scene.from_dict(data, path.parent, source)


class _Resolver:
    """Fills defaults, reads meshes, places them, and converts relative contact parameters (one pass)."""

    def __init__(self, raw: dict, base_dir: Path, source: str):
        self.raw, self.base_dir, self.source = raw, base_dir, source
        self.names: dict[str, list] = {}
        self.cache: dict[tuple, object] = {}

    def error(self, path, message) -> SceneError:
        return scene_error(self.source, path, message)

    def unique_name(self, name: str, path: list) -> str:
        if name in self.names:
            raise self.error(path + ["name"], f"duplicate name {name!r} (also {key_path(self.names[name])})")
        self.names[name] = path
        return name

    def read(self, reader, mesh: str, full: str, path: list):
        """reader(full), each file read once per scene (callers copy before changing the arrays)."""
        key = (reader.__name__, full)
        if key not in self.cache:
            try:
                self.cache[key] = reader(full)
            except MeshFileError as exc:
                raise self.error(path, f"cannot read {mesh!r}: {exc}") from None
        return self.cache[key]

    def resolve(self) -> Scene:
        raw = self.raw
        default_name = "scene" if self.source.startswith("<") else Path(self.source).stem
        data = {"format": SCENE_FORMAT, "name": raw.get("name", default_name),
                "time": filled(DEFAULTS["time"], raw.get("time")),
                "gravity": list(raw.get("gravity", DEFAULTS["gravity"])),
                "integrator": self._integrator(raw.get("integrator", {}))}
        geometry: dict = {}
        bodies = [resolve_body(self, b, i, geometry) for i, b in enumerate(raw["bodies"])]
        obstacles = [self._obstacle(o, i, geometry) for i, o in enumerate(raw.get("obstacles", []))]
        bbox = bbox_diagonal([g.placed for g in geometry.values()])
        if not bbox > 0.0:
            raise self.error("bodies", "the scene's bounding box is a single point (all vertices coincide)")
        data["contact"] = self._contact(raw.get("contact", {}), bbox)
        data["friction"] = self._friction(raw.get("friction", {}), bbox)
        data["solver"] = filled(DEFAULTS["solver"], raw.get("solver"))
        data["bodies"] = bodies
        data["obstacles"] = obstacles
        data["half_spaces"] = [filled(DEFAULTS["half_space"], h) for h in raw.get("half_spaces", [])]
        data["friction"]["pairs"] = self._friction_pairs(raw.get("friction", {}).get("pairs", []), bodies, obstacles)
        if raw.get("grippers"):
            from .grippers import resolve_grippers

            data["grippers"] = resolve_grippers(self, raw["grippers"], bodies, obstacles, geometry)
        data["output"] = filled(DEFAULTS["output"], raw.get("output"))
        return Scene(data, self.source, self.base_dir, geometry, bbox)

    @staticmethod
    def _integrator(given: dict) -> dict:
        kind = given.get("type", "implicit_euler")
        out = {"type": kind}
        if kind == "newmark":
            out.update({k: given.get(k, v) for k, v in NEWMARK.items()})
        out["damping_ratio"] = given.get("damping_ratio", 0.0)
        return out

    @staticmethod
    def _contact(given: dict, bbox: float) -> dict:
        dhat = given["dhat"] if "dhat" in given else given.get("dhat_relative", DHAT_RELATIVE) * bbox
        return {"dhat": dhat, **filled(DEFAULTS["contact"], {k: v for k, v in given.items()
                                                               if k not in ("dhat", "dhat_relative")})}

    @staticmethod
    def _friction(given: dict, bbox: float) -> dict:
        eps_v = given["eps_v"] if "eps_v" in given else given.get("eps_v_relative", EPS_V_RELATIVE) * bbox
        rest = filled(DEFAULTS["friction"], {k: v for k, v in given.items() if k not in ("eps_v", "eps_v_relative")})
        return {"mu": rest["mu"], "eps_v": eps_v, "lagging_iterations": rest["lagging_iterations"]}

    def _friction_pairs(self, given: list, bodies: list, obstacles: list) -> list:
        """friction.pairs with their names checked against the scene's bodies and obstacles."""
        names = [b["name"] for b in bodies] + [o["name"] for o in obstacles]
        out = []
        for k, pair in enumerate(given):
            a, b = pair["bodies"]
            for j, name in enumerate((a, b)):
                if name not in names:
                    raise self.error(["friction", "pairs", k, "bodies", j],
                                     f"no body or obstacle is named {name!r} (names: {', '.join(names)})")
            if a == b or (a in names[len(bodies):] and b in names[len(bodies):]):
                raise self.error(["friction", "pairs", k, "bodies"],
                                 f"expected two different names, not both obstacles, got {[a, b]}")
            out.append({"bodies": [a, b], "mu": pair["mu"]})
        return out

    def mesh(self, mesh, path: list, kind: str) -> tuple[object, np.ndarray, np.ndarray | None]:
        """(resolved mesh entry, model-space vertices (n, 3), elements) of a mesh entry (a file path or a
        generated mesh). kind: "tets" (a full-space body's) or "coarse" (an embedding's coarse mesh): tets, each
        vertex in one; "solid" (an embedded or affine body's): tets or a closed triangle surface, turned outward;
        "any" (an obstacle's): the file's highest-dimensional elements."""
        if isinstance(mesh, dict):
            return generated_mesh(mesh)
        full = abs_path(self.base_dir, mesh)
        if kind == "any":
            m = self.read(read_mesh_data, mesh, full, path)
            return full, m.vertices, m.elements
        reader = {"tets": read_body_mesh, "coarse": read_coarse_mesh, "solid": read_solid_mesh}[kind]
        v, t = self.read(reader, mesh, full, path)
        what = "tet" if t.shape[1] == 4 else "triangle"
        used = np.zeros(len(v), bool)
        used[t.ravel()] = True
        if not used.all():
            raise self.error(path, f"cannot use {mesh!r}: vertex {int(np.flatnonzero(~used)[0])} belongs to "
                                   f"no {what} ({int((~used).sum())} such vertices)")
        try:
            if what == "triangle":
                t = closed_surface(v, t)
            elif kind == "tets":  # a degenerate or inverted tet named with its file (the model's check: globally)
                rest_shape_data(v, t)
        except ValueError as exc:
            raise self.error(path, f"cannot use {mesh!r}: {exc}") from None
        return full, v, t

    def _obstacle(self, raw: dict, i: int, geometry: dict) -> dict:
        path = ["obstacles", i]
        name = self.unique_name(raw.get("name", f"obstacle{i}"), path)
        mesh, v, elements = self.mesh(raw["mesh"], path + ["mesh"], "any")
        transform = filled(DEFAULTS["transform"], raw.get("transform"))
        placed = place(v, transform)
        out = {"name": name, "mesh": mesh, "transform": transform,
               "velocity": list(raw.get("velocity", [0.0, 0.0, 0.0])),
               "angular_velocity": list(raw.get("angular_velocity", [0.0, 0.0, 0.0])),
               "center": raw.get("center"), "time_range": list(raw.get("time_range", [0.0, None])),
               "keyframes": None, "friction": raw.get("friction")}
        frames = None
        if raw.get("keyframes") is not None and "times" in raw["keyframes"]:  # rigid translations of placed
            kf = raw["keyframes"]
            out["keyframes"] = {"times": list(kf["times"]), "translations": [list(t) for t in kf["translations"]]}
            frames = (np.asarray(kf["times"], np.float64),
                      placed[None] + np.asarray(kf["translations"], np.float64)[:, None, :])
        elif raw.get("keyframes") is not None:
            kf = raw["keyframes"]
            files = [abs_path(self.base_dir, f) for f in kf["files"]]
            positions = []
            for j, (given, full) in enumerate(zip(kf["files"], files)):
                x = self.read(read_keyframe, given, full, path + ["keyframes", "files", j])
                if x.shape != placed.shape:
                    raise self.error(path + ["keyframes", "files", j],
                                     f"{given!r} has {len(x)} vertices, the obstacle mesh {len(placed)}")
                positions.append(x)
            out["keyframes"] = {"files": files, "dt": kf["dt"]}
            frames = (np.arange(len(files)) * float(kf["dt"]), np.stack(positions))
        geometry[("obstacle", i)] = Geometry(v, elements, placed, frames)
        return out


def _build(scene: Scene):
    from ..model import ModelBuilder

    data, geo = scene.data, scene._geometry

    def error(path, message):
        return scene_error(scene.source, path, message)

    builder = ModelBuilder(gravity=data["gravity"])
    for i, hs in enumerate(data["half_spaces"]):
        n = np.asarray(hs["normal"], np.float64)
        n = n / np.linalg.norm(n)
        builder.add_ground(float(np.dot(hs["origin"], n)), n)
    for i, body in enumerate(data["bodies"]):
        g = geo[("body", i)]
        bid = add_body(builder, body, g, ["bodies", i], error)
        add_conditions(builder, bid, body, g, ["bodies", i], error)
        if not body.get("self_contact", True):
            builder.set_self_contact(bid, False)
    for i, obs in enumerate(data["obstacles"]):
        path = ["obstacles", i]
        g = geo[("obstacle", i)]
        kwargs = dict(velocity=obs["velocity"], angular_velocity=obs["angular_velocity"], center=obs["center"],
                      time_range=time_range(obs["time_range"]))
        if g.keyframes is not None:
            if not accepts(builder.add_obstacle, "keyframes"):
                raise error(path + ["keyframes"], "not supported by this build "
                            "(ModelBuilder.add_obstacle(keyframes=...) is missing)")
            kwargs["keyframes"] = g.keyframes
        try:
            builder.add_obstacle(g.placed, g.elements, **kwargs)
        except ValueError as exc:
            raise error(path + ["mesh"], str(exc)) from None
    if data.get("grippers"):
        from .grippers import add_grippers

        add_grippers(builder, data, geo, error)
    try:
        model, state = builder.finalize()
    except ValueError as exc:
        raise error("bodies", str(exc)) from None
    solver = _make_solver(model, data, error)
    from .simulation import Simulation

    return Simulation(model=model, state=state, solver=solver, dt=float(data["time"]["dt"]),
                      end_time=float(data["time"]["end"]), output=dict(data["output"]), name=data["name"],
                      body_names=[b["name"] for b in data["bodies"]],
                      obstacle_names=[o["name"] for o in data["obstacles"]])


def _friction_tables(data: dict) -> dict:
    """FrictionParameters' per-plane, per-obstacle and per-pair coefficients of a resolved scene dict (collision
    body ids: the bodies in order, then the obstacles)."""
    n_bodies = len(data["bodies"])
    ids = {b["name"]: i for i, b in enumerate(data["bodies"])}
    ids.update({o["name"]: n_bodies + j for j, o in enumerate(data["obstacles"])})
    return {"plane_mu": tuple(float(h["friction"]) for h in data["half_spaces"]),
            "body_mu": {n_bodies + j: float(o["friction"]) for j, o in enumerate(data["obstacles"])
                        if o.get("friction") is not None},
            "pair_mu": {(ids[p["bodies"][0]], ids[p["bodies"][1]]): float(p["mu"])
                        for p in data["friction"].get("pairs", [])}}


def _make_solver(model, data: dict, error):
    """The solver of a resolved scene dict (``solvers.integrator_solvers.make_solver`` by integrator type)."""
    from ..solvers.integrator_solvers import ContactParameters, FrictionParameters, make_solver
    from ..linalg.factorization import available_backends

    c, f, s, integ = data["contact"], data["friction"], data["solver"], data["integrator"]
    if s["linear_solver"] != "auto" and s["linear_solver"] not in available_backends():
        raise error(["solver", "linear_solver"], f"{s['linear_solver']!r} is not available here (available: "
                                                 f"{', '.join(available_backends())}; pardiso needs pypardiso)")
    friction = FrictionParameters(mu=float(f["mu"]), eps_v=float(f["eps_v"]),
                                  lagging_iterations=int(f["lagging_iterations"]), **_friction_tables(data))
    friction = friction if friction.enabled else None
    kwargs = dict(tol=float(s["tol"]), max_newton_iterations=int(s["max_newton_iterations"]),
                  linear_backend=s["linear_solver"], friction=friction,
                  quasi_static=integ["type"] == "quasi_static", warm_start=bool(s["warm_start"]))
    if integ["type"] == "newmark":
        kwargs.update(integrator="newmark", newmark_beta=float(integ["beta"]), newmark_gamma=float(integ["gamma"]))
    if integ["damping_ratio"] != 0:
        kwargs["damping_ratio"] = float(integ["damping_ratio"])
    contact = ContactParameters(dhat=float(c["dhat"]), kappa=None if c["kappa"] is None else float(c["kappa"]),
                                convergent=bool(c["convergent"]))
    try:
        return make_solver(model, contact, **kwargs)
    except ValueError as exc:
        raise error("integrator", str(exc)) from None
