"""Embedded bodies in the model: a body embedded in its own tet mesh follows the full-space trajectory, finite
differences of the incremental potential of an embedded teddy near the ground (lumped and consistent mass), and
the embedded teddy (low resolution) dropped on the ground stays intersection-free."""
import ipctk
import numpy as np
import pytest

from ipcsim.contact.broad_phase import build_candidates
from ipcsim.geometry import load_tet_mesh
from ipcsim.model import ModelBuilder, box_tet_mesh
from ipcsim.solvers.integrator_solvers import ContactParameters, FrictionParameters, ImplicitEulerSolver, make_solver

LOW_CELL = 0.065  # [m], the teddy's "low" cage: 37 vertices, 75 tets


def _drop(embedded: bool, steps=12):
    v, t = box_tet_mesh((0.1, 0.1, 0.1), (2, 2, 2))
    b = ModelBuilder()
    b.add_ground(0.0)
    kw = dict(translation=(0.0, 0.004, 0.0), velocity=(0.5, -0.5, 0.0), angular_velocity=(0, 0, 3.0))
    if embedded:
        b.add_embedded_body(v, t, coarse=(v, t), **kw)
    else:
        b.add_body(v, t, **kw)
    model, state = b.finalize()
    solver = ImplicitEulerSolver(model, ContactParameters(dhat=1e-3, kappa=1e4), friction=FrictionParameters(mu=0.5),
                                 tol=1e-6)
    xs = []
    for _ in range(steps):
        new = state.copy()
        stats = solver.step(state, new, None, 0.01)
        state = new
        xs.append(state.x.copy())
    return model, np.array(xs), stats


def test_a_body_embedded_in_its_own_tets_follows_the_full_space_trajectory():
    m0, x0, s0 = _drop(False)
    m1, x1, s1 = _drop(True)
    assert m0.surface_map.is_selection and not m1.surface_map.is_selection and m1.surface_map.width == 4
    np.testing.assert_allclose(m1.mass, m0.mass, rtol=1e-13)
    np.testing.assert_allclose(m1.volume, m0.volume, rtol=1e-13)
    assert s0.n_contacts > 0 and s1.n_contacts == s0.n_contacts
    assert s1.n_friction > 0
    # measured: 3e-17 m (positions ~0.1 m)
    np.testing.assert_allclose(x1, x0, rtol=0, atol=3e-15)


@pytest.fixture(scope="module")
def teddy(shared_data):
    return load_tet_mesh(shared_data / "meshes" / "teddy" / "teddy.vtk")


def _teddy_scene(teddy, mass="lumped", height=5e-4):
    v, t = teddy
    b = ModelBuilder()
    b.add_ground(0.0)
    lift = height - v[:, 1].min()
    body = b.add_embedded_body(v, t, resolution=LOW_CELL, translation=(0.0, lift, 0.0), youngs_modulus=1e5,
                               mass=mass)
    model, state = b.finalize()
    return b, body, model, state


def test_embedded_model_data(teddy):
    b, body, model, state = _teddy_scene(teddy)
    data = b._bodies[body].embedded
    v, t = teddy
    fine_volume = np.abs(np.linalg.det(v[t[:, 1:]] - v[t[:, :1]])).sum() / 6.0
    assert model.volume.sum() == pytest.approx(fine_volume, rel=1e-12)  # V_T: the fine volume inside each tet
    assert model.mass.sum() == pytest.approx(1000.0 * fine_volume, rel=1e-12) and model.mass.min() > 0
    assert model.mass_matrix.is_lumped
    np.testing.assert_allclose(model.surface_positions(state.x), model.collision_mesh.rest_positions, rtol=0,
                               atol=1e-14)
    assert data.report.n_outside == 0 and data.cage.n_vertices == model.n_vertices


@pytest.mark.parametrize("mass", ["lumped", "consistent"])
def test_incremental_potential_of_an_embedded_body_matches_finite_differences(teddy, mass, rng):
    _, _, model, state = _teddy_scene(teddy, mass)
    # no friction here: the solver clamps the friction Hessian to PSD (not the exact Hessian), and the elastic
    # Hessian too away from rest; friction through J is checked by the self-embedding trajectory above
    solver = make_solver(model, ContactParameters(dhat=1e-3, kappa=1e5))
    state.v = rng.normal(scale=0.1, size=state.x.shape)
    pot = solver.potential(state, 0.01)
    # a rigid shift towards the ground (F = I: the solver's PSD projection of the elastic Hessian is then exact)
    x = state.x + [1e-5, -2e-4, -1e-5]
    cand = build_candidates(model.collision_mesh, solver._surface(x), None, inflation_radius=1e-3)
    assert 0 < model.surface_positions(x)[:, 1].min() < 1e-3  # within dhat of the ground: the barrier is active
    grad, hess, _ = pot.gradient_hessian(pot.evaluation(x, cand))
    d = rng.normal(size=x.shape)
    eps = 1e-8
    fd = (pot.energy(pot.evaluation(x + eps * d, cand)) - pot.energy(pot.evaluation(x - eps * d, cand))) / (2 * eps)
    assert fd == pytest.approx(grad @ d.ravel(), rel=1e-5)
    g_p, _, _ = pot.gradient_hessian(pot.evaluation(x + eps * d, cand))
    g_m, _, _ = pot.gradient_hessian(pot.evaluation(x - eps * d, cand))
    np.testing.assert_allclose(hess @ d.ravel(), (g_p - g_m) / (2 * eps), rtol=1e-4,
                               atol=1e-5 * np.abs(hess @ d.ravel()).max())


def test_embedded_teddy_drop_stays_intersection_free(teddy):
    _, _, model, state = _teddy_scene(teddy, height=2e-3)
    state.v[:] = (0.2, -1.0, 0.0)
    solver = ImplicitEulerSolver(model, ContactParameters(dhat=1e-3, kappa=1e5), friction=FrictionParameters(mu=0.3),
                                 tol=1e-6)
    mesh = model.collision_mesh
    tk = ipctk.CollisionMesh(mesh.rest_positions, mesh.edges.astype(np.int32), mesh.faces.astype(np.int32))
    contacts = 0
    for _ in range(6):
        new = state.copy()
        stats = solver.step(state, new, None, 0.01)
        state = new
        assert stats.converged
        xs = model.surface_positions(state.x)
        assert not ipctk.has_intersections(tk, xs)
        assert xs[:, 1].min() > 0.0
        contacts = max(contacts, stats.n_contacts)
    assert contacts > 0
