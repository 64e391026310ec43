"""The lockstep polar iteration (``energies.polar_lanes``) gives, matrix by matrix, the bits and the outcome of the
single-matrix ``shape_targeting.polar_newton_into``, and the shape-targeting loops built on it give the bits of a
tet-by-tet loop over ``best_rotation_into`` and the single-tet residual and gradient helpers (serial and parallel
variants; the per-tet arithmetic in lanes of ``energies.target_lanes``)."""
import numba as nb
import numpy as np
import pytest

from ipcsim.energies import polar_lanes as pl
from ipcsim.energies import shape_targeting as st
from ipcsim.energies.svd_lanes import LANES
from ipcsim.energies.tet_blocks import deformation_gradient_into, shape_gradients_into
from ipcsim.geometry.voxel_cage import box_tet_mesh


def _rotation(rng):
    q = np.linalg.qr(rng.standard_normal((3, 3)))[0]
    return q * np.sign(np.linalg.det(q))


def _matrices(rng) -> np.ndarray:
    """(k, 3, 3): near-identity and widely spread matrices over scales 1e-6..1e6, and the cases the Newton path
    declines (inverted, flat, near-singular, zero, non-finite) or finishes at once (a rotation)."""
    cases = [np.eye(3) + 0.3 * rng.standard_normal((3, 3)) for _ in range(150)]
    for spread in (2.0, 30.0, 1e3, 1e5):
        for _ in range(20):
            sig = np.sort(np.exp(rng.uniform(-np.log(spread), 0.0, 3)))[::-1]
            cases.append(10.0 ** rng.uniform(-6, 6) * (_rotation(rng) @ np.diag(sig) @ _rotation(rng).T))
    for sig in ([2.0, 1.0, -0.5], [2.0, 1.0, 0.0], [1.0, 1.0, 1e-7], [0.0, 0.0, 0.0]):
        cases.append(_rotation(rng) @ np.diag(sig) @ _rotation(rng).T)
    cases += [_rotation(rng), np.full((3, 3), np.nan), np.diag([np.inf, 1.0, 1.0]), np.diag([1e300, 1.0, 1.0])]
    return np.array(cases)


def _lanes(ms: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(R (k, 3, 3), converged (k,)) of polar_newton_lanes over ms, LANES at a time (identity padding)."""
    work = pl.polar_workspace()
    r, ok = np.zeros_like(ms), np.zeros(len(ms), bool)
    for e0 in range(0, len(ms), LANES):
        block = np.broadcast_to(np.eye(3), (LANES, 3, 3)).copy()
        n = min(LANES, len(ms) - e0)
        block[:n] = ms[e0:e0 + n]
        work.reshape(pl.POLAR_ROWS, LANES)[pl.M_ROW:pl.M_ROW + 9] = block.reshape(LANES, 9).T
        pl.polar_newton_lanes(work)
        rows = work.reshape(pl.POLAR_ROWS, LANES)
        r[e0:e0 + n] = rows[pl.R_ROW:pl.R_ROW + 9, :n].T.reshape(n, 3, 3)
        ok[e0:e0 + n] = rows[pl.STATE_ROW, :n] == pl.CONVERGED
    return r, ok


def test_lanes_give_the_single_matrix_iteration_bit_for_bit(rng):
    ms = _matrices(rng)
    r_lanes, ok_lanes = _lanes(ms)
    r1, c = np.empty((3, 3)), np.empty((3, 3))
    for k, m in enumerate(ms):
        ok = st.polar_newton_into(m.copy(), r1, c)
        assert ok == ok_lanes[k], k
        if ok:
            assert r_lanes[k].tobytes() == r1.tobytes(), k
    # declined: the four singular-value cases, NaN, inf and the 1e300 row (its scaled det ~1e-300); a rotation done
    np.testing.assert_array_equal(ok_lanes[-8:], [False] * 4 + [True] + [False] * 3)
    assert ok_lanes[:150].all()


@pytest.mark.parametrize("config", ["generic", "near-singular", "inverted"])
def test_shape_targeting_loops_give_the_bits_of_the_tet_by_tet_loop(rng, config):
    """local_step (serial and 2-thread parallel variants), energy_and_gradient's rotations and the one-pass
    energy_gradient against a loop over best_rotation_into, on a mesh of 5 x 4 x 3 cells (a tail of tets that
    does not fill the last lane block)."""
    v, t = box_tet_mesh((1.0, 0.8, 0.6), (5, 4, 3))
    assert len(t) % LANES
    dm_inv, vol, _ = st.rest_shape(v, t)
    x = v + 0.05 * rng.standard_normal(v.shape)
    if config != "generic":  # flatten or invert tet 0 through its vertex 3
        a0, b0, c0, d0 = t[0]
        normal = np.cross(v[b0] - v[a0], v[c0] - v[a0])
        normal /= np.linalg.norm(normal)
        height = np.dot(x[d0] - x[a0], normal)
        x[d0] -= (height - 1e-7) * normal if config == "near-singular" else 1.5 * height * normal
    a = np.eye(3) + 0.2 * rng.standard_normal((len(t), 3, 3))
    a = 0.5 * (a + a.transpose(0, 2, 1))
    ref = np.empty((len(t), 3, 3))
    f, m, r = np.empty((3, 3)), np.empty((3, 3)), np.empty((3, 3))
    u, s, vv, b = np.empty((3, 3)), np.empty(3), np.empty((3, 3)), np.empty((3, 3))
    for e in range(len(t)):
        deformation_gradient_into(x, t, dm_inv, e, f)
        st.mul_target_into(f, a, e, m)
        st.best_rotation_into(m, r, u, s, vv, b)
        ref[e] = r
    args = st._arrays(x, t, dm_inv, a)
    for variant in (st._local_step_kernel.serial, st._local_step_kernel.parallel):
        out = np.empty_like(ref)
        with st.numba_threads(2):
            variant(*args, out)
        assert out.tobytes() == ref.tobytes()
    w = 1e3 * vol
    e_ref, g_ref = _energies_and_gradient(x, t, dm_inv, a, w, ref)
    for variant in (st._local_residual_kernel.serial, st._local_residual_kernel.parallel):
        rot, res, e_t = np.empty_like(ref), np.empty_like(ref), np.empty(len(t))
        with st.numba_threads(2):
            variant(*args, w, rot, res, e_t)
        g = st._scatter_gradient(args[1], args[2], w, res, len(x))  # energy_and_gradient's gradient
        assert rot.tobytes() == ref.tobytes()
        assert e_t.tobytes() == e_ref.tobytes() and g.tobytes() == g_ref.tobytes()
    assert st.energy_and_gradient(x, t, dm_inv, a, w)[0] == e_ref.sum()
    e_t, g = np.empty(len(t)), np.empty_like(x)
    st._energy_gradient_fused(*args, w, e_t, g)  # the one-thread pass of energy_gradient
    assert e_t.tobytes() == e_ref.tobytes() and g.tobytes() == g_ref.tobytes()
    ptr, slots = st.vertex_incidence(t, len(x))
    for kind in ("serial", "parallel"):  # energy_gradient on more threads: per-tet terms, then the gather
        e_t, terms, g = np.empty(len(t)), np.empty((len(t), 12)), np.empty_like(x)
        with st.numba_threads(2):
            getattr(st._energy_gradient_terms, kind)(*args, w, e_t, terms)
            getattr(st._gather_gradient, kind)(ptr, slots, terms, g)
        assert e_t.tobytes() == e_ref.tobytes() and g.tobytes() == g_ref.tobytes()


def test_the_multi_threaded_gradient_gathers_each_vertex_in_tet_order(rng, monkeypatch):
    """vertex_incidence lists each vertex's tet corners in ascending tet order (a vertex in no tet: none; a tet
    that repeats a vertex: both corners), the gather adds them as a tet-order scatter into zeros does, and
    energy_gradient's path for 2+ threads (forced on a small mesh, with and without a given incidence) gives
    the bits of the one-thread pass."""
    v, t = box_tet_mesh((1.0, 0.8, 0.6), (3, 2, 2))
    v = np.vstack([v, [[5.0, 5.0, 5.0]]])  # a vertex no tet uses
    bad = t.copy()
    bad[7, 3] = bad[7, 0]  # a tet repeating a vertex
    ptr, slots = st.vertex_incidence(bad, len(v))
    assert ptr[-1] == 4 * len(t) and ptr[-1] == ptr[-2]
    for k in range(len(v)):
        corners = slots[ptr[k]:ptr[k + 1]]
        assert np.all(np.diff(corners) > 0) and np.all(bad.ravel()[corners] == k)
    terms = rng.standard_normal((len(t), 12))
    scattered = np.zeros_like(v)
    for e in range(len(t)):
        for q in range(4):
            scattered[bad[e, q]] += terms[e, 3 * q:3 * q + 3]
    for kind in ("serial", "parallel"):
        g = np.empty_like(v)
        with st.numba_threads(2):
            getattr(st._gather_gradient, kind)(ptr, slots, terms, g)
        assert g.tobytes() == scattered.tobytes()

    dm_inv, vol, _ = st.rest_shape(v, t)
    x = v + 0.05 * rng.standard_normal(v.shape)
    a = np.eye(3) + 0.2 * rng.standard_normal((len(t), 3, 3))
    w = 1e3 * vol
    e1, g1 = st.energy_gradient(x, t, dm_inv, a, w)
    monkeypatch.setattr(st, "SERIAL_BELOW_TETS", 0)
    with st.numba_threads(2):
        assert st._threads(len(t)) == min(2, nb.config.NUMBA_NUM_THREADS)
        for incidence in (None, st.vertex_incidence(t, len(v))):
            e2, g2 = st.energy_gradient(x, t, dm_inv, a, w, incidence)
            assert e2 == e1 and g2.tobytes() == g1.tobytes()
    assert not np.any(g1[-1])


def _energies_and_gradient(x, t, dm_inv, a, w, rot):
    """(per-tet energies (m,), gradient (n, 3)) tet by tet with the helpers of a single tet, in tet order."""
    e_ref, g_ref = np.empty(len(t)), np.zeros_like(x)
    f, d, g = np.empty((3, 3)), np.empty((3, 3)), np.empty((4, 3))
    for e in range(len(t)):
        deformation_gradient_into(x, t, dm_inv, e, f)
        e_ref[e] = w[e] * st.target_residual_into(f, rot, a, e, d)
        shape_gradients_into(dm_inv, e, g)
        for q in range(4):
            for i in range(3):
                g_ref[t[e, q], i] += 2.0 * w[e] * (d[i, 0] * g[q, 0] + d[i, 1] * g[q, 1] + d[i, 2] * g[q, 2])
    return e_ref, g_ref
