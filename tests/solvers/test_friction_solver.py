"""Lagged friction in the implicit Euler solver: a stiff cube on a slope (a tilted ground plane)."""
import numpy as np
import pytest

from ipcsim.model import ModelBuilder, box_tet_mesh
from ipcsim.solvers.integrator_solvers import ContactParameters, FrictionParameters, ImplicitEulerSolver

pytestmark = pytest.mark.filterwarnings("ignore::ipcsim.model.sanity.SanityWarning")  # cubes start within dhat

THETA = np.deg2rad(20.0)
G = 9.81
H = 0.01
EPS_V = 1e-3


def _cube_on_slope(gap=4e-4):
    """A 10 cm cube resting flush on the plane through the origin with normal (-sin, cos, 0)."""
    n = np.array([-np.sin(THETA), np.cos(THETA), 0.0])
    rot = np.array([[np.cos(THETA), -np.sin(THETA), 0.0], [np.sin(THETA), np.cos(THETA), 0.0], [0.0, 0.0, 1.0]])
    v, t = box_tet_mesh((0.1, 0.1, 0.1), (2, 2, 2))
    b = ModelBuilder(gravity=(0.0, -G, 0.0))
    b.add_body(v, t, rotation=rot, translation=gap * n, youngs_modulus=1e6, poisson_ratio=0.3)
    b.add_ground(0.0, normal=n)
    model, state = b.finalize()
    downhill = -np.array([np.cos(THETA), np.sin(THETA), 0.0])
    return model, state, downhill


def _run(mu, steps, ground_mu=None, lagging=1):
    model, state, downhill = _cube_on_slope()
    solver = ImplicitEulerSolver(model, ContactParameters(dhat=1e-3, kappa=1e6),
                                 friction=FrictionParameters(mu=mu, ground_mu=ground_mu, eps_v=EPS_V,
                                                             lagging_iterations=lagging), tol=1e-4)
    w = model.mass / model.mass.sum()
    s, v = [], []
    for _ in range(steps):
        new = state.copy()
        stats = solver.step(state, new, None, H)
        state = new
        assert stats.converged
        assert stats.n_friction > 0 and stats.lagging_iterations == lagging
        s.append(float(w @ state.x @ downhill))
        v.append(float(w @ state.v @ downhill))
    return np.array(s), np.array(v), model, state


def _fitted_acceleration(v, first):
    k = np.arange(len(v))[first:]
    return np.polyfit(k * H, v[first:], 1)[0]


def test_cube_sticks_when_mu_exceeds_tan_theta():
    mu = 0.6  # tan(20 deg) = 0.364
    s, _, model, state = _run(mu, 20)
    drift = np.abs(np.diff(s[5:]))
    assert drift.max() < EPS_V * H
    n = np.array([-np.sin(THETA), np.cos(THETA), 0.0])
    assert (state.x @ n).min() > 0.0  # above the slope


@pytest.mark.parametrize("mu", [0.1, 0.2])
def test_cube_slides_with_coulomb_acceleration(mu):
    _, v, _, _ = _run(mu, 20)
    a = _fitted_acceleration(v, 5)
    expected = G * (np.sin(THETA) - mu * np.cos(THETA))
    assert a == pytest.approx(expected, rel=0.03)  # measured: -2.3e-3 (mu 0.1), -2.5e-3 (mu 0.2)


def test_ground_mu_overrides_mu_for_planes():
    _, v, _, _ = _run(0.6, 12, ground_mu=0.0)  # frictionless ground: slides like on ice
    # measured: 3.6e-14 (implicit Euler gives the frictionless slide's constant acceleration exactly)
    assert _fitted_acceleration(v, 4) == pytest.approx(G * np.sin(THETA), rel=1e-12)


def test_two_lagging_iterations_slide_with_the_same_acceleration():
    _, v, _, _ = _run(0.2, 12, lagging=2)
    # measured: -2.8e-3 (-3.9e-3 with one lagging iteration over these 12 steps)
    assert _fitted_acceleration(v, 4) == pytest.approx(G * (np.sin(THETA) - 0.2 * np.cos(THETA)), rel=0.03)


def test_friction_parameters_reject_bad_values():
    with pytest.raises(ValueError, match="mu"):
        FrictionParameters(mu=-1.0)
    with pytest.raises(ValueError, match="eps_v"):
        FrictionParameters(mu=0.1, eps_v=0.0)
    with pytest.raises(ValueError, match="lagging"):
        FrictionParameters(mu=0.1, lagging_iterations=-1)


def test_moving_obstacle_drags_a_resting_cube_by_friction():
    """A conveyor plate (two triangles) moving at 0.5 m/s under a resting cube: kinetic friction accelerates
    the cube at mu g until it sticks and moves with the plate. The plate starts at t = 0.1 s, once the cube
    has settled on it (the barrier's equilibrium gap is near dhat here)."""
    mu, speed = 0.5, 0.5
    v, t = box_tet_mesh((0.1, 0.1, 0.1), (2, 2, 2))
    b = ModelBuilder(gravity=(0.0, -G, 0.0))
    b.add_body(v, t, translation=(-0.05, 4e-4, -0.05), youngs_modulus=1e6, poisson_ratio=0.3)
    sq = np.array([[-0.5, 0.0, -0.5], [0.5, 0.0, -0.5], [0.5, 0.0, 0.5], [-0.5, 0.0, 0.5]])
    b.add_obstacle(sq, [[0, 2, 1], [0, 3, 2]], velocity=(speed, 0.0, 0.0), time_range=(0.1, np.inf))
    model, state = b.finalize()
    solver = ImplicitEulerSolver(model, ContactParameters(dhat=1e-3, kappa=1e6),
                                 friction=FrictionParameters(mu=mu, eps_v=EPS_V), tol=1e-4)
    n = len(v)
    w = model.mass[:n] / model.mass[:n].sum()
    vx = []
    for _ in range(26):
        new = state.copy()
        assert solver.step(state, new, None, H).converged
        state = new
        vx.append(float(w @ state.v[:n, 0]))
    vx = np.array(vx)
    assert np.abs(vx[3:10]).max() < EPS_V  # resting on the static plate
    a = np.polyfit(np.arange(10, 19) * H, vx[10:19], 1)[0]
    assert a == pytest.approx(mu * G, rel=0.05)  # measured: 4.6e-3
    assert vx[-1] == pytest.approx(speed, abs=EPS_V)  # sticking: moves with the plate
