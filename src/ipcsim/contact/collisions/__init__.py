"""Building the active set (``Collisions``) from broad-phase candidates.

``build_collisions(mesh, x, dhat, candidates)`` classifies every candidate pair by the Voronoi
region of its closest points (point-triangle and edge-edge distance types), keeps those with
squared distance d2 < dhat^2, reduces each to the primitive pair that realises the distance
(a vertex-face candidate whose closest point is a triangle corner becomes a vertex-vertex
stencil, ...), and merges duplicates by summing their weights. The result is the same set of
stencils and weights as ipc-toolkit's ``NormalCollisions::build`` (ipctk 1.6.1), with or without
the convergent formulation (002): area weighting and the improved max approximator.

Lifecycle in the simulator (001 section 3):

1. once per Newton iteration, after the search direction p is known and CCD gave the largest
   collision-free step alpha_max, build the candidates ONCE from the trajectory boxes
   ``build_candidates(mesh, x, x + alpha_max * p, inflation_radius=dhat / 2)``;
2. at every line-search trial x_t = x + alpha * p (alpha <= alpha_max) call
   ``build_collisions(mesh, x_t, dhat, candidates=that)``: only the cheap narrow phase runs, and
   since every pair that can come within dhat along the segment is a candidate, the active set
   is exact at every trial point (no stencil is missed, the energy stays consistent).

Without candidates, the static broad phase of x inflated by dhat / 2 is used (exact for x).

Weights (identical to ipc-toolkit): each stencil found from k candidates has weight k (or the sum
of the k area weights). Area weights: vertex-vertex (a_i + a_j) / 2, edge-vertex a_v / 2,
edge-edge (a_ea + a_eb) / 4, face-vertex a_v / 4 (a = ``mesh.vertex_areas`` / ``edge_areas``).
The improved max approximator adds negative edge-vertex terms for interior edges, positive
vertex-vertex terms for interior vertices (face-vertex pairs) and negative vertex-vertex terms
for edge-vertex pairs, and replaces edge-edge duplicates by mollified negative terms (002).

Modules, in pipeline order: ``narrow_phase`` (candidates -> one record each, ``records``), ``improved_max``
(the approximator's extra records), ``merge`` (records -> the stencils of ``Collisions``).
"""
from __future__ import annotations

import numpy as np

from ...runtime.threads import numba_threads, threads_for
from ..collisions_data import EE, PV, Collisions
from ...runtime.scratch import scratch_array
from .improved_max import with_improved_max_terms
from .merge import merge
from .merge import stable_argsort as _stable_argsort  # noqa: F401 (its former home; tests import it from here)
from .narrow_phase import classify

#: Candidates farther than dhat have no sub-pair (an edge's endpoint to the other edge, a vertex to a face's
#: edge or corner) within dhat, so the improved max approximator's terms are searched among the candidates
#: with a squared distance below NEAR_FACTOR * dhat^2 only; the margin covers the round-off between the
#: candidate's distance formula and the sub-pair's.
NEAR_FACTOR = 1.0 + 1e-6


def _pairs(a) -> np.ndarray:
    a = np.asarray(a, dtype=np.int64)
    return np.ascontiguousarray(a.reshape(-1, 2)) if a.size else np.zeros((0, 2), np.int64)


def build_collisions(mesh, x, dhat: float, candidates=None, use_area_weighting: bool = False,
                     use_improved_max_approximator: bool = False, vertex_stiffness=None) -> Collisions:
    """The active set of ``mesh`` at positions x: every stencil with squared distance < dhat^2.

    Args:
        mesh: ``CollisionMesh``.
        x: (n_vertices, 3) float64 [m], collision-vertex positions.
        dhat: activation distance [m], > 0.
        candidates: ``broad_phase.Candidates`` (vf, ee, ev, vv, pv pairs) to classify; None builds
            them with the static broad phase at x, boxes inflated by dhat / 2. See the module
            docstring for the line-search lifecycle.
        use_area_weighting, use_improved_max_approximator: the convergent formulation (002).
        vertex_stiffness: None, or (n_vertices,) float64 [1], a relative barrier stiffness per collision vertex
            (+inf for obstacle vertices): every stencil's weight is multiplied by the smaller value of its two
            sides (``stencil_stiffness``), so each contact is as stiff as its softer side.

    Returns:
        ``Collisions`` with stencils ordered by kind (VV, EV, EE, FV, PV); weights as in ipc-toolkit (times the
        stencil stiffness when vertex_stiffness is given).
    """
    x = np.asarray(x, dtype=np.float64)
    n = mesh.n_vertices
    if x.shape != (n, 3):
        raise ValueError(f"build_collisions: x must have shape ({n}, 3), got {x.shape}")
    if not np.all(np.isfinite(x)):
        raise ValueError("build_collisions: x has non-finite coordinates")
    dhat = float(dhat)
    if not (np.isfinite(dhat) and dhat > 0.0):
        raise ValueError(f"build_collisions: dhat must be a positive finite distance, got {dhat}")
    x = np.ascontiguousarray(x)
    if candidates is None:
        from ..broad_phase import build_candidates

        candidates = build_candidates(mesh, x, inflation_radius=0.5 * dhat)
    vv, ev, ee = _pairs(candidates.vv), _pairs(candidates.ev), _pairs(candidates.ee)
    vf = _pairs(candidates.vf)
    pv = _pairs(getattr(candidates, "pv", np.zeros((0, 2), np.int64)))
    dhat2 = dhat * dhat
    area_w = bool(use_area_weighting)
    vareas = np.ascontiguousarray(mesh.vertex_areas, dtype=np.float64)
    eareas = np.ascontiguousarray(mesh.edge_areas, dtype=np.float64)
    rest = np.ascontiguousarray(mesh.rest_positions, dtype=np.float64)
    edges, faces, face_edges = mesh.edges, mesh.faces, mesh.face_edges
    plane_o, plane_n = mesh.planes_array()
    n_main = len(vv) + len(ev) + len(ee) + len(vf) + len(pv)
    # the records are scratch (reused, see ``scratch``); classify writes every one of them
    rk, rd = scratch_array("records-kind", n_main, np.int64), scratch_array("records-dtype", n_main, np.int64)
    ri = scratch_array("records-ids", (n_main, 2), np.int64)
    rw, re = scratch_array("records-weight", n_main), scratch_array("records-eps", n_main)
    near = scratch_array("records-near", n_main, np.bool_)
    with numba_threads(threads_for(n_main)):  # small inputs: one thread (see runtime.threads)
        classify(x, rest, edges, faces, face_edges, vareas, eareas, vv, ev, ee, vf, pv, plane_o, plane_n,
                 dhat2, area_w, rk, ri, rd, rw, re, near, NEAR_FACTOR * dhat2)
    if use_improved_max_approximator:
        rk, ri, rd, rw, re = with_improved_max_terms(mesh, x, rest, (vareas, eareas), (vv, ev, ee, vf), near, dhat2,
                                                     area_w, (rk, ri, rd, rw, re))
    if max(n, mesh.n_edges) ** 2 * 16 >= 2**52:
        raise ValueError("build_collisions: mesh too large for the 52-bit stencil keys")
    work = scratch_array("merge", (5, len(rk)), np.int64)
    kind, verts, prims, dtype, eps_x, weight = merge(rk, ri, rd, rw, re, edges, faces, n, max(mesh.n_edges, 1), work)
    if vertex_stiffness is not None and len(kind):
        weight = weight * stencil_stiffness(vertex_stiffness, kind, verts)
    return Collisions(kind=kind, vertices=verts, primitives=prims, dtype=dtype, eps_x=eps_x, weight=weight,
                      dhat=dhat, use_area_weighting=area_w,
                      use_improved_max_approximator=bool(use_improved_max_approximator))


def stencil_stiffness(vertex_stiffness, kind, vertices) -> np.ndarray:
    """(n,) float64 [1]: per stencil, the smaller relative stiffness of its two sides.

    Args:
        vertex_stiffness: (n_vertices,) float64 [1] > 0, +inf on obstacle vertices.
        kind: (n,) int64 stencil kinds; vertices: (n, 4) int64 stencil vertices (``collisions_data``).
    The sides are the first vertex and, for EE the third, otherwise the second; a plane (PV) is rigid (+inf).
    A stencil whose sides are both infinitely stiff (never built: obstacles do not touch obstacles) gets 1.
    """
    s = np.asarray(vertex_stiffness, dtype=np.float64)
    verts = np.asarray(vertices, dtype=np.int64)
    kind = np.asarray(kind)
    other = np.where(kind == EE, verts[:, 2], verts[:, 1])
    side_b = np.where(kind == PV, np.inf, s[np.maximum(other, 0)])
    scale = np.minimum(s[verts[:, 0]], side_b)
    return np.where(np.isfinite(scale), scale, 1.0)
