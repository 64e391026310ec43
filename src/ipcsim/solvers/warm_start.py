"""The Newton solve's starting point: the step's start x^t (IPC's default), or a CCD-bounded extrapolation of it.

    x^0 = x^t + alpha (g - x^t),   g = x^t + h v^t on the unknowns, the prescribed targets on prescribed nodes

alpha in [0, 1] is the largest fraction of the straight path x^t -> g that additive CCD on the collision surface
(J x^t -> J g, ``line_search.collision_free_bound``) and the inversion bound of the guarded tets
(``ElasticAssembler.max_step``) allow, so the start is intersection-free and no guarded tet inverts: the move is checked
like every Newton update (and shown to ``validation.hook``). Where alpha < 1 the prescribed nodes are short of
their targets and the Newton loop's prescribed iterations take them the rest of the way.

Why: a body carried along at a steady velocity (the teddy lifted and held by the gripper) is already close to its
end-of-step position at x^t + h v^t, while a start at x^t spends its first iteration moving the gripper (the
prescribed iteration) and more to bring the carried body after it. Measured on the teddy grasp (paper set-up, low
embedding, h = 0.02 s, 4 s): 3.65 Newton iterations per step from x^t, 2.51 from the extrapolation (lift phase
4.20 -> 2.15, hold 2.44 -> 1.20, squeeze 3.91 -> 3.75); the solution is the same to the Newton tolerance (docs/
embedded.md). It costs more line-search trials (460 -> 863 energy evaluations there; in the rejected full steps,
split per term, the friction energy rises most). The friction lagging is untouched: the first solve's friction is
lagged at x^t whatever the start.
"""
from __future__ import annotations

import time

import numpy as np

from . import validation
from .line_search import collision_free_bound


def extrapolated_start(solver, x_t: np.ndarray, v_t: np.ndarray, prescribed: np.ndarray, target: np.ndarray,
                       h: float) -> tuple[np.ndarray, float, object]:
    """(x^0 (n, 3) [m], alpha, candidates): the start described in the module doc for a ``NewtonSolver`` solver,
    from positions x_t (n, 3) [m] and velocities v_t (n, 3) [m/s] at the step's start, the prescribed mask (n,)
    bool, their targets (n, 3) [m] (other rows ignored) and the step h [s]; candidates: the trajectory broad
    phase of the path (its boxes, inflated by dhat / 2, hold the static ones of x^0: x^0's active set can be built
    from them as a line-search trial's is), None when alpha = 0 (x^0 is then a copy of x_t)."""
    guess = x_t + h * v_t
    guess[prescribed] = target[prescribed]
    p = guess - x_t
    if not np.any(p):
        return x_t.copy(), 0.0, None
    mesh = solver.model.collision_mesh
    xs0, xs1 = solver.model.surface_map.apply(x_t), solver.model.surface_map.apply(guess)
    candidates, alpha = collision_free_bound(mesh, xs0, xs1, solver.contact.dhat, solver.candidate_skin)
    alpha = min(float(alpha), solver.elastic.max_step(x_t, p, prescribed))
    if alpha <= 0.0:
        return x_t.copy(), 0.0, None
    if alpha >= 1.0:
        x0, alpha = guess, 1.0
    else:
        x0 = x_t + alpha * p
        xs1 = solver.model.surface_map.apply(x0)
    if validation.hook is not None:  # tests: the start is an update like the Newton ones
        validation.hook(mesh, xs0, xs1)
    return x0, alpha, candidates


def newton_start(solver, state_in, setup, h: float, stats) -> tuple[np.ndarray, object]:
    """(x^0 (n, 3) [m], candidates) where a ``NewtonSolver``'s step of size h [s] from state_in starts: a copy of
    state_in.x and None, or with ``solver.warm_start`` the ``extrapolated_start`` (setup: the step's
    ``newton._StepSetup``; its time is added to stats.time_ccd)."""
    if not solver.warm_start:
        return state_in.x.copy(), None
    t0 = time.perf_counter()
    x, _, candidates = extrapolated_start(solver, state_in.x, state_in.v, setup.prescribed, setup.target, h)
    stats.time_ccd += time.perf_counter() - t0
    return x, candidates
