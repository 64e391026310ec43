"""Turn the raw settings of an IPC 2020 script (``ipcsim.scene.ipc_script``) into an ipcsim scene dict.

Geometry work lives here: reading the shape meshes, IPC's placement (x = R (S p) + t, R = Rx Ry Rz), the
global ``rotateModel``/``size`` folded into each shape's transform, IPC's vertex selections of DBC/NBC boxes
(relative to the mesh file's bounding box, boundary vertices only), rotation centers (the moving bounding-box
centers of IPC's AnimScripter: written as center "bbox"), the bounding-box diagonal that scales dHat/epsv, and
meshSeq keyframes. See the ``ipc_script`` module docstring for the command-by-command semantics.
"""
from __future__ import annotations

import math
import os
import warnings
from dataclasses import replace
from pathlib import Path

import numpy as np

from ..model.control import rotation_matrix
from ..model.control import rotation_xyz
from ..errors import IPCScriptWarning
from .ipc_animation import plan_animation
from .mesh_files import MeshFileError, read_keyframe, read_mesh_data, read_seg
from .placement import place, select_in_box, world_box

GRAVITY = 9.81  # [m/s^2]; IPC's Optimizer uses 9.80665, the project data README 9.81 (followed here)
_KINDS = {".msh": "tet", ".obj": "triangle", ".seg": "edge", ".pt": "point"}
_SEQ_EXT = {"tet": (".msh",), "triangle": (".obj",), "edge": (".seg", ".obj"), "point": (".pt", ".obj")}


def rotation_xyz_deg(degrees) -> np.ndarray:
    """IPC's shape rotation (3, 3): Rx(rx) @ Ry(ry) @ Rz(rz), angles (3,) [deg]."""
    return rotation_xyz(np.radians(np.asarray(degrees, np.float64)))


def axis_angle(axis, degrees: float) -> np.ndarray:
    """Rotation (3, 3) by degrees [deg] about axis (3,) (normalized here)."""
    k = np.asarray(axis, np.float64)
    return rotation_matrix(k / np.linalg.norm(k) * math.radians(float(degrees)))


class _Mesh:
    """A shape's mesh file: vertices (n, 3) [file units], elements, kind, and IPC's selectable vertices."""

    def __init__(self, vertices, elements, kind):
        self.vertices, self.elements, self.kind = vertices, elements, kind
        selectable = np.ones(len(vertices), bool)  # IPC: all vertices of meshes without surface triangles
        if kind in ("tet", "triangle"):
            from ..geometry.surface import boundary_faces

            faces = boundary_faces(vertices, elements) if kind == "tet" else elements
            selectable[:] = False
            selectable[np.unique(faces)] = True
        self.selectable = selectable


def _read_shape_mesh(p, path: Path, line: int, what: str = "shape") -> _Mesh:
    kind = _KINDS.get(path.suffix.lower())
    if kind is None:
        raise p.error(line, f"{what}: not supported (mesh format '{path.suffix or path.name}'; IPC scripts use "
                            ".msh, .obj, .seg or .pt)")
    try:
        if kind in ("edge", "point"):
            v, s = read_seg(path)
            return _Mesh(v, s if kind == "edge" else None, kind)
        m = read_mesh_data(path)
    except MeshFileError as exc:
        raise p.error(line, f"{what}: cannot read '{os.fspath(path)}': {exc}") from None
    if m.kind != kind:
        raise p.error(line, f"{what}: '{os.fspath(path)}' holds {m.kind} elements, expected {kind}s")
    return _Mesh(m.vertices, m.elements, kind)


def _f(values) -> list:
    return [float(v) for v in values]


def _transform(scale, rotation, translation, degrees=None) -> dict:
    s = np.asarray(scale, np.float64)
    rot = _f(degrees) if degrees is not None else [_f(row) for row in rotation]
    return {"scale": float(s[0]) if np.all(s == s[0]) else _f(s), "rotation": rot, "translation": _f(translation)}


def _range(a0, a1, g0, g1) -> tuple[float, float]:
    return max(a0, g0), min(a1, g1)


def _range_json(start, end) -> list:
    return [float(start), None if math.isinf(end) else float(end)]


class _Assembler:
    def __init__(self, p):
        self.p, self.s = p, p.s
        self.stem = p.path.stem
        self.mco_points: list[np.ndarray] = []  # placed meshCO vertices (n_j, 3) [m]

    def warn(self, line, message):
        warnings.warn(f"{self.p.source}:{line}: {message}", IPCScriptWarning, stacklevel=5)

    # ------------------------------------------------------------- placement
    def place_shapes(self):
        """Per shape: (mesh, transform dict, placed vertices), and the dHat/epsv bbox diagonal [m]."""
        meshes = [_read_shape_mesh(self.p, sh.path, sh.line) for sh in self.p.shapes]
        parts = []
        for sh, m in zip(self.p.shapes, meshes):
            parts.append((np.asarray(sh.scale, np.float64), rotation_xyz_deg(sh.rotation_deg),
                          np.asarray(sh.translation, np.float64)))
        placed0 = [(m.vertices * s) @ r.T + t for m, (s, r, t) in zip(meshes, parts)]
        tet = [x for x, m in zip(placed0, meshes) if m.kind == "tet"]
        if not tet:
            raise self.p.error(self.p.shapes[0].line, "shapes: no tet-mesh (.msh) shape, nothing to simulate")
        pts = np.vstack(tet)
        diag = float(np.linalg.norm(pts.max(axis=0) - pts.min(axis=0)))
        rotated = self.s["rotate_deg"] != 0.0
        if rotated:  # rotates the initial positions about IPC's center (max - min) / 2 of all shapes
            allx = np.vstack(placed0)
            c = (allx.max(axis=0) - allx.min(axis=0)) / 2.0
            rm = axis_angle(self.s["rotate_axis"], self.s["rotate_deg"])
            parts = [(s, rm @ r, rm @ (t - c) + c) for s, r, t in parts]
        if self.s["size"] > 0.0:  # rescale so the largest extent is `size`, min corner at the origin
            allx = np.vstack([(m.vertices * s) @ r.T + t for m, (s, r, t) in zip(meshes, parts)])
            k = self.s["size"] / float(np.max(allx.max(axis=0) - allx.min(axis=0)))
            shift = k * allx.min(axis=0)
            parts = [(k * s, r, k * t - shift) for s, r, t in parts]
            diag *= k
        out = []
        for sh, m, (s, r, t) in zip(self.p.shapes, meshes, parts):
            nonzero = sum(1 for a in sh.rotation_deg if a != 0.0)
            degrees = sh.rotation_deg if (not rotated and nonzero <= 1) else None
            tr = _transform(s, r, t, degrees)
            out.append((m, tr, place(m.vertices, tr)))
        return out, diag

    # ------------------------------------------------------------- selections
    def selection(self, m: _Mesh, placed, lo_rel, hi_rel):
        """IPC's box selection (file bbox, boundary vertices) as a scene selection dict, or None when empty."""
        p = m.vertices
        bmin, bmax = p.min(axis=0), p.max(axis=0)
        lo = (bmax - bmin) * np.asarray(lo_rel) + bmin
        hi = (bmax - bmin) * np.asarray(hi_rel) + bmin
        sel = np.flatnonzero(m.selectable & np.all((p >= lo) & (p <= hi), axis=1))
        if len(sel) == 0:
            return None, sel
        box = {"min": _f(lo_rel), "max": _f(hi_rel), "relative": True}
        if all(a <= b for a, b in zip(lo_rel, hi_rel)):
            ours = select_in_box(placed, *world_box(box, placed))
            if np.array_equal(ours, sel):
                return {"box": box}, sel
        return {"indices": [int(i) for i in sel]}, sel

    def dirichlet(self, sh, m, placed) -> list:
        out = []
        g0, g1 = self.s["dbc_range"]
        for lo, hi, v, w_deg, t0, t1, line in sh.dbc:
            sel_dict, sel = self.selection(m, placed, lo, hi)
            if sel_dict is None:
                self.warn(line, "DBC: the box selects no boundary vertex; ignored (like IPC)")
                continue
            start, end = _range(t0, t1, g0, g1)
            if not end > start:
                self.warn(line, "DBC: its time range does not meet DBCTimeRange; ignored")
                continue
            w = [math.radians(a) for a in w_deg]
            out.append({**sel_dict, "velocity": _f(v), "angular_velocity": w, "center": "bbox" if any(w) else None,
                        "time_range": _range_json(start, end)})
        return out

    def neumann(self, sh, m, placed) -> list:
        out = []
        g0, g1 = self.s["nbc_range"]
        for lo, hi, a, t0, t1, line in sh.nbc:
            sel_dict, _ = self.selection(m, placed, lo, hi)
            if sel_dict is None:
                self.warn(line, "NBC: the box selects no boundary vertex; ignored (like IPC)")
                continue
            start, end = _range(t0, t1, g0, g1)
            if not end > start:
                self.warn(line, "NBC: its time range does not meet NBCTimeRange; ignored")
                continue
            # IPC: steps STARTING in [start, end); ipcsim: steps ENDING in [start', end']: move both bounds
            # half a step later (exact on the step grid, robust to rounding of the accumulated time)
            start, end = (start + 0.5 * self.s["dt"] if start > 0.0 else 0.0), end + 0.5 * self.s["dt"]
            out.append({**sel_dict, "acceleration": _f(a), "time_range": _range_json(start, end)})
        return out

    # ------------------------------------------------------------- bodies and obstacles
    def material(self, sh) -> dict:
        d, e, nu = self.s["density"], self.s["youngs"], self.s["poisson"]
        if sh.material is not None:
            md, me, mnu = sh.material
            if all(math.isfinite(x) for x in sh.material) and md > 0 and me > 0:
                self.p.check_material(sh.material_line, "material", md, me, mnu)
                d, e, nu = md, me, mnu
            else:
                self.warn(sh.material_line, f"material: invalid ({md:g} {me:g} {mnu:g}); default material used "
                                            "(like IPC)")
        return {"model": self.s["energy"], "density": float(d), "youngs_modulus": float(e),
                "poisson_ratio": float(nu)}

    def body(self, i, sh, m, tr, placed) -> dict:
        lin, ang = [0.0] * 3, [0.0] * 3
        if sh.init_velocity is not None:
            w = np.radians(np.asarray(sh.init_velocity[1], np.float64))
            bcenter = (placed.min(axis=0) + placed.max(axis=0)) / 2.0
            lin = _f(np.asarray(sh.init_velocity[0], np.float64) + np.cross(w, placed.mean(axis=0) - bcenter))
            ang = _f(w)
        return {"name": f"{sh.path.stem}_{i}", "mesh": os.fspath(sh.path), "transform": tr,
                "material": self.material(sh), "initial_velocity": {"linear": lin, "angular": ang},
                "dirichlet": self.dirichlet(sh, m, placed), "neumann": self.neumann(sh, m, placed)}

    def obstacle(self, i, sh, m, tr, placed) -> dict:
        if sh.dbc:
            raise self.p.error(sh.dbc[0][-1], "DBC: not supported on a kinematic shape (its vertices are already "
                                              "prescribed)")
        for _, _, _, _, _, line in sh.nbc:
            self.warn(line, "NBC: ignored on a kinematic shape (its vertices are prescribed)")
        if sh.init_velocity is not None:
            self.warn(sh.init_line, "initVel: ignored on a kinematic shape (like IPC)")
        if sh.material is not None:
            self.warn(sh.material_line, "material: ignored on a kinematic shape")
        out = {"name": f"{sh.path.stem}_{i}", "mesh": os.fspath(sh.path), "transform": tr,
               "velocity": [0.0] * 3, "angular_velocity": [0.0] * 3, "center": None, "time_range": [0.0, None]}
        if sh.mesh_seq is not None:
            if sh.linear_velocity is not None or sh.angular_velocity_deg is not None:
                raise self.p.error(sh.mesh_seq[1], "meshSeq: not supported together with linearVelocity/"
                                                   "angularVelocity (IPC lets the sequence win)")
            out["keyframes"] = self.keyframes(sh, m)
            return out
        if sh.linear_velocity is not None:
            out["velocity"] = _f(sh.linear_velocity)
        if sh.angular_velocity_deg is not None and any(sh.angular_velocity_deg):
            out["angular_velocity"] = [math.radians(a) for a in sh.angular_velocity_deg]
            out["center"] = "bbox"  # IPC: Rx Ry Rz (w h) about the bounding-box center at each step start
        return out

    def keyframes(self, sh, m) -> dict:
        folder, line = sh.mesh_seq
        files = []
        while True:
            k = len(files)
            found = [folder / f"{k}{ext}" for ext in _SEQ_EXT[m.kind] if (folder / f"{k}{ext}").is_file()]
            if not found:
                break
            files.append(found[0])
        if not files:
            raise self.p.error(line, f"meshSeq: no frame '0{_SEQ_EXT[m.kind][0]}' in '{os.fspath(folder)}'")
        try:  # only the positions of a frame matter (IPC reads .pt frames, or .obj in their place, as points)
            first = read_keyframe(files[0])
        except MeshFileError as exc:
            raise self.p.error(line, f"meshSeq: cannot read '{os.fspath(files[0])}': {exc}") from None
        if len(first) != len(m.vertices):
            raise self.p.error(line, f"meshSeq: '{os.fspath(files[0])}' has {len(first)} vertices, the "
                                     f"shape {len(m.vertices)}")
        steps = math.ceil(self.s["end"] / self.s["dt"] - 1e-9)
        if len(files) < steps:
            self.warn(line, f"meshSeq: {len(files)} frames for {steps} steps; the last frame is held after "
                            f"t = {len(files) * self.s['dt']:g} s (IPC stops at the missing file)")
        # IPC's step k (from t = k h to (k + 1) h) moves to file k: file k is the position at (k + 1) h
        return {"files": [os.fspath(files[0])] + [os.fspath(f) for f in files], "dt": float(self.s["dt"])}

    def mesh_co(self, j, co) -> dict:
        m = _read_shape_mesh(self.p, co.path, co.line, "meshCO")
        if m.kind != "triangle":
            raise self.p.error(co.line, "meshCO: expected a triangle mesh (.obj)")
        p = m.vertices
        s = co.scale / float(np.max(p.max(axis=0) - p.min(axis=0)))
        r = rotation_xyz_deg(co.rotation_deg)
        t = np.asarray(co.origin, np.float64) - s * (r @ p.mean(axis=0))
        degrees = co.rotation_deg if sum(1 for a in co.rotation_deg if a != 0.0) <= 1 else None
        tr = _transform([s] * 3, r, t, degrees)
        self.mco_points.append(place(p, tr))
        return {"name": f"meshCO{j}_{co.path.stem}", "mesh": os.fspath(co.path),
                "transform": tr, "velocity": [0.0] * 3,
                "angular_velocity": [0.0] * 3, "center": None, "time_range": [0.0, None],
                "friction": float(co.friction)}  # IPC: a meshCO's own coefficient for all its contacts

    # ------------------------------------------------------------- shapes by script
    def shapes_null(self, placed) -> tuple[list, list]:
        """``script null``: the shapes' own extras decide (kinematic: non-tet or scripted velocity/meshSeq)."""
        bodies, obstacles = [], []
        for i, (sh, (m, tr, x)) in enumerate(zip(self.p.shapes, placed)):
            kinematic = (m.kind != "tet" or sh.linear_velocity is not None or sh.angular_velocity_deg is not None
                         or sh.mesh_seq is not None)
            if kinematic:
                obstacles.append(self.obstacle(i, sh, m, tr, x))
            else:
                bodies.append(self.body(i, sh, m, tr, x))
        return bodies, obstacles

    def shapes_animated(self, placed) -> tuple[list, list]:
        """A legacy animation script (``ipc_animation``): IPC drops the shapes' extras and sets up its own
        handles, shifts and collision-object motions."""
        name, params, line = self.s["script"]
        for sh in self.p.shapes:
            extras = [k for k, v in (("DBC", sh.dbc), ("NBC", sh.nbc), ("initVel", sh.init_velocity),
                                     ("linearVelocity", sh.linear_velocity),
                                     ("angularVelocity", sh.angular_velocity_deg), ("meshSeq", sh.mesh_seq))
                      if v]
            if extras:
                self.warn(sh.line, f"shape: {', '.join(extras)} ignored under 'script {name}' (IPC's animation "
                                   "scripts replace the shapes' own conditions)")
        plan = plan_animation(name, params, [m.kind for m, _, _ in placed], [x for _, _, x in placed],
                              self.mco_points, self.s, lambda msg: self.p.error(line, msg),
                              lambda msg: self.warn(line, msg))
        bodies, obstacles = [], []
        for i, (sh, (m, tr, x)) in enumerate(zip(self.p.shapes, placed)):
            if plan.lift:
                tr = {**tr, "translation": [tr["translation"][0], tr["translation"][1] + plan.lift,
                                            tr["translation"][2]]}
                x = x + np.array([0.0, plan.lift, 0.0])
            bare = replace(sh, dbc=[], nbc=[], init_velocity=None, linear_velocity=None, angular_velocity_deg=None,
                           mesh_seq=None)
            if m.kind != "tet":
                obstacles.append({**self.obstacle(i, bare, m, tr, x), **plan.obstacle.get(i, {})})
                continue
            body = self.body(i, bare, m, tr, x)
            body["dirichlet"] = plan.dirichlet.get(i, [])
            body["neumann"] = plan.neumann.get(i, [])
            if i in plan.velocity:
                body["initial_velocity"] = {"linear": plan.velocity[i], "angular": [0.0] * 3}
            bodies.append(body)
        return bodies, obstacles

    # ------------------------------------------------------------- the scene
    def scene(self) -> dict:
        s = self.s
        placed, diag = self.place_shapes()
        mesh_cos = [self.mesh_co(j, co) for j, co in enumerate(self.p.mesh_cos)]
        if s["script"][0] == "null":
            bodies, obstacles = self.shapes_null(placed)
        else:
            bodies, obstacles = self.shapes_animated(placed)
        if not bodies:
            raise self.p.error(self.p.shapes[0].line, "shapes: no simulated body (every shape is kinematic)")
        obstacles += mesh_cos
        if not s["self_collision"]:
            for b in bodies:
                b["self_contact"] = False
            if len(bodies) > 1:
                self.warn(s["self_collision_line"], "selfCollisionOff: each shape's self contact is off; contact "
                                                    "between different shapes stays on (IPC turns it off too)")
        scale = 1.0 if s["absolute"] else diag
        integrator = {"type": "newmark", "beta": float(s["beta"]), "gamma": float(s["gamma"])} \
            if s["integrator"] == "NM" else {"type": "implicit_euler"}
        ratio = s["damping_ratio"]
        if ratio == 0.0 and s["damping_stiff"] > 0.0:  # IPC: dampingStiff = 0.75 dampingRatio h^3
            ratio = s["damping_stiff"] / (0.75 * s["dt"] ** 3)
        if ratio > 0.0:
            integrator["damping_ratio"] = float(ratio)
        data = {
            "format": "ipcsim-scene/1", "name": self.stem,
            "time": {"end": float(s["end"]), "dt": float(s["dt"])},
            "gravity": [0.0, -GRAVITY if s["gravity"] else 0.0, 0.0],
            "integrator": integrator,
            "contact": {"dhat": float(s["dhat"] * scale)},
            "friction": {"mu": float(s["self_fric"]), "eps_v": float(s["epsv"] * scale),
                         "lagging_iterations": int(s["fric_iters"])},
            "solver": {} if s["tol"] is None else {"tol": float(s["tol"])},
            "bodies": bodies, "obstacles": obstacles,
            "half_spaces": [{"origin": _f(h["origin"]), "normal": _f(h["normal"]), "friction": float(h["friction"])}
                            for h in self.p.half_spaces],
        }
        return data


def assemble(parser) -> dict:
    """The scene dict (format v1) of a parsed IPC script (``ipc_script._Parser`` after ``run``)."""
    return _Assembler(parser).scene()
