"""Exports of a run directory (``ipcsim export OUT --format usd|pvd|obj``; Python: ``export_run``) for tools that
play a run as an animation: Blender, Houdini, Omniverse / Isaac Sim (USD), ParaView (PVD), any OBJ-sequence
importer.

What is read (layout in docs/output.md): OUT/frames/surface_NNNNN.ply (the collision surface of the whole
scene, per-vertex ``body`` id: the simulated bodies, then the obstacles, in scene order); the bodies' names
from OUT/forces.csv (as the run wrote them), the first frame's header (``io_frames.read_ply_names``: a face
run's lips and skin) or OUT/scene.json (``bodies[].name``, ``obstacles[].name``, which also tell the obstacles
apart); the time step dt and the frame spacing ``every`` from OUT/checkpoint.npz or
OUT/scene.json (``time.dt``, ``output.every``). Frame k holds the state after k * every steps, so its time is
t_k = k * every * dt [s] and the frames are 1 / (every * dt) apart; a run without a time step (a face run) is
given ``DEFAULT_FPS`` frames per second, t_k = k / DEFAULT_FPS.

- ``usd``: one stage (``.usd``/``.usdc`` binary, ``.usda`` text); /World (the default prim) holds one
  ``UsdGeom.Mesh`` per collision body named after the scene's body (``Tf.MakeValidIdentifier``; the exact name
  as the prim's displayName and ``ipcsim:name``), its points time-sampled at time code k for frame k
  (float32 [m]), ``timeCodesPerSecond`` = ``framesPerSecond`` = frames per second, ``metersPerUnit`` 1. An
  obstacle whose points are the same in every frame gets one static value, no time samples. Needs usd-core
  (``pip install 'ipcsim[usd]'``).
- ``pvd``: a ParaView collection (NAME.pvd) of one VTU surface per frame (NAME/surface_NNNNN.vtu: triangles,
  point data ``body``) with ``timestep`` = t_k [s], so ParaView's time slider shows seconds; with volume frames
  also NAME_volume.pvd over the run's own frames/volume_NNNNN.vtu.
- ``obj``: a folder of NAME_NNNNN.obj, one per frame, one ``o`` object per body (its vertices, then its faces).

``up="z"`` rotates every point by +90 degrees about x, (x, y, z) -> (x, -z, y), so ipcsim's up (+y) becomes +z,
and the USD stage's upAxis is set to Z; ``up="y"`` keeps the points and sets upAxis Y.
Every file is written atomically and a multi-file export is assembled in a temporary folder renamed into place,
so a failed export leaves nothing half-written. Bad input raises ``ExportError`` (one line).
"""
from __future__ import annotations

import csv
import io
import json
import math
import os
import shutil
import tempfile
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..io import frames as io_frames

FORMATS = ("usd", "pvd", "obj")
UP_AXES = ("y", "z")
#: frames per second given to a run without a time step (a face run), as its preview movie
DEFAULT_FPS = 10.0
_SUFFIX = {"usd": ".usd", "pvd": ".pvd", "obj": ""}


class ExportError(ValueError):
    """A run directory that cannot be exported, or a bad option; one-line message."""


@dataclass
class RunFrames:
    """The frames of a run directory, read lazily (``positions``).

    Attributes:
        out: the run directory; name: the scene's name; paths: the frame files in order;
        faces: (m, 3) int64 triangles (the same in every frame); body: (n,) int64 collision body id per vertex;
        names: name per collision body id; n_bodies: ids below it are simulated bodies, the others obstacles;
        times: (k,) [s] time of each frame; fps: frames per second (1 / frame spacing);
        volume_paths: the run's frames/volume_*.vtu (empty when it wrote none).
    """

    out: Path
    name: str
    paths: list
    faces: np.ndarray
    body: np.ndarray
    names: list
    n_bodies: int
    times: np.ndarray
    fps: float
    volume_paths: list

    def positions(self, up: str = "y") -> Iterator[np.ndarray]:
        """(n, 3) float64 [m] vertex positions of each frame in order (rotated for ``up``); ExportError naming
        the frame whose surface differs from frame 0."""
        for p in self.paths:
            try:
                v, f = io_frames.read_ply(p)
            except (OSError, ValueError) as exc:
                raise ExportError(f"{p}: unreadable frame ({exc})") from None
            if len(v) != len(self.body) or not np.array_equal(f, self.faces):
                raise ExportError(f"{p}: its surface differs from {self.paths[0].name} (vertex count or faces)")
            yield to_up(v, up)


def to_up(points: np.ndarray, up: str) -> np.ndarray:
    """(n, 3) [m] points in ipcsim's frame (y up) for up "y"; rotated +90 degrees about x, (x, y, z) ->
    (x, -z, y), for up "z"."""
    if up == "y":
        return points
    return np.stack([points[:, 0], 0.0 - points[:, 2], points[:, 1]], axis=1)


def frame_times(data: dict | None, n_frames: int, timing: tuple | None = None) -> tuple[np.ndarray, float]:
    """(times (n_frames,) [s], frames per second) of a run's frames: t_k = k * every * dt (frame k is the state
    after k * every steps) with (dt, every) = ``timing`` (what the run recorded in its checkpoint, ``run_timing``)
    or else time.dt and output.every of the resolved scene ``data``; k / DEFAULT_FPS when neither gives a time
    step (face runs)."""
    if timing is None:
        timing = ((data or {}).get("time", {}).get("dt"), (data or {}).get("output", {}).get("every", 1))
    dt, every = timing
    if not isinstance(dt, (int, float)) or not (dt > 0 and math.isfinite(dt)) or int(every) < 1:
        return np.arange(n_frames) / DEFAULT_FPS, DEFAULT_FPS
    step = int(every) * float(dt)
    return np.arange(n_frames) * step, 1.0 / step


def run_timing(out: Path) -> tuple | None:
    """(dt [s], every) of the run in ``out`` from its OUT/checkpoint.npz (the runner writes both; a demo's
    scene.json may hold neither, e.g. the teddy grasp's); None without a readable checkpoint."""
    path = Path(out) / "checkpoint.npz"
    if not path.is_file():
        return None
    try:
        with np.load(path, allow_pickle=False) as z:
            return float(z["dt"]), int(z["every"])
    except (OSError, ValueError, KeyError):
        return None


def recorded_names(out: Path) -> list | None:
    """The collision bodies' names in id order as the run wrote them in OUT/forces.csv (``body``, ``name``
    columns; ``runner.collision_body_names``); None without such rows."""
    path = Path(out) / "forces.csv"
    if not path.is_file():
        return None
    names = {}
    with open(path, newline="") as fh:
        for row in csv.DictReader(fh):
            try:
                names.setdefault(int(row["body"]), row["name"])
            except (KeyError, TypeError, ValueError):
                return None
    return [names.get(i, f"body{i}") for i in range(max(names) + 1)] if names else None


def body_names(data: dict | None, n_ids: int, recorded: list | None = None) -> tuple[list, int]:
    """(name per collision body id, number of simulated bodies: ids at or above it are obstacles): the names the
    run ``recorded`` (``recorded_names``) or else the scene's ``bodies[].name`` then ``obstacles[].name`` (as
    ``runner.collision_body_names``), "body<i>" where neither names one. Without the scene's ``bodies`` (a
    demo's parameters, a face run) every id counts as a body."""
    bodies = [str(b.get("name", f"body{i}")) for i, b in enumerate((data or {}).get("bodies", []) or [])]
    obstacles = [str(o.get("name", f"obstacle{i}")) for i, o in enumerate((data or {}).get("obstacles", []) or [])]
    names = list(recorded) if recorded else bodies + obstacles
    names = [names[i] if i < len(names) else f"body{i}" for i in range(max(n_ids, len(names)))]
    return names, (len(bodies) if bodies else len(names))


def load_run(out) -> RunFrames:
    """The frames of run directory ``out`` (its first frame read, the others on demand); ExportError when it is
    no run directory (no frames/surface_*.ply) or its scene.json is unreadable."""
    from ..io.output import list_frames

    out = Path(out)
    if not out.is_dir():
        raise ExportError(f"{str(out)!r} is not a directory (give a run's output directory)")
    paths = list_frames(out)
    if not paths:
        raise ExportError(f"{out}: no frames/surface_*.ply (is it the output directory of a run?)")
    data = None
    if (out / "scene.json").is_file():
        try:
            data = json.loads((out / "scene.json").read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise ExportError(f"{out / 'scene.json'}: unreadable ({exc})") from None
        if not isinstance(data, dict):
            raise ExportError(f"{out / 'scene.json'}: not a JSON object")
    try:
        _, faces, body = io_frames.read_ply(paths[0], with_body=True)
        recorded = recorded_names(out) or io_frames.read_ply_names(paths[0])
    except (OSError, ValueError) as exc:
        raise ExportError(f"{paths[0]}: unreadable frame ({exc})") from None
    names, n_bodies = body_names(data, int(body.max()) + 1 if len(body) else 0, recorded)
    times, fps = frame_times(data, len(paths), run_timing(out))
    name = str((data or {}).get("name") or out.resolve().name or "run")
    return RunFrames(out, name, paths, faces, body, names, n_bodies, times, fps, list_frames(out, "volume"))


def _safe_stem(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in name).strip(".") or "run"


def default_output(run: RunFrames, fmt: str) -> Path:
    """OUT/export/<scene name>.usd | .pvd, or the folder OUT/export/obj."""
    return run.out / "export" / ("obj" if fmt == "obj" else _safe_stem(run.name) + _SUFFIX[fmt])


def export_run(out, fmt: str, output=None, up: str = "y") -> list[Path]:
    """Export run directory ``out`` as ``fmt`` ("usd", "pvd" or "obj") to ``output`` (a .usd/.usda/.usdc file,
    a .pvd file or a folder; default ``default_output``) with ``up`` "y" or "z"; returns the paths written
    (the main file first). ExportError for an unknown format or axis, a directory that is no run, usd-core
    missing; nothing is written then."""
    if fmt not in FORMATS:
        raise ExportError(f"unknown export format {fmt!r} (choose one of {', '.join(FORMATS)})")
    if up not in UP_AXES:
        raise ExportError(f"unknown up axis {up!r} (choose y or z)")
    pxr = _import_pxr() if fmt == "usd" else None
    run = load_run(out)
    target = Path(output) if output is not None else default_output(run, fmt)
    if fmt == "usd" and target.suffix not in (".usd", ".usda", ".usdc"):
        raise ExportError(f"{target}: a USD file ends in .usd, .usda or .usdc")
    if fmt == "pvd" and target.suffix != ".pvd":
        raise ExportError(f"{target}: a ParaView collection ends in .pvd")
    if target.exists() and (target.is_dir() != (fmt == "obj")):
        raise ExportError(f"{target} exists and is {'not ' if fmt == 'obj' else ''}a directory")
    created = not target.parent.exists()
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        if fmt == "usd":
            return [write_usd(run, target, up, pxr)]
        if fmt == "pvd":
            return write_pvd(run, target, up)
        return [write_obj(run, target, up)]
    except BaseException:
        if created and not any(target.parent.iterdir()):
            target.parent.rmdir()  # the folder made for the export (OUT/export); the ones above it stay
        raise


def _import_pxr():
    try:
        from pxr import Sdf, Tf, Usd, UsdGeom, Vt
    except ImportError:
        raise ExportError("USD export needs usd-core: pip install 'ipcsim[usd]' (or pip install usd-core)") from None
    return {"Sdf": Sdf, "Tf": Tf, "Usd": Usd, "UsdGeom": UsdGeom, "Vt": Vt}


# ----------------------------------------------------------------------------------------------- USD
def _prim_names(names: list, tf) -> list[str]:
    """A unique valid USD identifier per body name (suffix _<id> on a clash)."""
    used, out = set(), []
    for i, n in enumerate(names):
        s = tf.MakeValidIdentifier(n)
        if s in used:
            s = f"{s}_{i}"
        used.add(s)
        out.append(s)
    return out


@dataclass
class _UsdBody:
    """One collision body's prim: idx (its vertices' indices in the frame), points attribute, extent attribute,
    first (its points at frame 0, float32), static (an obstacle not seen moving yet: no time samples)."""

    idx: np.ndarray
    points: object
    extent: object
    first: np.ndarray
    static: bool


def _define_body(stage, pxr, run: RunFrames, b: int, prim_name: str, x0: np.ndarray) -> _UsdBody:
    """Define /World/<prim_name>, the mesh (or points, for a body without triangles) of collision body b."""
    UsdGeom, Vt, Sdf = pxr["UsdGeom"], pxr["Vt"], pxr["Sdf"]
    idx = np.flatnonzero(run.body == b)
    local = np.full(len(run.body), -1, np.int64)
    local[idx] = np.arange(len(idx))
    faces = local[run.faces[np.isin(run.faces[:, 0], idx)]]
    path = f"/World/{prim_name}"
    if len(faces):
        geom = UsdGeom.Mesh.Define(stage, path)
        geom.CreateFaceVertexCountsAttr(Vt.IntArray.FromNumpy(np.full(len(faces), 3, np.int32)))
        geom.CreateFaceVertexIndicesAttr(Vt.IntArray.FromNumpy(faces.astype(np.int32).ravel()))
        geom.CreateSubdivisionSchemeAttr(UsdGeom.Tokens.none)
    else:
        geom = UsdGeom.Points.Define(stage, path)
    prim = geom.GetPrim()
    if prim.GetName() != run.names[b]:
        prim.SetDisplayName(run.names[b])
    prim.CreateAttribute("ipcsim:name", Sdf.ValueTypeNames.String, custom=True).Set(run.names[b])
    prim.CreateAttribute("ipcsim:body", Sdf.ValueTypeNames.Int, custom=True).Set(int(b))
    obstacle = b >= run.n_bodies
    prim.CreateAttribute("ipcsim:obstacle", Sdf.ValueTypeNames.Bool, custom=True).Set(bool(obstacle))
    geom.CreateDisplayColorAttr(Vt.Vec3fArray([_color(b, obstacle)]))
    return _UsdBody(idx, geom.CreatePointsAttr(), geom.CreateExtentAttr(), x0[idx].astype(np.float32), obstacle)


def _color(b: int, obstacle: bool):
    from matplotlib import colormaps

    return (0.6, 0.6, 0.6) if obstacle else tuple(float(c) for c in colormaps["tab10"](b % 10)[:3])


def _set_points(pxr, body: _UsdBody, p: np.ndarray, code) -> None:
    """Points p (k, 3) float32 and their extent at time code ``code`` (Usd.TimeCode.Default(): static)."""
    Vt = pxr["Vt"]
    body.points.Set(Vt.Vec3fArray.FromNumpy(p), code)
    lo, hi = (p.min(axis=0), p.max(axis=0)) if len(p) else (np.zeros(3, np.float32), np.zeros(3, np.float32))
    body.extent.Set(Vt.Vec3fArray.FromNumpy(np.stack([lo, hi]).astype(np.float32)), code)


def write_usd(run: RunFrames, path: Path, up: str = "y", pxr=None) -> Path:
    """Write the run as one USD stage at ``path`` (layout in the module doc); returns path."""
    pxr = pxr or _import_pxr()
    Usd, UsdGeom = pxr["Usd"], pxr["UsdGeom"]
    stage = Usd.Stage.CreateInMemory()
    UsdGeom.SetStageUpAxis(stage, UsdGeom.Tokens.z if up == "z" else UsdGeom.Tokens.y)
    UsdGeom.SetStageMetersPerUnit(stage, 1.0)
    stage.SetTimeCodesPerSecond(run.fps)
    stage.SetFramesPerSecond(run.fps)
    stage.SetStartTimeCode(0)
    stage.SetEndTimeCode(len(run.paths) - 1)
    world = UsdGeom.Xform.Define(stage, "/World")
    stage.SetDefaultPrim(world.GetPrim())
    stage.GetRootLayer().customLayerData = {"ipcsim:scene": run.name, "ipcsim:frames": len(run.paths)}
    frames = run.positions(up)
    x0 = next(frames)
    prims = _prim_names(run.names, pxr["Tf"])
    bodies = [_define_body(stage, pxr, run, b, prims[b], x0) for b in range(len(run.names))
              if np.any(run.body == b)]
    for body in bodies:
        _set_points(pxr, body, body.first, Usd.TimeCode.Default() if body.static else Usd.TimeCode(0))
    for k, x in enumerate(frames, start=1):
        for body in bodies:
            p = x[body.idx].astype(np.float32)
            if body.static and np.array_equal(p, body.first):
                continue
            if body.static:  # an obstacle that moves after all: time samples from frame 0 on
                body.static = False
                for j in range(k):
                    _set_points(pxr, body, body.first, Usd.TimeCode(j))
            _set_points(pxr, body, p, Usd.TimeCode(k))
    with io_frames.atomic_path(path) as tmp:
        if not stage.GetRootLayer().Export(tmp):
            raise ExportError(f"{path}: USD could not write the stage")
    return path


# ----------------------------------------------------------------------------------------------- PVD, OBJ
def _collection(entries: list[tuple[float, str]]) -> str:
    """A ParaView data collection (VTKFile type="Collection") of (time [s], relative file) entries."""
    root = ET.Element("VTKFile", type="Collection", version="0.1", byte_order="LittleEndian")
    coll = ET.SubElement(root, "Collection")
    for t, f in entries:
        ET.SubElement(coll, "DataSet", timestep=repr(float(t)), group="", part="0", file=f)
    ET.indent(root)
    return '<?xml version="1.0"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


class _AtomicDir:
    """A temporary folder next to ``path``, renamed to ``path`` on success (an existing folder there is replaced),
    removed on any exception."""

    def __init__(self, path: Path):
        self.path = Path(path)

    def __enter__(self) -> Path:
        self.tmp = Path(tempfile.mkdtemp(dir=self.path.parent, prefix=".tmp-"))
        return self.tmp

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is not None:
            shutil.rmtree(self.tmp, ignore_errors=True)
            return
        os.chmod(self.tmp, 0o777 & ~_umask())
        old = None
        if self.path.exists():
            old = Path(tempfile.mkdtemp(dir=self.path.parent, prefix=".tmp-old-"))
            os.replace(self.path, old / "x")
        os.replace(self.tmp, self.path)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def write_pvd(run: RunFrames, path: Path, up: str = "y") -> list[Path]:
    """Write NAME.pvd over NAME/surface_NNNNN.vtu (and NAME_volume.pvd over the run's volume frames when it has
    some) next to each other at ``path``; returns the .pvd files written."""
    import meshio

    folder = path.with_suffix("")
    cells = [("triangle", run.faces)]
    body = run.body.astype(np.int32)
    with _AtomicDir(folder) as tmp:
        entries = []
        for k, x in enumerate(run.positions(up)):
            name = f"surface_{k:05d}.vtu"
            meshio.write(tmp / name, meshio.Mesh(x, cells, point_data={"body": body}), file_format="vtu")
            entries.append((run.times[k], f"{folder.name}/{name}"))
        io_frames.write_text(path, _collection(entries))
    written = [path]
    if run.volume_paths and up == "y":
        n = min(len(run.volume_paths), len(run.times))
        vol = path.with_name(path.stem + "_volume.pvd")
        io_frames.write_text(vol, _collection([(run.times[k], os.path.relpath(run.volume_paths[k], path.parent))
                                               for k in range(n)]))
        written.append(vol)
    return written


def obj_text(run: RunFrames, x: np.ndarray, k: int) -> str:
    """One frame as OBJ text: a comment with the frame's time, then per collision body ``o <name>``, its vertices
    (``v`` [m], 9 significant digits, in the frame's order) and its triangles (1-based)."""
    buf = io.StringIO()
    buf.write(f"# ipcsim frame {k} of {run.name}, t = {float(run.times[k])!r} s\n")
    order = np.argsort(run.body, kind="stable")
    new = np.empty(len(order), np.int64)
    new[order] = np.arange(len(order))
    face_body = run.body[run.faces[:, 0]] if len(run.faces) else np.zeros(0, np.int64)
    for b in np.unique(run.body):
        buf.write(f"o {run.names[b]}\n")
        np.savetxt(buf, x[run.body == b], fmt="v %.9g %.9g %.9g")
        np.savetxt(buf, new[run.faces[face_body == b]] + 1, fmt="f %d %d %d")
    return buf.getvalue()


def write_obj(run: RunFrames, folder: Path, up: str = "y") -> Path:
    """Write folder/NAME_NNNNN.obj, one per frame (``obj_text``); returns the folder."""
    stem = _safe_stem(run.name)
    with _AtomicDir(folder) as tmp:
        for k, x in enumerate(run.positions(up)):
            io_frames.write_text(tmp / f"{stem}_{k:05d}.obj", obj_text(run, x, k))
    return folder
