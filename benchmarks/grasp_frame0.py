"""Frame 0 of the paper's teddy grasp (issue #23): ipcsim's geometry beside Drake's, for docs/images.

Left: ipcsim's frame 0 (``ipcsim demo teddy-grasp``, full space: the simulated nodes and collision surface, y up).
Right: Drake's bubble_gripper geometry at t = 0 in Drake's own z-up world frame, built from the meshes and Drake's
poses (``ipcsim.demos.grasp_paper.drake_grasp_geometry``), with the WSG-50 fingers' fixed-constraint boxes
``Box(0.1, 0.004, 0.15)`` drawn at their finger poses. Both are seen from the same direction (the camera of the
right panel is the left one's mapped back through ``drake_to_ipcsim``); red dots: the bubble vertices that follow
the fingers. The title gives the largest distance between ipcsim's frame-0 nodes and Drake's vertices mapped into
ipcsim's frame.

Usage: python benchmarks/grasp_frame0.py [--out docs/images/teddy-grasp-frame0.png]
"""
from __future__ import annotations

import argparse
import itertools

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from mpl_toolkits.mplot3d.art3d import Poly3DCollection  # noqa: E402

from ipcsim.demos import grasp_paper as gp  # noqa: E402
from ipcsim.demos.teddy_grasp import GraspParameters, teddy_grasp  # noqa: E402
from ipcsim.geometry.surface import boundary_faces  # noqa: E402

COLOURS = {"teddy": (0.82, 0.71, 0.55), "left_bubble": (0.55, 0.7, 0.9), "right_bubble": (0.55, 0.7, 0.9)}


def _box_edges(name: str) -> list[np.ndarray]:
    """The 12 edges ((2, 3) [m] each, Drake's world frame) of a finger's fixed-constraint box at t = 0."""
    side = gp.SIDES[name]
    model = gp.rpy_matrix(*gp.GRIPPER_POSE[0])
    finger = model @ np.array([0.0, side * 0.5 * gp.OPEN_WIDTH, gp.FINGER_OFFSET]) + np.asarray(gp.GRIPPER_POSE[1])
    half = 0.5 * np.asarray(gp.FIXED_BOX_SIZE)
    corners = {c: model @ (np.asarray(gp.FIXED_BOX_CENTRE[name]) + np.array(c) * half) + finger
               for c in itertools.product((-1, 1), repeat=3)}
    return [np.array([corners[a], corners[b]]) for a, b in itertools.combinations(corners, 2)
            if sum(x != y for x, y in zip(a, b)) == 1]


def _draw(ax, bodies, fixed, up: int, boxes=(), ground=None, title=""):
    """bodies: {name: (vertices (n, 3) [m], faces (f, 3))}; up: the vertical axis index (1 or 2)."""
    for name, (v, f) in bodies.items():
        ax.add_collection3d(Poly3DCollection(v[f], facecolor=COLOURS[name], edgecolor=(0.2, 0.2, 0.2, 0.35),
                                             linewidths=0.3, alpha=0.9))
    for p in fixed:
        ax.scatter(*p.T, color="red", s=6, depthshade=False)
    for e in boxes:
        ax.plot(*e.T, color="black", linewidth=0.8)
    allv = np.vstack([v for v, _ in bodies.values()])
    lo, hi = allv.min(axis=0), allv.max(axis=0)
    c, r = 0.5 * (lo + hi), 0.55 * float(np.max(hi - lo))
    if ground is not None:  # a square of the ground plane under the bodies
        i, j = (0, 2) if up == 1 else (0, 1)
        u, w = np.meshgrid([c[i] - r, c[i] + r], [c[j] - r, c[j] + r])
        plane = {i: u, j: w, up: np.full_like(u, ground)}
        ax.plot_surface(plane[0], plane[1], plane[2], color=(0.6, 0.6, 0.6), alpha=0.25)
    for k, set_lim in enumerate((ax.set_xlim, ax.set_ylim, ax.set_zlim)):
        set_lim(c[k] - r, c[k] + r)
    ax.set_box_aspect((1, 1, 1))
    ax.set_xlabel("x [m]")
    ax.set_ylabel("y [m]")
    ax.set_zlabel("z [m]")
    ax.set_title(title, fontsize=9)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default="docs/images/teddy-grasp-frame0.png")
    args = ap.parse_args()
    sim, _ = teddy_grasp(GraspParameters(mode="full"))
    x = sim.state.x  # nodes: the teddy's, the left bubble's, the right bubble's (the order they were added)
    geo = gp.drake_grasp_geometry()
    ours, theirs, fixed_ours, fixed_theirs, offset, err = {}, {}, [], [], 0, 0.0
    for name in ("teddy", "left_bubble", "right_bubble"):
        dv, dt = geo[name]
        n = len(dv)
        ours[name] = (x[offset:offset + n], boundary_faces(dv, dt))
        theirs[name] = (dv, ours[name][1])
        err = max(err, float(np.abs(x[offset:offset + n] - gp.drake_to_ipcsim(dv)).max()))
        if name in geo["fixed"]:
            fixed_ours.append(x[offset + geo["fixed"][name]])
            fixed_theirs.append(dv[geo["fixed"][name]])
        offset += n
    fig = plt.figure(figsize=(12, 6))
    a = fig.add_subplot(1, 2, 1, projection="3d")
    b = fig.add_subplot(1, 2, 2, projection="3d")
    _draw(a, ours, fixed_ours, up=1, ground=0.0,
          title=f"ipcsim frame 0 (y up), max |x - map(Drake)| = {err:.1e} m")
    _draw(b, theirs, fixed_theirs, up=2, boxes=[e for n in gp.SIDES for e in _box_edges(n)], ground=gp.DRAKE_GROUND_Z,
          title="Drake bubble_gripper at t = 0 (z up), fixed-constraint boxes")
    # the same view: with y vertical, matplotlib's camera axes are (z, x, y), which drake_to_ipcsim makes Drake's
    # (x, y, z): the same elevation and azimuth with z vertical see Drake's scene from the same side
    a.view_init(elev=20, azim=-60, vertical_axis="y")
    b.view_init(elev=20, azim=-60, vertical_axis="z")
    fig.tight_layout(rect=(0.0, 0.0, 1.0, 0.96))
    fig.savefig(args.out, dpi=90)
    print(f"wrote {args.out}; largest frame-0 difference {err:.2e} m")


if __name__ == "__main__":
    main()
