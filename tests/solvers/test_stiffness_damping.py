"""Stiffness-proportional (Rayleigh) damping per body (``ipcsim.solvers.stiffness_damping``): the term against
finite differences (degenerate states included) and its definition, per-body isolation (full, embedded, affine
bodies), its place in the incremental potential and the stats' energy, and a plucked cantilever whose fundamental
mode decays at the rate linear theory gives for beta."""
import numpy as np
import pytest

from ipcsim.model import ModelBuilder, box_tet_mesh
from ipcsim.solvers.integrator_solvers import ImplicitEulerSolver, make_solver
from ipcsim.solvers.stiffness_damping import StiffnessDamping
from ipcsim.solvers.terms import IncrementalPotential, StiffnessDampingTerm

H = 0.01
BETA = 0.05  # [s], Drake's and the Embedded IPC paper's value


def _two_cubes(beta_a=BETA, beta_b=0.0, material="NH"):
    """Two 10 cm cubes side by side, body 0 damped with beta_a [s], body 1 with beta_b."""
    v, t = box_tet_mesh((0.1, 0.1, 0.1), (2, 2, 2))
    b = ModelBuilder(gravity=(0.0, 0.0, 0.0))
    b.add_body(v, t, youngs_modulus=1e5, damping_stiffness=beta_a, material=material)
    b.add_body(v, t, translation=(0.3, 0.0, 0.0), youngs_modulus=2e5, damping_stiffness=beta_b, material=material)
    return b.finalize()


def _fd_check(damping, x, rng, eps=1e-6):
    """Energy, gradient and Hessian of a LaggedRayleighDamping at x (n, 3) [m] against central differences."""
    grad, hess = damping.gradient(x), damping.hessian()
    for _ in range(3):
        d = rng.normal(size=x.shape)
        fd = (damping.energy(x + eps * d) - damping.energy(x - eps * d)) / (2 * eps)
        assert fd == pytest.approx(grad @ d.ravel(), rel=1e-6, abs=1e-12 * np.abs(grad).max(initial=1.0))
        fd_h = (damping.gradient(x + eps * d) - damping.gradient(x - eps * d)) / (2 * eps)
        np.testing.assert_allclose(hess @ d.ravel(), fd_h, rtol=1e-7, atol=1e-9 * np.abs(fd_h).max())


@pytest.mark.parametrize("material", ["NH", "LCR", "FCR", "SNH", "LE"])
def test_stiffness_damping_term_matches_finite_differences_and_its_definition(material, rng):
    model, _ = _two_cubes(material=material)
    n0 = len(model.rest_positions) // 2
    x_t = model.rest_positions + rng.normal(scale=3e-3, size=model.rest_positions.shape)
    x_t[0] = x_t[1] + [0.0, 0.0, 1e-7]  # a nearly degenerate (flattened) tet at the step start
    term = StiffnessDamping(model).damping(x_t, H, H * H)
    # definition: 1/2 (w_p / h) dx^T K_beta dx with K_beta = beta x the PSD elastic Hessian of body 0 alone
    _, k = ImplicitEulerSolver(_two_cubes(beta_a=0.0, material=material)[0]).elastic.gradient_and_hessian(x_t)
    k = k.toarray()
    k[3 * n0:, :] = 0.0
    k[:, 3 * n0:] = 0.0
    x = x_t + rng.normal(scale=1e-3, size=x_t.shape)
    dx = (x - x_t).ravel()
    assert term.energy(x) == pytest.approx(0.5 * H * BETA * dx @ k @ dx, rel=1e-10)
    np.testing.assert_allclose(term.hessian().toarray(), H * BETA * k, rtol=0, atol=1e-12 * np.abs(k).max())
    assert term.energy(x_t) == 0.0 and not np.any(term.gradient(x_t))  # no motion, no damping
    _fd_check(term, x, rng)
    _fd_check(term, x_t, rng)  # at zero displacement
    hess = term.hessian().toarray()
    assert np.linalg.eigvalsh(hess).min() > -1e-12 * np.abs(hess).max()
    # rigid translations are not damped
    shift = np.tile([0.3, -0.2, 0.1], (len(x_t), 1)).ravel()
    assert np.abs(hess @ shift).max() < 1e-10 * np.abs(hess).max()


def test_each_body_gets_its_own_beta():
    model, _ = _two_cubes(beta_a=0.05, beta_b=0.02)
    x_t = model.rest_positions * 1.01
    k_both = StiffnessDamping(model).matrix(x_t).toarray()
    k_a = StiffnessDamping(_two_cubes(0.05, 0.0)[0]).matrix(x_t).toarray()
    k_b = StiffnessDamping(_two_cubes(0.0, 0.02)[0]).matrix(x_t).toarray()
    np.testing.assert_allclose(k_both, k_a + k_b, rtol=0, atol=1e-12 * np.abs(k_both).max())
    assert not StiffnessDamping(_two_cubes(0.0, 0.0)[0]).enabled



def test_row_scaled_elastic_hessian_equals_the_per_tet_sum_and_keeps_the_elastic_pattern(rng):
    """Bodies damped as wholes: K_beta is the elastic Hessian with each row scaled by its node's beta, on the
    elastic pattern; per-tet betas that differ within a body take the separate assembler, with the same result."""
    import dataclasses

    from ipcsim.solvers.elastic import ElasticAssembler
    from ipcsim.solvers.stiffness_damping import damped_model, node_damping

    model, _ = _two_cubes(beta_a=0.05, beta_b=0.02)
    x_t = model.rest_positions + rng.normal(scale=3e-3, size=model.rest_positions.shape)
    damping = StiffnessDamping(model)
    assert node_damping(model) is not None
    k_rows = damping.matrix(x_t)
    k_tets = ElasticAssembler(damped_model(model)).gradient_and_hessian(x_t)[1]
    # measured: 3.4e-16 of the largest entry (the products beta (mu K) and (beta mu) K round differently)
    np.testing.assert_allclose(k_rows.toarray(), k_tets.toarray(), rtol=0, atol=3e-14 * abs(k_tets).max())
    pat = damping.elastic.pattern
    assert np.array_equal(k_rows.indptr, pat.indptr) and np.array_equal(k_rows.indices, pat.indices)
    # one tet of body 0 with another beta: no per-node beta, the per-tet assembler
    beta = np.array(model.damping_stiffness, np.float64)
    beta[0] = 0.1
    mixed = dataclasses.replace(model, damping_stiffness=beta)
    assert node_damping(mixed) is None
    k_mixed = StiffnessDamping(mixed).matrix(x_t).toarray()
    k_def = ElasticAssembler(damped_model(mixed)).gradient_and_hessian(x_t)[1].toarray()
    np.testing.assert_array_equal(k_mixed, k_def)
    assert not np.allclose(k_mixed, k_rows.toarray())


def test_damping_reads_the_last_newton_hessian_with_the_bits_of_a_fresh_one(rng):
    """A step's K_beta at x^t is the previous step's last elastic Hessian when that was assembled at x^t (no
    second assembly), bit for bit what a fresh solver computes there."""
    model, state = _two_cubes()
    solver = make_solver(model, tol=1e-8)
    state.v = rng.normal(scale=0.05, size=state.v.shape)
    calls = []
    assemble = solver.elastic.gradient_hessian_energy
    solver.elastic.gradient_hessian_energy = lambda x: calls.append(1) or assemble(x)
    for _ in range(3):
        new = state.copy()
        solver.step(state, new, None, H)
        state = new
    before = len(calls)
    k_reused = solver.stiffness_damping.matrix(state.x)
    k_fresh = make_solver(model, tol=1e-8).stiffness_damping.matrix(state.x)
    assert len(calls) == before  # the last Newton direction of the step was computed at state.x
    np.testing.assert_array_equal(k_reused.data, k_fresh.data)
    assert solver.elastic.hessian_at(state.x + 1e-9) is not solver.elastic.hessian_at(state.x)

def test_embedded_body_damps_its_cage_and_affine_body_spares_rigid_motion(rng):
    v, t = box_tet_mesh((0.1, 0.1, 0.1), (3, 3, 3))
    b = ModelBuilder(gravity=(0.0, 0.0, 0.0))
    cage = box_tet_mesh((0.12, 0.12, 0.12), (1, 1, 1))
    b.add_embedded_body(v, t, coarse=(cage[0] - 0.01, cage[1]), damping_stiffness=BETA)
    b.add_affine_body(v, t, translation=(0.3, 0.0, 0.0), damping_stiffness=BETA)
    model, state = b.finalize()
    n_cage = len(cage[0])
    undamped = ModelBuilder(gravity=(0.0, 0.0, 0.0))
    undamped.add_embedded_body(v, t, coarse=(cage[0] - 0.01, cage[1]))
    undamped.add_affine_body(v, t, translation=(0.3, 0.0, 0.0))
    x_t = state.x + rng.normal(scale=1e-3, size=state.x.shape)
    _, k = ImplicitEulerSolver(undamped.finalize()[0]).elastic.gradient_and_hessian(x_t)
    k_beta = StiffnessDamping(model).matrix(x_t).toarray()
    np.testing.assert_allclose(k_beta, BETA * k.toarray(), rtol=0, atol=1e-12 * np.abs(k_beta).max())
    # the affine body at rest: its 12 dofs' stiffness annihilates translations and infinitesimal rotations
    k_aff = StiffnessDamping(model).matrix(state.x).toarray()[3 * n_cage:3 * n_cage + 12, 3 * n_cage:3 * n_cage + 12]
    nodes = state.x[n_cage:n_cage + 4]
    rigid = [np.tile(e, 4) for e in np.eye(3)] + [np.cross(w, nodes - nodes.mean(0)).ravel() for w in np.eye(3)]
    for mode in rigid:
        assert np.abs(k_aff @ mode).max() < 1e-9 * np.abs(k_aff).max()
    assert np.abs(k_aff).max() > 0  # but its stretch is damped


@pytest.mark.parametrize("integrator", ["implicit_euler", "newmark"])
def test_stiffness_damping_in_the_incremental_potential_and_the_stats_energy(integrator, rng):
    model, state = _two_cubes()
    solver = make_solver(model, integrator=integrator, tol=1e-8)
    state.v = rng.normal(scale=0.05, size=state.v.shape)
    potential = solver.potential(state, H)
    damped = potential.term(StiffnessDampingTerm)
    assert damped is not None
    undamped = IncrementalPotential([t for t in potential.terms if t is not damped], potential.surface_map)
    w_p = solver.integrator.weights(H)[1]
    x = state.x + rng.normal(scale=1e-3, size=state.x.shape)
    k = StiffnessDamping(model).matrix(state.x)
    dx = (x - state.x).ravel()
    e_beta = 0.5 * w_p / H * dx @ (k @ dx)
    assert potential.energy(potential.evaluation(x)) - undamped.energy(undamped.evaluation(x)) == pytest.approx(
        e_beta, rel=1e-8)
    g_d, h_d, _ = potential.gradient_hessian(potential.evaluation(x))
    g_u, h_u, _ = undamped.gradient_hessian(undamped.evaluation(x))
    np.testing.assert_allclose(g_d - g_u, w_p / H * (k @ dx), rtol=1e-9, atol=1e-12 * np.abs(g_d).max())
    np.testing.assert_allclose(h_d.tocsr().toarray() - h_u.tocsr().toarray(), w_p / H * k.toarray(), rtol=1e-9,
                               atol=1e-12 * np.abs(h_d.tocsr().toarray()).max())
    # the step's reported energy is E at its result, damping included
    new = state.copy()
    stats = solver.step(state, new, None, H)
    ev = potential.evaluation(new.x)
    assert stats.energy == pytest.approx(potential.energy(ev), rel=1e-10)
    assert damped.value(ev) > 0.0


def test_stiffness_damping_is_rejected_where_it_cannot_act():
    with pytest.raises(ValueError, match="dynamic integrator"):
        make_solver(_two_cubes()[0], quasi_static=True)
    v, t = box_tet_mesh((0.1, 0.1, 0.1), (1, 1, 1))
    for bad in (-0.1, float("nan"), "x"):
        with pytest.raises(ValueError, match="damping_stiffness"):
            ModelBuilder().add_body(v, t, damping_stiffness=bad)


# ------------------------------------------------------------------ the plucked cantilever
L, T, W = 0.3, 0.02, 0.06  # beam length (x), thickness (y, the bending direction) and width (z) [m]
E_BEAM = 1e7  # [Pa]: fundamental mode omega ~ 54 rad/s on this mesh
H_BEAM = 2e-3  # [s]
BETA_BEAM = 2e-3  # [s]: zeta = beta omega / 2 ~ 0.054


def _plucked_tip(beta):
    """Tip deflection y(t) (k,) [m] of a cantilever (clamped at x = 0) released from its static-deflection shape
    with a 1 mm tip amplitude (mostly the fundamental mode; the wide z side keeps the bending in y), one per step."""
    v, t = box_tet_mesh((L, T, W), (10, 1, 2))
    b = ModelBuilder(gravity=(0.0, 0.0, 0.0))
    b.add_body(v, t, youngs_modulus=E_BEAM, poisson_ratio=0.3, fixed=v[:, 0] < 1e-9, damping_stiffness=beta)
    model, state = b.finalize()
    s = model.rest_positions[:, 0] / L
    state.x[:, 1] += 1e-3 * s * s * (3.0 - s) / 2.0
    solver = ImplicitEulerSolver(model, tol=1e-4)  # 3.4e-5 m/s: 0.07 % of the tip's velocity amplitude
    tip = model.rest_positions[:, 0] > L - 1e-9
    y = []
    for _ in range(310):
        new = state.copy()
        assert solver.step(state, new, None, H_BEAM).converged
        state = new
        y.append(state.x[tip, 1].mean() - model.rest_positions[tip, 1].mean())
    return np.array(y)


def _decay(y, h):
    """(omega_d [rad/s], decay rate sigma [1/s]) from the positive peaks of y (parabolic interpolation), the first
    peak left out (higher modes still ring there)."""
    times, amps = [], []
    for k in range(1, len(y) - 1):
        if y[k] > 0 and y[k - 1] < y[k] >= y[k + 1]:
            c = 0.5 * (y[k - 1] - y[k + 1]) / (y[k - 1] - 2 * y[k] + y[k + 1])
            times.append((k + 1 + c) * h)
            amps.append(y[k] - 0.25 * (y[k - 1] - y[k + 1]) * c)
    times, amps = np.array(times[1:]), np.array(amps[1:])
    assert len(times) >= 3
    return 2 * np.pi / np.mean(np.diff(times)), -np.polyfit(times, np.log(amps), 1)[0]


def _backward_euler_decay(omega, beta, h):
    """Decay rate [1/s] of q'' + beta omega^2 q' + omega^2 q = 0 under backward Euler with step h: the roots z of
    (1 + h^2 omega^2 + beta omega^2 h) z^2 - (2 + beta omega^2 h) z + 1 = 0, sigma = -ln|z| / h."""
    z = np.roots([1 + (h * omega) ** 2 + beta * omega ** 2 * h, -(2 + beta * omega ** 2 * h), 1.0])[0]
    return -np.log(abs(z)) / h


def test_plucked_beam_decays_at_the_linear_theory_rate():
    omega0, sigma0 = _decay(_plucked_tip(0.0), H_BEAM)
    omega1, sigma1 = _decay(_plucked_tip(BETA_BEAM), H_BEAM)
    # continuous theory: beta adds zeta omega = beta omega^2 / 2 to the decay rate of the undamped run (whose own
    # decay is implicit Euler's, ~ omega^2 h / 2). Measured: 2.896 against 2.915 1/s (-0.6 %; -0.2 % at h = 1e-3)
    assert sigma1 - sigma0 == pytest.approx(BETA_BEAM * omega0 ** 2 / 2, rel=0.05)
    # and both runs decay as backward Euler of the damped mode does: measured 2.915 vs 2.898 (+0.6 %) undamped,
    # 5.812 vs 5.763 (+0.85 %) damped
    assert sigma0 == pytest.approx(_backward_euler_decay(omega0, 0.0, H_BEAM), rel=0.05)
    assert sigma1 == pytest.approx(_backward_euler_decay(omega0, BETA_BEAM, H_BEAM), rel=0.05)
    assert omega1 == pytest.approx(omega0 * np.sqrt(1 - (BETA_BEAM * omega0 / 2) ** 2), rel=0.01)  # measured 0.6 %
