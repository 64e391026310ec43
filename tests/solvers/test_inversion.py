"""Inversion (issue #22): the per-body option ``inversion`` ("prevent" bounds every Newton step so that no tet of
the body inverts, for every material; "allow" does not), the per-step counts in ``StepStats`` / stats.csv and
the run's one warning.

The test scene squashes a free, very soft 10 cm cube (E = 100 Pa; or an affine body of stiffness 100 Pa; or the
cube embedded in a coarser one, whose tets are the simulated ones; no gravity, no ground, self-contact off so that
only the elastic bound can stop it): its initial velocity v_y = -SQUASH (y - y_c) closes it at 5 m/s, and one
implicit Euler step of 0.05 s aims its top 0.25 m below its bottom, a mirror image stretched four times. With
"allow" every material but neo-Hookean ends the step with inverted tets (``test_allow_inverts``: the test of
"prevent" with the bound switched off); with "prevent" no tet is inverted at any configuration the solver
evaluates, and the step stops unconverged against the bound (det F = J_FLOOR = 1e-6; at max_newton_iterations,
or earlier when an iteration cannot move at all): the material's own minimiser is inverted.
"""
import warnings

import numpy as np
import pytest

from ipcsim.energies.neohookean import J_FLOOR
from ipcsim.io.frames import tet_jacobians
from ipcsim.model import ModelBuilder, box_tet_mesh
from ipcsim.model.core import DEFAULT_INVERSION
from ipcsim.app.runner import STATS_COLUMNS, InversionWarning, RunOptions, run
from ipcsim.scene.simulation import Simulation
from ipcsim.scene import Scene, SceneError
from ipcsim.solvers import terms
from ipcsim.solvers.integrator_solvers import ImplicitEulerSolver

MATERIALS = ("SNH", "FCR", "LCR", "LCR_LAGGED", "LE", "ABD", "LCR-embedded")
SQUASH = 100.0  # [1/s]


def squashed_cube(material: str, inversion: str, max_iterations: int = 40):
    """(model, state, solver) of the squashed cube (see the module docstring)."""
    v, t = box_tet_mesh((0.1, 0.1, 0.1), (2, 2, 2))
    b = ModelBuilder(gravity=(0.0, 0.0, 0.0))
    if material == "ABD":
        b.add_affine_body(v, t, stiffness=100.0, inversion=inversion)
    elif material.endswith("-embedded"):  # the cube embedded in a coarser cube (the simulated tets)
        b.add_embedded_body(v, t, coarse=box_tet_mesh((0.1, 0.1, 0.1), (1, 1, 1)), youngs_modulus=100.0,
                            poisson_ratio=0.3, material=material.split("-")[0], inversion=inversion)
    else:
        b.add_body(v, t, youngs_modulus=100.0, poisson_ratio=0.3, material=material, inversion=inversion)
    b.set_self_contact(0, False)
    model, state = b.finalize()
    state.v[:, 1] = -SQUASH * (state.x[:, 1] - 0.05)
    solver = ImplicitEulerSolver(model, max_newton_iterations=max_iterations)
    return model, state, solver


def _record_evaluations(monkeypatch, model) -> list:
    """Collects the smallest det F of every configuration the solver's potentials evaluate."""
    seen = []
    original = terms.IncrementalPotential.evaluation

    def evaluation(self, x, *args, **kw):
        seen.append(float(tet_jacobians(x, model.tets, model.dm_inv).min()))
        return original(self, x, *args, **kw)

    monkeypatch.setattr(terms.IncrementalPotential, "evaluation", evaluation)
    return seen


@pytest.mark.parametrize("material", MATERIALS)
def test_allow_inverts(material):
    model, state, solver = squashed_cube(material, "allow")
    out = state.copy()
    st = solver.step(state, out, None, 0.05)
    j = tet_jacobians(out.x, model.tets, model.dm_inv)
    assert st.n_inverted == np.count_nonzero(j <= 0) > 0
    assert st.min_volume_ratio == pytest.approx(j.min(), rel=1e-12, abs=1e-15) and st.min_volume_ratio < 0


@pytest.mark.parametrize("material", MATERIALS)
def test_prevent_keeps_every_evaluated_configuration_positive(material, monkeypatch):
    model, state, solver = squashed_cube(material, "prevent")
    seen = _record_evaluations(monkeypatch, model)
    out = state.copy()
    st = solver.step(state, out, None, 0.05)
    assert len(seen) > 1 and min(seen) > 0.5 * J_FLOOR  # measured: 1e-6 - 1e-15 (bisection and round-off)
    j = tet_jacobians(out.x, model.tets, model.dm_inv)
    assert st.n_inverted == 0 and st.min_volume_ratio == pytest.approx(j.min(), rel=1e-6) and j.min() > 0
    assert not st.converged  # stalled against the bound (module docstring)


def test_neo_hookean_cannot_invert_even_with_allow(monkeypatch):
    model, state, solver = squashed_cube("NH", "allow")
    seen = _record_evaluations(monkeypatch, model)
    st = solver.step(state, state.copy(), None, 0.05)
    assert min(seen) > 0.0 and st.n_inverted == 0 and st.converged  # its energy is +inf when inverted


def test_already_inverted_tets_set_no_bound():
    """A tet inverted at the start (here: the whole cube mirrored) must not stall the step at alpha = 0."""
    model, state, solver = squashed_cube("LCR", "prevent")
    x = state.x.copy()
    x[:, 1] = 0.1 - x[:, 1]  # mirror in y: every tet inverted, at rest otherwise
    p = np.zeros_like(x)
    p[:, 1] = -0.2 * (x[:, 1] - 0.05)  # un-mirroring direction
    assert solver.elastic.max_step(x, p) == 1.0
    assert solver.elastic.inversion_stats(x) == (len(model.tets), pytest.approx(-1.0, rel=1e-12))


def test_fully_prescribed_tets_set_no_bound():
    model, state, solver = squashed_cube("LCR", "prevent")
    p = np.zeros_like(state.x)
    p[:, 1] = -3.0 * (state.x[:, 1] - 0.05)  # squashes every tet through zero volume at t = 1/3
    assert solver.elastic.max_step(state.x, p) < 1.0 / 3.0
    assert solver.elastic.max_step(state.x, p, np.ones(len(state.x), bool)) == 1.0


def test_stats_columns_and_one_warning(tmp_path):
    model, state, solver = squashed_cube("LCR", "allow")
    sim = Simulation(model, state, solver, dt=0.01, end_time=0.04, name="squash", body_names=["cube"])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        run(sim, RunOptions(tmp_path / "out", progress=False))
    inv = [w for w in caught if issubclass(w.category, InversionWarning)]
    assert len(inv) == 1 and "body 0 ('cube'" in str(inv[0].message)
    rows = (tmp_path / "out" / "stats.csv").read_text().splitlines()
    header = rows[0].split(",")
    assert tuple(header) == STATS_COLUMNS
    cols = [dict(zip(header, r.split(","))) for r in rows[1:]]
    assert len(cols) == 4 and all(int(c["n_inverted"]) > 0 for c in cols[1:])  # inverted from step 2 on
    last = np.load(tmp_path / "out" / "checkpoint.npz")["x"]
    j = tet_jacobians(last, model.tets, model.dm_inv)
    assert int(cols[-1]["n_inverted"]) == np.count_nonzero(j <= 0)
    assert float(cols[-1]["min_volume_ratio"]) == pytest.approx(j.min(), rel=1e-12)


def test_prevent_run_has_no_warning(tmp_path):
    model, state, solver = squashed_cube("LCR", "prevent", max_iterations=10)
    sim = Simulation(model, state, solver, dt=0.01, end_time=0.02, name="squash")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        run(sim, RunOptions(tmp_path / "out", progress=False))
    assert not [w for w in caught if issubclass(w.category, InversionWarning)]
    rows = (tmp_path / "out" / "stats.csv").read_text().splitlines()[1:]
    i, r = STATS_COLUMNS.index("n_inverted"), STATS_COLUMNS.index("min_volume_ratio")
    assert all(row.split(",")[i] == "0" and 0 < float(row.split(",")[r]) < 1 for row in rows)


def _scene(**body) -> dict:
    return {"gravity": [0, 0, 0], "time": {"end": 0.01, "dt": 0.01},
            "bodies": [{"mesh": {"box": {"size": [0.1, 0.1, 0.1], "resolution": [2, 2, 2]}},
                        "material": {"model": "LCR"}, **body},
                       {"mesh": {"box": {"size": [0.1, 0.1, 0.1], "resolution": [2, 2, 2]}},
                        "transform": {"translation": [0.5, 0, 0]}, "affine": {"stiffness": 1e6}, **body}]}


@pytest.mark.parametrize("value", ["prevent", "allow", None])
def test_json_inversion_key(value):
    scene = Scene.from_dict(_scene(**({} if value is None else {"inversion": value})), ".")
    assert [b["inversion"] for b in scene.data["bodies"]] == [value or DEFAULT_INVERSION] * 2
    model = scene.build().model
    assert model.prevent_inversion.shape == (len(model.tets),)
    assert np.all(model.prevent_inversion == ((value or DEFAULT_INVERSION) == "prevent"))


def test_json_inversion_key_is_validated():
    message = r'^<dict>: bodies\[0\]\.inversion: expected one of "prevent", "allow", got "never"$'
    with pytest.raises(SceneError, match=message):
        Scene.from_dict(_scene(inversion="never"), ".")


def test_builder_rejects_unknown_mode():
    v, t = box_tet_mesh((0.1, 0.1, 0.1), (1, 1, 1))
    with pytest.raises(ValueError, match="body 0: inversion must be one of 'prevent', 'allow', got 'no'"):
        ModelBuilder().add_body(v, t, inversion="no")


def test_a_solve_that_cannot_move_stops_early():
    """Against the floor an iteration may be unable to move at all (alpha = 0): every later one would repeat it,
    so the solve stops there, unconverged (measured: LE stops after 19 of the 40 iterations allowed)."""
    model, state, solver = squashed_cube("LE", "prevent")
    st = solver.step(state, state.copy(), None, 0.05)
    assert not st.converged and st.newton_iterations < 40 and st.history[-1][1] == 0.0


def test_inversion_stats_equal_the_volume_ratios():
    """``inversion_stats`` (one Numba pass) counts and bounds the tets exactly as ``volume_ratios`` does, with some
    tets inverted, one flat and one with a NaN corner."""
    model, state, solver = squashed_cube("LCR", "prevent")
    rng = np.random.default_rng(3)
    x = state.x + rng.normal(scale=0.03, size=state.x.shape)  # large enough to invert some tets
    j = solver.elastic.volume_ratios(x)
    n_bad = int(np.count_nonzero(~(j > 0.0)))
    assert 0 < n_bad < len(j)
    assert solver.elastic.inversion_stats(x) == (n_bad, float(j.min()))
    t = model.tets[0]
    x[t[1]] = x[t[0]]                                         # a flat tet: det F = 0 counts as inverted
    j = solver.elastic.volume_ratios(x)
    assert solver.elastic.inversion_stats(x) == (int(np.count_nonzero(~(j > 0.0))), float(j.min()))
    x[t[2], 0] = np.nan
    count, smallest = solver.elastic.inversion_stats(x)
    assert count == int(np.count_nonzero(~(solver.elastic.volume_ratios(x) > 0.0))) and np.isnan(smallest)
