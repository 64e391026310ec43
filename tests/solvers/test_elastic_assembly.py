"""The fixed-pattern elastic assembly and the free-coordinate Newton matrix equal the plain SciPy path
(COO -> CSR, sums, ``H[free][:, free]``) to round-off, with and without contact."""

import numpy as np
import pytest
import scipy.sparse as sp

from ipcsim.contact.broad_phase import build_candidates
from ipcsim.energies.materials import elastic_gradient_and_hessian_blocks
from ipcsim.model import ModelBuilder, box_tet_mesh
from ipcsim.solvers.elastic import ElasticAssembler
from ipcsim.solvers.integrator_solvers import ContactParameters, FrictionParameters, ImplicitEulerSolver
from ipcsim.solvers.reduction import FreePattern, SystemMatrix

DHAT = 1e-3
H = 0.01


def _scene(rng):
    """NH box resting 0.4 dhat above an FCR box (clamped bottom), a triangle obstacle under both, random
    deformation: contact between the bodies (body-body stencils) and with the obstacle (prescribed vertices)."""
    v, t = box_tet_mesh((0.1, 0.1, 0.1), (3, 3, 3))
    b = ModelBuilder()
    b.add_body(v, t, material="FCR", youngs_modulus=2e5, fixed=v[:, 1] <= 1e-9)
    b.add_body(v, t, translation=(0.02, 0.1 + 0.4 * DHAT, 0.01), material="NH")
    sq = np.array([[-1.0, -0.4 * DHAT, -1.0], [1.0, -0.4 * DHAT, -1.0], [1.0, -0.4 * DHAT, 1.0],
                   [-1.0, -0.4 * DHAT, 1.0]])
    b.add_obstacle(sq, np.array([[0, 2, 1], [0, 3, 2]]))
    model, state = b.finalize()
    x = state.x.copy()
    body = ~model.is_obstacle
    x[body] += rng.normal(scale=2e-5, size=(body.sum(), 3))
    return model, state, x


def _old_elastic(model, x):
    """The assembly before the fixed pattern: per-group blocks, np.add.at, COO -> CSR."""
    n3 = 3 * model.n_vertices
    grad = np.zeros(n3)
    data, rows, cols = [], [], []
    for name, idx in model.material_groups:
        t = model.tets[idx]
        r = (3 * t[:, :, None] + np.arange(3)).reshape(len(t), 12)
        g, h = elastic_gradient_and_hessian_blocks(name, x, t, model.dm_inv[idx], model.volume[idx],
                                                   model.mu[idx], model.lam[idx], True, True)
        np.add.at(grad, r.ravel(), g.ravel())
        data.append(h.ravel())
        rows.append(np.repeat(r, 12, axis=1).ravel())
        cols.append(np.tile(r, (1, 12)).ravel())
    return grad, sp.csr_matrix((np.concatenate(data), (np.concatenate(rows), np.concatenate(cols))),
                               shape=(n3, n3))


def _rel(a, b):
    a, b = sp.csr_matrix(a), sp.csr_matrix(b)
    return abs(a - b).max() / abs(b).max()


def test_fixed_pattern_elastic_assembly_equals_coo_path(rng):
    model, _, x = _scene(rng)
    assert {name for name, _ in model.material_groups} == {"FCR", "NH"}
    term = ElasticAssembler(model)
    g_old, h_old = _old_elastic(model, x)
    g, h = term.gradient_and_hessian(x)
    assert h.shape == h_old.shape and h.has_canonical_format
    np.testing.assert_allclose(g, g_old, rtol=0, atol=1e-12 * np.abs(g_old).max())
    assert _rel(h, h_old) <= 1e-12
    h_old.eliminate_zeros()
    assert h.nnz == h_old.nnz  # no spurious entries: the pattern is exactly the tets' vertex pairs
    # the pattern is shared by every call (identity), the values follow x
    g2, h2 = term.gradient_and_hessian(x * 1.001)
    assert h2.indices is h.indices and h2.indptr is h.indptr
    assert _rel(h2, _old_elastic(model, x * 1.001)[1]) <= 1e-12
    # obstacle vertices (no tet) have empty rows; every body coordinate has its diagonal entry
    n_body = int((~model.is_obstacle).sum())
    assert np.all(term.pattern.diagonal[3 * n_body:] == -1)
    d = term.pattern.diagonal[:3 * n_body]
    np.testing.assert_array_equal(h.data[d], h.diagonal()[:3 * n_body])


def _newton_matrix(rng, friction: bool):
    model, state, x = _scene(rng)
    solver = ImplicitEulerSolver(model, ContactParameters(dhat=DHAT, kappa=1e5),
                                 friction=FrictionParameters(mu=0.3) if friction else None, sanity_check=False)
    state.v = (x + 1e-4 - state.x) / H  # the predictor x_hat = x + 1e-4
    pot = solver.potential(state, H)  # friction (if any) lagged at state.x
    cand = build_candidates(model.collision_mesh, solver._surface(x), None, inflation_radius=DHAT)
    grad, hess, _ = pot.gradient_hessian(pot.evaluation(x, cand))
    free = ~np.repeat(model.fixed, 3)
    return solver, hess, free


@pytest.mark.parametrize("friction", [False, True])
def test_free_block_equals_scipy_slicing_with_contact(rng, friction):
    solver, hess, free = _newton_matrix(rng, friction)
    assert isinstance(hess, SystemMatrix)
    assert len(hess.surface_terms) == (2 if friction else 1)  # barrier (+ friction)
    full = hess.tocsr()
    ref = full[free][:, free]
    a = hess.free_block(free)
    assert a.shape == ref.shape and a.has_canonical_format
    assert _rel(a, ref) <= 1e-12
    # contact between the two bodies adds entries outside the elastic pattern: the pattern grew
    assert solver.patterns.pattern.n_surface_entries > 0
    # products: H v (full) and the prescribed coupling H_fp p_p
    v = rng.normal(size=full.shape[0])
    np.testing.assert_allclose(hess @ v, full @ v, rtol=1e-12, atol=1e-12 * np.abs(full @ v).max())
    p = np.where(free, 0.0, v)
    ref_c = full[free][:, ~free] @ p[~free]
    np.testing.assert_allclose(hess.prescribed_coupling(free, p), ref_c, rtol=1e-12,
                               atol=1e-12 * np.abs(ref_c).max())


def test_free_block_without_contact_and_pattern_reuse(rng):
    solver, hess, free = _newton_matrix(rng, False)
    e = hess.elastic
    plain = SystemMatrix(solver.model.surface_map, e, hess.elastic_weight, hess.diagonal_term,
                         solver.patterns)  # no contact term
    a0 = plain.free_block(free)
    ref0 = plain.tocsr()[free][:, free]
    assert _rel(a0, ref0) <= 1e-12
    pat0 = solver.patterns.pattern
    assert pat0.n_surface_entries == 0
    # same mask and terms again: the very same pattern object (what lets the factorisation reuse its analysis)
    a1 = plain.free_block(free)
    assert a1.indices is a0.indices and solver.patterns.pattern is pat0
    # contact entries outside the pattern: it grows; afterwards a contact-free matrix keeps the grown pattern
    a2 = hess.free_block(free)
    assert a2.nnz > a0.nnz and a2.indices is not a0.indices
    a3 = plain.free_block(free)
    assert a3.indices is a2.indices
    assert _rel(a3, ref0) <= 1e-12  # stale contact entries hold zeros
    # another free mask (one more vertex prescribed): a new pattern, still exact
    free2 = free.copy()
    free2[np.flatnonzero(free)[:3]] = False
    a4 = hess.free_block(free2)
    assert _rel(a4, hess.tocsr()[free2][:, free2]) <= 1e-12


@pytest.mark.parametrize("same_pattern", [True, False])
def test_full_coordinate_term(rng, same_pattern):
    solver, hess, free = _newton_matrix(rng, False)
    e = hess.elastic
    if same_pattern:  # e.g. lagged Rayleigh damping c K_t (a copy: identity differs, values of the pattern agree)
        extra = (0.3 * e).tocsr()
    else:             # an arbitrary symmetric coupling between two free coordinates far apart
        i, j = np.flatnonzero(free)[[0, -1]]
        extra = sp.csr_matrix(([2.0, 0.5, 0.5, 2.0], ([i, i, j, j], [i, j, i, j])), shape=e.shape)
    hess.add_full(1.0, extra)
    full = hess.tocsr()
    assert _rel(hess.free_block(free), full[free][:, free]) <= 1e-12
    v = rng.normal(size=full.shape[0])
    np.testing.assert_allclose(hess @ v, full @ v, rtol=1e-12, atol=1e-12 * np.abs(full @ v).max())


def test_grown_free_pattern_equals_pattern_built_from_scratch():
    from ipcsim.solvers.reduction import FreePattern

    rng = np.random.default_rng(7)
    e = ElasticAssembler(_scene(rng)[0]).pattern
    n3 = 3 * e.n_vertices
    free = rng.random(n3) > 0.2
    nf = int(free.sum())
    r1, c1 = rng.integers(0, nf, 300), rng.integers(0, nf, 300)
    r2, c2 = rng.integers(0, nf, 200), rng.integers(0, nf, 200)
    r2[:50], c2[:50] = r1[:50], c1[:50]                            # some entries seen before
    grown = FreePattern(e.indptr, e.indices, free, r1, c1).grown(r2, c2)
    ref = FreePattern(e.indptr, e.indices, free, np.concatenate([r1, r2]), np.concatenate([c1, c2]))
    assert grown.n_surface_entries == ref.n_surface_entries > 0
    for name in ("indptr", "indices", "elastic_src", "elastic_dst", "diagonal", "_keys"):
        a, b = getattr(grown, name), getattr(ref, name)
        assert a.dtype == b.dtype and np.array_equal(a, b), name


@pytest.mark.parametrize("friction", [False, True])
def test_grown_pattern_carries_the_fill_bit_for_bit(rng, friction):
    """A fill that misses entries grows the pattern and carries its data over with the missed values added
    (``FreePattern.carried``): the same bits as filling the grown pattern afresh, without the second fill."""
    solver, hess, free = _newton_matrix(rng, friction)
    solver.patterns.clear()
    base = FreePattern(hess.elastic.indptr, hess.elastic.indices, free)
    solver.patterns.pattern = base
    a = hess.free_block(free)                 # misses every contact entry of the base pattern: grows once
    grown = solver.patterns.pattern
    assert grown is not base and grown.growths == 1 and grown.n_surface_entries > 0
    fresh, miss = hess._fill(grown)
    assert miss is None
    assert np.array_equal(a.data, fresh)      # bit for bit
    assert _rel(a, hess.tocsr()[free][:, free]) <= 1e-12


def test_pattern_rebuilt_after_max_growths(rng):
    from ipcsim.solvers import reduction

    solver, hess, free = _newton_matrix(rng, True)
    base = FreePattern(hess.elastic.indptr, hess.elastic.indices, free)
    base.growths = reduction.MAX_GROWTHS      # as if grown that often: the next miss rebuilds from the base
    solver.patterns.pattern = base
    a = hess.free_block(free)
    rebuilt = solver.patterns.pattern
    assert rebuilt.growths == 0 and rebuilt.n_surface_entries > 0
    assert _rel(a, hess.tocsr()[free][:, free]) <= 1e-12


@pytest.mark.parametrize("material", ["NH", "SNH", "FCR", "LCR", "LE", "ABD"])
def test_one_pass_energy_equals_the_energy_kernel(rng, material):
    """``gradient_hessian_energy``: the gradient and Hessian of ``gradient_and_hessian`` and, from the same pass,
    the energy of ``energy`` bit for bit (the Newton loop compares it with line-search energies)."""
    v, t = box_tet_mesh((0.1, 0.1, 0.1), (3, 3, 3))
    b = ModelBuilder()
    b.add_body(v, t, material=material, youngs_modulus=1e5)
    model, state = b.finalize()
    x = state.x + rng.normal(scale=3e-3, size=state.x.shape)
    term = ElasticAssembler(model)
    g, h, psi = term.gradient_hessian_energy(x)
    g0, h0 = term.gradient_and_hessian(x)
    assert psi == term.energy(x) and psi > 0.0
    assert np.array_equal(g, g0) and np.array_equal(h.data, h0.data)


def test_a_solve_starts_with_one_elastic_pass(rng):
    """The start of a Newton solve asks for the energy, then the derivatives, at the same point: the elastic
    term answers both from one pass (the derivatives cached on the evaluation), not from two."""
    model, state, x = _scene(rng)
    solver = ImplicitEulerSolver(model, ContactParameters(dhat=DHAT, kappa=1e5), sanity_check=False)
    pot = solver.potential(state, H)
    elastic = solver.elastic
    calls = {"energy": 0, "gradient_and_hessian": 0, "gradient_hessian_energy": 0}
    for name in calls:
        original = getattr(elastic, name)

        def counted(*args, _name=name, _original=original):
            calls[_name] += 1
            return _original(*args)
        setattr(elastic, name, counted)
    ev = pot.evaluation(x)
    ev.derivatives_follow = True
    e = pot.energy(ev)
    grad, _, _ = pot.gradient_hessian(ev)
    assert calls == {"energy": 0, "gradient_and_hessian": 0, "gradient_hessian_energy": 1}
    plain = pot.evaluation(x)                 # without the flag: the energy kernel, then the derivatives
    assert pot.energy(plain) == e
    assert np.array_equal(pot.gradient_hessian(plain)[0], grad)
    assert calls == {"energy": 1, "gradient_and_hessian": 1, "gradient_hessian_energy": 2}
