"""Face scene files (format ``ipcsim-face/1``): the actuated face's expression sequence as a runnable scene.

    {"format": "ipcsim-face/1", "face": "small", "frames": [0, 27], "every": 3, "solver": "woodbury",
     "contact": {"dhat_rel": 1e-3}, "output": {"render": true}}

``ipcsim run FILE.json`` dispatches on "format" (``scene.loader.load_scene`` returns a ``FaceScene`` for this
format) and runs the frames with ``face.solver.FacePDSolver`` (``ipcsim.face.runner``). Keys (all optional
but "format"; docs/face.md):

- name: the run's name (default the file's stem);
- face: "small" (shipped with the package) or "large" (built from the ICT-FaceKit files in about 40 s);
- sequence: "shipped" (the face's own sequence, ``sequence``) or one of the experiment's three
  (``expressions.SEQUENCES``: "press_roll", "pucker_funnel", "jaw");
- frames: "all" or [first, last], sequence frame indices (0-based, last included) of the 50-frame sequence;
- every: run every k-th frame of that range (each frame starts from the previous one's equilibrium);
- solver: the global-step solver, "direct", "pcg", "schur" or "woodbury";
- device: where the dense algebra of "schur" / "woodbury" runs, "cpu" (default) or "gpu" (CuPy on an NVIDIA GPU;
  ``face.dense_device``; refused with the other solvers, and where CuPy or a GPU is missing);
- contact: ``FaceContact``'s enabled, dhat [m] (null: dhat_rel times the proxy's rest bounding-box diagonal),
  dhat_rel [1], kappa [Pa] (null: the mean shape-targeting stiffness), convergent;
- x2: null (the exact collision-aware set: every node of a tet holding a proxy vertex) or {"radius": r [m],
  "rings": k}: the smaller set ``predict_collision_aware_vertices`` finds from a run without contact over the
  scene's frames (contacts outside it are solved directly, counted in stats.csv's fallbacks);
- tol [1] (relative to the proxy's rest bounding-box diagonal), max_iterations: per frame;
- output: volume (also write the simulation mesh as frames/volume_*.vtu), render (preview.png and movie), view
  (the preview's camera: azimuth_deg, elevation_deg; default in front of the face, slightly from above),
  preview_bodies (the bodies of the frames the preview draws, of "upper lip", "lower lip" (the collision
  proxy) and "skin"; default ["skin"]: the face, whose part around the mouth is the proxy itself).

Every problem is a ``SceneError`` with one line naming the file and the key.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import scene_error
from .expressions import SEQUENCES, sequence_for
from .sequence import N_FRAMES

FACE_FORMAT = "ipcsim-face/1"
SIZES = ("small", "large")
SOLVERS = ("direct", "pcg", "schur", "woodbury")
DEVICES = ("cpu", "gpu")
DENSE_SOLVERS = ("schur", "woodbury")  # the solvers whose dense algebra "device" moves
SEQUENCE_NAMES = ("shipped", *SEQUENCES)
DEFAULTS = {"face": "small", "sequence": "shipped", "frames": "all", "every": 1, "solver": "woodbury", "device": "cpu",
            "contact": {"enabled": True, "dhat": None, "dhat_rel": 1e-3, "kappa": None, "convergent": True},
            "x2": None, "tol": 1e-4, "max_iterations": 500,
            "output": {"volume": False, "render": False, "view": {"azimuth_deg": 180.0, "elevation_deg": 10.0},
                       "preview_bodies": ["skin"]}}
_TOP = ("format", "name", *DEFAULTS)


@dataclass
class FaceSimulation:
    """A built face scene: model (``FaceModel``), solver (``FacePDSolver``), frames: the sequence frame indices
    to run, in order; name; output: the scene's "output" dict."""

    model: object
    solver: object
    frames: list
    name: str
    output: dict = field(default_factory=dict)
    weights: object = None  # (frames, K) [1] the sequence's weights (None: model.sequence)


class FaceScene:
    """A validated face scene. data: the resolved dict (every default filled in, "frames" as [first, last]);
    source: the file name used in error messages."""

    def __init__(self, data: dict, source: str):
        self.data, self.source = data, source

    @classmethod
    def from_dict(cls, raw, source: str = "<dict>") -> "FaceScene":
        """Validate and resolve a face scene dict (``SceneError`` naming the key at the first problem)."""
        return cls(_resolve(raw, source), source)

    @property
    def name(self) -> str:
        return self.data["name"]

    def frame_indices(self) -> list:
        """The sequence frames to run (list of int)."""
        first, last = self.data["frames"]
        return list(range(first, last + 1, self.data["every"]))

    def check_device(self) -> None:
        """SceneError naming "device" when it is "gpu" and CuPy or a CUDA GPU is missing (imports CuPy then)."""
        from .dense_device import DeviceError, dense_backend

        try:
            dense_backend(self.data["device"])
        except DeviceError as exc:
            raise scene_error(self.source, "device", str(exc)) from None

    def build(self) -> FaceSimulation:
        """Load the face and set up its solver (the proxy's rest state is checked intersection-free). Raises
        SceneError naming "face" when the large face's ICT files cannot be read, "device" as ``check_device``."""
        from .solver import FaceContact, FacePDSolver, predict_collision_aware_vertices
        from .data import load_face

        d = self.data
        self.check_device()
        try:
            model = load_face(d["face"])
        except OSError as exc:
            raise scene_error(self.source, "face", f"cannot read the ICT-FaceKit files the {d['face']} face is "
                                                   f"built from ({exc.strerror or exc}: {exc.filename})") from None
        if d["frames"][1] >= len(model.sequence):
            raise scene_error(self.source, "frames", f"the sequence has {len(model.sequence)} frames (0 to "
                                                     f"{len(model.sequence) - 1}), got {d['frames']}")
        x2 = None
        if d["x2"] is not None:
            x2, _ = predict_collision_aware_vertices(model, d["x2"]["radius"], d["x2"]["rings"],
                                                     sequence=model.sequence[self.frame_indices()])
        solver = FacePDSolver(model, d["solver"], FaceContact(**d["contact"]), tol=d["tol"],
                              max_iterations=d["max_iterations"], x2=x2, device=d["device"])
        return FaceSimulation(model, solver, self.frame_indices(), d["name"], dict(d["output"]),
                              sequence_for(model, d["sequence"]))

    def __repr__(self) -> str:
        return f"FaceScene({self.name!r}: {self.data['face']} face, frames {self.frame_indices()})"


# ----------------------------------------------------------------------------------------------- validation
def _resolve(raw, source: str) -> dict:
    """The resolved dict of a raw face scene (see the module doc), or SceneError."""
    if not isinstance(raw, dict):
        raise scene_error(source, [], f"expected a JSON object at the top level, got {type(raw).__name__}")
    _known(raw, _TOP, [], source)
    if raw.get("format") != FACE_FORMAT:
        raise scene_error(source, "format", f"expected {FACE_FORMAT!r}, got {raw.get('format')!r}")
    d = {"format": FACE_FORMAT, "name": raw.get("name", Path(source).stem or "face")}
    if not isinstance(d["name"], str) or not d["name"]:
        raise scene_error(source, "name", f"expected a non-empty string, got {d['name']!r}")
    d["face"] = _choice(raw, "face", SIZES, source)
    d["sequence"] = _choice(raw, "sequence", SEQUENCE_NAMES, source)
    d["frames"] = _frames(raw.get("frames", "all"), source)
    d["every"] = _integer(raw.get("every", 1), "every", source)
    d["solver"] = _choice(raw, "solver", SOLVERS, source)
    d["device"] = _choice(raw, "device", DEVICES, source)
    if d["device"] != "cpu" and d["solver"] not in DENSE_SOLVERS:
        raise scene_error(source, "device", f"device {d['device']!r} runs the dense algebra of the solvers "
                                            f"{' and '.join(map(repr, DENSE_SOLVERS))} only, got solver "
                                            f"{d['solver']!r}")
    d["contact"] = _contact(raw.get("contact", {}), source)
    d["x2"] = _x2(raw.get("x2"), source)
    d["tol"] = _positive(raw.get("tol", DEFAULTS["tol"]), "tol", source)
    d["max_iterations"] = _integer(raw.get("max_iterations", DEFAULTS["max_iterations"]), "max_iterations", source)
    out = raw.get("output", {})
    _object(out, "output", source)
    _known(out, DEFAULTS["output"], ["output"], source)
    d["output"] = {k: _boolean(out.get(k, DEFAULTS["output"][k]), f"output.{k}", source) for k in ("volume", "render")}
    d["output"]["view"] = _view(out.get("view", {}), source)
    d["output"]["preview_bodies"] = _bodies(out.get("preview_bodies", DEFAULTS["output"]["preview_bodies"]),
                                            source)
    return d


def _bodies(raw, source: str) -> list:
    """A non-empty list of distinct body names of the face run's frames (``runner.BODY_NAMES``)."""
    from .runner import BODY_NAMES

    if not isinstance(raw, list) or not raw or len(set(map(str, raw))) != len(raw) or any(
            b not in BODY_NAMES for b in raw):
        raise scene_error(source, "output.preview_bodies", f"expected a list of distinct names of "
                                                           f"{', '.join(map(repr, BODY_NAMES))}, got {raw!r}")
    return list(raw)


def _x2(raw, source: str):
    """None or {"radius": [m], "rings": int >= 0} (rings default 1)."""
    if raw is None:
        return None
    _object(raw, "x2", source)
    _known(raw, ("radius", "rings"), ["x2"], source)
    rings = raw.get("rings", 1)
    if isinstance(rings, bool) or not isinstance(rings, int) or rings < 0:
        raise scene_error(source, "x2.rings", f"expected an integer >= 0, got {rings!r}")
    return {"radius": _positive(raw.get("radius"), "x2.radius", source), "rings": rings}


def _view(raw, source: str) -> dict:
    """The preview camera's azimuth and elevation [deg] (``render.Camera.framing``)."""
    _object(raw, "output.view", source)
    base = DEFAULTS["output"]["view"]
    _known(raw, base, ["output", "view"], source)
    view = {}
    for k, v in base.items():
        value = raw.get(k, v)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise scene_error(source, f"output.view.{k}", f"expected a finite number of degrees, got {value!r}")
        view[k] = float(value)
    return view


def _known(obj: dict, keys, path: list, source: str) -> None:
    for k in obj:
        if k not in keys:
            raise scene_error(source, [*path, k], f"unknown key {k!r} in a face scene ({FACE_FORMAT}); expected "
                                                  f"one of {', '.join(keys)}")


def _object(value, where: str, source: str) -> None:
    if not isinstance(value, dict):
        raise scene_error(source, where, f"expected an object, got {value!r}")


def _choice(raw: dict, key: str, choices, source: str) -> str:
    value = raw.get(key, DEFAULTS[key])
    if value not in choices:
        raise scene_error(source, key, f"expected one of {', '.join(map(repr, choices))}, got {value!r}")
    return value


def _integer(value, where: str, source: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise scene_error(source, where, f"expected an integer >= 1, got {value!r}")
    return value


def _boolean(value, where: str, source: str) -> bool:
    if not isinstance(value, bool):
        raise scene_error(source, where, f"expected true or false, got {value!r}")
    return value


def _positive(value, where: str, source: str, allow_null: bool = False):
    if value is None and allow_null:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not (value > 0 and math.isfinite(value)):
        null = " or null" if allow_null else ""
        raise scene_error(source, where, f"expected a positive finite number{null}, got {value!r}")
    return float(value)


def _frames(value, source: str) -> list:
    """[first, last] from "all" or a pair of frame indices (0 <= first <= last < N_FRAMES)."""
    if value == "all":
        return [0, N_FRAMES - 1]
    ok = (isinstance(value, list) and len(value) == 2 and all(isinstance(v, int) and not isinstance(v, bool)
                                                              for v in value))
    if not ok or not 0 <= value[0] <= value[1] < N_FRAMES:
        raise scene_error(source, "frames", f"expected \"all\" or [first, last] with 0 <= first <= last <= "
                                            f"{N_FRAMES - 1}, got {value!r}")
    return list(value)


def _contact(raw, source: str) -> dict:
    _object(raw, "contact", source)
    base = DEFAULTS["contact"]
    _known(raw, base, ["contact"], source)
    c = {"enabled": _boolean(raw.get("enabled", True), "contact.enabled", source),
         "dhat": _positive(raw.get("dhat"), "contact.dhat", source, allow_null=True),
         "dhat_rel": _positive(raw.get("dhat_rel", base["dhat_rel"]), "contact.dhat_rel", source),
         "kappa": _positive(raw.get("kappa"), "contact.kappa", source, allow_null=True),
         "convergent": _boolean(raw.get("convergent", True), "contact.convergent", source)}
    return c
