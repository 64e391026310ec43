"""The figures of docs/face.md (issue #25 item 6): 000 Fig. 3 (one expression without collision handling, with the
standard-PD penalty springs and with IPC) and 000 Fig. 2b (the collision-aware region x2) on the small face.

    python benchmarks/face_figures.py [--sequence pucker_funnel] [--frame 12] [--out docs/images]

writes OUT/face-collision.png (three panels: the lips' proxy at the frame's equilibrium, the triangles that take
part in a self-intersection drawn red; each run from the neutral face through every earlier frame of the
sequence) and OUT/face-region.png (the simulation mesh's outer skin, x2 orange, the collision-agnostic part blue,
and the proxy). Prints each panel's count of intersecting edge-triangle pairs.
"""
from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

RED = np.array([0.85, 0.1, 0.1])


def solve(model, weights, kind: str) -> np.ndarray:
    """The equilibrium (n, 3) [m] after the frames weights (k, K) by 'free' (no collision handling), 'penalty'
    or 'ipc' (woodbury)."""
    from ipcsim.face.solver import FaceContact, FacePDSolver
    from ipcsim.face.penalty import PenaltyFacePDSolver

    solver = {"free": lambda: FacePDSolver(model, "direct", FaceContact(enabled=False)),
              "penalty": lambda: PenaltyFacePDSolver(model, "woodbury"),
              "ipc": lambda: FacePDSolver(model, "woodbury")}[kind]()
    for w in weights:
        solver.frame(w)
    return solver.x


def panel(renderer, s, faces, bad_faces, label) -> np.ndarray:
    """One image: the proxy s (p, 3) [m], the faces bad_faces drawn red."""
    base = renderer.base.copy()
    renderer.base[bad_faces] = RED
    img = renderer.draw(s, faces, label)
    renderer.base = base
    return img


def collision_figure(model, sequence: str, frame: int, out: Path) -> None:
    from PIL import Image

    from ipcsim.contact.intersection import find_intersections
    from ipcsim.face.runner import lip_sides
    from ipcsim.geometry.collision_mesh import CollisionMesh
    from ipcsim.app.render import Renderer
    from ipcsim.face.expressions import expressions

    w = expressions(sequence, model.names)[:frame + 1]
    faces = np.asarray(model.proxy_faces, np.int64)
    mesh = CollisionMesh.from_triangle_mesh(model.proxy_vertices, faces)
    side = lip_sides(model)[faces].max(axis=1)
    runs = {k: model.proxy_map.apply(solve(model, w, k)) for k in ("free", "penalty", "ipc")}
    lips = np.r_[model.info["lip_upper"], model.info["lip_lower"]]
    centre = model.rest[lips].mean(axis=0)
    lo, hi = centre - [0.03, 0.015, 0.02], centre + [0.03, 0.015, 0.02]
    images = []
    titles = {"free": "no collision handling", "penalty": "standard PD (penalty springs)", "ipc": "IPC"}
    for k, s in runs.items():
        pairs = find_intersections(mesh, s)
        bad = np.unique(np.asarray(pairs)[:, 1]) if len(pairs) else np.zeros(0, np.int64)
        # the edges' triangles too: both sides of every crossing in red
        if len(pairs):
            edges = mesh.edges[np.asarray(pairs)[:, 0]]
            hit = np.isin(faces, edges).sum(axis=1) >= 2
            bad = np.union1d(bad, np.flatnonzero(hit))
        r = Renderer((lo, hi), side, n_bodies=2, size=(400, 300), view={"azimuth_deg": 150.0, "elevation_deg": 25.0})
        images.append(panel(r, s, faces, bad, f"{titles[k]}\n{len(pairs)} crossing pairs"))
        print(f"{k}: {len(pairs)} intersecting edge-triangle pairs at {sequence} frame {frame}")
    Image.fromarray(np.concatenate(images, axis=1)).quantize(colors=96).save(out / "face-collision.png", optimize=True)


def region_figure(model, out: Path) -> None:
    from PIL import Image

    from ipcsim.geometry.collision_mesh import CollisionMesh
    from ipcsim.app.render import Renderer
    from ipcsim.face.regions import collision_aware_vertices

    x2 = np.zeros(len(model.rest), bool)
    x2[collision_aware_vertices(model)] = True
    cm = CollisionMesh.from_tet_mesh(model.rest, model.tets)
    skin = cm.full_vertex_index[cm.faces]
    body = x2[skin].all(axis=1).astype(np.int64)
    lo, hi = model.rest.min(axis=0), model.rest.max(axis=0)
    r = Renderer((lo, hi), body, n_bodies=2, size=(400, 300), view={"azimuth_deg": 160.0, "elevation_deg": 15.0})
    a = r.draw(model.rest, skin, f"simulation mesh: x2 (orange) {x2.sum()} of {len(x2)} vertices")
    p = Renderer((lo, hi), np.ones(len(model.proxy_faces), np.int64), n_bodies=2, size=(400, 300),
                 view={"azimuth_deg": 160.0, "elevation_deg": 15.0})
    b = p.draw(model.proxy_vertices, np.asarray(model.proxy_faces), f"collision proxy: {len(model.proxy_vertices)} "
               "vertices")
    Image.fromarray(np.concatenate([a, b], axis=1)).quantize(colors=96).save(out / "face-region.png", optimize=True)


def main() -> None:
    from ipcsim.face.data import load_face

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sequence", default="pucker_funnel")
    ap.add_argument("--frame", type=int, default=12)
    ap.add_argument("--out", default="docs/images")
    args = ap.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    model = load_face("small")
    region_figure(model, out)
    collision_figure(model, args.sequence, args.frame, out)


if __name__ == "__main__":
    main()
