"""The CCD-bounded line search shared by the Newton loop (``newton.NewtonSolver``) and the face's Projective
Dynamics solver (``ipcsim.face.FacePDSolver``).

Given an iterate q (n, 3) [m], a search direction p (n, 3) [m] and the collision surface s = J q (J linear, so
s moves on straight lines), a step q + alpha p is taken in two stages (001 §3):

1. the step bound alpha_max: one trajectory broad phase over (J q, J (q + p)) (boxes inflated by dhat / 2) and
   additive CCD on its candidates (``collision_free_bound``); callers may lower it further (the inversion bound);
2. ``backtrack``: halving from alpha_max until the energy E(q + alpha p) is at most E(q), then, when a trial was
   rejected, ``LINE_SEARCH_REFINEMENTS`` bisections of the bracket [accepted, rejected] that keep the lowest
   energy. Every trial reuses the trajectory candidates of stage 1 (exact along the segment).

Why the refinement: a contact that is farther than dhat at q is not in the Newton (or global-step) model, so p
drives the body through it; the first trial lands deep in the barrier and is rejected, and halving stops just
short of dhat, where the next model again sees no barrier. Each iteration then closes only part of the gap
(measured: a stiff cube thrown on the ground took 17 Newton iterations in its impact step, 7 with the
refinement). The bisections bring the step into the barrier layer near the minimum along p, so the next model
contains the contact. They cost energy evaluations only.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from ..contact.broad_phase import build_candidates
from ..contact.ccd import compute_collision_free_stepsize

#: bisections of the bracket [accepted, rejected] after a backtracking line search (``backtrack``)
LINE_SEARCH_REFINEMENTS = 6
#: ... when the first rejected trial raised the energy by more than this fraction of it (not round-off: near
#: convergence the energy changes by less than its own rounding and a refinement would only pick noise)
REFINE_ABOVE = 1e-6
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


def collision_free_bound(mesh, s0, s1, dhat: float):
    """(trajectory candidates, alpha_max in [0, 1]) for the surface moving on straight lines from s0 to s1
    (n_surface, 3) [m]: one broad phase with boxes inflated by dhat / 2 [m] (their candidates serve every
    line-search trial's active set) and the largest collision-free step fraction (additive CCD)."""
    candidates = build_candidates(mesh, s0, s1, inflation_radius=0.5 * dhat)
    return candidates, compute_collision_free_stepsize(mesh, s0, s1, candidates=candidates)


def backtrack(evaluate: Callable[[float], tuple[object, float]], energy: float, alpha: float,
              refinements: int | None = None) -> LineSearchResult:
    """Backtracking from the step bound alpha until the energy is at most ``energy`` (E at alpha = 0), then, if a
    trial was rejected, ``refinements`` bisections of [accepted, rejected] that keep the lowest energy; the first
    rejection must exceed the energy by ``REFINE_ABOVE`` of it (module doc); refinements None: this module's
    ``LINE_SEARCH_REFINEMENTS``.

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
    if bad is None or not decreased or not e_bad - energy > REFINE_ABOVE * abs(energy):
        return LineSearchResult(point, e_new, alpha, trials, decreased)  # nothing to refine
    lo, hi = alpha, bad
    for _ in range(refinements):
        mid = 0.5 * (lo + hi)
        trials += 1
        p_mid, e_mid = evaluate(mid)
        if e_mid < e_new:
            point, e_new, alpha, lo = p_mid, e_mid, mid, mid
        else:
            hi = mid
    return LineSearchResult(point, e_new, alpha, trials, True)
