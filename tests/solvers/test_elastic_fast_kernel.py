"""The fused elastic kernel of ElasticAssembler (lane-vectorised SVD, eigensystem Hessians, phase-coloured scatter into
the CSR data) equals the reference per-element path ``elastic_gradient_and_hessian_blocks(..., project=True)``
assembled with SciPy, for every material, on deformed meshes where the PSD projection clamps (compressed,
stretched, inverted tets), to 1e-12 relative."""

import numpy as np
import numba
import pytest
import scipy.sparse as sp

from ipcsim.energies.isotropic import pair_eigenvalues, sigma_hessian
from ipcsim.energies.kinematics import svd_rv
from ipcsim.energies.mat3 import svd3_rv
from ipcsim.energies.materials import MATERIALS, _invariant_derivatives
from ipcsim.energies.svd_lanes import F_ROW, LANES, SIGMA_ROW, U_ROW, V_ROW, lanes_workspace, svd3_rv_lanes
from ipcsim.model import ModelBuilder, box_tet_mesh
from ipcsim.solvers.elastic import _CHUNK, ElasticAssembler
from test_elastic_assembly import _old_elastic  # the SciPy reference assembly (same folder)

TOL = 1e-12
ISOTROPIC = ("NH", "SNH", "FCR", "LCR", "ABD")
CELL = 0.1 / 7  # edge of a grid cell of the test box


def _reference(model, x):
    """Gradient (3n,) and Hessian (3n, 3n) CSR: per-group reference blocks, np.add.at and COO -> CSR."""
    return _old_elastic(model, x)


def _rotation(rng):
    q, _ = np.linalg.qr(rng.standard_normal((3, 3)))
    return q if np.linalg.det(q) > 0 else -q


def _deformed(v, rng, stretch, noise):
    """Rotated, stretched box vertices with random vertex noise (noise [fraction of the shortest deformed cell])."""
    return v @ np.diag(stretch) @ _rotation(rng).T + noise * CELL * min(stretch) * rng.standard_normal(v.shape)


def _deformation_gradients(model, x):
    ds = np.stack([x[model.tets[:, k]] - x[model.tets[:, 0]] for k in (1, 2, 3)], axis=2)
    return ds @ model.dm_inv


def _projection_statistics(model, x, name):
    """(#tets with a clamped twist/flip eigenvalue, #tets whose sigma Hessian A is not positive definite)."""
    code = MATERIALS[name].code
    clamped = indefinite = 0
    for e, f in enumerate(_deformation_gradients(model, x)):
        f = np.ascontiguousarray(f)
        u, s, v = svd_rv(f)
        dpsi, d2psi = _invariant_derivatives(code, s.sum(), np.sum(f * f), np.linalg.det(f), model.mu[e],
                                             model.lam[e])
        pairs = [pair_eigenvalues(s, dpsi, i, j) for i, j in ((0, 1), (0, 2), (1, 2))]
        clamped += min(min(p) for p in pairs) <= 0.0
        indefinite += np.linalg.eigvalsh(sigma_hessian(s, dpsi, d2psi)).min() <= 0.0
    return clamped, indefinite


# (stretch, noise): compressed and stretched with mild noise (all J > 0, the NH states), and a strongly
# perturbed state with inverted tets (not for NH, whose energy is +inf there)
STATES = {
    "compressed": ((1.3, 0.3, 0.8), 0.12),
    "stretched": ((2.5, 1.6, 0.9), 0.12),
    "inverted": ((1.1, 0.6, 0.9), 0.45),
}


def _model(name, rng, state):
    v, t = box_tet_mesh((0.1, 0.1, 0.1), (7, 6, 5))  # 1260 tets: several chunks and phases
    b = ModelBuilder()
    b.add_body(v, t, material=name, youngs_modulus=2e5, poisson_ratio=0.45)
    model, st = b.finalize()
    stretch, noise = STATES[state]
    x = _deformed(st.x, rng, stretch, noise)
    return model, x


def _rel(a, b):
    a, b = sp.csr_matrix(a), sp.csr_matrix(b)
    return abs(a - b).max() / abs(b).max()


def _check(model, x):
    term = ElasticAssembler(model)
    g, h = term.gradient_and_hessian(x)
    g_ref, h_ref = _reference(model, x)
    assert np.all(np.isfinite(g)) and np.all(np.isfinite(h.data))
    assert np.abs(g - g_ref).max() <= TOL * np.abs(g_ref).max()
    assert _rel(h, h_ref) <= TOL
    assert abs(h - h.T).max() == 0.0  # exactly symmetric
    return term, g, h


@pytest.mark.parametrize("name,state", [(m, s) for m in sorted(MATERIALS) for s in STATES
                                        if (m, s) != ("NH", "inverted")])  # NH is +inf for inverted tets
def test_fast_kernel_equals_reference_blocks(name, state):
    rng = np.random.default_rng(10 * sorted(MATERIALS).index(name) + list(STATES).index(state))
    model, x = _model(name, rng, state)
    j = np.linalg.det(_deformation_gradients(model, x))
    assert (j.min() > 0) == (state != "inverted")
    term, _, _ = _check(model, x)
    assert len(term._phase_ptr) - 1 > 1  # the chunks really run in several phases
    if name in ISOTROPIC:  # the projection clamps twist/flip modes, and scaling blocks (eigen-decomposed)
        clamped, indefinite = _projection_statistics(model, x, name)
        assert clamped > 0 or (name, state) in (("LCR", "stretched"), ("ABD", "stretched"))  # convex when stretched
        if name != "LCR":  # LCR's sigma Hessian lam 11^T + 2 mu I is positive definite everywhere
            assert indefinite > 0 or (name, state) in (("NH", "compressed"), ("ABD", "stretched"))


def test_mixed_materials_obstacle_and_thread_count_independence(rng):
    """Six bodies of six materials plus an obstacle (vertices in no tet), deformed: equal to the reference, and
    bitwise the same result on 1 thread and on all threads (the summation order does not depend on threads)."""
    v, t = box_tet_mesh((0.05, 0.05, 0.05), (3, 4, 3))
    b = ModelBuilder()
    for k, name in enumerate(sorted(MATERIALS)):
        b.add_body(v, t, translation=(0.1 * k, 0.0, 0.0), material=name, youngs_modulus=1e5 * (k + 1))
    b.add_obstacle(np.array([[-1.0, -0.1, -1.0], [1.0, -0.1, -1.0], [0.0, -0.1, 1.0]]), np.array([[0, 1, 2]]))
    model, st = b.finalize()
    x = st.x.copy()
    body = ~model.is_obstacle
    x[body] += 0.002 * rng.standard_normal((body.sum(), 3))
    x[body] *= np.array([1.0, 0.7, 1.1])
    assert np.linalg.det(_deformation_gradients(model, x)).min() > 0  # NH is among them
    assert len(model.tets) > 2 * _CHUNK
    term, g, h = _check(model, x)
    threads = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        g1, h1 = term.gradient_and_hessian(x)
    finally:
        numba.set_num_threads(threads)
    assert np.array_equal(g, g1) and np.array_equal(h.data, h1.data)
    assert h1.indices is h.indices and h1.indptr is h.indptr
    n_body = int(body.sum())
    assert np.all(g[3 * n_body:] == 0.0) and np.all(term.pattern.diagonal[3 * n_body:] == -1)


def test_single_tet_and_rotation_only():
    """Fewer tets than LANES (padding lanes), a rigid rotation (zero gradient, clamped twist modes)."""
    b = ModelBuilder()
    b.add_body(np.array([[0.0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]]), np.array([[0, 1, 2, 3]]), material="FCR")
    model, st = b.finalize()
    x = st.x @ _rotation(np.random.default_rng(3)).T
    _, g, _ = _check(model, x)
    assert np.abs(g).max() < 1e-9


def _hard_matrices(rng):
    out = [rng.standard_normal((3, 3)) for _ in range(200)]
    out += [np.eye(3) + 1e-3 * rng.standard_normal((3, 3)) for _ in range(200)]
    choices = [0.0, 1e-300, 1e-200, 1e-14, 1e-8, 1.0, 1.0 + 1e-9, 2.0, -1.0, -1e-10, 1e10]
    for _ in range(300):
        out.append(_rotation(rng) @ np.diag(rng.choice(choices, 3)) @ _rotation(rng).T)
    out += [np.zeros((3, 3)), np.eye(3), -np.eye(3), np.diag([1.0, 1.0, -1.0]), np.diag([0.0, 0.0, 3.0]),
            np.outer([1.0, 2.0, 3.0], [4.0, 5.0, 6.0]), 1e150 * rng.standard_normal((3, 3)),
            1e-150 * rng.standard_normal((3, 3))]
    return out


def test_svd_lanes_bitwise_equal_to_svd3_rv(rng):
    """svd3_rv_lanes gives exactly svd3_rv's bits in every lane, also for zero, rank-deficient, repeated,
    tiny and huge singular values mixed in one batch."""
    mats = _hard_matrices(rng)
    order = rng.permutation(len(mats))
    work = lanes_workspace()
    for start in range(0, len(mats), LANES):
        batch = [mats[i] for i in order[start:start + LANES]]
        for l in range(LANES):
            f = batch[l] if l < len(batch) else np.eye(3)
            work[(F_ROW + np.arange(9)) * LANES + l] = f.ravel()
        svd3_rv_lanes(work)
        for l, f in enumerate(batch):
            u, s, v = svd3_rv(np.ascontiguousarray(f))
            assert np.array_equal(work[(U_ROW + np.arange(9)) * LANES + l], u.ravel())
            assert np.array_equal(work[(SIGMA_ROW + np.arange(3)) * LANES + l], s)
            assert np.array_equal(work[(V_ROW + np.arange(9)) * LANES + l], v.ravel())


@pytest.mark.parametrize("name,state", [(m, s) for m in sorted(MATERIALS) for s in STATES
                                        if (m, s) != ("NH", "inverted")])
def test_energy_equals_the_per_material_reference(name, state, monkeypatch):
    """ElasticAssembler.energy (lane SVDs, chunk sums) equals materials.elastic_energy to round-off, and gives the
    same bits on one thread and on all threads (the parallel path forced on this small mesh)."""
    from ipcsim.energies.materials import elastic_energy
    from ipcsim.solvers import elastic

    rng = np.random.default_rng(7 + 10 * sorted(MATERIALS).index(name) + list(STATES).index(state))
    model, x = _model(name, rng, state)
    term = ElasticAssembler(model)
    ref = sum(elastic_energy(n, x, model.tets[i], model.dm_inv[i], model.volume[i], model.mu[i], model.lam[i])
              for n, i in model.material_groups)
    e = term.energy(x)
    assert abs(e - ref) <= 1e-13 * abs(ref)
    monkeypatch.setattr(elastic, "SERIAL_BELOW_TETS", 0)
    threads = numba.get_num_threads()
    try:
        numba.set_num_threads(max(2, threads) if numba.config.NUMBA_NUM_THREADS > 1 else 1)
        e_parallel = term.energy(x)
    finally:
        numba.set_num_threads(threads)
    assert e_parallel == e


def test_energy_is_infinite_for_an_inverted_neo_hookean_tet(rng):
    model, x = _model("NH", rng, "inverted")
    assert ElasticAssembler(model).energy(x) == np.inf
