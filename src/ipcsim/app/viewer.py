"""The self-contained browser viewer of a run: ``ipcsim view OUT`` (Python: ``write_viewer``) writes OUT/viewer.html,
one file that plays the run in a browser opened from disk, offline (docs/viewer.md).

The page inlines three.js (vendored in ``ipcsim/viewer_assets``, MIT) and the viewer's script, loaded as ES modules
through an import map whose entries are ``data:`` URLs (no server, no network), and the run's data as one JSON
block:

- topology once: the vertices sorted by collision body (each body's contiguous, in the PLY's order), the
  triangles grouped by the body of their first vertex (int32 indices into the sorted vertices: a triangle may
  join two bodies, as the face run's lip proxy's), zlib-compressed, base64;
- positions of every frame quantised per body and axis to 16 bits over the body's bounding box across all frames
  (x = lo + (q + 32768) * step [m], step = extent / 65535, so the error is at most step / 2 per axis), stored as
  second differences over the frames (``frame_deltas`` twice, int16, wrapping: a third smaller after zlib than
  first differences for the teddy grasp), zlib-compressed, base64; the page inflates them with the browser's
  DecompressionStream and sums them twice;
- a per-vertex field: the distance [m] from each vertex to the nearest other collision body's surface
  (``nearest_other_distance``: scipy's cKDTree, then point-triangle distances near contact), stored as 8-bit
  codes on a log scale between ``lo`` and ``hi`` [m];
- the frame times [s] (``export.frame_times``), the stats.csv row of each frame's step (frame k of a
  time-stepped run is step k * every; a face run's row ``frame`` k), the forces.csv columns per body, and the
  half spaces of OUT/scene.json (drawn as grids).
"""
from __future__ import annotations

import base64
import csv
import json
import math
import os
import re
import sys
import webbrowser
import zlib
from importlib import resources
from pathlib import Path

import numpy as np

from ..io import frames as io_frames
from .export import ExportError, load_run, run_timing

THREE_VERSION = "0.170.0"
#: stats.csv columns shown under the 3D view, in this order, where the run has them (label, column)
STATS_COLUMNS = (("Newton iterations", "newton_iterations"), ("iterations", "iterations"),
                 ("line search", "line_search_steps"), ("contacts", "n_contacts"), ("min distance [m]", "min_distance"),
                 ("converged", "converged"), ("inverted tets", "n_inverted"), ("wall [s]", "wall_seconds"))
FORCE_COLUMNS = ("contact_x", "contact_y", "contact_z", "friction_x", "friction_y", "friction_z")
_PALETTE = ("#4682b5", "#e67d21", "#4da654", "#d63d4f", "#9466bd", "#8c5749", "#e378c2", "#bdbd21", "#17bfcf")
_OBSTACLE = "#9e9ea3"


class ViewerError(ExportError):
    """A run directory the viewer cannot show; one-line message."""


def _b64z(array: np.ndarray) -> str:
    """base64 of the zlib-compressed little-endian bytes of ``array``."""
    return base64.b64encode(zlib.compress(np.ascontiguousarray(array).tobytes(), 9)).decode("ascii")


def quantise(frames: np.ndarray, groups: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Quantise positions ``frames`` (k, n, 3) [m] to int16 per group of vertices (a body) and axis over the group's
    bounding box across all frames. Returns (q (k, n, 3) int16, lo (g, 3) [m], step (g, 3) [m]) with
    x ~ lo + (q + 32768) * step, |error| <= step / 2 (step 1 on an axis where the group does not extend)."""
    q = np.zeros(frames.shape, np.int16)
    lo, step = np.zeros((len(groups), 3)), np.ones((len(groups), 3))
    for g, idx in enumerate(groups):
        x = frames[:, idx]
        lo[g] = x.min(axis=(0, 1)) if x.size else 0.0
        ext = x.max(axis=(0, 1)) - lo[g] if x.size else np.zeros(3)
        step[g] = np.where(ext > 0, ext / 65535.0, 1.0)
        q[:, idx] = (np.rint((x - lo[g]) / step[g]) - 32768).astype(np.int16)
    return q, lo, step


def dequantise(q: np.ndarray, lo: np.ndarray, step: np.ndarray, groups: list[np.ndarray]) -> np.ndarray:
    """Inverse of ``quantise`` (float64 [m]), the page's decoding."""
    x = np.zeros(q.shape)
    for g, idx in enumerate(groups):
        x[..., idx, :] = lo[g] + (q[..., idx, :].astype(np.float64) + 32768.0) * step[g]
    return x


def frame_deltas(q: np.ndarray) -> np.ndarray:
    """(k, n, 3) int16: frame 0 as is, frame i as q[i] - q[i - 1] wrapped to int16 (the page sums them back)."""
    d = q.copy()
    d[1:] = (q[1:].astype(np.int32) - q[:-1].astype(np.int32)).astype(np.int16)  # two's-complement wrap
    return d


def point_triangle_distance(p: np.ndarray, a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """(k,) [m] distance from points ``p`` (k, 3) [m] to triangles (a, b, c) (k, 3 each) [m]: to the plane where
    the point projects inside the triangle, else to the nearest of its three edges (degenerate triangles: edges)."""
    n = np.cross(b - a, c - a)
    n2 = np.einsum("ij,ij->i", n, n)
    inside = n2 > 0
    for u, v in ((a, b), (b, c), (c, a)):
        inside &= np.einsum("ij,ij->i", np.cross(v - u, p - u), n) >= 0
    d2 = np.full(len(p), np.inf)
    for u, v in ((a, b), (b, c), (c, a)):
        e = v - u
        e2 = np.einsum("ij,ij->i", e, e)
        t = np.clip(np.einsum("ij,ij->i", p - u, e) / np.where(e2 > 0, e2, 1.0), 0.0, 1.0)
        r = p - u - t[:, None] * e
        d2 = np.minimum(d2, np.einsum("ij,ij->i", r, r))
    plane = np.einsum("ij,ij->i", p - a, n) ** 2 / np.where(inside, n2, 1.0)
    return np.sqrt(np.where(inside, np.minimum(plane, d2), d2))


def nearest_other_distance(x: np.ndarray, faces: np.ndarray, body: np.ndarray, k: int = 8) -> np.ndarray:
    """(n,) [m] distance from each vertex of positions ``x`` (n, 3) [m] to the surface (``faces`` (m, 3), or the
    vertices of a body without triangles) of the nearest other collision body (``body`` (n,) ids); inf where
    there is no other body. Exact (point-triangle) against the ``k`` triangles with the nearest centres for
    vertices closer than twice the other body's longest edge; farther ones get the distance to the nearest
    vertex or triangle centre (an upper bound, off by less than the longest edge)."""
    from scipy.spatial import cKDTree

    out = np.full(len(x), np.inf)
    face_body = body[faces[:, 0]] if len(faces) else np.zeros(0, np.int64)
    for b in np.unique(body):
        others = np.flatnonzero(body != b)
        if not len(others):
            continue
        tri = faces[face_body == b]
        centres = x[tri].mean(axis=1) if len(tri) else np.zeros((0, 3))
        d, _ = cKDTree(np.concatenate([x[body == b], centres])).query(x[others])
        if len(tri):
            edges = x[tri] - x[np.roll(tri, 1, axis=1)]
            near = others[d < 2.0 * np.sqrt(np.einsum("ijk,ijk->ij", edges, edges).max())]
            if len(near):
                kk = min(k, len(tri))
                _, cand = cKDTree(centres).query(x[near], k=kk)
                cand = cand.reshape(len(near), kk)
                p = np.repeat(x[near], kk, axis=0)
                t = tri[cand.ravel()]
                exact = point_triangle_distance(p, x[t[:, 0]], x[t[:, 1]], x[t[:, 2]]).reshape(len(near), kk)
                d[np.searchsorted(others, near)] = np.minimum(d[np.searchsorted(others, near)], exact.min(axis=1))
        out[others] = np.minimum(out[others], d)
    return out


def distance_codes(d: np.ndarray, lo: float, hi: float) -> np.ndarray:
    """uint8 codes of distances ``d`` [m] on a log scale: 0 at or below ``lo``, 254 at or above ``hi``, 255 for
    inf (no other body)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        s = (np.log(np.maximum(d, lo)) - math.log(lo)) / (math.log(hi) - math.log(lo))
    codes = np.rint(np.clip(s, 0.0, 1.0) * 254.0).astype(np.uint8)
    codes[~np.isfinite(d)] = 255
    return codes


def _read_csv(path: Path) -> tuple[list[str], list[dict]]:
    if not path.is_file():
        return [], []
    try:
        with open(path, newline="") as fh:
            reader = csv.DictReader(fh)
            return list(reader.fieldnames or []), list(reader)
    except (OSError, csv.Error, UnicodeDecodeError) as exc:
        raise ViewerError(f"{path}: unreadable ({exc})") from None


def _number(text) -> float | None:
    try:
        v = float(text)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) else (None if math.isnan(v) else v)


def frame_stats(out: Path, times: np.ndarray) -> dict:
    """{"labels": [...], "rows": per frame a list of values (None: missing) or None}: the stats.csv row of each
    frame (step k * every of a time-stepped run, row ``frame`` k of a face run)."""
    header, rows = _read_csv(out / "stats.csv")
    cols = [(label, c) for label, c in STATS_COLUMNS if c in header]
    if "frame" in header:
        key, wanted = "frame", list(range(len(times)))
    elif "step" in header:
        timing = run_timing(out)
        every = timing[1] if timing else None
        if every is None:  # no checkpoint: the step whose time is nearest the frame's
            by_time = {round(_number(r.get("time")) or -1.0, 9): r for r in rows}
            return {"labels": [c[0] for c in cols],
                    "rows": [_row(by_time.get(round(float(t), 9)), cols) for t in times]}
        key, wanted = "step", [k * every for k in range(len(times))]
    else:
        return {"labels": [], "rows": [None] * len(times)}
    index = {}
    for r in rows:
        try:
            index[int(float(r[key]))] = r
        except (TypeError, ValueError):
            continue
    return {"labels": [c[0] for c in cols], "rows": [_row(index.get(w), cols) for w in wanted]}


def _row(row: dict | None, cols) -> list | None:
    if row is None:
        return None
    vals = [_number(row.get(c)) for _, c in cols]
    return [None if v is None else (v if math.isfinite(v) else "inf") for v in vals]


def body_forces(out: Path, n_ids: int) -> dict:
    """{"time": (s,) [s], "bodies": {id: {column: (s,) [N]}}} from forces.csv (5 significant digits); empty
    without one."""
    header, rows = _read_csv(out / "forces.csv")
    if "body" not in header or "time" not in header:
        return {}
    series: dict[int, dict[str, list]] = {}
    for r in rows:
        try:
            b = int(r["body"])
        except (TypeError, ValueError):
            continue
        s = series.setdefault(b, {"time": [], **{c: [] for c in FORCE_COLUMNS}})
        s["time"].append(_number(r["time"]))
        for c in FORCE_COLUMNS:
            s[c].append(_number(r.get(c)))
    rnd = lambda v: None if v is None or not math.isfinite(v) else float(f"{v:.5g}")  # noqa: E731
    return {str(b): {c: [rnd(v) for v in vs] for c, vs in s.items()} for b, s in series.items() if b < n_ids}


def _half_spaces(out: Path) -> list:
    try:
        data = json.loads((out / "scene.json").read_text(encoding="utf-8"))
        return [{"origin": [float(v) for v in h["origin"]], "normal": [float(v) for v in h["normal"]]}
                for h in data.get("half_spaces", []) or []]
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        return []


def viewer_data(out) -> dict:
    """The JSON the page reads: the run in ``out`` encoded as the module docstring says. ViewerError when ``out``
    is no run directory or its frames do not share one surface."""
    try:
        run = load_run(out)
        frames = np.stack(list(run.positions()))  # (k, n, 3) [m]
    except ExportError as exc:
        raise ViewerError(str(exc)) from None
    order = np.argsort(run.body, kind="stable")  # the page's vertex order: body by body
    body = run.body[order]
    new = np.empty(len(order), np.int64)
    new[order] = np.arange(len(order))
    faces = new[run.faces]
    frames = frames[:, order]
    ids = list(range(int(body.max()) + 1)) if len(body) else []
    groups = [np.flatnonzero(body == b) for b in ids]
    face_body = body[faces[:, 0]] if len(faces) else np.zeros(0, np.int64)
    body_faces = [faces[face_body == b] for b in ids]  # a face belongs to its first vertex's body
    q, lo, step = quantise(frames, groups)
    dist = np.stack([nearest_other_distance(x, faces, body) for x in frames])
    finite = dist[np.isfinite(dist) & (dist > 0)]
    diag = float(np.linalg.norm(np.ptp(frames.reshape(-1, 3), axis=0))) if frames.size else 1.0
    hi = max(0.25 * diag, 1e-9)
    d_lo = max(float(finite.min()) if finite.size else hi * 1e-4, hi * 1e-4)
    moving = [b for b, g in zip(ids, groups) if len(g) and np.ptp(frames[:, g], axis=0).max() > 0]
    framed = [b for b in ids if b < run.n_bodies and len(groups[b])] or ids  # the camera's: not the obstacles
    shown = np.concatenate([groups[b] for b in framed]) if framed else np.arange(len(body))
    box = [frames[:, shown].min(axis=(0, 1)).tolist(), frames[:, shown].max(axis=(0, 1)).tolist()] if len(shown) \
        else [[-1.0] * 3, [1.0] * 3]
    bodies = [{"id": b, "name": run.names[b], "obstacle": b >= run.n_bodies, "moving": b in moving,
               "color": _OBSTACLE if b >= run.n_bodies else _PALETTE[b % len(_PALETTE)],
               "start": int(g[0]) if len(g) else 0, "nv": len(g), "nf": len(f), "lo": lo[b].tolist(),
               "step": step[b].tolist()} for b, g, f in zip(ids, groups, body_faces)]
    return {"name": run.name, "nFrames": len(frames), "nVerts": len(body), "times": [float(t) for t in run.times],
            "fps": float(run.fps), "bodies": bodies, "box": box,
            "faces": _b64z(np.concatenate(body_faces).astype("<i4") if body_faces else np.zeros(0, "<i4")),
            "positions": _b64z(frame_deltas(frame_deltas(q)).astype("<i2")),  # second differences
            "distance": {"codes": _b64z(distance_codes(dist, d_lo, hi)), "lo": d_lo, "hi": hi,
                         "lut": _colormap_lut()},
            "stats": frame_stats(run.out, run.times), "forces": body_forces(run.out, len(ids)),
            "halfSpaces": _half_spaces(run.out)}


def _colormap_lut() -> str:
    """256 RGB bytes (base64) of matplotlib's turbo reversed: near (code 0) red, far blue."""
    from matplotlib import colormaps

    return base64.b64encode((colormaps["turbo_r"](np.linspace(0, 1, 256))[:, :3] * 255).round()
                            .astype(np.uint8).tobytes()).decode("ascii")


def _asset(name: str) -> str:
    return resources.files("ipcsim").joinpath("viewer_assets", name).read_text(encoding="utf-8")


def _data_url(js: str) -> str:
    return "data:text/javascript;base64," + base64.b64encode(js.encode("utf-8")).decode("ascii")


def viewer_html(data: dict) -> str:
    """The page: viewer.html's template with the import map (three.js and OrbitControls as data: URLs), the run's
    JSON and the viewer's script inlined."""
    imports = {"three": _data_url(_asset("three.module.min.js")),
               "three/addons/OrbitControls.js": _data_url(_asset("OrbitControls.js"))}
    blob = json.dumps(data, separators=(",", ":"), allow_nan=False).replace("</", "<\\/")
    script = _asset("viewer.js")
    if "</script" in script:
        raise AssertionError("viewer.js must not contain '</script'")
    values = {"TITLE": _escape(data["name"]), "THREE_VERSION": THREE_VERSION,
              "IMPORTMAP": json.dumps({"imports": imports}), "DATA": blob, "SCRIPT": script}
    return re.sub(r"\{\{([A-Z_]+)\}\}", lambda m: values[m.group(1)], _asset("viewer.html"))


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")


def write_viewer(out, output=None) -> Path:
    """Write the viewer of run directory ``out`` to ``output`` (default OUT/viewer.html), atomically; returns its
    path. ViewerError (one line, nothing written) when ``out`` is no run directory."""
    out = Path(out)
    page = viewer_html(viewer_data(out))
    target = Path(output) if output is not None else out / "viewer.html"
    io_frames.write_text(target, page)
    return target


def open_in_browser(path: Path) -> bool:
    """Open ``path`` in the user's browser where Python's webbrowser finds one; False (no error) otherwise. On
    Linux without a display (DISPLAY, WAYLAND_DISPLAY) nor $BROWSER it opens nothing: webbrowser would start a
    text-mode browser, which shows no WebGL, in the terminal."""
    if sys.platform.startswith("linux") and not any(os.environ.get(k) for k in ("DISPLAY", "WAYLAND_DISPLAY",
                                                                                   "BROWSER")):
        return False
    try:
        return bool(webbrowser.open(Path(path).resolve().as_uri()))
    except Exception:  # noqa: BLE001  (no browser, no display: the file is written, that is enough)
        return False
