"""Grippers of JSON scenes: a rigid frame following a trajectory CSV (``geometry.trajectory``) and carrying
attachments (a body's node set or whole body, or a whole obstacle; ``model.gripper``).

Scene entry: ``{"name": ..., "trajectory": "pick.csv", "axis": [1, 0, 0], "attachments": [{"body": "left",
"box": {...}, "side": -1}, {"body": "plate"}, {"obstacle": "palm"}]}``. Selections pick body nodes like
Dirichlet sets (``scene.bodies``). A bad trajectory file is one SceneError naming the file, row and column.
"""
from __future__ import annotations

from ..geometry.trajectory import TrajectoryError, read_trajectory_csv
from .bodies import _cage_nodes, _selection
from .common import abs_path


def resolve_grippers(r, raw: list, bodies: list, obstacles: list, geometry: dict) -> list:
    """The resolved "grippers" list (absolute trajectory paths, defaults filled); stores each trajectory in
    geometry[("gripper", i)]. r: the scene's resolver (``loader._Resolver``); bodies / obstacles: their resolved
    entries (names)."""
    body_ids = {b["name"]: i for i, b in enumerate(bodies)}
    obstacle_ids = {o["name"]: j for j, o in enumerate(obstacles)}
    out = []
    for i, g in enumerate(raw):
        path = ["grippers", i]
        name = r.unique_name(g.get("name", f"gripper{i}"), path)
        full = abs_path(r.base_dir, g["trajectory"])
        try:
            traj = read_trajectory_csv(full)
        except TrajectoryError as exc:
            raise r.error(path + ["trajectory"], str(exc)) from None
        attachments = [_attachment(r, a, path + ["attachments", j], bodies, body_ids, obstacle_ids, geometry)
                       for j, a in enumerate(g["attachments"])]
        geometry[("gripper", i)] = traj
        out.append({"name": name, "trajectory": full, "axis": list(g.get("axis", [1.0, 0.0, 0.0])),
                    "attachments": attachments})
    return out


def _attachment(r, a: dict, path: list, bodies: list, body_ids: dict, obstacle_ids: dict, geometry: dict) -> dict:
    side = a.get("side", 0)
    if "obstacle" in a:
        if a["obstacle"] not in obstacle_ids:
            raise r.error(path + ["obstacle"], f"no obstacle is named {a['obstacle']!r}")
        return {"obstacle": a["obstacle"], "side": side}
    if a["body"] not in body_ids:
        raise r.error(path + ["body"], f"no body is named {a['body']!r}")
    i = body_ids[a["body"]]
    out = {"body": a["body"], "side": side}
    if "box" in a or "indices" in a:
        g, body = geometry[("body", i)], bodies[i]
        kind = "affine" if "affine" in body else "embedded" if "embedding" in body else "full"

        def nodes():
            if g.nodes is None:
                g.nodes = _cage_nodes(r, g, body["embedding"], ["bodies", i, "embedding"])
            return g.nodes

        sel, _ = _selection(r, a, path, nodes, kind)
        out.update(sel)
    return out


def add_grippers(builder, data: dict, geometry: dict, error) -> None:
    """Add a resolved scene's grippers to builder (bodies and obstacles already added, in order)."""
    from .bodies import _selection_kwargs

    body_ids = {b["name"]: i for i, b in enumerate(data["bodies"])}
    obstacle_ids = {o["name"]: j for j, o in enumerate(data["obstacles"])}
    for i, g in enumerate(data.get("grippers", [])):
        attachments = []
        for a in g["attachments"]:
            if "obstacle" in a:
                attachments.append({"obstacle": obstacle_ids[a["obstacle"]], "side": a["side"]})
                continue
            b = body_ids[a["body"]]
            sel = _selection_kwargs(a, geometry[("body", b)].nodes) if ("box" in a or "indices" in a) else {}
            attachments.append({"body": b, "side": a["side"], **sel})
        try:
            builder.add_gripper(geometry[("gripper", i)], attachments, axis=g["axis"])
        except ValueError as exc:
            raise error(["grippers", i], str(exc)) from None
