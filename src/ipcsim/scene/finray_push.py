"""The fin-ray check (issue 24): a FinRay finger clamped at its base, a rigid cylinder pushed into one flank at
mid-length; the tip must bend towards the cylinder (the finger wraps around it), in full space and embedded.

Run ``python benchmarks/finray_bending.py`` for the table of tip displacements and contact forces.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..geometry.finray import TPU_MATERIAL, finray_base_vertices, finray_cage, finray_finger
from ..model import Material, ModelBuilder
from ..solvers.integrator_solvers import ContactParameters, make_solver

#: the finger of the check: thin in z (4 mm) to keep the full-space reference small, 0.8 mm triangles (walls
#: 1.2-1.8 mm: two triangles across a rib; with one across, linear tets lock the ribs' hinges and the tip bends
#: away), ribs tilted -15 degrees (down towards the pushed flank)
FINGER = dict(length=0.1, base_width=0.045, thickness=0.004, flank_thickness=0.0018, rib_thickness=0.0012,
              n_ribs=5, rib_angle=np.radians(-15.0), resolution=0.0008)


@dataclass
class PushResult:
    """tip (steps, 3) [m]: mean displacement of the tip's surface vertices after each step; force (steps, 3) [N]:
    contact force on the cylinder; n_nodes: the finger's nodes (fine vertices or cage nodes); n_inverted:
    inverted tets at the end; converged: the last step's Newton solve converged."""

    tip: np.ndarray
    force: np.ndarray
    n_nodes: int
    n_inverted: int
    converged: bool


def cylinder_surface(radius: float, length: float, n: int = 24) -> tuple[np.ndarray, np.ndarray]:
    """A closed cylinder along z centred at the origin: (vertices (k n + 2, 3) [m], faces (2 k n, 3)): k rings of
    n vertices, spaced along z about as far apart as around (2 pi radius / n), so the side faces are no slivers.

    Why the rings (docs/finray.md): with its two end rings only, the pusher of a 20 mm thick finger (40 mm long)
    had 40 x 1.3 mm side faces, each long edge touched by a column of the finger's vertices 0.8 mm apart; the
    improved max approximator's negative edge-vertex terms (weighted by that long edge's area) outweighed the
    positive ones, the barrier potential of the contact went negative and Newton drove the contact distances
    to 1e-6 m, folding the flank."""
    a = 2.0 * np.pi * np.arange(n) / n
    ring = np.column_stack([radius * np.cos(a), radius * np.sin(a)])
    k = max(2, int(np.ceil(length / (2.0 * np.pi * radius / n))) + 1)
    v = np.concatenate([np.column_stack([ring, np.full(n, z)]) for z in np.linspace(-length / 2, length / 2, k)]
                       + [[[0.0, 0.0, -length / 2], [0.0, 0.0, length / 2]]])
    i = np.arange(n)
    j = (i + 1) % n
    sides = [np.concatenate([np.column_stack([o + i, o + j, o + n + j]),
                             np.column_stack([o + i, o + n + j, o + n + i])]) for o in n * np.arange(k - 1)]
    top = (k - 1) * n
    return v, np.concatenate(sides + [np.column_stack([np.full(n, k * n), j, i]),
                                      np.column_stack([np.full(n, k * n + 1), top + i, top + j])])


def _add_finger(b: ModelBuilder, finger: dict, cage) -> int:
    """cage: None (full space), ("voxel", cell size [m]) or ("conforming", finray_cage keyword dict)."""
    v, t = finray_finger(**finger)
    tpu = Material(name="LCR", **TPU_MATERIAL)
    if cage is None:
        fixed = np.zeros(len(v), bool)
        fixed[finray_base_vertices(v)] = True
        return b.add_body(v, t, fixed=fixed, material=tpu)
    kind, arg = cage
    if kind == "voxel":
        body = b.add_embedded_body(v, t, resolution=arg, material=tpu)
    else:
        shape = {k: val for k, val in finger.items() if k != "resolution"}
        body = b.add_embedded_body(v, t, coarse=finray_cage(**arg, **shape), material=tpu)
    d = b._bodies[body].embedded
    base = finray_base_vertices(d.surface_vertices)  # clamp every node that carries the mounting face
    b.add_dirichlet(body, indices=np.unique(d.surface_map.nodes[base][d.surface_map.weights[base] > 0]))
    return body


def finray_push(cage=None, finger=None, push=0.01, y_push=0.05, steps=4, dhat=1e-3) -> PushResult:
    """Push a 5 mm cylinder push [m] into the +x flank at height y_push [m] in `steps` quasi-static steps, no
    gravity, no friction, the finger's self-contact off (at dhat = 1 mm its hole corners, with 0.8 mm
    triangles, would touch themselves at rest). cage: see ``_add_finger``; finger: ``finray_finger`` keywords
    (default ``FINGER``)."""
    finger = dict(FINGER if finger is None else finger)
    b = ModelBuilder(gravity=(0.0, 0.0, 0.0))
    body = _add_finger(b, finger, cage)
    b.set_self_contact(body, False)
    n_nodes = len(b._bodies[body].vertices)
    r, th = 0.005, finger["thickness"]
    x0 = finger["base_width"] / 2 * (1.0 - y_push / finger["length"]) + r + 1.5 * dhat
    cv, cf = cylinder_surface(r, th + 0.02)
    start = cv + [x0, y_push, th / 2]
    b.add_obstacle(cv, cf, translation=(x0, y_push, th / 2),
                   keyframes=(np.array([0.0, 1.0]), np.stack([start, start - [push, 0.0, 0.0]])))
    model, state = b.finalize()
    solver = make_solver(model, ContactParameters(dhat=dhat, kappa=None), quasi_static=True, tol=1e-3)
    s0 = model.surface_positions(state.x).copy()
    tip = np.flatnonzero(s0[:, 1] >= s0[:, 1].max() - 1e-9)
    tips, forces, st = [], [], None
    for _ in range(steps):
        new = state.copy()
        st = solver.step(state, new, None, 1.0 / steps)
        state = new
        tips.append((model.surface_positions(state.x)[tip] - s0[tip]).mean(axis=0))
        forces.append(st.body_forces[-1, 0].copy())
    return PushResult(np.array(tips), np.array(forces), n_nodes, int(st.n_inverted), bool(st.converged))
