"""StepStats.body_forces: per collision body, the contact and friction forces [N] at the end of the step.

Units are checked against physics (a cube at rest on the ground carries its weight m g; a cube sliding down a
slope feels mu times its normal force against its motion), and the per-stencil balance against Newton's third
law (two bodies, a body on an obstacle: equal and opposite rows).
"""
import numpy as np
import pytest

from ipcsim.model import ModelBuilder, box_tet_mesh
from ipcsim.solvers.integrator_solvers import ContactParameters, FrictionParameters, ImplicitEulerSolver

pytestmark = pytest.mark.filterwarnings("ignore::ipcsim.model.sanity.SanityWarning")  # cubes start within dhat

G = 9.81
H = 0.01
CONTACT = ContactParameters(dhat=1e-3, kappa=1e6)


def _cube():
    """A 10 cm cube of 27 vertices, 1 kg at the default density."""
    return box_tet_mesh((0.1, 0.1, 0.1), (2, 2, 2))


def _run(model, state, steps, friction=None, tol=1e-4):
    """The StepStats of each of ``steps`` implicit Euler steps and the final state."""
    solver = ImplicitEulerSolver(model, CONTACT, friction=friction, tol=tol)
    out = []
    for _ in range(steps):
        new = state.copy()
        out.append(solver.step(state, new, None, H))
        state = new
        assert out[-1].converged
    return out, state


def test_resting_cube_carries_its_weight():
    v, t = _cube()
    b = ModelBuilder(gravity=(0.0, -G, 0.0))
    b.add_body(v, t, translation=(0.0, 5e-4, 0.0), youngs_modulus=1e6, poisson_ratio=0.3)
    b.add_ground(0.0)
    model, state = b.finalize()
    stats, _ = _run(model, state, 40)
    forces = stats[-1].body_forces
    assert forces.shape == (1, 2, 3)  # the ground is no collision body
    weight = np.array([0.0, model.mass.sum() * G, 0.0])
    # measured: 2.2e-7 of m g at Newton tol 1e-4 (the cube has settled after 40 steps of 10 ms)
    assert np.linalg.norm(forces[0, 0] - weight) < 1e-5 * weight[1]
    assert np.all(forces[0, 1] == 0.0)  # no friction
    assert stats[0].body_forces[0, 0, 1] > 0.0  # every step reports its forces


def test_cube_on_an_obstacle_pushes_it_back():
    """A body resting on a static obstacle box: the obstacle's row is the body's, reversed (third law)."""
    v, t = _cube()
    b = ModelBuilder(gravity=(0.0, -G, 0.0))
    b.add_body(v, t, translation=(0.0, 0.1005, 0.0), youngs_modulus=1e6, poisson_ratio=0.3)
    b.add_obstacle(*box_tet_mesh((0.3, 0.1, 0.3), (1, 1, 1)), translation=(-0.1, 0.0, -0.1))
    model, state = b.finalize()
    stats, _ = _run(model, state, 40)
    forces = stats[-1].body_forces
    assert forces.shape == (2, 2, 3)
    weight = model.mass.sum() * G
    # measured: 1.1e-5 of m g (the Newton tolerance: it stays there once the cube has settled)
    assert np.linalg.norm(forces[0, 0] - [0.0, weight, 0.0]) < 1e-3 * weight
    # measured: 2e-16 of m g (round-off of the per-stencil sums)
    assert np.abs(forces[0] + forces[1]).max() < 1e-12 * weight


def test_two_bodies_get_opposite_contact_and_friction_forces():
    """Two cubes in zero gravity hit each other with a sliding component: equal and opposite forces."""
    v, t = _cube()
    b = ModelBuilder(gravity=(0.0, 0.0, 0.0))
    b.add_body(v, t, youngs_modulus=1e5, poisson_ratio=0.3, velocity=(0.0, 0.5, 0.2))
    b.add_body(v, t, translation=(0.03, 0.1015, 0.0), youngs_modulus=1e5, poisson_ratio=0.3,
               velocity=(0.0, -0.5, -0.2))
    model, state = b.finalize()
    stats, _ = _run(model, state, 4, FrictionParameters(mu=0.3))
    both = [s for s in stats if np.any(s.body_forces[:, 0]) and np.any(s.body_forces[:, 1])]
    assert both, "the cubes never rubbed"
    for forces in (s.body_forces for s in stats):
        assert forces.shape == (2, 2, 3)
        if np.any(forces[:, 0]):
            assert forces[0, 0, 1] < 0.0 < forces[1, 0, 1]  # pushed apart along y
        # measured: <= 8e-16 of the largest force (round-off of the stencil gradients)
        assert np.abs(forces[0] + forces[1]).max() <= 1e-12 * np.abs(forces).max()


def test_sliding_cube_feels_mu_times_its_normal_force_against_its_motion():
    theta, mu = np.deg2rad(20.0), 0.2  # tan(20 deg) = 0.36 > mu: the cube slides
    n = np.array([-np.sin(theta), np.cos(theta), 0.0])
    rot = np.array([[np.cos(theta), -np.sin(theta), 0.0], [np.sin(theta), np.cos(theta), 0.0], [0, 0, 1.0]])
    v, t = _cube()
    b = ModelBuilder(gravity=(0.0, -G, 0.0))
    b.add_body(v, t, rotation=rot, translation=4e-4 * n, youngs_modulus=1e6, poisson_ratio=0.3)
    b.add_ground(0.0, normal=n)
    model, state = b.finalize()
    stats, end = _run(model, state, 14, FrictionParameters(mu=mu, eps_v=1e-3))
    mass = model.mass.sum()
    for st in stats[-5:]:  # steady sliding (the first steps settle the cube onto the slope)
        contact, friction = st.body_forces[0]
        normal = np.linalg.norm(contact)
        # measured: 4e-4 (normal forces lagged at the step's start, measured at its end)
        assert np.linalg.norm(friction) == pytest.approx(mu * normal, rel=5e-3)
        # measured: 2e-3 (the cube rocks a little)
        assert normal == pytest.approx(mass * G * np.cos(theta), rel=2e-2)
        assert contact @ n == pytest.approx(normal, rel=1e-12)  # frictionless barrier: along the normal
        assert abs(friction @ n) < 1e-12 * normal
    # opposite to the velocity of the last step (measured: cosine + 1 = 2e-9)
    velocity = model.mass @ end.v / mass
    friction = stats[-1].body_forces[0, 1]
    assert friction @ velocity / (np.linalg.norm(friction) * np.linalg.norm(velocity)) < -1 + 1e-6


def test_no_contact_no_force():
    v, t = _cube()
    b = ModelBuilder(gravity=(0.0, -G, 0.0))
    b.add_body(v, t, translation=(0.0, 0.5, 0.0))
    b.add_ground(0.0)
    model, state = b.finalize()
    stats, _ = _run(model, state, 1, FrictionParameters(mu=0.3))
    assert stats[0].n_contacts == 0 and stats[0].body_forces.shape == (1, 2, 3)
    assert not np.any(stats[0].body_forces)
