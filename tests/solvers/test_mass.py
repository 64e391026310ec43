"""The mass as a general symmetric sparse matrix: the lumped diagonal as its fast special case, a general matrix
with the same entries reproducing it, a consistent tet mass through the whole Newton loop (free fall, momentum,
finite differences of the inertia term) and the consistent acceleration."""
import numpy as np
import pytest
import scipy.sparse as sp

from ipcsim.energies.mass import Mass
from ipcsim.model import ModelBuilder, box_tet_mesh
from ipcsim.solvers.integrator_solvers import ContactParameters, ImplicitEulerSolver, make_solver
from ipcsim.solvers.reduction import SystemMatrix
from ipcsim.solvers.terms import InertiaTerm


def consistent_tet_mass(model, density=1000.0):
    """M = sum_e rho V_e / 20 (1 + delta_ab) I_3 over the body tets, (3n, 3n) CSR [kg]."""
    local = (np.ones((4, 4)) + np.eye(4)) / 20.0
    rows, cols, vals = [], [], []
    for e, tet in enumerate(model.tets):
        m = density * model.volume[e] * local
        for a in range(4):
            for b in range(4):
                for r in range(3):
                    rows.append(3 * tet[a] + r)
                    cols.append(3 * tet[b] + r)
                    vals.append(m[a, b])
    n3 = 3 * model.n_vertices
    return sp.csr_matrix((vals, (rows, cols)), shape=(n3, n3))


def _cube(gravity=(0.0, -9.81, 0.0), ground=False):
    v, t = box_tet_mesh((0.1, 0.1, 0.1), (2, 2, 2))
    b = ModelBuilder(gravity=gravity)
    if ground:
        b.add_ground(0.0)
    b.add_body(v, t, translation=(0.0, 0.002 if ground else 0.0, 0.0), youngs_modulus=1e5)
    return b.finalize()


def test_mass_object_matches_its_matrix(rng):
    model, _ = _cube()
    lumped = Mass.lumped(model.mass)
    general = Mass.from_matrix(consistent_tet_mass(model))
    dx = rng.normal(size=(model.n_vertices, 3))
    for mass in (lumped, general):
        m = mass.as_matrix().toarray()
        np.testing.assert_allclose(mass.apply(dx).ravel(), m @ dx.ravel(), rtol=1e-13)
        assert mass.quadratic(dx) == pytest.approx(dx.ravel() @ m @ dx.ravel(), rel=1e-13)
    # the consistent mass's rows sum to the lumped masses (both carry rho V / 4 per tet corner)
    np.testing.assert_allclose(general.node_masses, model.mass, rtol=1e-12)
    assert lumped.is_lumped and not general.is_lumped


def _trajectory(model, state, steps=8, **kw):
    solver = ImplicitEulerSolver(model, ContactParameters(dhat=1e-3, kappa=1e4), tol=1e-6, **kw)
    out = []
    for _ in range(steps):
        new = state.copy()
        solver.step(state, new, None, 0.01)
        state = new
        out.append(state.x.copy())
    return np.array(out)


def test_a_general_matrix_holding_the_lumped_diagonal_reproduces_the_lumped_path():
    model, state = _cube(ground=True)
    state.v[:] = (0.3, -0.5, 0.0)
    lumped = _trajectory(model, state.copy())
    model.mass_matrix = Mass.from_matrix(sp.diags(np.repeat(model.mass, 3)))
    assert not model.mass_matrix.is_lumped
    general = _trajectory(model, state.copy())
    np.testing.assert_allclose(general, lumped, rtol=0, atol=1e-10)


def test_consistent_mass_free_fall_is_exact_backward_euler():
    model, state = _cube()
    model.mass_matrix = Mass.from_matrix(consistent_tet_mass(model))
    h, g = 0.01, model.gravity
    xs = _trajectory(model, state.copy(), steps=6)
    x_ref, v_ref = state.x.copy(), state.v.copy()
    for k in range(6):
        v_ref = v_ref + h * g
        x_ref = x_ref + h * v_ref
        np.testing.assert_allclose(xs[k], x_ref, rtol=0, atol=1e-10)


def test_consistent_mass_conserves_momentum(rng):
    model, state = _cube(gravity=(0.0, 0.0, 0.0))
    mm = consistent_tet_mass(model)
    model.mass_matrix = Mass.from_matrix(mm)
    state.v = rng.normal(scale=0.5, size=state.v.shape)
    p0 = (mm @ state.v.ravel()).reshape(-1, 3).sum(0)
    solver = ImplicitEulerSolver(model, tol=1e-9)
    for _ in range(5):
        new = state.copy()
        solver.step(state, new, None, 0.01)
        state = new
    p1 = (mm @ state.v.ravel()).reshape(-1, 3).sum(0)
    np.testing.assert_allclose(p1, p0, atol=1e-9 * np.abs(p0).max())


@pytest.mark.parametrize("integrator", ["implicit_euler", "newmark"])
def test_inertia_with_a_consistent_mass_matches_finite_differences(rng, integrator):
    model, state = _cube()
    model.mass_matrix = Mass.from_matrix(consistent_tet_mass(model))
    solver = make_solver(model, integrator=integrator)
    state.v = rng.normal(scale=0.1, size=state.x.shape)
    pot = solver.potential(state, 0.01)
    # a rigid shift plus a tiny deformation: the elastic Hessian is PSD there (its projection is inactive), so
    # the whole Newton matrix must match finite differences of the gradient
    x = state.x + rng.normal(scale=1e-3, size=3) + rng.normal(scale=1e-7, size=state.x.shape)
    grad, hess, _ = pot.gradient_hessian(pot.evaluation(x))
    d = rng.normal(size=x.shape)
    eps = 1e-6
    fd = (pot.energy(pot.evaluation(x + eps * d)) - pot.energy(pot.evaluation(x - eps * d))) / (2 * eps)
    assert fd == pytest.approx(grad @ d.ravel(), rel=1e-5)  # measured 1.2e-6 (the elastic part's round-off)
    g_p, _, _ = pot.gradient_hessian(pot.evaluation(x + eps * d))
    g_m, _, _ = pot.gradient_hessian(pot.evaluation(x - eps * d))
    np.testing.assert_allclose(hess @ d.ravel(), (g_p - g_m) / (2 * eps), rtol=1e-5,
                               atol=1e-6 * np.abs(hess @ d.ravel()).max())
    # the inertia term is 1/2 (x - x_hat)^T M (x - x_hat) with the consistent M itself (not its lumped rows)
    inertia = pot.term(InertiaTerm)
    dx = (x - inertia.q_hat).ravel()
    m_dense = model.mass_matrix.matrix.toarray()
    ev = pot.evaluation(x)
    assert inertia.value(ev) == pytest.approx(0.5 * dx @ m_dense @ dx, rel=1e-12)
    g_inertia = np.zeros(x.size)
    inertia.add_to(ev, g_inertia, SystemMatrix(model.surface_map, None, 0.0, np.zeros(x.size)))
    np.testing.assert_allclose(g_inertia, m_dense @ dx, rtol=1e-12, atol=1e-12 * np.abs(m_dense @ dx).max())
    # the free block of the Newton matrix holds the off-diagonal mass entries
    free = np.ones(x.size, bool)
    a = hess.free_block(free)
    ref = hess.tocsr()
    assert abs(a - ref).max() <= 1e-12 * abs(ref).max()


def test_consistent_acceleration_uses_the_mass_matrix():
    model, state = _cube()
    mm = consistent_tet_mass(model)
    model.mass_matrix = Mass.from_matrix(mm)
    solver = ImplicitEulerSolver(model)
    a = solver.consistent_acceleration(state)  # at rest, no contact: gravity alone, M a = M g
    np.testing.assert_allclose(a, np.broadcast_to(model.gravity, a.shape), rtol=1e-10, atol=1e-10)


class _Tether:
    """A test term: w_p k/2 ||q - target||^2 over all nodes (a spring pulling every node to a target)."""

    contact = False

    def __init__(self, target, k, weight):
        self.target, self.k, self.weight = target, k, weight

    def value(self, ev):
        return 0.5 * self.weight * self.k * float(np.sum((ev.x - self.target) ** 2))

    def add_to(self, ev, grad, hess):
        grad += self.weight * self.k * (ev.x - self.target).ravel()
        hess.add_diagonal(np.full(ev.x.size, self.weight * self.k))


def test_a_plugged_in_energy_term_is_summed_by_the_newton_loop(rng):
    model, state = _cube(gravity=(0.0, 0.0, 0.0))
    target = model.rest_positions + [0.02, 0.0, 0.0]
    solver = ImplicitEulerSolver(model, tol=1e-6)
    solver.add_term(lambda state_in, h, weights: _Tether(target, 1e4, weights[1]))
    pot = solver.potential(state, 0.01)
    x = state.x + rng.normal(scale=1e-4, size=state.x.shape)
    grad, _, _ = pot.gradient_hessian(pot.evaluation(x))
    d = rng.normal(size=x.shape)
    eps = 1e-6
    fd = (pot.energy(pot.evaluation(x + eps * d)) - pot.energy(pot.evaluation(x - eps * d))) / (2 * eps)
    assert fd == pytest.approx(grad @ d.ravel(), rel=1e-5)  # measured 1.2e-6 (the elastic part's round-off)
    for _ in range(30):  # the tether pulls the cube (no gravity, no contact) to the target and holds it there
        new = state.copy()
        assert solver.step(state, new, None, 0.01).converged
        state = new
    np.testing.assert_allclose(state.x.mean(axis=0), target.mean(axis=0), atol=2e-4)
