"""Running one stress scene with every check on (tests only): ``run_scene(seed)`` -> ``SceneResult``.

Each accepted Newton update goes through ``stress_oracle.UpdateChecker`` (ipctk's CCD, confirmed by sampling) via
``ipcsim.solvers.validation.validate_updates``; each frame through ``stress_oracle.check_frame`` (NaN, ipctk
intersections, half spaces, inverted guarded tets); every unconverged step is counted. A solver exception ends
the scene and is recorded, never swallowed silently.
"""
from __future__ import annotations

import time
import traceback
from dataclasses import dataclass, field

from stress_oracle import UpdateChecker, check_frame, inverted_unguarded, ipctk_mesh
from stress_scenes import make_scene

from ipcsim.solvers.integrator_solvers import make_solver
from ipcsim.solvers.validation import validate_updates


@dataclass
class SceneResult:
    """What one scene did: steps run, Newton updates checked, Tight-Inclusion flags, updates starting closer than
    ``stress_oracle.TOUCH`` (judged by the exact crossing test alone), confirmed update failures, frame problems,
    unconverged steps, inverted tets of unguarded materials (reported only), the exception that ended it (None)
    and its wall time [s]."""

    seed: int
    kind: str
    description: str
    steps: int = 0
    newton_iterations: int = 0
    updates: int = 0
    flagged: int = 0
    near: int = 0
    update_failures: list = field(default_factory=list)
    frame_problems: list = field(default_factory=list)
    unconverged: int = 0
    inverted_unguarded: int = 0  # most inverted tets in one frame among materials without inversion prevention
    error: str | None = None
    wall_time: float = 0.0

    @property
    def intersecting(self) -> bool:
        """An update or a frame intersects (ipctk, confirmed)."""
        return bool(self.update_failures) or any("intersection" in p or "half space" in p
                                                 for p in self.frame_problems)

    @property
    def failed(self) -> bool:
        """The scene ended in an exception, went non-finite or inverted a guarded tet."""
        return self.error is not None or any(not ("intersection" in p or "half space" in p)
                                             for p in self.frame_problems)

    def line(self) -> str:
        status = "FAILED" if self.failed else "INTERSECTING" if self.intersecting else "ok"
        out = (f"seed {self.seed:4d} {self.kind:8s} {status:12s} {self.steps} steps, {self.newton_iterations} "
               f"Newton, {self.updates} updates ({self.flagged} flagged, {self.near} near), {self.unconverged} "
               f"unconverged, {self.inverted_unguarded} inverted unguarded, "
               f"{self.wall_time:.1f} s | {self.description}")
        for f in self.update_failures[:3]:
            out += f"\n    update {f.update} at t={f.t:.3g}: {f.what}"
        for p in self.frame_problems[:3]:
            out += f"\n    {p}"
        if self.error:
            out += f"\n    error: {self.error}"
        return out


def run_scene(seed: int) -> SceneResult:
    """Draw the scene of ``seed`` (``stress_scenes.make_scene``) and run it with every check on."""
    t0 = time.perf_counter()
    scene = make_scene(seed)
    res = SceneResult(seed, scene.kind, scene.description)
    model, state = scene.model, scene.state
    tk = ipctk_mesh(model.collision_mesh)
    checker = UpdateChecker()
    try:
        solver = make_solver(model, **scene.solver_kwargs)
        res.frame_problems += [f"initial state: {p}" for p in check_frame(model, tk, state.x)]
        with validate_updates(checker):
            for k in range(1, scene.steps + 1):
                new = state.copy()
                stats = solver.step(state, new, None, scene.h)
                state = new
                res.steps, res.newton_iterations = k, res.newton_iterations + stats.newton_iterations
                res.unconverged += not stats.converged
                problems = check_frame(model, tk, state.x)
                res.frame_problems += [f"step {k}: {p}" for p in problems]
                if "non-finite positions" in problems:
                    break
                res.inverted_unguarded = max(res.inverted_unguarded, inverted_unguarded(model, state.x))
    except Exception as exc:  # recorded and counted as failed, with where it came from
        tb = traceback.extract_tb(exc.__traceback__)[-1]
        res.error = f"{type(exc).__name__}: {exc} ({tb.filename.split('/')[-1]}:{tb.lineno})"
    res.updates, res.flagged, res.near = checker.updates, checker.flagged, checker.near
    res.update_failures = checker.failures
    res.wall_time = time.perf_counter() - t0
    return res


def inversion_note(results) -> str:
    """A line on the inverted tets of materials without inversion prevention (reported, not counted failed)."""
    n = sum(r.inverted_unguarded > 0 for r in results)
    return f"inversions: {n} scenes with inverted tets of materials without inversion prevention"


def summary(results) -> str:
    """The suite's last line: stress: N scenes, K intersecting, F failed, U unconverged steps."""
    k = sum(r.intersecting for r in results)
    f = sum(r.failed for r in results)
    u = sum(r.unconverged for r in results)
    return f"stress: {len(results)} scenes, {k} intersecting, {f} failed, {u} unconverged steps"
