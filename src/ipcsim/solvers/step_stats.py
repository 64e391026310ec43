"""``StepStats``: what one ``NewtonSolver.step`` reports (counts, distances, energies, forces and its time split as
000 Table 1); ``app/runner.py`` writes it to stats.csv (docs/output.md)."""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np


@dataclass
class StepStats:
    """Per-step statistics; times [s] split as 000 Table 1.

    newton_iterations, line_search_steps: summed over the friction lagging iterations; converged: the last
    solve converged; n_friction: friction stencils of the last lagging; lagging_iterations: solves done;
    prescribed_iterations: Newton iterations spent moving prescribed nodes (obstacles, Dirichlet sets)
    to their targets; min_distance [m]: smallest contact distance at the end (inf without contact);
    body_forces (n_collision_bodies, 2, 3) [N]: per collision body (``collision_mesh.body``: the simulated
    bodies, then the obstacles) the contact force [b, 0] and the friction force [b, 1] on it at the end of the
    step (``NewtonSolver.body_forces``; half spaces are no collision body: their push is in the body's row);
    n_inverted: tets with det F <= 0 at the end of the step (all bodies, "prevent" or not); min_volume_ratio:
    the smallest det F (current over rest volume) of any tet at the end (inf without tets); barrier_energy [J]:
    kappa B at the end of the step (not weighted by h^2; negative only through the improved max approximator,
    ``contact.barrier_sign``, which then warns once per solver).
    """

    newton_iterations: int = 0
    line_search_steps: int = 0
    n_contacts: int = 0
    min_distance: float = math.inf
    kappa: float = 0.0
    energy: float = 0.0
    time_contact: float = 0.0
    time_linear_solve: float = 0.0
    time_ccd: float = 0.0
    time_line_search: float = 0.0
    time_other: float = 0.0
    converged: bool = False
    n_friction: int = 0
    lagging_iterations: int = 0
    prescribed_iterations: int = 0
    history: list = field(default_factory=list)
    body_forces: np.ndarray = field(default_factory=lambda: np.zeros((0, 2, 3)))
    n_inverted: int = 0
    min_volume_ratio: float = math.inf
    barrier_energy: float = 0.0
