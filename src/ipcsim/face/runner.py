"""Running a face scene (``face.scene``, format ipcsim-face/1) into the usual output directory:

    OUT/scene.json                 the resolved face scene (``ipcsim run OUT/scene.json`` runs it again)
    OUT/frames/surface_%05d.ply    each frame run: the collision proxy (the lips and the skin around them, body
                                   0 upper lip side, 1 lower lip side: ``lip_sides``), then the visible skin
                                   (body 2: ``skin_surface``: the ICT face's fine skin embedded in the
                                   simulation mesh, the proxy itself near the mouth); names in the header
                                   (``BODY_NAMES``, ``io_frames.read_ply_names``)
    OUT/frames/volume_%05d.vtu     with output.volume: the simulation mesh (tets, J = det F, bone per tet)
    OUT/stats.csv                  one row per frame: the solver's ``FrameStats`` (``STATS_COLUMNS``)
    OUT/preview.png, preview.mp4   with output.render (``render.render_run``: the bodies of output.preview_bodies,
                                   the skin by default, from output.view)

Frame k of OUT/frames is the equilibrium of the k-th frame run (sequence frame ``frames[k]``: the
``sequence_frame`` column of stats.csv). There is no checkpoint: a face run is not resumed (its frames take
seconds).
"""
from __future__ import annotations

import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..io import frames as io_frames
from ..geometry.surface import boundary_faces, compact_vertices
from ..geometry.surface_map import SurfaceMap
from ..io.output import frame_path, prepare_output

#: the names of the frames' body ids: the proxy's two lip sides, the skin (``skin_surface``)
BODY_NAMES = ("upper lip", "lower lip", "skin")
SKIN = BODY_NAMES.index("skin")

STATS_COLUMNS = ("frame", "sequence_frame", "iterations", "bone_iterations", "line_search_steps", "converged",
                 "stalled", "energy", "n_contacts", "min_distance", "n1", "n2", "nc_mean", "nc_max", "fallbacks",
                 "pcg_iterations", "time_ipc", "time_global", "time_ccd", "time_line_search", "time_misc",
                 "time_total")


@dataclass
class FaceRunResult:
    """out_dir; frames: frame files written; wall_seconds [s]; unconverged: sequence frames that stopped before
    the tolerance (max_iterations or a stalled line search); max_contacts: most active stencils in a frame."""

    out_dir: Path
    frames: int
    wall_seconds: float
    unconverged: tuple = ()
    max_contacts: int = 0


def lip_sides(model) -> np.ndarray:
    """(p,) int32 per proxy vertex: 0 above, 1 below the line through the mouth corners (the extreme-x vertices
    of the proxy's boundary loop nearest the lips' centre): the upper and lower lip sides, for colouring."""
    from ..geometry.shell_mesh import boundary_loops

    s = np.asarray(model.proxy_vertices, np.float64)
    lips = np.r_[model.info.get("lip_upper", []), model.info.get("lip_lower", [])].astype(np.int64)
    centre = model.rest[lips].mean(axis=0) if lips.size else s.mean(axis=0)
    loops = boundary_loops(model.proxy_faces)
    mouth = min(loops, key=lambda lp: np.linalg.norm(s[lp].mean(axis=0) - centre))
    a, b = s[mouth[np.argmin(s[mouth, 0])]], s[mouth[np.argmax(s[mouth, 0])]]
    t = np.clip((s[:, 0] - a[0]) / max(b[0] - a[0], 1e-12), 0.0, 1.0)
    return (s[:, 1] < a[1] + t * (b[1] - a[1])).astype(np.int32)


def skin_surface(model) -> tuple[SurfaceMap, np.ndarray]:
    """The skin drawn: (W_skin, a ``SurfaceMap`` (k, .) into the simulation vertices (skin positions = W_skin x),
    triangles (t, 3) int64 over its k vertices). A face with a visible skin (``FaceModel.skin``: the ICT face's
    fine skin, ``face.ict.skin_embedding``) gives it; any other model the simulation mesh's own surface (a
    selection of its vertices): for a face built by ``ict.build_face`` without one (vertex l * n_surface + s
    in layer l, ``info["params"]["n_layers"]``), the boundary triangles of the outer layer l = 0; for the two
    flaps every boundary triangle of the tets."""
    if model.skin is not None:
        return model.skin.map, np.asarray(model.skin.faces, np.int64)
    tris = boundary_faces(model.rest, model.tets)
    layers = int(model.info.get("params", {}).get("n_layers", 0)) + 1
    if layers > 1 and len(model.rest) % layers == 0:
        tris = tris[np.all(tris < len(model.rest) // layers, axis=1)]
    vertices, (local,) = compact_vertices(len(model.rest), tris)
    return SurfaceMap.selection(vertices, len(model.rest)), local


def frame_surface(model, x: np.ndarray, skin: tuple) -> np.ndarray:
    """Positions (p + k, 3) [m] of one frame's surface: the proxy s = W x (p, 3), then the skin W_skin x (k, 3)
    of x (n, 3) [m] (skin: ``skin_surface(model)``)."""
    return np.concatenate([model.proxy_map.apply(x), skin[0].apply(x)])


def _row(k: int, seq_frame: int, st) -> list:
    values = {"frame": k, "sequence_frame": seq_frame}
    for c in STATS_COLUMNS[2:]:
        v = getattr(st, c)
        values[c] = int(v) if isinstance(v, (bool, np.bool_)) else (repr(float(v)) if isinstance(
            v, (float, np.floating)) else int(v))
    return [values[c] for c in STATS_COLUMNS]


def run_face(sim, out_dir, scene_data: dict | None = None, progress: bool = True) -> FaceRunResult:
    """Run the frames of ``sim`` (``FaceSimulation``) into out_dir (layout in the module doc); stats.csv is
    rewritten after every frame. scene_data: written to OUT/scene.json (None: none)."""
    t_start = time.perf_counter()
    model, solver = sim.model, sim.solver
    out = prepare_output(out_dir, scene_data, resume=False)
    skin = skin_surface(model)
    n_proxy = len(model.proxy_vertices)
    faces = np.concatenate([np.asarray(model.proxy_faces, np.int64), skin[1] + n_proxy])
    body = np.concatenate([lip_sides(model), np.full(skin[0].n_surface, SKIN, np.int32)])
    volume = bool(sim.output.get("volume", False))
    bone = np.zeros(len(model.rest), np.int32)
    bone[model.bone] = 1
    tet_bone = bone[model.tets].max(axis=1)
    rows, unconverged, most = [], [], 0
    bar = _progress_bar(len(sim.frames), sim.name) if progress else None
    try:
        for k, f in enumerate(sim.frames):
            st = solver.frame((model.sequence if sim.weights is None else sim.weights)[f])
            io_frames.write_ply(frame_path(out, "surface", k), frame_surface(model, solver.x, skin), faces, body,
                                BODY_NAMES)
            if volume:
                j = io_frames.tet_jacobians(solver.x, model.tets, solver.dm_inv)
                io_frames.write_volume_vtu(frame_path(out, "volume", k), solver.x, model.tets,
                                           {"J": j, "bone": tet_bone})
            rows.append(_row(k, f, st))
            io_frames.write_csv(out / "stats.csv", STATS_COLUMNS, rows)
            most = max(most, st.n_contacts)
            if not st.converged:
                unconverged.append(f)
            if bar is not None:
                bar.set_postfix_str(f"frame {f} iterations={st.iterations} contacts={st.n_contacts}", refresh=False)
                bar.update(1)
    finally:
        if bar is not None:
            bar.close()
    return FaceRunResult(out, len(rows), time.perf_counter() - t_start, tuple(unconverged), most)


def _progress_bar(n: int, name: str):
    from tqdm import tqdm

    return tqdm(total=n, desc=name, unit="frame", file=sys.stderr, dynamic_ncols=True, leave=True,
                bar_format="{desc}: {percentage:3.0f}%|{bar}| {n_fmt}/{total_fmt} [{elapsed}<{remaining}{postfix}]")


def describe_face(sim, data: dict) -> str:
    """Text describing a built face scene (``ipcsim info``): sizes, frames, solver and contact parameters."""
    m, s = sim.model, sim.solver
    frames = sim.frames
    span = f"{frames[0]} to {frames[-1]}" + (f" every {data['every']}" if data["every"] > 1 else "")
    c = data["contact"]
    contact = (f"dhat {s.dhat:g} m, kappa {s.kappa:g} Pa, convergent {c['convergent']}" if c["enabled"]
               else "off (no collision handling)")
    return "\n".join([
        f"face scene {sim.name} ({data['format']}): the {data['face']} face, {len(m.rest)} vertices, "
        f"{len(m.tets)} tets, {len(m.bone)} bone vertices, proxy {len(m.proxy_vertices)} vertices / "
        f"{len(m.proxy_faces)} triangles",
        f"  frames: {len(frames)} of the {len(m.sequence)}-frame sequence ({span}), "
        f"blendshapes {', '.join(m.names)}",
        f"  solver: {data['solver']}{' on the GPU' if data.get('device') == 'gpu' else ''} (n1 {s.n1}, "
        f"n2 {s.n2}), tol {data['tol']:g}, max_iterations "
        f"{data['max_iterations']}",
        f"  contact: {contact}",
        "  the proxy's rest state is intersection-free"])


def frames_summary(result: FaceRunResult, name: str) -> str:
    """The one-line summary printed after a run."""
    return (f"{name}: {result.frames} frames in {result.wall_seconds:.1f} s (at most {result.max_contacts} "
            f"contacts); frames in {result.out_dir / 'frames'}")
