"""The CCD-bounded line search shared by the Newton loop (``newton.NewtonSolver``) and the face's Projective
Dynamics solver (``ipcsim.face.FacePDSolver``).

Given an iterate q (n, 3) [m], a search direction p (n, 3) [m] and the collision surface s = J q (J linear, so
s moves on straight lines), a step q + alpha p is taken in two stages (001 §3):

1. the step bound alpha_max: one trajectory broad phase over (J q, J (q + p)) (boxes inflated by dhat / 2; or the
   superset a ``CandidateSkin`` kept from an earlier, wider one) and additive CCD on its candidates
   (``collision_free_bound``); callers may lower it further (the inversion bound);
2. ``backtrack``: halving from alpha_max until the energy E(q + alpha p) is at most E(q), then, when a trial was
   rejected and the model says the minimum lies past the accepted trial, up to ``LINE_SEARCH_REFINEMENTS``
   bisections of the bracket [accepted, rejected] that keep the lowest energy (stopping after
   ``REFINE_PATIENCE`` misses in a row). Every trial reuses the trajectory candidates of stage 1 (exact along
   the segment).

Why the refinement: a contact that is farther than dhat at q is not in the Newton (or global-step) model, so p
drives the body through it; the first trial lands deep in the barrier and is rejected, and halving stops just
short of dhat, where the next model again sees no barrier. Each iteration then closes only part of the gap
(measured: a stiff cube thrown on the ground took 17 Newton iterations in its impact step, 7 with the
refinement). The bisections bring the step into the barrier layer near the minimum along p, so the next model
contains the contact. They cost energy evaluations only, and run only where the parabola through E(q), the slope
grad E . p and the accepted trial has its minimum past the accepted step (``minimum_past``): every quantity a
difference of energies or a derivative, so a translation of the scene (which adds a constant to E through the
gravity work) changes no decision above round-off. Teddy grasp (paper set-up, low, h = 0.02 s, warm start): 863 ->
595 energy evaluations over 200 steps: of the 63 searches with a rejection, 61 bisected before (366 evaluations,
8 of them finding a lower point), 27 now (97 evaluations, 7 finding one); the same 2.51 Newton iterations per step.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from ..contact.broad_phase import build_candidates
from ..contact.broad_phase.boxes import boxes_inside, boxes_inside_shifted, vertex_boxes6
from ..contact.broad_phase.candidates import Candidates, plane_candidates
from ..contact.ccd import compute_collision_free_stepsize

#: bisections of the bracket [accepted, rejected] after a backtracking line search (``backtrack``)
LINE_SEARCH_REFINEMENTS = 6
#: ... when the first rejected trial raised the energy by more than this fraction of it (not round-off: near
#: convergence the energy changes by less than its own rounding and a refinement would only pick noise)
REFINE_ABOVE = 1e-6
#: ... with the Newton loop's slope, a round-off floor only: the first rejection must exceed this fraction of |E|.
#: The energy's rounding grows with its terms (measured: at 1e-7 Newton tolerance a cube's E = 3.7e-5 jittered
#: by 1e-19 = 3e-15 |E| along p, and bisecting that noise sent the iterations astray); real rejections measured
#: 1.8e-7 |E| and more (teddy grasp, mixed-stiffness stack), so a translation moves this floor past a rejection
#: only where |E| grows 1000-fold (the stack lifted by 5 km)
REFINE_ABOVE_ROUNDOFF = 1e-10
#: the bisections stop after this many trials in a row that did not lower the energy (each halves the bracket
#: towards the best point, so later ones move the step by at most an eighth of it). Measured: in the teddy grasp
#: 21 of 30 refined searches never improved on the halving and the others gained after at most 2 misses
#: anything above 0.1 % of the halving's decrease; 2 cost the stiff stack's impact step an iteration (8, not 7)
REFINE_PATIENCE = 3
#: backtracking gives up after the first trial below this step fraction [1] (``LineSearchResult.decreased``)
MIN_ALPHA = 1e-12


@dataclass
class LineSearchResult:
    """The accepted trial: point (what ``evaluate`` returned for it), energy E there, alpha its step fraction,
    trials the energy evaluations made, decreased: E <= E(q) (False: no trial down to alpha < ``MIN_ALPHA``
    decreased E; point is then that last trial)."""

    point: object
    energy: float
    alpha: float
    trials: int
    decreased: bool


class CandidateSkin:
    """Broad-phase candidates kept for later queries whose boxes lie inside the boxes they were built from (a
    Verlet skin), or do after one common translation: a query (motion s0 -> s1, vertex boxes inflated by r) is
    answered with the kept candidates when every vertex box is inside the kept one (``boxes_inside``) or one
    translation moves every vertex box inside it (``boxes_inside_shifted``; the plane-vertex pairs are then found
    anew, planes do not move), else by a new broad phase with boxes inflated by r + ``skin`` [m].

    Every pair whose boxes overlap in the query overlaps in the kept boxes (a face's or edge's box is the union
    of its vertices', and box overlap survives a common translation), so the kept candidates hold the query's
    own: a superset. The narrow phases filter by distance (the active set: d < dhat; CCD: time of impact), so
    they find the same stencils in the same (sorted) order and the same step bound; the extra pairs cost
    narrow-phase tests. (One exception to the bound, never met in the grasp or the plate rack: ACCD stops once a
    pair's distance falls to a tenth of its start, so an extra pair that starts about 10 dhat apart and passes
    within about dhat during one update could lower the bound; it stays intersection-free.) Within a Newton
    solve the warm start's or first direction's broad phase then serves the later, small corrections; across
    steps, a scene that stands still or moves as one (a grasped body carried by its gripper) keeps its
    candidates. ``builds`` / ``reuses`` count the two cases (``shifted``: the reuses after a translation);
    ``clear`` forgets the kept candidates.
    """

    def __init__(self, skin: float):
        if not (skin >= 0.0 and np.isfinite(skin)):
            raise ValueError(f"skin must be finite and >= 0 [m], got {skin}")
        self.skin = float(skin)
        self.builds = self.reuses = self.shifted = 0
        self.clear()

    def clear(self) -> None:
        # (mesh, r, vertex boxes (n, 6) [m] the candidates were built from, candidates, the planes' origins array
        # (``CollisionMesh.planes_array``: the same object while mesh.planes holds the same Plane objects))
        self._kept = None

    def candidates(self, mesh, s0, s1=None, inflation_radius: float = 0.0):
        """``build_candidates(mesh, s0, s1, inflation_radius)`` or a superset of it (see the class doc)."""
        r = float(inflation_radius)
        s0 = np.ascontiguousarray(s0, np.float64)
        s1 = s0 if s1 is None else np.ascontiguousarray(s1, np.float64)
        box = vertex_boxes6(s0, s1, r)
        kept = self._kept
        if (kept is not None and kept[0] is mesh and kept[1] == r and kept[2].shape == box.shape
                and kept[4] is mesh.planes_array()[0]):  # the same Plane objects
            if boxes_inside(box, kept[2]):
                self.reuses += 1
                return kept[3]
            if boxes_inside_shifted(box, kept[2]):
                self.reuses += 1
                self.shifted += 1
                c = kept[3]
                if not len(mesh.planes):
                    return c
                return Candidates(c.vf, c.ee, c.ev, c.vv, plane_candidates(mesh, box, r))
        self.builds += 1
        found = build_candidates(mesh, s0, s1, inflation_radius=r + self.skin)
        self._kept = (mesh, r, vertex_boxes6(s0, s1, r + self.skin), found, mesh.planes_array()[0])
        return found


def collision_free_bound(mesh, s0, s1, dhat: float, skin: CandidateSkin | None = None):
    """(trajectory candidates, alpha_max in [0, 1]) for the surface moving on straight lines from s0 to s1
    (n_surface, 3) [m]: one broad phase with boxes inflated by dhat / 2 [m] (their candidates serve every
    line-search trial's active set; with a ``CandidateSkin``, its kept superset where it holds them) and the
    largest collision-free step fraction (additive CCD)."""
    if skin is None:
        candidates = build_candidates(mesh, s0, s1, inflation_radius=0.5 * dhat)
    else:
        candidates = skin.candidates(mesh, s0, s1, inflation_radius=0.5 * dhat)
    return candidates, compute_collision_free_stepsize(mesh, s0, s1, candidates=candidates)


def minimum_past(energy: float, slope: float, alpha: float, e_alpha: float) -> bool:
    """Whether the parabola with value ``energy`` [J] and derivative ``slope`` [J] (grad E . p) at alpha = 0 that
    passes through (alpha, e_alpha) [1, J] has its minimum beyond alpha (or no minimum: E bends down). Only the
    segment [0, alpha], on which every trial decreased or kept E, enters: the rejected trial past it may sit in a
    barrier wall that no parabola describes. Translation-invariant: the energy enters only as differences."""
    if not slope < 0.0:
        return False  # not a descent direction: the halving's point is all the model can justify
    curvature = (e_alpha - energy - slope * alpha) / (alpha * alpha)
    return not curvature > 0.0 or -slope / (2.0 * curvature) > alpha


def backtrack(evaluate: Callable[[float], tuple[object, float]], energy: float, alpha: float,
              refinements: int | None = None, slope: float | None = None) -> LineSearchResult:
    """Backtracking from the step bound alpha until the energy is at most ``energy`` (E at alpha = 0), then, if a
    trial was rejected, ``refinements`` bisections of [accepted, rejected] that keep the lowest energy;
    refinements None: this module's ``LINE_SEARCH_REFINEMENTS``.

    When to refine: with ``slope`` (grad E . p [J] at alpha = 0, the Newton loop's), only when the parabola
    through E(0), E'(0) and the accepted trial puts the minimum past the accepted alpha (``minimum_past``): the
    model is then cut short by the rejection (a contact it did not see, module doc), and bisecting towards the
    rejected trial can gain; where it puts the minimum behind, the rejection was the model's own curvature and
    the bisections only re-evaluate a rising energy; and only when the first rejection exceeds |E| by more than
    its round-off (``REFINE_ABOVE_ROUNDOFF``). The Newton loop and the face solver both give the slope. Without
    one: when the first rejection exceeds the energy by ``REFINE_ABOVE`` of |E| (a guard for round-off, which
    depends on the origin where E has an external-work term).

    evaluate(alpha) returns (point, E(q + alpha p)) for a step fraction alpha (E may be +inf)."""
    if refinements is None:
        refinements = LINE_SEARCH_REFINEMENTS
    trials = 0
    bad = e_bad = None
    while True:
        trials += 1
        point, e_new = evaluate(alpha)
        if e_new <= energy or alpha < MIN_ALPHA:
            break
        if bad is None:
            e_bad = e_new
        bad, alpha = alpha, 0.5 * alpha
    decreased = e_new <= energy
    if bad is None or not decreased:
        return LineSearchResult(point, e_new, alpha, trials, decreased)  # nothing to refine
    if slope is None:
        worth = e_bad - energy > REFINE_ABOVE * abs(energy)
    else:
        worth = e_bad - energy > REFINE_ABOVE_ROUNDOFF * abs(energy) and minimum_past(energy, slope, alpha, e_new)
    if not worth:
        return LineSearchResult(point, e_new, alpha, trials, decreased)
    lo, hi = alpha, bad
    misses = 0
    for _ in range(refinements):
        mid = 0.5 * (lo + hi)
        trials += 1
        p_mid, e_mid = evaluate(mid)
        if e_mid < e_new:
            point, e_new, alpha, lo = p_mid, e_mid, mid, mid
            misses = 0
        else:
            hi, misses = mid, misses + 1
            if misses >= REFINE_PATIENCE:
                break
    return LineSearchResult(point, e_new, alpha, trials, True)
