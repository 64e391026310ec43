"""Headless preview of a run: OUT/preview.png (the last frame) and OUT/preview.mp4 (imageio-ffmpeg, when it is
importable) or OUT/preview.gif (Pillow).

Drawing: matplotlib's Agg canvas (no display needed), orthographic camera fixed for the whole run (it frames
the bounding box of every frame), triangles sorted back to front (painter's algorithm) and Lambert-shaded by
their normals (two-sided, so open obstacle surfaces shade too), one color per body (obstacles grey), half
spaces from OUT/scene.json drawn as checkered planes behind everything; where OUT/scene.json's output names
``preview_bodies`` (a face run: its skin), only those bodies are drawn and framed. Long runs are subsampled to
at most ``max_frames`` movie frames.
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from . import io_frames

_PALETTE = np.array([[0.27, 0.51, 0.71], [0.90, 0.49, 0.13], [0.30, 0.65, 0.33], [0.84, 0.24, 0.31],
                     [0.58, 0.40, 0.74], [0.55, 0.34, 0.29], [0.89, 0.47, 0.76], [0.74, 0.74, 0.13],
                     [0.09, 0.75, 0.81]])
_OBSTACLE = np.array([0.62, 0.62, 0.64])


@dataclass
class Camera:
    """Orthographic camera: unit vectors right, up, toward (from the scene to the eye), center (3,) [m] and
    the image-plane window (u_min, u_max, v_min, v_max) [m]."""

    right: np.ndarray
    up: np.ndarray
    toward: np.ndarray
    center: np.ndarray
    window: tuple

    @classmethod
    def framing(cls, lo, hi, up=(0.0, 1.0, 0.0), azimuth_deg=35.0, elevation_deg=25.0,
                aspect=4.0 / 3.0, margin=0.08) -> "Camera":
        """A camera looking at the box [lo, hi] (3,) [m] from azimuth/elevation [deg] about ``up``, whose
        window holds the whole box with a relative margin, at the image aspect ratio (width / height)."""
        up = np.asarray(up, float) / np.linalg.norm(up)
        ref = np.array([1.0, 0.0, 0.0]) if abs(up[0]) < 0.9 else np.array([0.0, 0.0, 1.0])
        e1 = ref - up * (ref @ up)
        e1 /= np.linalg.norm(e1)
        e2 = np.cross(up, e1)
        az, el = math.radians(azimuth_deg), math.radians(elevation_deg)
        toward = math.cos(el) * (math.sin(az) * e1 + math.cos(az) * e2) + math.sin(el) * up
        right = np.cross(up, toward)
        right /= np.linalg.norm(right)
        cam_up = np.cross(toward, right)
        lo, hi = np.asarray(lo, float), np.asarray(hi, float)
        center = 0.5 * (lo + hi)
        corners = np.array([[a, b, c] for a in (lo[0], hi[0]) for b in (lo[1], hi[1]) for c in (lo[2], hi[2])])
        u, v = (corners - center) @ right, (corners - center) @ cam_up
        half_w = max(np.ptp(u), 1e-9) / 2 * (1 + 2 * margin)
        half_h = max(np.ptp(v), 1e-9) / 2 * (1 + 2 * margin)
        half_w, half_h = max(half_w, half_h * aspect), max(half_h, half_w / aspect)
        uc, vc = 0.5 * (u.max() + u.min()), 0.5 * (v.max() + v.min())
        return cls(right, cam_up, toward, center, (uc - half_w, uc + half_w, vc - half_h, vc + half_h))

    def project(self, p: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Image coordinates (k, 2) [m] and depth toward the eye (k,) [m] of points p (k, 3) [m]."""
        q = np.asarray(p, float) - self.center
        return np.stack([q @ self.right, q @ self.up], axis=1), q @ self.toward


def shade(vertices: np.ndarray, faces: np.ndarray, base: np.ndarray, light: np.ndarray) -> np.ndarray:
    """Lambert colors (m, 3): base (m, 3) RGB times 0.35 + 0.65 |n . light| with n the unit face normal of the
    triangles faces (m, 3) over vertices (n, 3) [m]; light (3,) unit."""
    p = vertices[faces]
    n = np.cross(p[:, 1] - p[:, 0], p[:, 2] - p[:, 0])
    norm = np.linalg.norm(n, axis=1)
    cos = np.abs(n @ light) / np.where(norm > 0, norm, 1.0)
    return np.clip(base * (0.35 + 0.65 * cos)[:, None], 0.0, 1.0)


def _plane_tiles(origin, normal, lo, hi, tiles=10):
    """Checkered quads (k, 4, 3) [m] and their shade (k,) on the plane through origin with ``normal``,
    covering the box [lo, hi] projected on it, enlarged by half the box diagonal."""
    n = np.asarray(normal, float) / np.linalg.norm(normal)
    ref = np.array([1.0, 0.0, 0.0]) if abs(n[0]) < 0.9 else np.array([0.0, 1.0, 0.0])
    t1 = np.cross(n, ref)
    t1 /= np.linalg.norm(t1)
    t2 = np.cross(n, t1)
    corners = np.array([[a, b, c] for a in (lo[0], hi[0]) for b in (lo[1], hi[1]) for c in (lo[2], hi[2])])
    rel = corners - origin
    pad = 0.5 * float(np.linalg.norm(np.asarray(hi) - np.asarray(lo)))
    a = np.linspace((rel @ t1).min() - pad, (rel @ t1).max() + pad, tiles + 1)
    b = np.linspace((rel @ t2).min() - pad, (rel @ t2).max() + pad, tiles + 1)
    base = np.asarray(origin, float)
    quads, tone = [], []
    for i in range(tiles):
        for j in range(tiles):
            q = [base + a[i] * t1 + b[j] * t2, base + a[i + 1] * t1 + b[j] * t2,
                 base + a[i + 1] * t1 + b[j + 1] * t2, base + a[i] * t1 + b[j + 1] * t2]
            quads.append(q)
            tone.append(0.86 if (i + j) % 2 == 0 else 0.76)
    return np.array(quads), np.array(tone)


class Renderer:
    """Draws frames of one run with a fixed camera into RGB images (height, width, 3) uint8.

    Args:
        bounds: (lo (3,), hi (3,)) [m] of every frame; face_body: (m,) body id per face; n_bodies: ids below
        it are simulated bodies (colored), the rest obstacles (grey); planes: [(origin (3,), normal (3,))];
        up: (3,) world up (opposite to gravity); size: (width, height) pixels; view: {"azimuth_deg",
        "elevation_deg"} of the camera (None: 35 and 25 degrees).
    """

    def __init__(self, bounds, face_body, n_bodies=None, planes=(), up=(0.0, 1.0, 0.0), size=(640, 480),
                 view=None):
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure

        lo, hi = bounds
        self.camera = Camera.framing(lo, hi, up=up, aspect=size[0] / size[1], **(view or {}))
        cam = self.camera
        self.light = cam.toward + 0.7 * cam.up + 0.4 * cam.right
        self.light /= np.linalg.norm(self.light)
        body = np.maximum(np.asarray(face_body, np.int64), 0)  # -1: a PLY without body ids, one color
        n_bodies = int(body.max()) + 1 if n_bodies is None and len(body) else (n_bodies or 0)
        self.base = np.where((body < n_bodies)[:, None], _PALETTE[body % len(_PALETTE)], _OBSTACLE)
        self.fig = Figure(figsize=(size[0] / 100, size[1] / 100), dpi=100)
        self.canvas = FigureCanvasAgg(self.fig)
        self.ax = self.fig.add_axes((0, 0, 1, 1))
        self.ax.set_axis_off()
        self.fig.set_facecolor((0.97, 0.97, 0.99))
        u0, u1, v0, v1 = cam.window
        self.ax.set_xlim(u0, u1)
        self.ax.set_ylim(v0, v1)
        self.ax.set_aspect("equal")
        self._static = []
        for origin, normal in planes:
            normal = np.asarray(normal, float)
            if normal @ cam.toward <= 0:  # the eye is behind the plane: it would hide everything
                continue
            quads, tone = _plane_tiles(np.asarray(origin, float), normal, lo, hi)
            uv, _ = cam.project(quads.reshape(-1, 3))
            self._static.append((uv.reshape(-1, 4, 2), np.repeat(tone[:, None], 3, axis=1)))
        self._text = self.ax.text(0.02, 0.97, "", transform=self.ax.transAxes, va="top", ha="left", fontsize=10,
                                  color=(0.2, 0.2, 0.25))

    def draw(self, vertices: np.ndarray, faces: np.ndarray, label: str = "", segments=None,
             points=None) -> np.ndarray:
        """Image (h, w, 3) uint8 of the surface vertices (n, 3) [m], faces (m, 3), and optionally
        codimensional segments (k, 2) and points (p,) (vertex indices; drawn on top, dark grey)."""
        from matplotlib.collections import LineCollection, PolyCollection

        for c in list(self.ax.collections):
            c.remove()
        for polys, colors in self._static:
            self.ax.add_collection(PolyCollection(polys, facecolors=colors, edgecolors="none"))
        if len(faces):
            uv, depth = self.camera.project(vertices)
            order = np.argsort(depth[faces].mean(axis=1), kind="stable")
            f = faces[order]
            colors = shade(vertices, f, self.base[order], self.light)
            self.ax.add_collection(PolyCollection(uv[f], facecolors=colors, edgecolors=colors * 0.85,
                                                  linewidths=0.25, antialiased=True))
        if segments is not None and len(segments):
            uv, _ = self.camera.project(vertices)
            self.ax.add_collection(LineCollection(uv[segments], colors=[(0.25, 0.25, 0.3)], linewidths=1.2))
        for line in list(self.ax.lines):
            line.remove()
        if points is not None and len(points):
            uv, _ = self.camera.project(vertices[points])
            self.ax.plot(uv[:, 0], uv[:, 1], "o", color=(0.25, 0.25, 0.3), markersize=3)
        self._text.set_text(label)
        self.canvas.draw()
        return np.asarray(self.canvas.buffer_rgba())[..., :3].copy()


def _scene_info(out: Path) -> dict:
    """What rendering needs from OUT/scene.json (absent: defaults)."""
    info = {"dt": None, "every": 1, "planes": [], "n_bodies": None, "up": (0.0, 1.0, 0.0), "view": None,
            "bodies": None}
    path = out / "scene.json"
    if not path.is_file():
        return info
    data = json.loads(path.read_text())
    info["dt"] = data.get("time", {}).get("dt")
    info["every"] = int(data.get("output", {}).get("every", 1))
    info["planes"] = [(h["origin"], h["normal"]) for h in data.get("half_spaces", [])]
    info["n_bodies"] = len(data.get("bodies", [])) or None
    view = data.get("output", {}).get("view")  # a face scene's camera (scene.face_scene)
    if isinstance(view, dict):
        info["view"] = {k: float(view[k]) for k in ("azimuth_deg", "elevation_deg") if k in view}
    shown = data.get("output", {}).get("preview_bodies")  # a face scene's: the skin, not the lips' proxy
    if isinstance(shown, list):
        info["bodies"] = [str(b) for b in shown]
    g = np.asarray(data.get("gravity", [0.0, -9.81, 0.0]), float)
    if np.linalg.norm(g) > 0:
        info["up"] = tuple(-g / np.linalg.norm(g))
    return info


def _codimensional(out: Path, n_vertices: int):
    """(segments (k, 2), points (p,)) of the run's edge and point obstacles, indices into the PLY vertices,
    from the scene in OUT/scene.json (the PLY frames hold triangles only); (None, None) when the scene is
    absent or cannot be rebuilt (e.g. its meshes moved)."""
    path = out / "scene.json"
    if not path.is_file():
        return None, None
    data = json.loads(path.read_text())
    if not data.get("obstacles"):
        return None, None
    try:
        from .scene import load_scene

        mesh = load_scene(path).build().model.collision_mesh
    except (ValueError, OSError):
        return None, None
    if mesh.n_vertices != n_vertices:
        return None, None
    return mesh.edges[mesh.codim_edges], mesh.codim_vertices


def _shown(face_body: np.ndarray, bodies, names) -> np.ndarray:
    """(m,) bool: the faces to draw, those of the bodies named in ``bodies`` (scene.json's
    output.preview_bodies; names from the frame's header, ``io_frames.read_ply_names``, or "body<i>"); all when
    ``bodies`` is None or names none of the frame's bodies."""
    names = list(names or [])
    ids = [i for i in range(int(face_body.max()) + 1 if len(face_body) else 0)
           if (names[i] if i < len(names) else f"body{i}") in (bodies or ())]
    shown = np.isin(face_body, ids)
    return shown if shown.any() else np.ones(len(face_body), bool)


def render_run(out_dir, max_frames: int = 80, size=(640, 480)) -> list[Path]:
    """Render OUT/frames/surface_*.ply into OUT/preview.png and OUT/preview.mp4 (or .gif); returns the paths
    written. Raises ValueError when the directory holds no frame or frames of different surfaces."""
    out = Path(out_dir)
    from .runner import list_frames

    paths = list_frames(out)
    if not paths:
        raise ValueError(f"{out}: no frames/surface_*.ply to render")
    info = _scene_info(out)
    v0, f0, vertex_body = io_frames.read_ply(paths[0], with_body=True)
    body = vertex_body[f0[:, 0]] if len(f0) else np.zeros(0, np.int64)
    shown = _shown(body, info["bodies"], io_frames.read_ply_names(paths[0]))
    drawn, body = f0[shown], body[shown]  # the faces drawn and their bodies
    used = np.arange(len(v0)) if shown.all() else np.unique(drawn)  # the vertices that frame the camera
    lo, hi = (v0[used].min(axis=0), v0[used].max(axis=0)) if len(used) else (np.zeros(3), np.ones(3))
    frames = []
    for p in paths:
        v, f = io_frames.read_ply(p)
        if v.shape != v0.shape or not np.array_equal(f, f0):
            raise ValueError(f"{p}: its surface differs from {paths[0].name} (vertex count or faces)")
        frames.append(v)
        if len(used):
            lo, hi = np.minimum(lo, v[used].min(axis=0)), np.maximum(hi, v[used].max(axis=0))
    renderer = Renderer((lo, hi), body, info["n_bodies"], info["planes"], info["up"], size, info["view"])
    segments, points = _codimensional(out, len(v0))
    step_time = info["dt"] * info["every"] if info["dt"] else None
    pick = np.unique(np.linspace(0, len(frames) - 1, min(len(frames), max_frames)).round().astype(int))

    def label(i):
        return f"t = {i * step_time:.3f} s" if step_time else f"frame {i}"

    images = [renderer.draw(frames[i], drawn, label(int(i)), segments, points) for i in pick]
    written = [out / "preview.png"]
    from PIL import Image

    with io_frames.atomic_path(written[0]) as tmp:
        Image.fromarray(images[-1]).save(tmp, format="PNG")
    stride = (pick[1] - pick[0]) if len(pick) > 1 else 1
    fps = 10.0 if not step_time else float(np.clip(1.0 / (step_time * stride), 4.0, 30.0))
    written.append(_write_movie(out, images, fps))
    for stale in ("preview.mp4", "preview.gif"):
        if out / stale != written[-1] and (out / stale).exists():
            (out / stale).unlink()
    return written


def _write_movie(out: Path, images: list[np.ndarray], fps: float) -> Path:
    """preview.mp4 through imageio-ffmpeg if importable, else an animated preview.gif (Pillow)."""
    try:
        import imageio_ffmpeg
    except ImportError:
        imageio_ffmpeg = None
    if imageio_ffmpeg is not None:
        path = out / "preview.mp4"
        h, w = images[0].shape[:2]
        with io_frames.atomic_path(path) as tmp:
            writer = imageio_ffmpeg.write_frames(tmp, (w, h), fps=fps, codec="libx264", quality=7,
                                                 pix_fmt_out="yuv420p", macro_block_size=16)
            writer.send(None)
            for img in images:
                writer.send(np.ascontiguousarray(img))
            writer.close()
        return path
    from PIL import Image

    path = out / "preview.gif"
    pil = [Image.fromarray(img).convert("P", palette=Image.Palette.ADAPTIVE, colors=128) for img in images]
    with io_frames.atomic_path(path) as tmp:
        pil[0].save(tmp, format="GIF", save_all=True, append_images=pil[1:], duration=int(round(1000 / fps)),
                    loop=0)
    return path
