"""Fused multiply-add arithmetic for the distance-type classifiers (private).

The classifiers in ``types.py`` decide ties (a point exactly above a vertex, two edges crossing
exactly at an end point) by the sign of a few rounded dot/cross products, so to return the same
codes as ipc-toolkit they have to round the same way. ipctk 1.6.1 (the PyPI wheel) is compiled
with floating-point contraction on an FMA target: a dot product is evaluated as a chain of fused
multiply-adds and a cross-product component as ``fma(a, b, -(c * d))``. The helpers below
reproduce those evaluation orders exactly (checked against its x86-64 machine code); every
function keeps its intermediate values in float64 and rounds once per fused operation.

``fma`` is LLVM's ``llvm.fma.f64``: one FMA instruction on CPUs that have it, otherwise a call
to the C library's correctly rounded ``fma`` (same results, slower).
3-vectors are tuples ``(x, y, z)`` or 1D arrays of length 3 [any length unit].
"""
from __future__ import annotations

from llvmlite import ir
from numba import types
from numba.extending import intrinsic

from ...runtime.jit import generic_njit



@intrinsic
def fma(typingctx, a, b, c):
    """a * b + c rounded once (float64)."""
    sig = types.float64(types.float64, types.float64, types.float64)

    def codegen(context, builder, signature, args):
        f64 = ir.DoubleType()
        fn = builder.module.declare_intrinsic("llvm.fma", [f64], ir.FunctionType(f64, [f64, f64, f64]))
        return builder.call(fn, args)

    return sig, codegen


@generic_njit(error_model="numpy")
def fdot(a, b):
    """a . b as fma(a_z, b_z, fma(a_y, b_y, a_x b_x)) (x, y, z order)."""
    return fma(a[2], b[2], fma(a[1], b[1], a[0] * b[0]))


@generic_njit(error_model="numpy")
def fdot_yxz(a, b):
    """a . b as fma(a_z, b_z, fma(a_x, b_x, a_y b_y)) (y, x, z order)."""
    return fma(a[2], b[2], fma(a[0], b[0], a[1] * b[1]))


@generic_njit(error_model="numpy")
def fdot_yzx(a, b):
    """a . b as fma(a_x, b_x, fma(a_z, b_z, a_y b_y)) (y, z, x order)."""
    return fma(a[0], b[0], fma(a[2], b[2], a[1] * b[1]))


@generic_njit(error_model="numpy")
def fsquared_norm(a):
    """|a|^2 in the y, z, x order of Eigen's fixed-size squaredNorm (plus an exact +0 that only
    turns -0 into +0, which cannot occur for a sum of squares)."""
    return fdot_yzx(a, a)


@generic_njit(error_model="numpy")
def fcross(a, b):
    """a x b, each component ``fma(first product, -(second product))``."""
    return (fma(a[1], b[2], -(a[2] * b[1])),
            fma(a[2], b[0], -(a[0] * b[2])),
            fma(a[0], b[1], -(a[1] * b[0])))


@generic_njit(error_model="numpy")
def plain_dot(a, b):
    """a . b with separate roundings, ((a_x b_x + a_y b_y) + a_z b_z) (no fusion)."""
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


@generic_njit(error_model="numpy")
def edge_frame_coordinates(e, r, w):
    """Coordinates (s, h) of w in the frame of rows e, r (e = a triangle edge, r = e x normal):
    the least-squares solution of [e; r]^T (s, h) = w, i.e. (B B^T) (s, h) = B w with B = [e; r],
    solved like Eigen's 2x2 LDLT with diagonal pivoting (in the same rounding order).

    A zero Gram matrix (degenerate edge) gives (0, 0), and a pivot |D_i| <= DBL_MIN zeroes that
    coordinate (Eigen's pseudo-inverse convention).
    """
    # Gram matrix M = B B^T (M01 == M10 bit for bit)
    m00 = fma(e[0], e[0], fma(e[2], e[2], e[1] * e[1]))
    m10 = fma(e[0], r[0], fma(r[2], e[2], r[1] * e[1]))
    m11 = fma(r[0], r[0], fma(r[2], r[2], r[1] * r[1]))
    # right-hand side B w, summed y, z, x
    rhs0 = fma(w[0], e[0], fma(w[2], e[2], e[1] * w[1]))
    rhs1 = fma(w[0], r[0], fma(w[2], r[2], r[1] * w[1]))
    # pivot: the larger diagonal entry first (ties keep the order)
    swapped = abs(m11) > abs(m00)
    if swapped:
        m00, m11 = m11, m00
        rhs0, rhs1 = rhs1, rhs0
    if m00 == 0.0:
        return 0.0, 0.0
    el = m10 / m00
    d1 = fma(-(m00 * el), el, m11)
    # L y = P rhs;  D z = y;  L^T x = z
    y1 = fma(-rhs0, el, rhs1)
    tiny = 2.2250738585072014e-308
    z0 = rhs0 / m00 if abs(m00) > tiny else 0.0
    z1 = y1 / d1 if abs(d1) > tiny else 0.0
    x0 = fma(-el, z1, z0)
    if swapped:
        return z1, x0
    return x0, z1
