import numpy as np
import pytest

from ipcsim.linalg.sparse import UPPER_BLOCK, assemble_block_csr, assemble_symmetric_block_csr


def _random_stencils(rng, m, n_vertices):
    nverts = rng.integers(1, 5, m)
    verts = np.full((m, 4), -1, np.int64)
    for s in range(m):
        verts[s, :nverts[s]] = rng.choice(n_vertices, nverts[s], replace=False)
    return verts, nverts


def _dense(verts, nverts, local, n_vertices):
    out = np.zeros((3 * n_vertices, 3 * n_vertices))
    for s in range(len(nverts)):
        idx = (3 * verts[s, :nverts[s], None] + np.arange(3)).ravel()
        k3 = 3 * nverts[s]
        out[np.ix_(idx, idx)] += local[s, :k3, :k3]
    return out


@pytest.mark.parametrize("n_vertices,m", [(5, 40), (30, 200), (200, 50)])
def test_assemble_block_csr_matches_dense_scatter(rng, n_vertices, m):
    verts, nverts = _random_stencils(rng, m, n_vertices)  # few vertices: many duplicate blocks per row
    local = rng.standard_normal((m, 12, 12))
    got = assemble_block_csr(verts, nverts, local, n_vertices)
    assert got.has_canonical_format
    np.testing.assert_allclose(got.toarray(), _dense(verts, nverts, local, n_vertices), rtol=0, atol=1e-12)
    for r in range(got.shape[0]):  # sorted, distinct column indices
        cols = got.indices[got.indptr[r]:got.indptr[r + 1]]
        assert np.all(np.diff(cols) > 0)


@pytest.mark.parametrize("n_vertices,m", [(5, 40), (30, 200)])
def test_assemble_symmetric_block_csr_matches_dense_scatter(rng, n_vertices, m):
    verts, nverts = _random_stencils(rng, m, n_vertices)
    local = rng.standard_normal((m, 12, 12))
    local = local + local.transpose(0, 2, 1)
    upper = np.full((m, 10, 3, 3), np.nan)  # blocks past a stencil's size must never be read
    for s in range(m):
        for a in range(nverts[s]):
            for b in range(a, nverts[s]):
                upper[s, UPPER_BLOCK[a, b]] = local[s, 3 * a:3 * a + 3, 3 * b:3 * b + 3]
    got = assemble_symmetric_block_csr(verts, nverts, upper, n_vertices)
    ref = _dense(verts, nverts, local, n_vertices)
    np.testing.assert_allclose(got.toarray(), ref, rtol=0, atol=1e-12)
    assert (abs(got - got.T)).max() == 0.0


def test_bad_input():
    verts = np.zeros((2, 4), np.int64)
    with pytest.raises(ValueError, match="same length"):
        assemble_block_csr(verts, np.array([1, 1, 1]), np.zeros((2, 12, 12)), 3)
    with pytest.raises(ValueError, match="nverts"):
        assemble_block_csr(verts, np.array([0, 1]), np.zeros((2, 12, 12)), 3)
    with pytest.raises(ValueError, match="upper"):
        assemble_symmetric_block_csr(verts, np.array([1, 1]), np.zeros((2, 12, 12)), 3)
