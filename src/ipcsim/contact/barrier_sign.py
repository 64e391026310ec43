"""A guard on the sign of the barrier potential (docs/contact.md, "A negative barrier potential").

Every stencil of IPC 2020's barrier is >= 0, so its potential is too. The convergent formulation's improved max
approximator (002) adds signed correction terms (negative edge-vertex and edge-edge terms), and where a body with
long sliver faces is pressed against a finer mesh the negative terms, weighted by the long edge's large area,
can outweigh the positive ones: the total goes negative and keeps falling as the distances shrink, Newton
minimises it into contact (distances of 1e-6 m, folded tets, forces of hundreds of newtons). The solver records
kappa B at the end of each step (``StepStats.barrier_energy``) and warns once per solver with
``NegativeBarrierWarning``.
"""
from __future__ import annotations

import warnings

from .formulation import BarrierFormulation


class NegativeBarrierWarning(UserWarning):
    """The total barrier potential kappa B is negative at the end of a step (once per solver)."""


def negative_barrier_message(energy: float, formulation: BarrierFormulation) -> str | None:
    """The warning's text when kappa B = energy [J] < 0, else None. formulation: the solver's switches (the
    improved max approximator is the only source of negative terms; a negative total without it is named as
    such). A potential that is only slightly negative is still flagged: no correct sum of the approximator's
    terms is below zero (it approximates a max of non-negative barriers)."""
    if not energy < 0.0:
        return None
    cause = ("the convergent formulation's improved max approximator let its negative edge-vertex/edge-edge "
             "terms outweigh the positive ones, typically a body with long sliver faces (faces much longer than "
             "wide) pressed against a finer mesh; mesh that surface with faces about as long as the other "
             "side's edges, or set \"convergent\": false in the scene's \"contact\" (IPC 2020's barrier)"
             if formulation.improved_max else "no improved max approximator is on, so this is unexpected")
    return (f"the barrier potential kappa B = {energy:.4g} J is negative at the end of the step: {cause}; "
            "Newton minimises it into contact (see the barrier_energy, min_distance and n_inverted columns of "
            "stats.csv)")


def warn_negative_barrier(energy: float, formulation: BarrierFormulation, where: str = "") -> bool:
    """Warn (``NegativeBarrierWarning``) when kappa B = energy [J] < 0; where: a prefix naming the step.
    Returns whether it warned (the caller keeps the once-per-run flag)."""
    text = negative_barrier_message(energy, formulation)
    if text is None:
        return False
    warnings.warn(f"{where}{text}", NegativeBarrierWarning, stacklevel=3)
    return True
