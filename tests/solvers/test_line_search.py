"""The CCD-bounded line search shared by the Newton loop and the face solver (``solvers.line_search``):
backtracking, its bisection refinement and the round-off guard, on 1D energies along a direction; and the
pieces of #25 that route through one place (the barrier formulation's switches, the integrators' quasi-static
flag, the run's scene check)."""
import numpy as np
import pytest

from ipcsim.contact.formulation import BarrierFormulation
from ipcsim.solvers import line_search
from ipcsim.solvers.integrators import ImplicitEuler, Newmark, QuasiStatic
from ipcsim.solvers.line_search import MIN_ALPHA, REFINE_ABOVE, REFINE_PATIENCE, backtrack, minimum_past


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


def test_with_the_slope_a_wall_past_the_model_minimum_is_bisected():
    """E = (alpha - 0.8)^2 walled past 0.9, slope E'(0) = -1.6: the parabola through E(0), E'(0) and the accepted
    E(0.5) has its minimum at 0.8, past 0.5, so the bisections run (the same trials as without a slope)."""
    evaluate, trials = _along(_walled)
    r = backtrack(evaluate, 0.64, 1.0, slope=-1.6)
    assert trials == [1.0, 0.5, 0.75, 0.875, 0.8125, 0.84375, 0.828125, 0.8203125] and r.alpha == 0.8125


def _behind(a):
    """E = (alpha - 0.3)^2: the full step overshoots the minimum, halving lands past it."""
    return (a - 0.3) ** 2


def test_with_the_slope_a_minimum_behind_the_accepted_trial_is_not_bisected():
    """E(1) = 0.49 > E(0) = 0.09 is rejected, E(0.5) = 0.04 accepted; the model (exact here) has its minimum at
    0.3 < 0.5, so no bisection of [0.5, 1] can gain: two trials. Without the slope the |E| rule bisects (and
    stops after REFINE_PATIENCE trials that do not lower E)."""
    evaluate, trials = _along(_behind)
    r = backtrack(evaluate, 0.09, 1.0, slope=-0.6)
    assert trials == [1.0, 0.5] and (r.alpha, r.trials, r.decreased) == (0.5, 2, True)
    evaluate, trials = _along(_behind)
    r = backtrack(evaluate, 0.09, 1.0)
    assert trials == [1.0, 0.5, 0.75, 0.625, 0.5625] and r.alpha == 0.5 and r.trials == 2 + REFINE_PATIENCE


def test_bisections_stop_after_trials_that_do_not_lower_the_energy(monkeypatch):
    evaluate, trials = _along(_behind)
    monkeypatch.setattr(line_search, "REFINE_PATIENCE", 1)
    assert backtrack(evaluate, 0.09, 1.0).trials == 3 and trials == [1.0, 0.5, 0.75]
    monkeypatch.setattr(line_search, "REFINE_PATIENCE", 100)  # patience off: all six bisections
    assert backtrack(_along(_behind)[0], 0.09, 1.0).trials == 2 + line_search.LINE_SEARCH_REFINEMENTS


def test_with_the_slope_no_bisection_of_round_off(monkeypatch):
    """A rejection by 1e-14 of |E| = 1 (below REFINE_ABOVE_ROUNDOFF) is round-off, even though the accepted trial
    decreased E by more than the slope predicts (which alone would call for bisections)."""
    def f(a):
        return 1.0 + 1e-14 if a > 0.6 else 1.0 - 1e-14
    evaluate, trials = _along(f)
    assert backtrack(evaluate, 1.0, 1.0, slope=-1e-14).trials == 2 and trials == [1.0, 0.5]
    monkeypatch.setattr(line_search, "REFINE_ABOVE_ROUNDOFF", 0.0)  # the floor off: bisections
    assert backtrack(_along(f)[0], 1.0, 1.0, slope=-1e-14).trials == 2 + REFINE_PATIENCE


def _mild(a):
    """(alpha - 0.8)^2 with a step of +1 past 0.9: the full step is rejected by a rise of 0.4 only."""
    return (a - 0.8) ** 2 + (1.0 if a > 0.9 else 0.0)


@pytest.mark.parametrize("offset", [1e3, 1e6])
def test_the_decisions_do_not_depend_on_an_energy_offset(offset):
    """An energy offset (what translating a scene along gravity adds through -f . q) changes no trial with the
    slope; the |E|-relative rule (no slope) drops the bisections at offset 1e6, where REFINE_ABOVE |E| = 1
    exceeds the rise 0.4."""
    ref = _along(_mild)
    backtrack(ref[0], 0.64, 1.0, slope=-1.6)
    shifted = _along(lambda a: _mild(a) + offset)
    backtrack(shifted[0], 0.64 + offset, 1.0, slope=-1.6)
    assert shifted[1] == ref[1] and len(ref[1]) == 8
    old = _along(lambda a: _mild(a) + offset)
    backtrack(old[0], 0.64 + offset, 1.0)
    assert (old[1] == ref[1]) == (REFINE_ABOVE * (0.64 + offset) < 0.4)


def test_minimum_past_on_parabolas():
    # E = a^2 - 2 m a: slope -2 m; the accepted trial at alpha = 0.5
    for m in (0.3, 0.49, 0.51, 2.0):
        assert minimum_past(0.0, -2.0 * m, 0.5, 0.25 - m) == (m > 0.5)
    assert minimum_past(0.0, -1.0, 0.5, -0.6)       # E bends down (decrease beyond the linear model)
    assert not minimum_past(0.0, 0.0, 0.5, -0.1)    # no descent: nothing to extrapolate
    assert not minimum_past(0.0, 1.0, 0.5, -0.1)


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
