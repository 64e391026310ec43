"""Small njit helpers shared by the distance kernels (private).

3-vectors inside kernels are plain tuples ``(x, y, z)`` of float64, so no heap array is
allocated on the hot path; functions accept tuples or 1D length-3 arrays alike.

Gradients/Hessians are written block-wise: a "block" ``b`` is vertex ``b`` of the stencil, i.e.
rows/columns ``3*b .. 3*b+2`` of the caller's (3k,) gradient or (3k, 3k) Hessian.
"""
from __future__ import annotations

from ...runtime.jit import generic_njit



# ---------------------------------------------------------------- 3-vector algebra (tuples)
@generic_njit(error_model="numpy")
def sub(a, b):
    """a - b as a tuple."""
    return (a[0] - b[0], a[1] - b[1], a[2] - b[2])


@generic_njit(error_model="numpy")
def dot(a, b):
    """a . b"""
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


@generic_njit(error_model="numpy")
def cross(a, b):
    """a x b as a tuple."""
    return (a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0])


@generic_njit(error_model="numpy")
def squared_norm(a):
    """|a|^2"""
    return a[0] * a[0] + a[1] * a[1] + a[2] * a[2]


# ---------------------------------------------------------------- argument checks / conversion
# (bitwise & instead of short-circuit `and`: numba keeps array arguments alive across the extra
# branches of `and`, which cost ~100 ns per call in hot loops)
@generic_njit(error_model="numpy")
def check_vertex(a):
    """True if ``a`` is a 1D array of length 3."""
    return (a.ndim == 1) & (a.shape[0] == 3)


@generic_njit(error_model="numpy")
def check_vector_out(out, n):
    """True if ``out`` is a 1D array of length n."""
    return (out.ndim == 1) & (out.shape[0] == n)


@generic_njit(error_model="numpy")
def check_matrix_out(out, n):
    """True if ``out`` is an (n, n) array."""
    return (out.ndim == 2) & (out.shape[0] == n) & (out.shape[-1] == n)


@generic_njit(error_model="numpy")
def vec3(a):
    """The first three entries of array ``a`` as a float tuple."""
    return (float(a[0]), float(a[1]), float(a[2]))


# ---------------------------------------------------------------- block writes
@generic_njit(error_model="numpy")
def set_block_vec(g, b, c, v):
    """g[3b:3b+3] = c * v"""
    g[3 * b] = c * v[0]
    g[3 * b + 1] = c * v[1]
    g[3 * b + 2] = c * v[2]


@generic_njit(error_model="numpy")
def set_block_outer(h, bi, bj, c, x, y):
    """Block (bi, bj) of h = c * x y^T."""
    for a in range(3):
        ca = c * x[a]
        for b in range(3):
            h[3 * bi + a, 3 * bj + b] = ca * y[b]


@generic_njit(error_model="numpy")
def add_block_outer(h, bi, bj, c, x, y):
    """Block (bi, bj) of h += c * x y^T."""
    for a in range(3):
        ca = c * x[a]
        for b in range(3):
            h[3 * bi + a, 3 * bj + b] += ca * y[b]


@generic_njit(error_model="numpy")
def add_block_identity(h, bi, bj, c):
    """Block (bi, bj) of h += c * I."""
    for a in range(3):
        h[3 * bi + a, 3 * bj + a] += c


@generic_njit(error_model="numpy")
def add_block_skew(h, bi, bj, c, a):
    """Block (bi, bj) of h += c [a]x and block (bj, bi) += c [a]x^T = -c [a]x.

    [a]x is the cross-product matrix, [a]x y = a x y.
    """
    i = 3 * bi
    j = 3 * bj
    h[i + 0, j + 1] -= c * a[2]
    h[i + 0, j + 2] += c * a[1]
    h[i + 1, j + 0] += c * a[2]
    h[i + 1, j + 2] -= c * a[0]
    h[i + 2, j + 0] -= c * a[1]
    h[i + 2, j + 1] += c * a[0]
    h[j + 1, i + 0] -= c * a[2]
    h[j + 2, i + 0] += c * a[1]
    h[j + 0, i + 1] += c * a[2]
    h[j + 2, i + 1] -= c * a[0]
    h[j + 0, i + 2] -= c * a[1]
    h[j + 1, i + 2] += c * a[0]


@generic_njit(error_model="numpy")
def add_cross_squarednorm_hessian_blocks(h, bu, bv, c, u, v):
    """Add c * Hess(|u x v|^2) to the (u, v) blocks of h (bu != bv), u and v free 3-vectors.

    With n = u x v (derivation in the package docstring):
        d2/du2  = 2 (|v|^2 I - v v^T),   d2/dv2 = 2 (|u|^2 I - u u^T),
        d2/dudv = 2 (u v^T - (u.v) I - [n]x),   d2/dvdu = its transpose.
    """
    n = cross(u, v)
    uv = dot(u, v)
    c2 = 2.0 * c
    add_block_identity(h, bu, bu, c2 * squared_norm(v))
    add_block_outer(h, bu, bu, -c2, v, v)
    add_block_identity(h, bv, bv, c2 * squared_norm(u))
    add_block_outer(h, bv, bv, -c2, u, u)
    add_block_outer(h, bu, bv, c2, u, v)
    add_block_outer(h, bv, bu, c2, v, u)
    add_block_identity(h, bu, bv, -c2 * uv)
    add_block_identity(h, bv, bu, -c2 * uv)
    add_block_skew(h, bu, bv, -c2, n)


# ---------------------------------------------------------------- linear maps on blocks
@generic_njit(error_model="numpy")
def hess_row_axpy(h, dst, src, c, cols):
    """Row block dst of h += c * row block src, over the column blocks in ``cols``."""
    for k in range(len(cols)):
        j = 3 * cols[k]
        for a in range(3):
            for b in range(3):
                h[3 * dst + a, j + b] += c * h[3 * src + a, j + b]


@generic_njit(error_model="numpy")
def hess_col_axpy(h, dst, src, c, rows):
    """Column block dst of h += c * column block src, over the row blocks in ``rows``."""
    for k in range(len(rows)):
        i = 3 * rows[k]
        for a in range(3):
            for b in range(3):
                h[i + a, 3 * dst + b] += c * h[i + a, 3 * src + b]


@generic_njit(error_model="numpy")
def grad_fill_reference(g, ref, others):
    """Translation invariance: g[ref] = -sum of g[others] (block-wise)."""
    for a in range(3):
        s = 0.0
        for k in range(len(others)):
            s += g[3 * others[k] + a]
        g[3 * ref + a] = -s


@generic_njit(error_model="numpy")
def hess_fill_reference(h, ref, others):
    """Translation invariance: fill row/column block ``ref`` of a symmetric Hessian whose
    (others x others) blocks are set, so that each row/column block sums to zero."""
    r = 3 * ref
    for l in range(len(others)):
        j = 3 * others[l]
        for a in range(3):
            for b in range(3):
                s = 0.0
                for k in range(len(others)):
                    s += h[3 * others[k] + a, j + b]
                h[r + a, j + b] = -s
                h[j + b, r + a] = -s
    for a in range(3):
        for b in range(3):
            s = 0.0
            for l in range(len(others)):
                s += h[r + a, 3 * others[l] + b]
            h[r + a, r + b] = -s


@generic_njit(error_model="numpy")
def zero_blocks(h, blocks):
    """Zero the (blocks x blocks) 3x3 blocks of h."""
    for k in range(len(blocks)):
        for l in range(len(blocks)):
            for a in range(3):
                for b in range(3):
                    h[3 * blocks[k] + a, 3 * blocks[l] + b] = 0.0
