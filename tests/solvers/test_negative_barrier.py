"""The solver records kappa B per step (StepStats.barrier_energy) and warns once when it is negative
(``contact.barrier_sign``; docs/contact.md, "A negative barrier potential")."""
import warnings

import numpy as np
import pytest

from ipcsim.contact.barrier_sign import NegativeBarrierWarning
from ipcsim.model import ModelBuilder, box_tet_mesh
from ipcsim.solvers.integrator_solvers import ContactParameters, ImplicitEulerSolver, make_solver

from _sliver_pusher import two_ring_cylinder

pytestmark = pytest.mark.filterwarnings("ignore::ipcsim.model.sanity.SanityWarning")  # bodies start within dhat

RADIUS, LENGTH = 5e-3, 20e-3


def _steps(model, state, solver, n):
    """(stats of each step, the NegativeBarrierWarnings raised)."""
    out = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(n):
            new = state.copy()
            out.append(solver.step(state, new, None, 1.0 if solver.quasi_static else 0.01))
            state = new
    return out, [w for w in caught if issubclass(w.category, NegativeBarrierWarning)]


def _slab_under_sliver_pusher():
    """A 0.5 mm slab (cells 0.24 x 0.8 mm on its face) clamped below a static two-ring cylinder whose long edge
    is 0.1 mm above it: (model, state, quasi-static solver)."""
    v, t = box_tet_mesh((0.5e-3, 1.2e-3, 16e-3), (1, 5, 20))
    b = ModelBuilder(gravity=(0.0, 0.0, 0.0))
    body = b.add_body(v - [0.0, 0.6e-3, 8e-3], t, fixed=v[:, 0] < 1e-9, youngs_modulus=1e6, poisson_ratio=0.4)
    b.set_self_contact(body, False)
    b.add_obstacle(*two_ring_cylinder(RADIUS, LENGTH), translation=(0.5e-3 + 1e-4 + RADIUS, 0.0, 0.0))
    model, state = b.finalize()
    return model, state, make_solver(model, ContactParameters(dhat=1e-3), quasi_static=True, tol=1e-3)


def test_fine_slab_under_a_sliver_pusher_warns_once():
    """Newton follows the negative potential into contact (``_slab_under_sliver_pusher``)."""
    model, state, solver = _slab_under_sliver_pusher()
    stats, warned = _steps(model, state, solver, 2)
    # measured: kappa B -0.463 J after both steps, min distance 7.4e-8 m, 173 Newton iterations in the first
    assert stats[0].barrier_energy < 0.0 and stats[1].barrier_energy < 0.0
    assert stats[0].min_distance < 1e-6
    assert len(warned) == 1 and "sliver faces" in str(warned[0].message)


def test_cube_on_an_obstacle_does_not_warn():
    """A normal contact: a 10 cm cube settling on a static obstacle box (tests/solvers/test_body_forces.py)."""
    v, t = box_tet_mesh((0.1, 0.1, 0.1), (2, 2, 2))
    b = ModelBuilder(gravity=(0.0, -9.81, 0.0))
    b.add_body(v, t, translation=(0.0, 0.1005, 0.0), youngs_modulus=1e6, poisson_ratio=0.3)
    b.add_obstacle(*box_tet_mesh((0.3, 0.1, 0.3), (1, 1, 1)), translation=(-0.1, 0.0, -0.1))
    model, state = b.finalize()
    solver = ImplicitEulerSolver(model, ContactParameters(dhat=1e-3, kappa=1e6), tol=1e-4)
    stats, warned = _steps(model, state, solver, 10)
    # measured: kappa B +3.6e-5 J at the first step, +1.87e-5 J at the tenth (26 stencils)
    assert all(s.barrier_energy > 0.0 for s in stats) and not warned


class _Bar:
    """Stands in for the run's progress bar: records clear / refresh among the warnings shown."""

    def __init__(self, log):
        self.log = log

    def clear(self):
        self.log.append("clear")

    def refresh(self):
        self.log.append("refresh")

    def set_postfix_str(self, *args, **kwargs):
        pass

    def update(self, n):
        pass

    def close(self):
        pass


def test_the_run_clears_its_progress_bar_for_the_solver_warning(tmp_path, monkeypatch):
    """``app.runner.run`` shows a warning raised inside the solver's step on a line of its own: the bar is
    cleared before it and redrawn after it (the warning itself still reaches the caller, once)."""
    from ipcsim.app import runner
    from ipcsim.model.sanity import SanityWarning
    from ipcsim.scene.simulation import Simulation

    log = []
    monkeypatch.setattr(runner, "_progress_bar", lambda *args: _Bar(log))
    model, state, solver = _slab_under_sliver_pusher()
    sim = Simulation(model, state, solver, dt=1.0, end_time=2.0, name="slab")
    shown = warnings.showwarning
    monkeypatch.setattr(warnings, "showwarning", lambda message, category, *a, **k: (
        log.append(category.__name__), shown(message, category, *a, **k)))
    with warnings.catch_warnings():
        warnings.simplefilter("always")
        warnings.simplefilter("ignore", SanityWarning)  # the bodies start within dhat
        runner.run(sim, runner.RunOptions(tmp_path / "out"))
    assert log == ["clear", "NegativeBarrierWarning", "refresh"]
