"""Affine bodies (ABD, 004 §III-D): 12 unknowns per body (the 4 nodes of an enclosing tet), the orthogonality energy
kappa ||F F^T - I||^2, the full 12x12 mass of the fine body, contact on the fine surface; keyframed position control
of a whole affine body; a mixed scene of full-space, embedded and affine bodies with an obstacle and the ground."""
import ipctk
import numpy as np
import pytest

from ipcsim.model import ModelBuilder, box_tet_mesh
from ipcsim.solvers.integrator_solvers import ContactParameters, FrictionParameters, ImplicitEulerSolver

SIZE = np.array([0.1, 0.05, 0.08])  # [m], box edges


def _box():
    return box_tet_mesh(tuple(SIZE), (3, 2, 3))


def _deformation_gradient(model, x, tet=0):
    ds = np.stack([x[model.tets[tet, k]] - x[model.tets[tet, 0]] for k in (1, 2, 3)], 1)
    return ds @ model.dm_inv[tet]


def _run(model, state, solver, steps, h, check=None):
    for _ in range(steps):
        new = state.copy()
        stats = solver.step(state, new, None, h)
        state = new
        assert stats.converged
        if check is not None:
            check(state, stats)
    return state


def test_affine_body_data_and_mass_is_the_fine_body_inertia():
    v, t = _box()
    b = ModelBuilder(gravity=(0, 0, 0))
    omega = np.array([2.0, 5.0, 1.0])
    b.add_affine_body(v, t, density=500.0, stiffness=2e6, translation=(0.3, 0.2, 0.1), velocity=(0.1, 0, 0),
                      angular_velocity=omega)
    model, state = b.finalize()
    assert model.n_vertices == 4 and len(model.tets) == 1 and model.material_groups[0][0] == "ABD"
    assert model.mu[0] == 2e6 and model.lam[0] == 0.0  # kappa_a
    volume = np.prod(SIZE)
    assert model.volume[0] == pytest.approx(volume, rel=1e-12)  # V_T: the whole body
    assert not model.mass_matrix.is_lumped and model.mass_matrix.matrix.shape == (12, 12)
    np.testing.assert_allclose(model.surface_positions(state.x), model.collision_mesh.rest_positions, atol=1e-15)
    # kinetic energy of the rigid motion = 1/2 m |v|^2 + 1/2 omega . I omega, I the box's exact inertia tensor
    m = 500.0 * volume
    inertia = m / 12.0 * np.diag([SIZE[1] ** 2 + SIZE[2] ** 2, SIZE[0] ** 2 + SIZE[2] ** 2, SIZE[0] ** 2 + SIZE[1] ** 2])
    ke = 0.5 * state.v.ravel() @ (model.mass_matrix.matrix @ state.v.ravel())
    # measured: 3e-3 relative (the mass integrates 64 lumped samples per fine tet, not the exact quadratic)
    assert ke == pytest.approx(0.5 * m * 0.01 + 0.5 * omega @ inertia @ omega, rel=3e-2)
    assert model.mass.sum() == pytest.approx(m, rel=1e-12)


def test_affine_body_keeps_its_shape_in_free_flight_with_spin():
    v, t = _box()
    b = ModelBuilder(gravity=(0, 0, 0))
    b.add_affine_body(v, t, stiffness=1e7, angular_velocity=(2.0, 5.0, 1.0), velocity=(0.1, 0, 0))
    model, state = b.finalize()
    solver = ImplicitEulerSolver(model, ContactParameters(dhat=1e-3, kappa=1e4), tol=1e-6)
    d0 = np.linalg.norm(np.diff(model.surface_positions(state.x), axis=0), axis=1)
    worst = []

    def check(s, _):
        f = _deformation_gradient(model, s.x)
        worst.append(np.abs(f @ f.T - np.eye(3)).max())

    state = _run(model, state, solver, 30, 0.01, check)
    # measured: 6e-6 (kappa 1e7 Pa against the centrifugal load); without the energy F = I + t W drifts at O(1)
    assert max(worst) < 2e-4
    f = _deformation_gradient(model, state.x)
    assert np.linalg.norm(f - np.eye(3)) > 0.5  # it did turn
    d1 = np.linalg.norm(np.diff(model.surface_positions(state.x), axis=0), axis=1)
    np.testing.assert_allclose(d1, d0, rtol=2e-4)


def test_affine_bodies_collide_intersection_free_and_rest_on_the_ground():
    v, t = _box()
    b = ModelBuilder()
    b.add_ground(0.0)
    rot = np.array([[np.cos(0.4), -np.sin(0.4), 0], [np.sin(0.4), np.cos(0.4), 0], [0, 0, 1]])
    b.add_affine_body(v, t, translation=(0.0, 0.06, 0.0), rotation=rot, velocity=(0, -1.0, 0))
    b.add_affine_body(v, t, translation=(0.01, 0.16, 0.0), velocity=(0, -2.0, 0), angular_velocity=(0, 0, 4))
    model, state = b.finalize()
    solver = ImplicitEulerSolver(model, ContactParameters(dhat=1e-3, kappa=1e5), friction=FrictionParameters(mu=0.3),
                                 tol=1e-4)
    mesh = model.collision_mesh
    tk = ipctk.CollisionMesh(mesh.rest_positions, mesh.edges.astype(np.int32), mesh.faces.astype(np.int32))
    seen = []

    def check(s, stats):
        xs = model.surface_positions(s.x)
        assert not ipctk.has_intersections(tk, xs)
        assert xs[:, 1].min() > 0.0
        seen.append(stats.n_contacts)

    state = _run(model, state, solver, 40, 0.01, check)
    assert max(seen) > 0
    xs = model.surface_positions(state.x)
    bodies = mesh.body
    assert xs[bodies == 0, 1].min() < 2e-3  # the lower box landed
    assert xs[bodies == 1, 1].min() > xs[bodies == 0, 1].max() - 0.03  # the upper one stays on top of it
    for tet in (0, 1):
        f = _deformation_gradient(model, state.x, tet)
        assert np.abs(f @ f.T - np.eye(3)).max() < 1e-3  # stiff: impacts do not deform it


def test_keyframes_drive_a_whole_affine_body():
    v, t = _box()
    b = ModelBuilder()
    body = b.add_affine_body(v, t)
    times = np.array([0.0, 0.1, 0.3])
    shift = np.array([[0.0, 0.0, 0.0], [0.0, 0.02, 0.0], [0.03, 0.02, 0.0]])
    b.add_dirichlet(body, indices=range(4), keyframes=(times, shift))
    model, state = b.finalize()
    x0 = state.x.copy()
    solver = ImplicitEulerSolver(model, ContactParameters(dhat=1e-3, kappa=1e4), tol=1e-6)
    for k in range(1, 9):
        new = state.copy()
        solver.step(state, new, None, 0.05)
        state = new
        expect = np.array([np.interp(state.t, times, shift[:, d]) for d in range(3)])
        np.testing.assert_allclose(state.x - x0, np.broadcast_to(expect, x0.shape), atol=1e-14)
    with pytest.raises(ValueError, match="keyframes or velocity"):
        b.add_dirichlet(body, indices=range(4), keyframes=(times, shift), velocity=(1, 0, 0))
    with pytest.raises(ValueError, match="strictly increasing"):
        b.add_dirichlet(body, indices=range(4), keyframes=(times[::-1], shift))


def test_mixed_scene_of_full_space_embedded_and_affine_bodies_with_obstacle_and_ground():
    v, t = box_tet_mesh((0.06, 0.06, 0.06), (2, 2, 2))
    fine_v, fine_t = box_tet_mesh((0.06, 0.06, 0.06), (4, 4, 4))
    b = ModelBuilder()
    b.add_ground(0.0)
    ramp_v = np.array([[-0.3, 0.0, -0.2], [0.3, 0.0, -0.2], [0.3, 0.03, 0.2], [-0.3, 0.03, 0.2]])
    b.add_obstacle(ramp_v, np.array([[0, 2, 1], [0, 3, 2]]), translation=(0, 0.001, 0))
    b.add_body(v, t, translation=(-0.1, 0.05, 0.0), youngs_modulus=1e5)
    b.add_embedded_body(fine_v, fine_t, coarse=(v, t), translation=(0.0, 0.05, 0.0), youngs_modulus=1e5)
    b.add_affine_body(fine_v, fine_t, translation=(0.1, 0.05, 0.0), stiffness=1e7)
    b.add_affine_body(fine_v, fine_t, translation=(0.0, 0.13, 0.0), stiffness=1e7, velocity=(0, -1, 0))
    model, state = b.finalize()
    assert model.surface_map.width == 4 and len(model.tets) == len(t) * 2 + 2
    solver = ImplicitEulerSolver(model, ContactParameters(dhat=1e-3, kappa=1e5), friction=FrictionParameters(mu=0.2),
                                 tol=1e-4)
    mesh = model.collision_mesh
    tk = ipctk.CollisionMesh(mesh.rest_positions, mesh.edges.astype(np.int32), mesh.faces.astype(np.int32))
    pairs = set()

    def check(s, stats):
        xs = model.surface_positions(s.x)
        assert not ipctk.has_intersections(tk, xs)
        assert stats.min_distance > 0
        pairs.add(stats.n_contacts > 0)

    state = _run(model, state, solver, 25, 0.01, check)
    assert True in pairs
    xs = model.surface_positions(state.x)
    for body in range(3):  # the three lower bodies fell onto the ramp
        assert xs[mesh.body == body, 1].min() < 0.05 - 0.01
    # the upper affine body fell onto the embedded one and rests on it
    low, high = xs[mesh.body == 1, 1].min(), xs[mesh.body == 1, 1].max()  # both tilted by the ramp
    assert low + 0.05 < xs[mesh.body == 3, 1].min() < high + 3e-3
