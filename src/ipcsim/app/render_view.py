"""What the preview shows and from where (pure NumPy, no drawing): the bodies that move, the camera that frames
them, the view direction (named, given, or chosen so the moving bodies hide each other least), the bodies'
colours and the ground grid's tiles.

The view rule (``auto_toward``): the camera looks down ``AUTO_ELEVATION_DEG`` from the azimuth (every 15 degrees
about the up axis) at which the moving bodies' projected outlines (2D convex hulls, at a few frames of the run)
overlap least, so that bodies pressed together are seen side by side: for the teddy grasp that is across the
gripper's closing axis, the teddy between the two bubbles. Azimuths within ``TIE_OVERLAP`` of the least overlap
count as equal and the one nearest ``DEFAULT_AZIMUTH_DEG`` wins (a scene with one moving body, or bodies that
never overlap, keeps the default view).
"""
from __future__ import annotations

import colorsys
import math
from dataclasses import dataclass

import numpy as np

DEFAULT_AZIMUTH_DEG, AUTO_ELEVATION_DEG = 35.0, 25.0
TIE_OVERLAP = 0.02  # [1], overlap fractions this close to the least count as equal
#: named views: the direction from the scene to the eye, in world axes
NAMED_VIEWS = {"front": (0.0, 0.0, 1.0), "back": (0.0, 0.0, -1.0), "right": (1.0, 0.0, 0.0),
               "side": (1.0, 0.0, 0.0), "left": (-1.0, 0.0, 0.0), "top": (0.0, 1.0, 0.0),
               "bottom": (0.0, -1.0, 0.0)}
_PALETTE = np.array([[0.27, 0.51, 0.71], [0.90, 0.49, 0.13], [0.30, 0.65, 0.33], [0.84, 0.24, 0.31],
                     [0.58, 0.40, 0.74], [0.55, 0.34, 0.29], [0.89, 0.47, 0.76], [0.74, 0.74, 0.13],
                     [0.09, 0.75, 0.81]])


def body_colors(n_bodies: int, n_obstacles: int = 0) -> np.ndarray:
    """RGB colours (n_bodies + n_obstacles, 3) in [0, 1]: the palette for the first simulated bodies, then each
    next one the saturated colour farthest from those already taken (and from the greys); obstacles in greys of
    distinct lightness (0.55 to 0.71)."""
    greys = np.linspace(0.55, 0.71, n_obstacles) if n_obstacles > 1 else np.full(n_obstacles, 0.55)
    colors = [*_PALETTE[:n_bodies]]
    if n_bodies > len(_PALETTE):
        h, s, v = np.meshgrid(np.arange(36) / 36.0, (0.5, 0.75, 1.0), (0.55, 0.75, 0.95), indexing="ij")
        candidates = np.array([colorsys.hsv_to_rgb(*c) for c in zip(h.ravel(), s.ravel(), v.ravel())])
        taken = np.array([*colors, *[(g, g, g) for g in np.linspace(0.5, 0.95, 4)]])
        nearest = np.linalg.norm(candidates[:, None] - taken[None], axis=2).min(axis=1)
        for _ in range(n_bodies - len(_PALETTE)):
            pick = candidates[np.argmax(nearest)]
            colors.append(pick)
            nearest = np.minimum(nearest, np.linalg.norm(candidates - pick, axis=1))
    colors += [(g, g, g + 0.03) for g in greys]
    return np.array(colors, float).reshape(-1, 3)


def moving_bodies(frames, vertex_body: np.ndarray, rel_tol: float = 1e-6) -> np.ndarray:
    """Ids (sorted) of the bodies with a vertex that moves more than rel_tol times the scene's size over the run;
    frames: sequence of vertex arrays (n, 3) [m]; vertex_body: (n,) body id per vertex."""
    first = np.asarray(frames[0], float)
    if not len(first):
        return np.zeros(0, np.int64)
    moved = np.zeros(len(first))
    lo, hi = first.min(axis=0), first.max(axis=0)
    for v in frames[1:]:
        moved = np.maximum(moved, np.abs(np.asarray(v) - first).max(axis=1))
        lo, hi = np.minimum(lo, v.min(axis=0)), np.maximum(hi, v.max(axis=0))
    tol = rel_tol * max(float(np.linalg.norm(hi - lo)), 1e-12)
    return np.unique(np.asarray(vertex_body)[moved > tol])


def frame_box(frames, mask=None) -> tuple[np.ndarray, np.ndarray]:
    """Bounding box (lo (3,), hi (3,)) [m] of the vertices selected by mask (n,) bool (None: all) over every
    frame (sequence of (n, 3) [m])."""
    lo, hi = np.full(3, np.inf), np.full(3, -np.inf)
    for v in frames:
        v = np.asarray(v) if mask is None else np.asarray(v)[mask]
        if len(v):
            lo, hi = np.minimum(lo, v.min(axis=0)), np.maximum(hi, v.max(axis=0))
    return (lo, hi) if np.all(np.isfinite(lo)) else (np.zeros(3), np.ones(3))


def _basis(up) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(up, e1, e2) unit vectors: e1, e2 span the horizontal plane (azimuth 0 along e2, 90 along e1)."""
    up = np.asarray(up, float) / np.linalg.norm(up)
    ref = np.array([1.0, 0.0, 0.0]) if abs(up[0]) < 0.9 else np.array([0.0, 0.0, 1.0])
    e1 = ref - up * (ref @ up)
    e1 /= np.linalg.norm(e1)
    return up, e1, np.cross(up, e1)


def direction(up, azimuth_deg: float, elevation_deg: float) -> np.ndarray:
    """Unit vector (3,) from the scene to the eye at azimuth/elevation [deg] about ``up``."""
    up, e1, e2 = _basis(up)
    az, el = math.radians(azimuth_deg), math.radians(elevation_deg)
    return math.cos(el) * (math.sin(az) * e1 + math.cos(az) * e2) + math.sin(el) * up


def view_toward(view, up) -> np.ndarray | None:
    """The eye direction (3,) unit of a view request: a name of ``NAMED_VIEWS``, a vector (3,) from the scene to
    the eye, or {"azimuth_deg", "elevation_deg"} (missing: 35, 25); None or "auto" gives None (``auto_toward``
    decides). ValueError for anything else."""
    if view is None or (isinstance(view, str) and view == "auto"):
        return None
    if isinstance(view, str):
        if view not in NAMED_VIEWS:
            raise ValueError(f"unknown view {view!r}; choose from auto, {', '.join(NAMED_VIEWS)} or give x,y,z")
        view = NAMED_VIEWS[view]
    if isinstance(view, dict):
        return direction(up, float(view.get("azimuth_deg", DEFAULT_AZIMUTH_DEG)),
                         float(view.get("elevation_deg", AUTO_ELEVATION_DEG)))
    d = np.asarray(view, float).reshape(-1)
    if d.shape != (3,) or not np.all(np.isfinite(d)) or np.linalg.norm(d) == 0:
        raise ValueError(f"view direction must be 3 finite numbers, not all zero; got {view!r}")
    return d / np.linalg.norm(d)


def _hull_cover(uv: np.ndarray, grid: np.ndarray) -> np.ndarray:
    """(g,) bool: the grid points (g, 2) inside the convex hull of the points uv (k, 2) (their bounding box where
    the hull is degenerate)."""
    from scipy.spatial import ConvexHull, QhullError

    try:
        eq = ConvexHull(uv).equations
    except (QhullError, ValueError):
        lo, hi = uv.min(axis=0), uv.max(axis=0)
        return np.all((grid >= lo) & (grid <= hi), axis=1)
    return np.all(grid @ eq[:, :2].T + eq[:, 2] <= 1e-12, axis=1)


def overlap_fraction(parts, toward, up, cells: int = 48) -> float:
    """How much the bodies hide each other seen along ``toward`` (3,): cells covered by two or more projected
    hulls over cells covered by any, on a cells x cells grid over their projection; parts: list of (k, 3) [m]."""
    right, cam_up = screen_axes(toward, up)
    uvs = [np.stack([p @ right, p @ cam_up], axis=1) for p in parts if len(p) >= 3]
    if len(uvs) < 2:
        return 0.0
    allp = np.concatenate(uvs)
    lo, hi = allp.min(axis=0), allp.max(axis=0)
    a, b = np.meshgrid(np.linspace(lo[0], hi[0], cells), np.linspace(lo[1], hi[1], cells))
    grid = np.stack([a.ravel(), b.ravel()], axis=1)
    count = sum(_hull_cover(uv, grid).astype(int) for uv in uvs)
    return float(np.count_nonzero(count >= 2) / max(np.count_nonzero(count), 1))


def auto_toward(samples, vertex_body, bodies, up, step_deg: float = 15.0) -> np.ndarray:
    """The eye direction (3,) of the rule in the module docstring: samples: a few frames (n, 3) [m]; vertex_body
    (n,); bodies: the ids to keep apart (the moving ones)."""
    vertex_body = np.asarray(vertex_body)
    azimuths = np.arange(0.0, 360.0, step_deg)
    if len(bodies) < 2:
        return direction(up, DEFAULT_AZIMUTH_DEG, AUTO_ELEVATION_DEG)
    scores = []
    for az in azimuths:
        toward = direction(up, az, AUTO_ELEVATION_DEG)
        scores.append(np.mean([overlap_fraction([v[vertex_body == b] for b in bodies], toward, up)
                               for v in samples]))
    scores = np.array(scores)
    near = np.abs((azimuths - DEFAULT_AZIMUTH_DEG + 180.0) % 360.0 - 180.0)
    best = azimuths[np.argmin(np.where(scores <= scores.min() + TIE_OVERLAP, near, np.inf))]
    return direction(up, float(best), AUTO_ELEVATION_DEG)


def screen_axes(toward, up) -> tuple[np.ndarray, np.ndarray]:
    """(right, cam_up) unit vectors of the image plane of an eye along toward (3,); a camera looking along ``up``
    takes the world axis least aligned with it as its image's up."""
    toward = np.asarray(toward, float) / np.linalg.norm(toward)
    up = np.asarray(up, float)
    if np.linalg.norm(np.cross(up, toward)) < 1e-6 * np.linalg.norm(up):
        up = np.eye(3)[np.argmin(np.abs(toward))]
    right = np.cross(up, toward)
    right /= np.linalg.norm(right)
    return right, np.cross(toward, right)


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
    def looking(cls, toward, lo, hi, up=(0.0, 1.0, 0.0), aspect=4.0 / 3.0, margin=0.08) -> "Camera":
        """A camera with its eye along ``toward`` (3,) whose window holds the box [lo, hi] (3,) [m] with a
        relative margin, at the image aspect ratio (width / height)."""
        toward = np.asarray(toward, float) / np.linalg.norm(toward)
        right, cam_up = screen_axes(toward, up)
        lo, hi = np.asarray(lo, float), np.asarray(hi, float)
        center = 0.5 * (lo + hi)
        corners = np.array([[a, b, c] for a in (lo[0], hi[0]) for b in (lo[1], hi[1]) for c in (lo[2], hi[2])])
        u, v = (corners - center) @ right, (corners - center) @ cam_up
        half_w = max(np.ptp(u), 1e-9) / 2 * (1 + 2 * margin)
        half_h = max(np.ptp(v), 1e-9) / 2 * (1 + 2 * margin)
        half_w, half_h = max(half_w, half_h * aspect), max(half_h, half_w / aspect)
        uc, vc = 0.5 * (u.max() + u.min()), 0.5 * (v.max() + v.min())
        return cls(right, cam_up, toward, center, (uc - half_w, uc + half_w, vc - half_h, vc + half_h))

    @classmethod
    def framing(cls, lo, hi, up=(0.0, 1.0, 0.0), azimuth_deg=DEFAULT_AZIMUTH_DEG,
                elevation_deg=AUTO_ELEVATION_DEG, aspect=4.0 / 3.0, margin=0.08) -> "Camera":
        """``looking`` from azimuth/elevation [deg] about ``up``."""
        return cls.looking(direction(up, azimuth_deg, elevation_deg), lo, hi, up, aspect, margin)

    def project(self, p: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Image coordinates (k, 2) [m] and depth toward the eye (k,) [m] of points p (k, 3) [m]."""
        q = np.asarray(p, float) - self.center
        return np.stack([q @ self.right, q @ self.up], axis=1), q @ self.toward


def nice_spacing(length: float, count: float = 8.0) -> float:
    """A round tile size [m] (1, 2 or 5 times a power of ten) near length / count."""
    raw = max(length / count, 1e-12)
    power = 10.0 ** math.floor(math.log10(raw))
    return min((m * power for m in (1.0, 2.0, 5.0, 10.0)), key=lambda s: abs(math.log(s / raw)))


def ground_tiles(origin, normal, camera: Camera, spacing: float, max_tiles: int = 4000):
    """Checkered squares of side ``spacing`` [m] on the plane through origin (3,) with ``normal`` (3,), aligned
    with the world origin's projection on it, those whose image meets the camera's window: (quads (k, 4, 3) [m],
    tone (k,) grey level, the side used [m]: doubled until at most max_tiles squares fill the window)."""
    n = np.asarray(normal, float) / np.linalg.norm(normal)
    ref = np.array([1.0, 0.0, 0.0]) if abs(n[0]) < 0.9 else np.array([0.0, 1.0, 0.0])
    t1 = np.cross(n, ref)
    t1 /= np.linalg.norm(t1)
    t2 = np.cross(n, t1)
    base = n * float(np.asarray(origin, float) @ n)
    # the window's corners cast along the view direction onto the plane bound the visible part of it
    u0, u1, v0, v1 = camera.window
    corners = np.array([camera.center + u * camera.right + v * camera.up for u in (u0, u1) for v in (v0, v1)])
    denom = camera.toward @ n
    if abs(denom) < 1e-3:
        return np.zeros((0, 4, 3)), np.zeros(0), spacing
    hits = corners - ((corners - base) @ n / denom)[:, None] * camera.toward
    a_lo, a_hi = np.floor((hits - base) @ t1 / spacing).min(), np.ceil((hits - base) @ t1 / spacing).max()
    b_lo, b_hi = np.floor((hits - base) @ t2 / spacing).min(), np.ceil((hits - base) @ t2 / spacing).max()
    while (a_hi - a_lo) * (b_hi - b_lo) > max_tiles:  # a grazing view: grow the tiles
        spacing *= 2.0
        a_lo, a_hi, b_lo, b_hi = np.floor(a_lo / 2), np.ceil(a_hi / 2), np.floor(b_lo / 2), np.ceil(b_hi / 2)
    i, j = np.meshgrid(np.arange(a_lo, a_hi), np.arange(b_lo, b_hi), indexing="ij")
    i, j = i.ravel(), j.ravel()
    offsets = np.array([[0, 0], [1, 0], [1, 1], [0, 1]], float)
    a = (i[:, None] + offsets[:, 0]) * spacing
    b = (j[:, None] + offsets[:, 1]) * spacing
    quads = base + a[..., None] * t1 + b[..., None] * t2
    tone = np.where((i + j) % 2 == 0, 0.90, 0.82)
    return quads, tone, spacing
