"""Bodies of JSON scenes: resolving a body entry (full space, embedded in a coarse mesh, or affine; with its
Dirichlet and Neumann sets) and adding it to a ``ModelBuilder``.

A body's *nodes* are its unknowns: the placed mesh vertices of a full-space body, the coarse mesh's vertices of an
embedded body (``"embedding"``), the 4 corners of the tet enclosing an affine body (``"affine"``). Dirichlet and
Neumann selections pick nodes: indices count them, relative boxes span their bounding box.
"""
from __future__ import annotations

import copy

import numpy as np

from ..model.values import Material
from .common import DEFAULTS, Geometry, accepts, filled, time_range
from .placement import place, select_in_box, world_box

#: what the nodes of a body kind are, for messages
NODES = {"embedded": "the vertices of its coarse mesh", "affine": "the 4 corners of its enclosing tet"}


def body_kind(body: dict) -> str:
    """"affine", "embedded" or "full" (a raw or resolved body entry)."""
    return "affine" if "affine" in body else "embedded" if "embedding" in body else "full"


def resolve_body(r, raw: dict, i: int, geometry: dict) -> dict:
    """The resolved entry of bodies[i] (every default filled in, mesh paths absolute); stores its Geometry in
    geometry[("body", i)]. r: the scene's resolver (``loader._Resolver``: error, unique_name, mesh)."""
    path = ["bodies", i]
    name = r.unique_name(raw.get("name", f"body{i}"), path)
    kind = body_kind(raw)
    mesh, v, t = r.mesh(raw["mesh"], path + ["mesh"], "tets" if kind == "full" else "solid")
    transform = filled(DEFAULTS["transform"], raw.get("transform"))
    g = Geometry(v, t, place(v, transform))
    out = {"name": name, "mesh": mesh, "transform": transform}
    if kind == "affine":
        from ..model.embedded import enclosing_tet

        out["material"] = {"density": raw.get("material", {}).get("density", DEFAULTS["material"]["density"])}
        out["affine"] = filled(DEFAULTS["affine"], raw["affine"])
        g.nodes = enclosing_tet(g.placed)[0]
    else:
        out["material"] = filled(DEFAULTS["material"], raw.get("material"))
    if kind == "embedded":
        out["embedding"] = _embedding(r, raw["embedding"], path + ["embedding"], transform, g)
    elif kind == "full":
        g.nodes = g.placed

    def nodes() -> np.ndarray:
        if g.nodes is None:  # a generated cage, made once when a selection needs it
            g.nodes = _cage_nodes(r, g, out["embedding"], path + ["embedding"])
        return g.nodes

    out["inversion"] = raw.get("inversion", DEFAULTS["inversion"])
    out["self_contact"] = bool(raw.get("self_contact", True))
    if "damping" in raw:  # kept out of the resolved entry when not given (scene fingerprints stay as they were)
        out["damping"] = {"stiffness": float(raw["damping"].get("stiffness", 0.0))}
    out["initial_velocity"] = filled({"linear": [0.0, 0.0, 0.0], "angular": [0.0, 0.0, 0.0]},
                                     raw.get("initial_velocity"))
    out["dirichlet"] = [_dirichlet(r, d, path + ["dirichlet", j], nodes, kind)
                        for j, d in enumerate(raw.get("dirichlet", []))]
    out["neumann"] = [_neumann(r, d, path + ["neumann", j], nodes, kind)
                      for j, d in enumerate(raw.get("neumann", []))]
    geometry[("body", i)] = g
    return out


def _embedding(r, raw: dict, path: list, transform: dict, g: Geometry) -> dict:
    """The resolved "embedding" entry; a given coarse mesh is read and placed with the body's transform."""
    out = {}
    if "mesh" in raw:
        mesh, cv, ct = r.mesh(raw["mesh"], path + ["mesh"], "coarse")
        out["mesh"] = mesh
        g.coarse = (place(cv, transform), ct)
        g.nodes = g.coarse[0]
    else:
        key = "resolution" if "resolution" in raw else "vertices"
        out[key] = raw[key]
    out["mass"] = raw.get("mass", DEFAULTS["embedding"]["mass"])
    return out


def _resolution(embedding: dict):
    """The ``resolution`` argument of ``add_embedded_body``: a cell size [m], {"vertices": n} or None."""
    if "resolution" in embedding:
        return float(embedding["resolution"])
    if "vertices" in embedding:
        return {"vertices": int(embedding["vertices"])}
    return None


def _cage_nodes(r, g: Geometry, embedding: dict, path: list) -> np.ndarray:
    """The vertices (n_c, 3) [m] of the voxel cage ``add_embedded_body`` makes for this embedding (the same
    deterministic function of the placed fine mesh)."""
    from ..model.embedded import make_coarse

    try:
        return make_coarse(g.placed, g.elements, _resolution(embedding))[0]
    except ValueError as exc:
        raise r.error(path, str(exc)) from None


def _selection(r, raw: dict, path: list, nodes, kind: str) -> tuple[dict, int]:
    """(resolved selection {"box": ...} or {"indices": [...]}, number of nodes selected); nodes() gives the
    body's nodes (n, 3) [m]."""
    x = nodes()
    if "box" in raw:
        box = {"min": list(raw["box"]["min"]), "max": list(raw["box"]["max"]),
               "relative": raw["box"].get("relative", True)}
        count = len(select_in_box(x, *world_box(box, x)))
        if count == 0:
            if kind == "full":
                where = "relative to the body's bounding box" if box["relative"] else "in world coordinates [m]"
                raise r.error(path + ["box"], f"the box ({where}) holds no vertex of the body")
            where = "relative to the bounding box of the body's nodes" if box["relative"] else \
                "in world coordinates [m]"
            raise r.error(path + ["box"], f"the box ({where}) holds no node of the body ({NODES[kind]})")
        return {"box": box}, count
    idx = list(raw["indices"])
    if max(idx) >= len(x):
        if kind == "full":
            raise r.error(path + ["indices"], f"vertex index {max(idx)} out of range (the mesh has {len(x)} "
                                              "vertices)")
        raise r.error(path + ["indices"], f"node index {max(idx)} out of range (the body has {len(x)} nodes, "
                                          f"{NODES[kind]})")
    return {"indices": idx}, len(set(idx))


def _dirichlet(r, raw: dict, path: list, nodes, kind: str) -> dict:
    out, count = _selection(r, raw, path, nodes, kind)
    if "keyframes" in raw:
        kf = copy.deepcopy(raw["keyframes"])
        for j, frame in enumerate(kf.get("positions", [])):
            if len(frame) != count:
                what = "vertices" if kind == "full" else "nodes"
                raise r.error(path + ["keyframes", "positions", j],
                              f"{len(frame)} positions, but the set holds {count} {what}")
        out["keyframes"] = kf
        return out
    out.update({"velocity": list(raw.get("velocity", [0.0, 0.0, 0.0])),
                "angular_velocity": list(raw.get("angular_velocity", [0.0, 0.0, 0.0])),
                "center": raw.get("center"), "time_range": list(raw.get("time_range", [0.0, None]))})
    return out


def _neumann(r, raw: dict, path: list, nodes, kind: str) -> dict:
    out, _ = _selection(r, raw, path, nodes, kind)
    key = "acceleration" if "acceleration" in raw else "force"
    out.update({key: list(raw[key]), "time_range": list(raw.get("time_range", [0.0, None]))})
    return out


def material_of(body: dict) -> Material:
    """A resolved body's ``Material`` (an affine body's: ``Material.affine`` of its stiffness) with its inversion
    option and stiffness-proportional damping beta [s] (``solvers.stiffness_damping``; 0 when absent)."""
    mat = body["material"]
    common = dict(density=float(mat["density"]), inversion=body.get("inversion", DEFAULTS["inversion"]),
                  damping_stiffness=float(body.get("damping", {}).get("stiffness", 0.0)))
    if body_kind(body) == "affine":
        return Material.affine(stiffness=float(body["affine"]["stiffness"]), **common)
    return Material(name=mat["model"], youngs_modulus=float(mat["youngs_modulus"]),
                    poisson_ratio=float(mat["poisson_ratio"]), **common)


def add_body(builder, body: dict, g: Geometry, path: list, error) -> int:
    """Add a resolved body (its Geometry g) to builder; returns its body id. error(path, message) makes the
    SceneError for a ValueError of the builder."""
    init = body["initial_velocity"]
    motion = dict(velocity=init["linear"], angular_velocity=init["angular"])
    kind = body_kind(body)
    try:
        material = material_of(body)
        if kind == "affine":
            return builder.add_affine_body(g.placed, g.elements, material=material,
                                           fixed=bool(body["affine"]["fixed"]), **motion)
        if kind == "embedded":
            e = body["embedding"]
            return builder.add_embedded_body(g.placed, g.elements, coarse=g.coarse, resolution=_resolution(e),
                                             mass=e["mass"], material=material, **motion)
        return builder.add_body(g.placed, g.elements, material=material, **motion)
    except ValueError as exc:
        raise error(path + ([kind] if kind == "affine" else ["embedding"] if kind == "embedded" else []),
                    str(exc)) from None


def add_conditions(builder, bid: int, body: dict, g: Geometry, path: list, error) -> None:
    """Add a resolved body's Dirichlet sets and Neumann loads (body id bid) to builder."""
    for j, d in enumerate(body["dirichlet"]):
        p = path + ["dirichlet", j]
        kwargs = _selection_kwargs(d, g.nodes)
        if "keyframes" in d:
            kf = d["keyframes"]
            values = kf["translations"] if "translations" in kf else kf["positions"]
            kwargs["keyframes"] = (np.asarray(kf["times"], np.float64), np.asarray(values, np.float64))
        else:
            kwargs.update(velocity=d["velocity"], angular_velocity=d["angular_velocity"], center=d["center"],
                          time_range=time_range(d["time_range"]))
        try:
            builder.add_dirichlet(bid, **kwargs)
        except ValueError as exc:
            raise error(p, str(exc)) from None
    for j, d in enumerate(body["neumann"]):
        p = path + ["neumann", j]
        kwargs = dict(_selection_kwargs(d, g.nodes), time_range=time_range(d["time_range"]))
        if "acceleration" in d:
            if not accepts(builder.add_neumann, "acceleration"):
                raise error(p + ["acceleration"], "not supported by this build "
                            "(ModelBuilder.add_neumann(acceleration=...) is missing); give 'force' [N]")
            force = None
            kwargs["acceleration"] = d["acceleration"]
        else:
            force = d["force"]
        try:
            builder.add_neumann(bid, force, **kwargs)
        except ValueError as exc:
            raise error(p, str(exc)) from None


def _selection_kwargs(d: dict, nodes: np.ndarray) -> dict:
    if "box" in d:
        return {"box": world_box(d["box"], nodes)}
    return {"indices": np.asarray(d["indices"], np.int64)}
