"""The actuated face of 000_face_pd_ipc_paper.txt built from the ICT-FaceKit head (MIT, ICT-VGL/ICT-FaceKit).

Construction (``build_face``):
- the fine patch: the ICT face skin (vertices 0-9408, quads split in two) around the mouth, cropped to a
  geodesic distance of ``crop_radius`` from the mouth opening and below the nose (y <= ``crop_top``); it has
  two boundary loops, the crop's outline and the mouth opening, whose two sides are the upper and lower lips
  (the lips' inner surfaces down to about 5 mm behind their contact line are part of the ICT face skin);
- the simulation mesh: the patch remeshed by a structured polar grid around the mouth
  (``geometry.shell_mesh.annulus_grid``), extruded inwards along smoothed normals into ``n_layers`` prism layers
  (``thickness_lip`` at the mouth opening, ``thickness`` from ``thickness_blend`` away), cut into tets; the
  two lips are separate flaps joined only at the mouth corners;
- bone: the innermost layer farther than ``free_radius`` (geodesic, on the skin) from the mouth opening; the
  part below ``jaw_level`` (under the mouth corners) is the jaw, which follows the rigid motion fitted (least
  squares, Kabsch) to the ICT lower teeth of each blendshape (jawOpen: a rotation of about 25 degrees about a
  left-right hinge); the rest is the skull (fixed);
- actuation: blendshape k's skin displacement (target minus neutral, metres) on the outer layer and the bone
  motion are extended harmonically into the volume (``geometry.shape_targets``); A_k,i is the symmetric
  factor of each tet's target deformation gradient;
- the collision proxy: the fine ICT skin of the lips and around them (geodesic distance from the mouth
  opening in [``proxy_inner``, ``proxy_outer``]), embedded in the simulation tets (s = W x, exact at rest);
  where the coarse outer surface cuts chords under the curved fine skin, proxy vertices lie slightly outside
  (extrapolated weights; count and largest distance in info['embedding_report']); ``push_rounds`` > 0 pushes
  the outer layer outwards instead (off by default: near the lips it closes the slit between the flaps);
- the visible skin: the fine patch without the strip of the lips nearer the mouth opening than ``proxy_inner``
  (the proxy leaves it out too), embedded in the simulation tets the same way (``skin_embedding``): the skin is
  the proxy over the proxy's band and follows the simulation mesh beyond it (vertices outside every tet:
  extrapolated weights; count and largest distance in info['skin_embedding_report']);
- the sequence: 50 frames of expression weights (``expression_sequence``) in which the lips press, roll and
  slide on each other.

Units: the ICT files are in centimetres; everything here is in metres. Axes: x left-right, y up, z forward.
"""
from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np

from ..contact.intersection import find_intersections
from ..geometry.collision_mesh import CollisionMesh
from ..geometry.embedding import TetLocator, embed_points
from ..geometry.shell_mesh import (annulus_grid, annulus_map, boundary_loops, edge_distance, extrude_shell,
                                  PlanarLocator, shell_report, smooth_unit, tilt_towards_normals,
                                  vertex_normals)
from ..geometry.shape_targets import HarmonicExtension, actuation_targets
from ..geometry.surface import compact_vertices
from ..geometry.surface_map import SurfaceMap
from .model import FaceModel, FaceSkin
from .sequence import count_interpenetrations, expression_sequence

#: The blendshapes used (ICT-FaceKit file names without .obj).
NAMES = ("jawOpen", "mouthClose", "mouthFunnel", "mouthPucker", "mouthPress_L", "mouthPress_R", "mouthRollLower",
         "mouthRollUpper", "mouthSmile_L", "mouthSmile_R", "mouthLeft", "mouthRight")
#: ICT vertex ranges (ICT-FaceKit README): the face skin, the teeth.
FACE_SKIN = (0, 9409)
TEETH = (17039, 21451)
#: Mesh resolution presets: columns per mouth-opening vertex, grid rings, prism layers. Measured (2 shared
#: cores): small 1,620 vertices / 5,940 tets, built in about 3 s; large 51,840 vertices / 279,180 tets, about
#: 35-40 s (the ICT files read in about 1 s of it).
SIZES = {"small": dict(column_factor=0.5, n_rings=12, n_layers=2),
         "large": dict(column_factor=1.0, n_rings=48, n_layers=11)}
#: Construction defaults (lengths [m]): crop_radius / crop_top / crop_inner: the patch (edge-path distance from
#: the ICT mouth edge, height below the nose, the distance from the ICT mouth edge where the patch is cut: the
#: lips' contact line); thickness / thickness_lip /
#: thickness_blend: the shell's depth away from / at the mouth and the distance over which it blends;
#: normal_smoothing: smoothing steps of the extrusion directions (on the fine patch); min_normal_dot: their
#: least dot product with the surface normals; fix_rounds: thickness reductions against inverted tets or tets
#: squashed below min_volume_ratio of a straight prism's tet; fold_rounds: against a shell boundary that runs
#: into itself;
#: free_radius: the inner layer closer than this to the mouth is free (the lips), the rest is bone; jaw_level:
#: bone below this height is the jaw; proxy_inner / proxy_outer: the proxy's band of distances from the mouth
#: opening; push_margin: the depth of the proxy under the inflated outer layer; min_stretch / max_stretch: the
#: range of the eigenvalues of A (inverted or extreme targets of thin tets under large blendshape motions);
#: stiffness [Pa].
DEFAULTS = dict(crop_radius=0.05, crop_inner=0.0045, crop_top=-0.013, thickness=0.018, thickness_lip=0.005,
                thickness_blend=0.025, normal_smoothing=100, min_normal_dot=0.3, fix_rounds=40, min_volume_ratio=0.2,
                fold_rounds=10, free_radius=0.02, jaw_level=-0.04, proxy_inner=0.0015, proxy_outer=0.022,
                push_margin=1e-4, min_stretch=0.2, max_stretch=5.0, stiffness=1.0e4)
_CM = 0.01


# ------------------------------------------------------------------------------------------------- ICT files
def default_data_dir() -> Path:
    """The shared ICT folder: $IPCSIM_SHARED_DATA/face/ict, else ../shared/data/face/ict next to the repo."""
    import os
    root = os.environ.get("IPCSIM_SHARED_DATA")
    if root:
        return Path(root) / "face" / "ict"
    return Path(__file__).resolve().parents[4] / "shared" / "data" / "face" / "ict"


def read_obj(path, with_faces: bool = True):
    """Vertices (n, 3) [file units] and (with_faces) polygons (list of vertex-index lists, 0-based) of an OBJ."""
    verts, faces = [], []
    with open(path) as f:
        for line in f:
            if line.startswith("v "):
                verts.append(line.split()[1:4])
            elif with_faces and line.startswith("f "):
                faces.append([int(tok.split("/")[0]) - 1 for tok in line.split()[1:]])
    return np.asarray(verts, np.float64), faces


def load_ict(data_dir=None, names=NAMES) -> dict:
    """The ICT neutral head and blendshapes in metres.

    Returns dict: neutral (N, 3) [m]; skin_triangles (f, 3) int64, the face skin's quads split along their
    (0, 2) diagonal; displacements (K, N, 3) [m] (blendshape minus neutral); names; landmarks (68,) int64.
    """
    d = Path(data_dir) if data_dir is not None else default_data_dir()
    neutral, polys = read_obj(d / "generic_neutral_mesh.obj")
    tris = []
    for p in polys:
        if max(p) < FACE_SKIN[1]:
            tris += [[p[0], p[k], p[k + 1]] for k in range(1, len(p) - 1)]
    disp = np.stack([read_obj(d / f"{n}.obj", with_faces=False)[0] - neutral for n in names])
    marks = json.loads((d / "vertex_indices.json").read_text())["idx_to_landmark_verts"]
    return dict(neutral=neutral * _CM, skin_triangles=np.asarray(tris, np.int64), displacements=disp * _CM,
                names=list(names), landmarks=np.asarray(marks, np.int64))


# ------------------------------------------------------------------------------------------------- the patch
def mouth_patch(ict: dict, crop_radius: float, crop_top: float, crop_inner: float) -> dict:
    """The fine skin patch around the mouth (see module doc).

    Returns dict: ids (n_f,) int64 ICT vertex ids; vertices (n_f, 3) [m]; triangles (f, 3) int64 (local);
    hole (k,) int64 and outline (q,) int64 loops (local); distance (n_f,) [m] edge-path distance from the hole
    (the cut mouth opening).
    """
    x, tris = ict["neutral"], ict["skin_triangles"]
    inner_lip = ict["landmarks"][60:68]  # the lips' inner contour
    loops = boundary_loops(tris)
    centre = x[inner_lip].mean(axis=0)
    hole = min(loops, key=lambda lp: np.linalg.norm(x[lp].mean(axis=0) - centre))
    dist = edge_distance(x, tris, hole)
    keep = np.all((dist[tris] <= crop_radius) & (dist[tris] >= crop_inner) & (x[tris, 1] <= crop_top), axis=1)
    ids, (local,) = compact_vertices(len(x), tris[keep])
    local = _largest_component(local)
    ids, (local,) = ids[np.unique(local)], [np.searchsorted(np.unique(local), local)]
    loops = boundary_loops(local)
    if len(loops) != 2:
        raise ValueError(f"face patch: expected 2 boundary loops (outline, mouth), got {len(loops)}")
    near = [np.linalg.norm(x[ids[lp]].mean(axis=0) - centre) for lp in loops]
    hole_loop, outline = (loops[0], loops[1]) if near[0] < near[1] else (loops[1], loops[0])
    dist = edge_distance(x[ids], local, hole_loop)
    return dict(ids=ids, vertices=x[ids], triangles=local, hole=hole_loop, outline=outline, distance=dist)


def _largest_component(tris: np.ndarray) -> np.ndarray:
    import scipy.sparse as sp
    import scipy.sparse.csgraph as csgraph
    n = int(tris.max()) + 1
    e = np.r_[tris[:, [0, 1]], tris[:, [1, 2]]]
    _, lab = csgraph.connected_components(sp.coo_matrix((np.ones(len(e)), (e[:, 0], e[:, 1])), shape=(n, n)),
                                          directed=False)
    big = np.argmax(np.bincount(lab[tris[:, 0]]))
    return tris[lab[tris[:, 0]] == big]


# ------------------------------------------------------------------------------------------------- the jaw
def rigid_fit(p, q) -> tuple[np.ndarray, np.ndarray, float]:
    """Least-squares rigid motion q ~ R p + t (Kabsch) of points p, q (k, 3) [m]: (R (3, 3), t (3,) [m], largest
    residual [m])."""
    pc, qc = p.mean(axis=0), q.mean(axis=0)
    u, _, vt = np.linalg.svd((p - pc).T @ (q - qc))
    d = np.sign(np.linalg.det(vt.T @ u.T))
    r = vt.T @ np.diag([1.0, 1.0, d]) @ u.T
    t = qc - r @ pc
    return r, t, float(np.linalg.norm(p @ r.T + t - q, axis=1).max())


def jaw_motions(ict: dict) -> tuple[list, np.ndarray]:
    """Per blendshape the rigid motion (R, t) of the lower teeth (the teeth that jawOpen moves), and the
    residuals (K,) [m] of the fits."""
    x, disp = ict["neutral"], ict["displacements"]
    teeth = np.arange(*TEETH)
    k_jaw = ict["names"].index("jawOpen") if "jawOpen" in ict["names"] else None
    moving = np.linalg.norm(disp[k_jaw][teeth], axis=1) > 1e-5 if k_jaw is not None else np.zeros(len(teeth), bool)
    lower = teeth[moving]
    motions, res = [], []
    for k in range(len(disp)):
        if lower.size == 0 or np.abs(disp[k][lower]).max() < 1e-5:  # static (file round-off ~1e-6 m)
            motions.append((np.eye(3), np.zeros(3)))
            res.append(0.0)
            continue
        r, t, e = rigid_fit(x[lower], x[lower] + disp[k][lower])
        motions.append((r, t))
        res.append(e)
    return motions, np.asarray(res)


# ------------------------------------------------------------------------------------------------- the mesh
def simulation_mesh(patch: dict, column_factor: float, n_rings: int, n_layers: int, p: dict) -> dict:
    """Remesh and extrude the patch (module doc). Returns dict: vertices (n, 3) [m], tets (m, 4), report,
    grid (AnnulusGrid), directions (n_s, 3), layer_of (n,) int64, distance (n,) [m] (lifted geodesic distance
    from the mouth opening)."""
    v, t = patch["vertices"], patch["triangles"]
    uv, radius = annulus_map(v, t, patch["hole"], patch["outline"], view=(0.0, 0.0, 1.0))
    grid = annulus_grid(v, t, uv, patch["hole"], column_factor, n_rings, outer_radius=radius,
                        outer_loop=patch["outline"])
    normals = smooth_unit(vertex_normals(v, t), t, p["normal_smoothing"])
    directions = grid.lift(t, normals)
    directions /= np.linalg.norm(directions, axis=1, keepdims=True)
    dist = grid.lift(t, patch["distance"])
    s = np.clip(dist / p["thickness_blend"], 0.0, 1.0)
    thick = p["thickness_lip"] + (p["thickness"] - p["thickness_lip"]) * s * s * (3.0 - 2.0 * s)
    directions = tilt_towards_normals(directions, grid.triangles, grid.vertices, p["min_normal_dot"])
    for _ in range(p["fold_rounds"]):  # thinner where the shell's boundary runs into itself (a fold of the flaps)
        verts, tets, report, thick = extrude_shell(grid.vertices, grid.triangles, directions, thick, n_layers,
                                                   fix_rounds=p["fix_rounds"],
                                                   min_volume_ratio=p["min_volume_ratio"])
        bad = shell_intersections(verts, tets) % len(grid.vertices)
        if bad.size == 0:
            break
        thick[np.unique(bad)] *= 0.8  # (shell_intersections: against folds; extrude_shell: inverted tets)
    n_s = len(grid.vertices)
    return dict(vertices=verts, tets=tets, report=report, grid=grid, directions=directions, uv=uv,
                layer_of=np.arange(len(verts)) // n_s, distance=np.tile(dist, n_layers + 1), n_surface=n_s,
                thickness=thick)


def proxy_surface(patch: dict, inner: float, outer: float) -> tuple[np.ndarray, np.ndarray]:
    """The collision proxy: fine patch triangles whose corners all lie at geodesic distance [inner, outer] [m]
    from the mouth opening. Returns (patch-local vertex ids (p,), triangles (f, 3) over them)."""
    d, t = patch["distance"], patch["triangles"]
    keep = np.all((d[t] >= inner) & (d[t] <= outer), axis=1)
    ids, (faces,) = compact_vertices(len(d), t[keep])
    return ids, faces


def skin_embedding(patch: dict, proxy_ids: np.ndarray, proxy_map, locator: TetLocator, inner: float):
    """The visible skin (module doc): the fine patch's triangles whose corners all lie at geodesic distance >=
    inner [m] from the mouth opening, each vertex embedded in the simulation tets (``embed_points`` with
    locator), the proxy's vertices (patch-local ids proxy_ids (p,)) with their rows of proxy_map (the same
    weights: the skin is the proxy there). Returns (FaceSkin, EmbeddingReport of the skin's vertices)."""
    d, t = patch["distance"], patch["triangles"]
    ids, (faces,) = compact_vertices(len(d), t[np.all(d[t] >= inner, axis=1)])
    at = np.searchsorted(ids, proxy_ids)
    if np.any(at >= len(ids)) or not np.array_equal(ids[np.minimum(at, len(ids) - 1)], proxy_ids):
        raise ValueError("face skin: the proxy's vertices must be vertices of the skin (proxy_inner >= inner)")
    w, report = embed_points(patch["vertices"][ids], locator.vertices, locator.tets, locator=locator)
    nodes, weights = w.nodes.copy(), w.weights.copy()
    nodes[at], weights[at] = proxy_map.nodes, proxy_map.weights
    skin_map = SurfaceMap(nodes, weights, w.n_nodes)
    return FaceSkin(vertices=patch["vertices"][ids], faces=faces, map=skin_map, proxy_index=at), report


def attach_skin(model: FaceModel, data_dir=None) -> FaceModel:
    """Give a face built by ``build_face`` (read back by ``face.data.read_face``) its visible skin from the ICT
    files in data_dir (``skin_embedding`` with the model's info['params']); returns the model (modified)."""
    p = model.info["params"]
    ict = load_ict(data_dir, model.names)
    patch = mouth_patch(ict, p["crop_radius"], p["crop_top"], p["crop_inner"])
    pids, pfaces = proxy_surface(patch, p["proxy_inner"], p["proxy_outer"])
    if not (np.array_equal(patch["vertices"][pids], model.proxy_vertices) and np.array_equal(pfaces,
                                                                                             model.proxy_faces)):
        raise ValueError("face skin: the ICT files do not give this model's proxy")
    model.skin, report = skin_embedding(patch, pids, model.proxy_map, TetLocator(model.rest, model.tets),
                                        p["proxy_inner"])
    model.info["skin_embedding_report"] = str(report)
    return model


def outer_offsets(mesh: dict, fine_uv: np.ndarray, fine_points: np.ndarray, margin: float) -> np.ndarray:
    """How far (n_s,) [m] each outer-layer vertex must move out along its extrusion direction so that the
    outer surface covers the fine points (p, 3) [m] (their annulus-map coordinates fine_uv (p, 2)): a fine
    point at height h along the interpolated extrusion direction above the grid triangle holding it asks
    h + margin [m] of the triangle's three corners (the margin also covers points just below the triangle
    but outside the tets, which cut the twisted side quads of the prisms along diagonals)."""
    grid, n_s = mesh["grid"], mesh["n_surface"]
    tri, w = PlanarLocator(grid.uv, grid.triangles).locate(fine_uv)
    corners = grid.triangles[tri]
    x = mesh["vertices"][:n_s]
    base = np.einsum("pa,pac->pc", w, x[corners])
    d = np.einsum("pa,pac->pc", w, mesh["directions"][corners])
    d /= np.linalg.norm(d, axis=1, keepdims=True)
    above = np.maximum(np.einsum("pc,pc->p", fine_points - base, d) + margin, 0.0)
    need = np.zeros(n_s)
    for a in range(3):
        np.maximum.at(need, corners[:, a], above)
    return need


def inflate_outer_layer(mesh: dict, fine_uv, fine_points, margin: float, max_rounds: int = 20,
                        passes: int = 4) -> tuple[float, int]:
    """Push the outer layer out by ``outer_offsets`` (a few passes), then halve the push on the corners of every
    boundary triangle of the shell that intersects another (the two lips' flaps pressed into each other) and
    start again, until the shell's boundary is intersection-free. Modifies mesh['vertices']. Returns (largest
    push [m], number of outer vertices whose push was reduced)."""
    n_s = mesh["n_surface"]
    rest = mesh["vertices"].copy()
    scale = np.ones(n_s)
    for _ in range(max_rounds):
        mesh["vertices"][:] = rest
        amount = np.zeros(n_s)
        for _ in range(passes):  # the directions under a point change as its corners move: a few passes
            extra = scale * outer_offsets(mesh, fine_uv, fine_points, margin)
            mesh["vertices"][:n_s] += extra[:, None] * mesh["directions"]
            amount += extra
        bad = shell_intersections(mesh["vertices"], mesh["tets"])
        if bad.size == 0:
            break
        scale[bad[bad < n_s]] *= 0.5
    return float(amount.max(initial=0.0)), int(np.count_nonzero(scale < 1))


def shell_intersections(vertices, tets) -> np.ndarray:
    """Vertices (k,) int64 of the boundary triangles and edges of a tet mesh that intersect each other."""
    cm = CollisionMesh.from_tet_mesh(vertices, tets)
    pairs = find_intersections(cm, cm.select_positions(vertices))
    if len(pairs) == 0:
        return np.zeros(0, np.int64)
    local = np.unique(np.r_[cm.edges[pairs[:, 0]].ravel(), cm.faces[pairs[:, 1]].ravel()])
    return cm.full_vertex_index[local]


# ------------------------------------------------------------------------------------------------- the model
def _bone(mesh: dict, p: dict) -> tuple[np.ndarray, np.ndarray]:
    """Bone vertices (innermost layer, away from the lips) and the jaw mask over them."""
    inner = mesh["layer_of"] == mesh["layer_of"].max()
    bone = np.flatnonzero(inner & (mesh["distance"] >= p["free_radius"]))
    jaw = mesh["vertices"][bone, 1] < p["jaw_level"]
    return bone, jaw


def build_face(size: str = "small", data_dir=None, names=NAMES, **overrides) -> FaceModel:
    """The actuated face (module doc) from the ICT files in data_dir (default ``default_data_dir()``).

    size: 'small' (tests, demo) or 'large' (benchmark), see SIZES; overrides: any SIZES or DEFAULTS key.
    The FaceModel's info holds the sizes, timings, the mesh and embedding reports, 'target_displacements'
    (K, n, 3) [m] (the harmonic extension of each blendshape: the actuation's source), 'lip_upper' and
    'lip_lower' (the simulation vertices of the mouth opening's two sides, all layers, corners left out), and
    the number of frames of the sequence whose uncollided proxy intersects itself: 'interpenetrating_frames'
    (proxy = W x_target, the harmonic target field) and 'interpenetrating_frames_blendshapes' (proxy = the ICT
    blendshapes blended directly).
    """
    t0 = time.perf_counter()
    p = {**DEFAULTS, **SIZES[size], **overrides}
    ict = load_ict(data_dir, names)
    patch = mouth_patch(ict, p["crop_radius"], p["crop_top"], p["crop_inner"])
    mesh = simulation_mesh(patch, p["column_factor"], p["n_rings"], p["n_layers"], p)
    pids, pfaces = proxy_surface(patch, p["proxy_inner"], p["proxy_outer"])
    proxy_rest = patch["vertices"][pids]
    push, frozen = inflate_outer_layer(mesh, mesh["uv"][pids], proxy_rest, p["push_margin"])
    rest, tets = mesh["vertices"], mesh["tets"]
    locator = TetLocator(rest, tets)
    w_map, emb = embed_points(proxy_rest, rest, tets, locator=locator)
    visible, skin_emb = skin_embedding(patch, pids, w_map, locator, p["proxy_inner"])
    bone, jaw = _bone(mesh, p)
    motions, jaw_res = jaw_motions(ict)
    n_s, grid = mesh["n_surface"], mesh["grid"]
    outer = np.arange(n_s)
    fixed = np.r_[outer, bone]
    ext = HarmonicExtension(rest, tets, fixed)
    order = np.argsort(fixed)  # HarmonicExtension takes values in sorted fixed order
    K = len(names)
    targets = np.zeros((K, len(rest), 3))
    bone_disp = np.zeros((K, len(bone), 3))
    for k in range(K):
        skin = grid.lift(patch["triangles"], ict["displacements"][k][patch["ids"]])
        r, t = motions[k]
        bone_disp[k][jaw] = rest[bone[jaw]] @ r.T + t - rest[bone[jaw]]
        targets[k] = ext(np.r_[skin, bone_disp[k]][order])
    actuation, n_inv = _actuation(rest, tets, targets, p["min_stretch"], p["max_stretch"])
    model = FaceModel(rest=rest, tets=tets, bone=bone, names=list(names), actuation=actuation,
                      bone_displacements=bone_disp, proxy_vertices=proxy_rest, proxy_faces=pfaces,
                      proxy_map=w_map, sequence=expression_sequence(names),
                      stiffness=np.full(len(tets), p["stiffness"]), skin=visible)
    ring0 = np.flatnonzero(grid.ring == 0)
    upper, lower = _lip_sides(grid, ring0, mesh["vertices"])
    layers = np.arange(p["n_layers"] + 1)[:, None] * n_s
    model.info.update(size=size, lip_upper=(upper + layers).ravel(), lip_lower=(lower + layers).ravel(),
                      params=p, n_vertices=len(rest), n_tets=len(tets), n_bone=len(bone),
                      n_jaw=int(jaw.sum()), n_proxy_vertices=len(proxy_rest), n_proxy_faces=len(pfaces),
                      mesh_report=str(shell_report(rest, tets)), embedding_report=str(emb), outer_push=push,
                      skin_embedding_report=str(skin_emb),
                      unpushed_outer_vertices=frozen,
                      inverted_targets=n_inv, jaw_fit_residual=float(jaw_res.max()),
                      target_displacements=targets, proxy_ict_ids=patch["ids"][pids],
                      source="ICT-FaceKit (MIT), generic_neutral_mesh.obj and blendshapes",
                      build_seconds=time.perf_counter() - t0)
    skin = ict["displacements"][:, patch["ids"][pids]]  # (K, p, 3): the ICT blendshapes on the proxy
    model.info["interpenetrating_frames"] = count_interpenetrations(model)[0]
    model.info["interpenetrating_frames_blendshapes"] = count_interpenetrations(
        model, positions=lambda w: proxy_rest + np.einsum("k,kpj->pj", w, skin))[0]
    return model


def _lip_sides(grid, ring0: np.ndarray, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The mouth opening's grid vertices (ring 0) on the upper and the lower lip, the two corner columns (the
    extreme points across the face) and their neighbours left out."""
    ang = np.arctan2(grid.uv[ring0, 1], grid.uv[ring0, 0])
    away = np.abs(np.sin(ang)) > np.sin(2.5 * 2 * np.pi / len(ring0))  # not within 2 columns of a corner
    return ring0[away & (ang > 0)], ring0[away & (ang < 0)]


def _actuation(rest, tets, targets, min_stretch, max_stretch) -> tuple[np.ndarray, list]:
    """A (K, m, 3, 3) [1] and, per blendshape, the number of tets whose target gradient is inverted."""
    out = np.empty((len(targets), len(tets), 3, 3))
    n_inv = []
    for k, u in enumerate(targets):
        out[k], bad = actuation_targets(rest, tets, u, min_stretch, max_stretch)
        n_inv.append(bad)
    return out, n_inv
