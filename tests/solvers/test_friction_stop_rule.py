"""The Newton stop rule with friction (``NewtonSolver._small``, ``newton.velocity_tolerance``): the friction cap
min(tol x bbox, 0.1 eps_v) holds at the friction stencils only (their normal relative increments, and the change of
their friction force, at most what a tangential velocity change of the cap makes at stick); every other increment
is held to IPC's tol x bbox. The analytic friction checks at the defaults are in test_friction_analytic.py.

The first two tests fail when the cap is applied to every node (the free body's accepted increments, the unit
checks on far or sliding increments) or to none (the slope's acceleration: -119 %; the unit checks at stick);
both were tried. The third checks ``contact.friction.increment_effect`` against the friction potential's gradient.
"""
import numpy as np
import pytest

from ipcsim.contact.friction import friction_direction, increment_effect, tangential_displacements
from ipcsim.model import ModelBuilder, box_tet_mesh
from ipcsim.solvers import newton
from ipcsim.solvers.integrator_solvers import FrictionParameters, ImplicitEulerSolver
from ipcsim.solvers.terms import FrictionTerm

pytestmark = pytest.mark.filterwarnings("ignore::ipcsim.model.sanity.SanityWarning")  # bodies start within dhat

G, H, SIDE, GAP = 9.81, 0.025, 0.1, 5e-4
THETA = np.deg2rad(20.0)
NORMAL = np.array([-np.sin(THETA), np.cos(THETA), 0.0])
DOWN_SLOPE = -np.array([np.cos(THETA), np.sin(THETA), 0.0])


def _slope_and_flier(mu=0.2, spin=(3.0, 20.0, 5.0)):
    """A 10 cm block resting on a 20 deg slope (mu < tan 20 deg: it slides) and a second block thrown spinning
    0.5 m above, far from any contact. Returns (model, state, solver, node ids of the block, of the flier)."""
    v, t = box_tet_mesh((SIDE, SIDE, SIDE), (2, 2, 2))
    rot = np.array([[np.cos(THETA), -np.sin(THETA), 0.0], [np.sin(THETA), np.cos(THETA), 0.0], [0.0, 0.0, 1.0]])
    b = ModelBuilder(gravity=(0.0, -G, 0.0))
    b.add_body(v, t, rotation=rot, translation=GAP * NORMAL)
    b.add_body(v, t, translation=(0.0, 0.5, 0.5), velocity=(0.0, 3.0, 0.0), angular_velocity=spin)
    b.add_ground(0.0, normal=NORMAL)
    model, state = b.finalize()
    solver = ImplicitEulerSolver(model, friction=FrictionParameters(mu=mu))
    return model, state, solver, np.arange(len(v)), np.arange(len(v), 2 * len(v))


def test_far_increments_stop_at_ipcs_tolerance_and_the_slope_keeps_coulombs_acceleration(monkeypatch):
    model, state, solver, block, flier = _slope_and_flier()
    assert solver.velocity_tol == pytest.approx(1e-4)  # 0.1 eps_v
    assert solver.free_velocity_tol == pytest.approx(1e-2 * np.linalg.norm(np.ptp(model.rest_positions, axis=0)))
    accepted = []  # max |p| / h on the flier's nodes of each increment that ended a solve
    small = newton.NewtonSolver._small

    def recording(self, p, h, potential, ev):
        done = small(self, p, h, potential, ev)
        if done:
            accepted.append(np.abs(p[flier]).max() / h)
        return done

    monkeypatch.setattr(newton.NewtonSolver, "_small", recording)
    w = np.where(np.isin(np.arange(model.n_vertices), block), model.mass, 0.0)
    w /= w.sum()
    velocity = []
    for _ in range(20):
        new = state.copy()
        assert solver.step(state, new, None, H).converged
        state = new
        velocity.append(float(w @ state.v @ DOWN_SLOPE))
    k = np.arange(1, 21) * H
    a = np.polyfit(k[8:], velocity[8:], 1)[0]  # after 0.2 s
    # measured -0.40 % (the block alone: -0.39 %, test_friction_analytic.py); without the cap it stays stuck
    assert a == pytest.approx(G * (np.sin(THETA) - 0.2 * np.cos(THETA)), rel=0.01)
    # measured: 4 of the 20 solves ended with the flier's increment above the cap, up to 3.3e-3 m/s (< 8.6e-3 m/s)
    assert max(accepted) > 3.0 * solver.velocity_tol
    assert max(accepted) < solver.free_velocity_tol


def _check(solver, state, dx, p, h=H):
    """solver._small for the increment p (n, 3) [m] at the iterate state.x + dx of the step of size h from state."""
    potential = solver.potential(state, h)
    ev = potential.evaluation(state.x + dx)
    return solver._small(p, h, potential, ev)


def test_the_cap_holds_at_friction_stencils_only():
    model, state, solver, block, flier = _slope_and_flier()
    vt, ft = solver.velocity_tol, solver.free_velocity_tol
    mid = np.sqrt(vt * ft) * H  # an increment [m] between the two bounds (x h)
    zero = np.zeros_like(state.x)
    tangent = np.cross(NORMAL, [0.0, 0.0, 1.0])
    touching = block[np.abs((state.x[block] @ NORMAL) - GAP) < 1e-9]  # the block's face on the slope
    assert len(touching) == 9

    def on(nodes, direction, size=mid):
        p = zero.copy()
        p[nodes] = size * np.asarray(direction)
        return p

    assert _check(solver, state, zero, on(flier, [1.0, 0.0, 0.0]))  # far: IPC's tol x bbox
    assert not _check(solver, state, zero, on(flier, [1.0, 0.0, 0.0], 1.1 * ft * H))
    assert not _check(solver, state, zero, on(touching, tangent))  # at stick: the cap
    assert _check(solver, state, zero, on(touching, tangent, 0.9 * vt * H))
    assert not _check(solver, state, zero, on(touching, NORMAL))  # normal: the cap (lambda is read there)
    assert _check(solver, state, zero, on(touching, NORMAL, 0.9 * vt * H))
    # sliding (u = 1 cm along the slope, far beyond eps_u = 2.5e-5 m): an increment along u leaves the force as it is
    slid = on(block, tangent, 0.01)
    assert _check(solver, state, slid, on(touching, tangent))
    # ... one across u turns it by mid / 1 cm = 0.7 % < 2 x 0.1 (the stick-equivalent bound); one turning it by
    # more than that does not pass
    across = np.cross(NORMAL, tangent)
    assert _check(solver, state, slid, on(touching, across))
    assert not _check(solver, state, slid, on(touching, across, 0.01))
    # without friction (mu = 0): IPC's rule alone
    model, state, solver, block, flier = _slope_and_flier(mu=0.0)
    assert _check(solver, state, zero, on(touching, tangent)) and _check(solver, state, zero, on(touching, NORMAL))


def test_increment_effect_is_the_friction_force_change_and_the_normal_part():
    model, state, solver, block, _ = _slope_and_flier()
    fric = solver.potential(state, H).term(FrictionTerm)
    fc, eps_u = fric.collisions, fric.potential.eps_u
    assert len(fc) and eps_u == pytest.approx(1e-3 * H)
    rng = np.random.default_rng(3)
    for scale in (0.1 * eps_u, eps_u, 10.0 * eps_u):
        u = rng.normal(scale=scale, size=(fc.n_vertices, 3))  # collision-surface displacements
        du = rng.normal(scale=scale, size=(fc.n_vertices, 3))
        force, normal = increment_effect(fc, u, du, eps_u)
        uk, duk = tangential_displacements(fc, u), tangential_displacements(fc, du)
        # the force change per unit w mu lambda: the potential's own gradient, divided by w mu lambda
        s = (fc.weight * fc.mu * fc.normal_force)[:, None]
        assert np.all(fc.gamma[:, 0] == 1.0)  # plane-vertex stencils: grad D at vertex k is stencil k's
        fv = fc.vertices[:, 0]
        g0 = fric.potential.gradient(fc, u).reshape(-1, 3)[fv]
        g1 = fric.potential.gradient(fc, u + du).reshape(-1, 3)[fv]
        t = fc.tangent_basis
        ref = np.linalg.norm(np.einsum("kc,kcj->kj", g1 - g0, t) / s, axis=1)
        np.testing.assert_allclose(force, ref, rtol=1e-9, atol=1e-12)  # vertices hold one stencil each here
        assert np.all(force <= 2.0 * np.linalg.norm(duk, axis=1) / eps_u * (1 + 1e-12))  # Lipschitz 2 / eps_u
        np.testing.assert_allclose(normal, np.abs(du[fv] @ NORMAL), rtol=1e-9, atol=1e-15)
    # at stick a small increment changes the force by f1'(0) = 2 / eps_u per metre
    du = np.zeros((fc.n_vertices, 3))
    du[fc.vertices[:, 0]] = 1e-6 * eps_u * np.cross(NORMAL, [0.0, 0.0, 1.0])
    force, _ = increment_effect(fc, np.zeros_like(du), du, eps_u)
    np.testing.assert_allclose(force, 2e-6, rtol=1e-5)
    np.testing.assert_allclose(np.linalg.norm(friction_direction(np.array([[3.0, 4.0]]) * eps_u, eps_u)), 1.0)
