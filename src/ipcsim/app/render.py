"""Headless preview of a run: OUT/preview.png (the last frame) and OUT/preview.mp4 (imageio-ffmpeg, when it is
importable) or OUT/preview.gif (Pillow).

What it shows (``render_view``): an orthographic camera, fixed for the whole run, frames the bodies that move
(their bounding box over every frame; static obstacles are drawn but do not drive the framing) and looks at them
from the direction where they hide each other least (``render_view.auto_toward``; or a named view, a direction
or an azimuth/elevation: ``render_run(view=...)``, ``ipcsim render --view``, a scene's ``output.view``); where
OUT/scene.json's output names ``preview_bodies`` (a face run: its skin) only those are drawn and framed. Each
body has its own colour (obstacles in greys) and a legend gives the scene's body names; half spaces (a ground)
are drawn as a checkered grid of round-sized squares, its size written under the legend.

Drawing: matplotlib's Agg canvas (no display needed), triangles sorted back to front (painter's algorithm) and
Lambert-shaded by their normals (two-sided, so open obstacle surfaces shade too). Long runs are subsampled to at
most ``max_frames`` movie frames.
"""
from __future__ import annotations

import csv
import json
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from ..io import frames as io_frames
from .render_view import (Camera, auto_toward, body_colors, frame_box, ground_tiles, moving_bodies,  # noqa: F401
                          nice_spacing, view_toward)


def shade(vertices: np.ndarray, faces: np.ndarray, base: np.ndarray, light: np.ndarray) -> np.ndarray:
    """Lambert colors (m, 3): base (m, 3) RGB times 0.35 + 0.65 |n . light| with n the unit face normal of the
    triangles faces (m, 3) over vertices (n, 3) [m]; light (3,) unit."""
    p = vertices[faces]
    n = np.cross(p[:, 1] - p[:, 0], p[:, 2] - p[:, 0])
    norm = np.linalg.norm(n, axis=1)
    cos = np.abs(n @ light) / np.where(norm > 0, norm, 1.0)
    return np.clip(base * (0.35 + 0.65 * cos)[:, None], 0.0, 1.0)


LEGEND_ROWS = 12  # bodies named in the legend at most (then "and k more")


@dataclass
class Layout:
    """What a picture needs to know about a run's scene besides its frames.

    names: {collision body id: name}; n_bodies: ids below it are simulated bodies, the rest obstacles (None: all
    simulated); planes: [(origin (3,), normal (3,))] [m], the half spaces; up: (3,) world up (opposite to
    gravity); view: the scene's camera request (``render_view.view_toward``; None: automatic); frame_dt: simulated
    time between two frames [s] (None: unknown, frames labelled by index).
    """

    names: dict = field(default_factory=dict)
    n_bodies: int | None = None
    planes: list = field(default_factory=list)
    up: tuple = (0.0, 1.0, 0.0)
    view: object = None
    frame_dt: float | None = None
    shown: list | None = None

    def shown_faces(self, face_body: np.ndarray) -> np.ndarray:
        """(m,) bool: the faces of the bodies named in ``shown`` (scene.json's output.preview_bodies, e.g. a face
        run's skin); all of them when ``shown`` is None or names none of these bodies."""
        ids = [i for i, name in self.names.items() if name in (self.shown or ())]
        mask = np.isin(face_body, ids)
        return mask if mask.any() else np.ones(len(face_body), bool)

    def colors(self, n_ids: int) -> np.ndarray:
        """RGB (n_ids, 3) per collision body id (``render_view.body_colors``)."""
        n = n_ids if self.n_bodies is None else min(self.n_bodies, n_ids)
        return body_colors(n, n_ids - n)

    def legend(self, ids, n_ids: int) -> list[tuple[str, np.ndarray]]:
        """(name, RGB (3,)) of each body id in ``ids`` (ids below n_ids), in id order."""
        colors = self.colors(n_ids)
        return [(str(self.names.get(int(i), f"body{int(i)}")), colors[int(i)]) for i in sorted(set(ids))]


class Renderer:
    """Draws frames of one run with a fixed camera into RGB images (height, width, 3) uint8.

    Args:
        camera: ``Camera``; face_body: (m,) body id per face (-1: unknown, drawn as body 0); layout: ``Layout``
        (colours, legend names, half spaces); size: (width, height) pixels; legend: draw the legend of names;
        shadows: vertex index arrays, each a body that casts a shadow (its outline dropped onto the half spaces).
    """

    def __init__(self, camera: Camera, face_body, layout: Layout | None = None, size=(640, 480), legend=True,
                 shadows=()):
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure

        layout = layout or Layout()
        self.camera = cam = camera
        self.light = cam.toward + 0.7 * cam.up + 0.4 * cam.right
        self.light /= np.linalg.norm(self.light)
        body = np.maximum(np.asarray(face_body, np.int64), 0)
        n_ids = max(int(body.max()) + 1 if len(body) else 1, max(layout.names, default=-1) + 1)
        self.base = layout.colors(n_ids)[body]
        self.fig = Figure(figsize=(size[0] / 100, size[1] / 100), dpi=100)
        self.canvas = FigureCanvasAgg(self.fig)
        self.ax = self.fig.add_axes((0, 0, 1, 1))
        self.ax.set_axis_off()
        self.fig.set_facecolor((0.97, 0.97, 0.99))
        u0, u1, v0, v1 = cam.window
        self.ax.set_xlim(u0, u1)
        self.ax.set_ylim(v0, v1)
        self.ax.set_aspect("equal")
        self._static, self._grounds, grid = [], [], None
        self.shadows = [np.asarray(g, np.int64) for g in shadows if len(g) >= 3]
        for origin, normal in layout.planes:
            normal = np.asarray(normal, float)
            if normal @ cam.toward <= 1e-3:  # the eye is behind the plane (it would hide everything) or in it
                continue
            self._grounds.append((np.asarray(origin, float), normal / np.linalg.norm(normal)))
            quads, tone, spacing = ground_tiles(origin, normal, cam, nice_spacing(u1 - u0))
            grid = spacing if len(quads) else grid
            uv, _ = cam.project(quads.reshape(-1, 3))
            self._static.append((uv.reshape(-1, 4, 2), np.repeat(tone[:, None], 3, axis=1)))
        self.grid_spacing = grid
        self._text = self.ax.text(0.02, 0.97, "", transform=self.ax.transAxes, va="top", ha="left", fontsize=10,
                                  color=(0.2, 0.2, 0.25), animated=True)
        self.legend_entries = layout.legend(np.unique(body), n_ids) if legend and len(body) else []
        self._freeze(self._legend())

    def _legend(self) -> list:
        """The names of the bodies beside colour swatches (upper right) and the grid's size (lower left); returns
        those artists."""
        from matplotlib.collections import PolyCollection
        from matplotlib.patches import Patch

        for polys, colors in self._static:
            self.ax.add_collection(PolyCollection(polys, facecolors=colors, edgecolors="none"))
        notes = []
        if self.legend_entries:
            shown = self.legend_entries[:LEGEND_ROWS]
            handles = [Patch(facecolor=c, edgecolor=0.7 * c, label=name) for name, c in shown]
            if len(self.legend_entries) > len(shown):
                handles.append(Patch(facecolor="none", edgecolor="none",
                                     label=f"and {len(self.legend_entries) - len(shown)} more"))
            notes.append(self.ax.legend(handles=handles, loc="upper right", fontsize=9, framealpha=0.85,
                                        handlelength=1.2))
        if self.grid_spacing:
            notes.append(self.ax.text(0.02, 0.03, f"ground squares {_length(self.grid_spacing)}", fontsize=9,
                                      transform=self.ax.transAxes, color=(0.3, 0.3, 0.35)))
        return notes

    def _freeze(self, notes) -> None:
        """Draw what every frame shares (background, ground, legend) once: the canvas to restore before each frame
        and the notes' pixels, pasted over each frame (they stay on top of the bodies)."""
        self.canvas.draw()
        self._background = self.canvas.copy_from_bbox(self.fig.bbox)
        still = np.asarray(self.canvas.buffer_rgba())[..., :3]
        h, w = still.shape[:2]
        renderer = self.canvas.get_renderer()
        self._pastes = []
        for note in notes:
            x0, y0, x1, y1 = note.get_window_extent(renderer).extents
            rows = slice(max(0, h - int(np.ceil(y1)) - 1), min(h, h - int(np.floor(y0)) + 1))
            cols = slice(max(0, int(np.floor(x0)) - 1), min(w, int(np.ceil(x1)) + 1))
            self._pastes.append((rows, cols, still[rows, cols].copy()))

    def draw(self, vertices: np.ndarray, faces: np.ndarray, label: str = "", segments=None,
             points=None) -> np.ndarray:
        """Image (h, w, 3) uint8 of the surface vertices (n, 3) [m], faces (m, 3), and optionally
        codimensional segments (k, 2) and points (p,) (vertex indices; drawn on top, dark grey)."""
        from matplotlib.collections import LineCollection, PolyCollection

        self.canvas.restore_region(self._background)
        layers = [self._shadow_layer(vertices)] if self._grounds and self.shadows else []
        if len(faces):
            uv, depth = self.camera.project(vertices)
            order = np.argsort(depth[faces].mean(axis=1), kind="stable")
            f = faces[order]
            colors = shade(vertices, f, self.base[order], self.light)
            layers.append(PolyCollection(uv[f], facecolors=colors, edgecolors=colors * 0.85, linewidths=0.25,
                                         antialiased=True))
        if segments is not None and len(segments):
            uv, _ = self.camera.project(vertices)
            layers.append(LineCollection(uv[segments], colors=[(0.25, 0.25, 0.3)], linewidths=1.2))
        for layer in layers:
            self.ax.add_collection(layer, autolim=False)
            self.ax.draw_artist(layer)
            layer.remove()
        if points is not None and len(points):
            uv, _ = self.camera.project(vertices[points])
            (dots,) = self.ax.plot(uv[:, 0], uv[:, 1], "o", color=(0.25, 0.25, 0.3), markersize=3, animated=True)
            self.ax.draw_artist(dots)
            dots.remove()
        self._text.set_text(label)
        self.ax.draw_artist(self._text)
        image = np.asarray(self.canvas.buffer_rgba())[..., :3].copy()
        for rows, cols, pixels in self._pastes:
            image[rows, cols] = pixels
        return image


    def _shadow_layer(self, vertices: np.ndarray):
        """Soft grey outlines (2D convex hulls) of the shadow bodies dropped along each ground's normal onto it."""
        from matplotlib.collections import PolyCollection
        from scipy.spatial import ConvexHull, QhullError

        polys = []
        for origin, normal in self._grounds:
            for group in self.shadows:
                p = vertices[group]
                uv, _ = self.camera.project(p - ((p - origin) @ normal)[:, None] * normal)
                try:
                    polys.append(uv[ConvexHull(uv).vertices])
                except (QhullError, ValueError):  # a body seen edge-on: no area
                    continue
        return PolyCollection(polys, facecolors=[(0.1, 0.1, 0.1, 0.18)], edgecolors="none")


def _length(meters: float) -> str:
    """A length as people write it: 2 cm, 50 cm, 1 m, 5 mm."""
    for unit, scale in (("m", 1.0), ("cm", 1e-2), ("mm", 1e-3)):
        if meters >= scale * 0.999:
            return f"{meters / scale:.3g} {unit}"
    return f"{meters:.3g} m"


def make_renderer(frames, faces, vertex_body, layout: Layout, size=(640, 480), view=None,
                  legend=True) -> Renderer:
    """The renderer of a run: frames: sequence of (n, 3) [m] (the same surface), faces (m, 3), vertex_body (n,);
    it draws the faces of the layout's shown bodies (its attribute ``faces``, (k, 3)); the camera frames those
    of them that move (all shown ones if none moves) from ``view`` (None: the layout's, else automatic;
    ``render_view.view_toward``)."""
    vertex_body = np.asarray(vertex_body, np.int64)
    face_body = vertex_body[faces[:, 0]] if len(faces) else np.zeros(0, np.int64)
    keep = layout.shown_faces(face_body)
    faces, face_body = faces[keep], face_body[keep]
    shown = np.unique(face_body) if not keep.all() else np.unique(vertex_body)
    moving = np.intersect1d(moving_bodies(frames, vertex_body), shown)
    lo, hi = frame_box(frames, np.isin(vertex_body, moving if len(moving) else shown))
    toward = view_toward(layout.view if view is None else view, layout.up)
    if toward is None:
        pick = np.unique(np.linspace(0, len(frames) - 1, min(len(frames), 5)).round().astype(int))
        toward = auto_toward([np.asarray(frames[i]) for i in pick], vertex_body, moving, layout.up)
    lo, hi = _with_shadows(lo, hi, layout.planes, toward)
    camera = Camera.looking(toward, lo, hi, layout.up, aspect=size[0] / size[1])
    renderer = Renderer(camera, face_body, layout, size, legend, [np.flatnonzero(vertex_body == b) for b in moving])
    renderer.faces = faces
    return renderer


def _with_shadows(lo, hi, planes, toward):
    """The box [lo, hi] (3,) [m] grown to hold its shadow on each plane (origin, normal) seen from ``toward`` that
    lies within the box's size below it (so the gap to a near ground shows; a far ground does not shrink the
    bodies)."""
    corners = np.array([[a, b, c] for a in (lo[0], hi[0]) for b in (lo[1], hi[1]) for c in (lo[2], hi[2])])
    size = float(np.max(hi - lo))
    for origin, normal in planes:
        n = np.asarray(normal, float) / np.linalg.norm(normal)
        height = (corners - np.asarray(origin, float)) @ n
        if n @ toward > 1e-3 and 0.0 <= height.min() <= size:
            drop = corners - height[:, None] * n
            lo, hi = np.minimum(lo, drop.min(axis=0)), np.maximum(hi, drop.max(axis=0))
    return lo, hi


def scene_layout(out, sim=None) -> Layout:
    """The ``Layout`` of the run in ``out``: from ``sim`` (the ``runner.Simulation`` that wrote it) where given,
    else from OUT/scene.json (its half spaces, body count, gravity, output.view and time step; a teddy-grasp
    demo's scene is rebuilt for its ground) and the names in OUT/forces.csv; defaults where those are absent."""
    out = Path(out)
    layout = Layout()
    data = json.loads((out / "scene.json").read_text()) if (out / "scene.json").is_file() else {}
    dt = data.get("time", {}).get("dt")
    layout.frame_dt = dt * int(data.get("output", {}).get("every", 1)) if dt else None
    layout.planes = [(h["origin"], h["normal"]) for h in data.get("half_spaces", [])]
    layout.n_bodies = len(data.get("bodies", [])) or None
    layout.view = data.get("output", {}).get("view")  # e.g. a face scene's camera (scene.face_scene)
    g = np.asarray(data.get("gravity", [0.0, -9.81, 0.0]), float)
    if np.linalg.norm(g) > 0:
        layout.up = tuple(-g / np.linalg.norm(g))
    shown = data.get("output", {}).get("preview_bodies")  # a face scene's: the skin, not the lips' proxy
    layout.shown = [str(b) for b in shown] if isinstance(shown, list) else None
    layout.names = {**_force_names(out / "forces.csv"), **_header_names(out)}
    if sim is None and data.get("demo") == "teddy-grasp":  # its scene.json holds parameters, not the ground
        from ..demos.teddy_grasp import build_grasp, grasp_parameters

        builder, ids = build_grasp(replace(grasp_parameters(data), mode="full"))  # the same ground, no cage
        _model_layout(layout, builder.finalize()[0], {i: name for name, i in ids.items()})
    if sim is not None:
        from .runner import collision_body_names

        _model_layout(layout, sim.model, dict(enumerate(collision_body_names(sim))))
        layout.n_bodies = len(sim.body_names) or None
        layout.frame_dt = sim.dt * int(sim.output.get("every", 1))
    return layout


def _model_layout(layout: Layout, model, names: dict) -> None:
    """Set layout's names ({body id: name}), half spaces and up from a ``model.Model``."""
    layout.names = names
    layout.planes = [(p.origin, p.normal) for p in getattr(model.collision_mesh, "planes", [])]
    g = np.asarray(model.gravity, float)
    layout.up = tuple(-g / np.linalg.norm(g)) if np.linalg.norm(g) > 0 else layout.up


def _header_names(out: Path) -> dict:
    """{body id: name} from the first frame's PLY header (``io_frames.read_ply_names``: a face run's frames name
    their bodies); empty when it names none."""
    first = out / "frames" / "surface_00000.ply"
    names = io_frames.read_ply_names(first) if first.is_file() else None
    return dict(enumerate(names or []))


def _force_names(path: Path) -> dict:
    """{body id: name} from the first step's rows of a forces.csv (empty when it is absent or unreadable)."""
    names = {}
    try:
        with open(path, newline="") as fh:
            rows = csv.DictReader(fh)
            first = None
            for row in rows:
                first = row["step"] if first is None else first
                if row["step"] != first:
                    break
                names[int(row["body"])] = row["name"]
    except (OSError, KeyError, ValueError):
        return {}
    return names


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
        from ..scene import load_scene

        mesh = load_scene(path).build().model.collision_mesh
    except (ValueError, OSError):
        return None, None
    if mesh.n_vertices != n_vertices:
        return None, None
    return mesh.edges[mesh.codim_edges], mesh.codim_vertices


def render_run(out_dir, max_frames: int = 80, size=(640, 480), view=None, sim=None) -> list[Path]:
    """Render OUT/frames/surface_*.ply into OUT/preview.png and OUT/preview.mp4 (or .gif); returns the paths
    written. view: the camera (``render_view.view_toward``: "auto", "front", "side", ..., a direction (3,) from
    the scene to the eye, or {"azimuth_deg", "elevation_deg"}; None: the scene's output.view, else automatic);
    sim: the ``runner.Simulation`` that wrote OUT (names, ground and up from its model; None: ``scene_layout``
    reads OUT). Raises ValueError when the directory holds no frame or frames of different surfaces, or for a
    bad view."""
    out = Path(out_dir)
    from ..io.output import list_frames

    paths = list_frames(out)
    if not paths:
        raise ValueError(f"{out}: no frames/surface_*.ply to render")
    v0, f0, vertex_body = io_frames.read_ply(paths[0], with_body=True)
    frames = []
    for p in paths:
        v, f = io_frames.read_ply(p)
        if v.shape != v0.shape or not np.array_equal(f, f0):
            raise ValueError(f"{p}: its surface differs from {paths[0].name} (vertex count or faces)")
        frames.append(v)
    layout = scene_layout(out, sim)
    renderer = make_renderer(frames, f0, vertex_body, layout, size, view)
    segments, points = _codimensional(out, len(v0))
    step_time = layout.frame_dt
    pick = np.unique(np.linspace(0, len(frames) - 1, min(len(frames), max_frames)).round().astype(int))

    def label(i):
        return f"t = {i * step_time:.3f} s" if step_time else f"frame {i}"

    images = [renderer.draw(frames[i], renderer.faces, label(int(i)), segments, points) for i in pick]
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
    # one 128-colour palette from the first, middle and last frames serves all (30x faster than one per frame)
    sample = np.concatenate([images[0], images[len(images) // 2], images[-1]], axis=0)
    palette = Image.fromarray(sample).quantize(colors=128, method=Image.Quantize.MEDIANCUT)
    pil = [Image.fromarray(img).quantize(palette=palette, dither=Image.Dither.NONE) for img in images]
    with io_frames.atomic_path(path) as tmp:
        pil[0].save(tmp, format="GIF", save_all=True, append_images=pil[1:], duration=int(round(1000 / fps)),
                    loop=0)
    return path
