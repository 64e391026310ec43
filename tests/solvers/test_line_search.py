"""The CCD-bounded line search shared by the Newton loop and the face solver (``solvers.line_search``):
backtracking, its bisection refinement and the round-off guard, on 1D energies along a direction; and the
pieces of #25 that route through one place (the barrier formulation's switches, the integrators' quasi-static
flag, the run's scene check)."""
import numpy as np
import pytest

from ipcsim.contact.formulation import BarrierFormulation
from ipcsim.solvers import line_search
from ipcsim.solvers.integrators import ImplicitEuler, Newmark, QuasiStatic
from ipcsim.solvers.line_search import MIN_ALPHA, REFINE_ABOVE, backtrack


def _along(f):
    """evaluate(alpha) -> (alpha, f(alpha)), recording the trials."""
    trials = []

    def evaluate(a):
        trials.append(a)
        return a, f(a)
    return evaluate, trials


def test_a_decreasing_first_trial_is_taken_as_is():
    evaluate, trials = _along(lambda a: (a - 2.0) ** 2)   # minimum past the bound
    r = backtrack(evaluate, 4.0, 1.0)
    assert (r.alpha, r.energy, r.trials, r.decreased) == (1.0, 1.0, 1, True) and trials == [1.0]


def _walled(a):
    """E(alpha) = (alpha - 0.8)^2 with a wall past 0.9 (a contact the full step crosses)."""
    return np.inf if a > 0.9 else (a - 0.8) ** 2


def test_bisections_find_the_minimum_halving_stops_short_of():
    """Halving stops at 0.5 (E 0.09); the six bisections of [0.5, 1] try 0.75, 0.875, 0.8125, 0.84375,
    0.828125, 0.8203125 and keep the lowest, 0.8125 (E 1.5625e-4)."""
    evaluate, trials = _along(_walled)
    r = backtrack(evaluate, 0.64, 1.0)
    assert trials == [1.0, 0.5, 0.75, 0.875, 0.8125, 0.84375, 0.828125, 0.8203125]
    assert r.decreased and r.trials == 2 + line_search.LINE_SEARCH_REFINEMENTS == 8
    assert r.alpha == r.point == 0.8125 and r.energy == _walled(0.8125)
    plain = backtrack(_along(_walled)[0], 0.64, 1.0, refinements=0)  # the refinement off: halving only
    assert (plain.alpha, plain.trials, plain.energy) == (0.5, 2, _walled(0.5))
    assert r.energy < 0.01 * plain.energy


def test_the_module_setting_is_read_at_each_call(monkeypatch):
    monkeypatch.setattr(line_search, "LINE_SEARCH_REFINEMENTS", 0)
    assert backtrack(_along(_walled)[0], 0.64, 1.0).alpha == 0.5


def test_no_refinement_when_the_rejection_is_round_off():
    """The first rejected trial raises E by less than REFINE_ABOVE of it: the halving's point is kept."""
    e0 = 1.0
    rise = 0.5 * REFINE_ABOVE

    def f(a):
        return e0 + rise if a > 0.6 else e0 - 1e-9
    evaluate, trials = _along(f)
    r = backtrack(evaluate, e0, 1.0)
    assert (r.alpha, r.trials) == (0.5, 2) and trials == [1.0, 0.5]


def test_no_decrease_gives_up_below_the_floor():
    evaluate, trials = _along(lambda a: 1.0 + a)             # E rises along p
    r = backtrack(evaluate, 1.0, 1.0)
    assert not r.decreased and r.alpha < MIN_ALPHA <= 2.0 * r.alpha
    assert r.trials == len(trials) == 41 and r.point == r.alpha   # 1, 1/2, ..., 2^-40 < 1e-12


def test_convergent_stands_for_three_switches():
    on, off = BarrierFormulation.of(True), BarrierFormulation.of(False)
    assert on.collision_args == dict(use_area_weighting=True, use_improved_max_approximator=True)
    assert on.potential_args == dict(use_physical_barrier=True)
    assert off.collision_args == dict(use_area_weighting=False, use_improved_max_approximator=False)
    assert off.potential_args == dict(use_physical_barrier=False)


def test_integrators_say_whether_they_are_quasi_static():
    assert QuasiStatic().quasi_static and not ImplicitEuler().quasi_static and not Newmark().quasi_static
