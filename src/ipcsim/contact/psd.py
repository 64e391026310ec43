"""Projection of small symmetric stencil Hessians onto the positive semi-definite cone.

Projected Newton (003, Teran et al. 2005) needs every per-stencil Hessian PSD. Three methods:

* ``clamp``  H+ = V max(L, 0) V^T        (the nearest PSD matrix in the Frobenius norm)
* ``abs``    H+ = V |L| V^T              (flip the negative eigenvalues)
* ``analytic``  the same matrix as ``clamp``, obtained more cheaply from the structure of the
  barrier Hessians (see below); the result is identical to ``clamp`` up to round-off.

Structure used by ``analytic`` (exact, no approximation):

1. Every contact distance between primitives (point-point, point-edge, point-triangle,
   edge-edge, the mollifier) is invariant under a common translation of the stencil. Hence
   H t = 0 for the 3 translation modes t = (1, .., 1) (x) e_k and H = Q (Q^T H Q) Q^T with
   Q = B (x) I3, B an orthonormal basis (k x (k-1)) of the vectors of R^k orthogonal to
   (1, .., 1). Since Q has orthonormal columns, the eigen-decomposition of the reduced matrix
   Q^T H Q ((3k-3) x (3k-3)) gives the eigen-decomposition of H, and projecting the reduced
   matrix projects H exactly: 12x12 -> 9x9 (EE, FV), 9x9 -> 6x6 (EV), 6x6 -> 3x3 (VV).
2. Vertex-vertex: with u = p0 - p1, b(|u|^2) has the reduced Hessian (in the basis
   (p0 - p1)/sqrt(2)) 8 b'' u u^T + 4 b' I3, whose eigenpairs are known in closed form:
   (8 b'' |u|^2 + 4 b', u/|u|) and (4 b', any v perpendicular to u) twice
   (``project_vertex_vertex_closed_form``, no eigen-solver).
3. Plane-vertex: H = (4 b'' s^2 + 2 b') n n^T is rank one (s the signed distance, n the unit
   normal); projecting it clamps one scalar.
4. Point-triangle (P_T) and line-line (EA_EB) barrier Hessians h = c1 g g^T + c2 H_d, d2 = s^2
   with s the signed distance along a unit normal n (triangle normal / ea x eb): tangential motions
   of the 4 vertices keep the plane (the lines' parallel planes), so s is constant on that affine
   set; h's tangent-tangent block vanishes and range(h) lies in the span of n on each vertex plus
   at most 2 tangent directions (derivatives of the barycentric weights), i.e. <= 5 dimensions
   after removing the translation: a 5 x 5 eigenproblem instead of 9 x 9
   (``project_normal_tangent``; the low-rank idea of GIPC, Huang et al. 2024, kept exact).
5. Exactly parallel mollified edges: m = 0 and grad c_x = 0, so h = c4 Hess|ea x eb|^2, PSD for
   c4 >= 0 (kept) and negative semi-definite otherwise (zeroed) (``barrier_potential``).
6. Already PSD (up to round-off): ``is_psd_within`` (diagonally pivoted Cholesky, O(r n^2) for
   rank r, handles the singular translation-invariant matrices) leaves H unchanged; the clamp
   would change it by at most n * PSD_REL_TOL * max(diag H). Typical case: nearly parallel
   (mollified) edges, whose Hessian is dominated by b m' Hess|ea x eb|^2, PSD of rank 2.

The reduced symmetric eigenproblems are solved in place by a Householder tridiagonalisation
followed by implicit-shift QL (``symmetric_eigen``), with a Cholesky test first: a reduced
matrix that is positive definite needs no projection.

All functions here are Numba ``@njit`` kernels on float64 arrays.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from ..runtime.jit import generic_njit


PROJECT_NONE = 0
PROJECT_CLAMP = 1
PROJECT_ABS = 2
PROJECT_ANALYTIC = 3

_METHODS = {"none": PROJECT_NONE, "clamp": PROJECT_CLAMP, "abs": PROJECT_ABS, "analytic": PROJECT_ANALYTIC}


def projection_code(project) -> int:
    """Integer code of a projection name ('none' | 'clamp' | 'abs' | 'analytic'); False/None -> none."""
    if project is None or project is False:
        return PROJECT_NONE
    if project is True:
        return PROJECT_CLAMP
    try:
        return _METHODS[str(project).lower()]
    except KeyError:
        raise ValueError(
            f"project={project!r}: expected one of 'none', 'clamp', 'abs', 'analytic'"
        ) from None


# ---------------------------------------------------------------------------- small eigen solver
@njit(cache=True, inline="always")
def _hypot(a, b):
    """sqrt(a^2 + b^2): the plain formula (several times faster than libm's hypot), with hypot's
    overflow/underflow-safe evaluation only when the sum of squares leaves [1e-280, 1e280]."""
    s = a * a + b * b
    if 1e-280 < s < 1e280:
        return math.sqrt(s)
    return math.hypot(a, b)


@generic_njit
def symmetric_eigen(a, n, w, z, e):
    """Eigen-decomposition of the leading n x n block of the symmetric matrix ``a`` (destroyed).

    Householder reduction to tridiagonal form, then the implicit QL iteration with Wilkinson-type
    shifts. On return w[:n] holds the eigenvalues (unordered) and z[:n, :n] the orthonormal
    eigenvectors as columns. ``e`` is workspace of length >= n. Returns False if the iteration
    did not converge (then the caller should fall back to LAPACK).
    """
    for i in range(n):
        for j in range(n):
            z[i, j] = a[i, j]
    _tridiagonalize(z, n, w, e)
    return _tridiagonal_ql(n, w, e, z)


@generic_njit
def _tridiagonalize(z, n, w, e) -> None:
    """Householder reduction of the symmetric leading n x n block of z (overwritten by the accumulated
    orthogonal transform): w[:n] its diagonal, e[:n] its sub-diagonal (e[i] couples rows i - 1 and i, e[0] = 0)."""
    for i in range(n - 1, 0, -1):
        l = i - 1
        h = 0.0
        if l > 0:
            scale = 0.0
            for k in range(l + 1):
                scale += abs(z[i, k])
            if scale == 0.0:
                e[i] = z[i, l]
            else:
                for k in range(l + 1):
                    z[i, k] /= scale
                    h += z[i, k] * z[i, k]
                f = z[i, l]
                g = -math.sqrt(h) if f >= 0.0 else math.sqrt(h)
                e[i] = scale * g
                h -= f * g
                z[i, l] = f - g
                f = 0.0
                for j in range(l + 1):
                    z[j, i] = z[i, j] / h
                    g = 0.0
                    for k in range(j + 1):
                        g += z[j, k] * z[i, k]
                    for k in range(j + 1, l + 1):
                        g += z[k, j] * z[i, k]
                    e[j] = g / h
                    f += e[j] * z[i, j]
                hh = f / (h + h)
                for j in range(l + 1):
                    f = z[i, j]
                    g = e[j] - hh * f
                    e[j] = g
                    for k in range(j + 1):
                        z[j, k] -= f * e[k] + g * z[i, k]
        else:
            e[i] = z[i, l]
        w[i] = h
    w[0] = 0.0
    e[0] = 0.0
    for i in range(n):
        if w[i] != 0.0:
            for j in range(i):
                g = 0.0
                for k in range(i):
                    g += z[i, k] * z[k, j]
                for k in range(i):
                    z[k, j] -= g * z[k, i]
        w[i] = z[i, i]
        z[i, i] = 1.0
        for j in range(i):
            z[j, i] = 0.0
            z[i, j] = 0.0


@generic_njit
def _tridiagonal_ql(n, w, e, z) -> bool:
    """Implicit QL iteration with Wilkinson-type shifts on the tridiagonal matrix (diagonal w[:n], sub-diagonal
    e[:n] as ``_tridiagonalize`` leaves it), accumulating the rotations into z's columns: on return w[:n] holds the
    eigenvalues and z[:n, :n] the eigenvectors. False if an eigenvalue needs more than 60 iterations."""
    for i in range(1, n):
        e[i - 1] = e[i]
    e[n - 1] = 0.0
    eps = 2.220446049250313e-16
    for l in range(n):
        it = 0
        while True:
            m = l
            while m < n - 1:
                dd = abs(w[m]) + abs(w[m + 1])
                if abs(e[m]) <= eps * dd:
                    break
                m += 1
            if m == l:
                break
            it += 1
            if it > 60:
                return False
            g = (w[l + 1] - w[l]) / (2.0 * e[l])
            r = _hypot(g, 1.0)
            g = w[m] - w[l] + e[l] / (g + (r if g >= 0.0 else -r))
            s = 1.0
            c = 1.0
            p = 0.0
            underflow = False
            i = m - 1
            while i >= l:
                f = s * e[i]
                b = c * e[i]
                r = _hypot(f, g)
                e[i + 1] = r
                if r == 0.0:
                    w[i + 1] -= p
                    e[m] = 0.0
                    underflow = True
                    break
                s = f / r
                c = g / r
                g = w[i + 1] - p
                r = (w[i] - g) * s + 2.0 * c * b
                p = s * r
                w[i + 1] = g + p
                g = c * r - b
                for k in range(n):
                    f = z[k, i + 1]
                    z[k, i + 1] = s * z[k, i] + c * f
                    z[k, i] = c * z[k, i] - s * f
                i -= 1
            if underflow:
                continue
            w[l] -= p
            e[l] = g
            e[m] = 0.0
    return True


@generic_njit
def _is_positive_definite(a, n, work):
    """Cholesky test of the leading n x n block of symmetric ``a`` (not modified)."""
    for i in range(n):
        for j in range(i + 1):
            s = a[i, j]
            for k in range(j):
                s -= work[i, k] * work[j, k]
            if i == j:
                if not s > 0.0:
                    return False
                work[i, i] = math.sqrt(s)
            else:
                work[i, j] = s / work[j, j]
    return True


@generic_njit
def project_symmetric_inplace(a, n, method, ws_a, ws_z, ws_w, ws_e):
    """Project the leading n x n block of symmetric ``a`` to PSD in place.

    method: PROJECT_CLAMP (or PROJECT_ANALYTIC: same matrix) or PROJECT_ABS; PROJECT_NONE is a no-op.
    ws_a, ws_z: (>= n, >= n) workspaces; ws_w, ws_e: (>= n,) workspaces.
    """
    if method == PROJECT_NONE:
        return
    if _is_positive_definite(a, n, ws_z):
        return
    for i in range(n):
        for j in range(n):
            ws_a[i, j] = a[i, j]
    ok = symmetric_eigen(ws_a, n, ws_w, ws_z, ws_e)
    if not ok:  # practically never; LAPACK as the fallback
        vals, vecs = np.linalg.eigh(np.ascontiguousarray(a[:n, :n]))
        for i in range(n):
            ws_w[i] = vals[i]
            for j in range(n):
                ws_z[i, j] = vecs[i, j]
    for k in range(n):
        lam = ws_w[k]
        if lam < 0.0:
            lam = -lam if method == PROJECT_ABS else 0.0
        ws_w[k] = lam
    for i in range(n):
        for j in range(i + 1):
            s = 0.0
            for k in range(n):
                s += ws_z[i, k] * ws_w[k] * ws_z[j, k]
            a[i, j] = s
            a[j, i] = s


# ---------------------------------------------------------------------------- translation reduction
def _helmert_basis(k: int) -> np.ndarray:
    """Orthonormal basis (k, k-1) of the vectors of R^k orthogonal to (1, .., 1)."""
    b = np.zeros((k, k - 1))
    for j in range(1, k):
        b[:j, j - 1] = 1.0
        b[j, j - 1] = -float(j)
        b[:, j - 1] /= math.sqrt(j * (j + 1))
    return b


_B2 = _helmert_basis(2)
_B3 = _helmert_basis(3)
_B4 = _helmert_basis(4)


@generic_njit
def _basis(k):
    if k == 2:
        return _B2
    if k == 3:
        return _B3
    return _B4


@generic_njit
def project_translation_invariant(h, k, method, ws):
    """Project the (3k, 3k) Hessian ``h`` of a translation-invariant stencil (k = 2, 3, 4 vertices)
    to PSD in place, through the (3k-3) reduced matrix Q^T h Q, Q = B (x) I3 (exact: see module doc).

    ws: workspace tuple from ``make_workspace()``.
    """
    if method == PROJECT_NONE:
        return
    r_mat, ws_a, ws_z, ws_w, ws_e, tmp = ws
    b = _basis(k)
    m = k - 1
    n = 3 * m
    # tmp = h Q  (3k x 3m): tmp[:, 3j+c] = sum_a b[a, j] h[:, 3a+c]
    for i in range(3 * k):
        for j in range(m):
            for c in range(3):
                s = 0.0
                for a in range(k):
                    s += b[a, j] * h[i, 3 * a + c]
                tmp[i, 3 * j + c] = s
    # r = Q^T tmp
    for i in range(m):
        for ci in range(3):
            for j in range(n):
                s = 0.0
                for a in range(k):
                    s += b[a, i] * tmp[3 * a + ci, j]
                r_mat[3 * i + ci, j] = s
    for i in range(n):  # exact symmetry
        for j in range(i):
            s = 0.5 * (r_mat[i, j] + r_mat[j, i])
            r_mat[i, j] = s
            r_mat[j, i] = s
    project_symmetric_inplace(r_mat, n, method, ws_a, ws_z, ws_w, ws_e)
    # h = Q r Q^T
    for i in range(n):
        for a in range(k):
            for c in range(3):
                s = 0.0
                for j in range(m):
                    s += r_mat[i, 3 * j + c] * b[a, j]
                tmp[i, 3 * a + c] = s
    for a in range(k):
        for ci in range(3):
            for j in range(3 * k):
                s = 0.0
                for i in range(m):
                    s += b[a, i] * tmp[3 * i + ci, j]
                h[3 * a + ci, j] = s


@generic_njit
def make_workspace():
    """Per-thread scratch arrays for the projection kernels."""
    return (
        np.empty((12, 12)),
        np.empty((12, 12)),
        np.empty((12, 12)),
        np.empty(12),
        np.empty(12),
        np.empty((12, 12)),
    )


@generic_njit
def project_full(h, n, method, ws):
    """Project the leading n x n block of symmetric h to PSD in place (no structure assumed)."""
    if method == PROJECT_NONE:
        return
    r_mat, ws_a, ws_z, ws_w, ws_e, tmp = ws
    project_symmetric_inplace(h, n, method, ws_a, ws_z, ws_w, ws_e)


@generic_njit
def clamp_scalar(lam, method):
    """The projected eigenvalue: max(lam, 0) for clamp/analytic, |lam| for abs, lam for none."""
    if lam >= 0.0 or method == PROJECT_NONE:
        return lam
    if method == PROJECT_ABS:
        return -lam
    return 0.0


# ---------------------------------------------------------------------------- cheap exact exits
#: Relative tolerance of ``is_psd_within`` used by the analytic projection: a matrix accepted as
#: PSD differs from its eigenvalue clamp by at most about n * PSD_REL_TOL * max(diag) (spectral norm).
#: That is the round-off level of a stencil Hessian: its entries carry errors of a few eps * max|h|,
#: which move its eigenvalues by up to about n * few * eps * max|h|. Measured on the nearly parallel
#: mollified edges of the two-sheet benchmark (PSD in exact arithmetic up to terms far below that):
#: smallest eigenvalues -2.5e-15 to -5.5e-15 * max|h|, all rejected at 1e-14 and all accepted at
#: 2e-14; 5e-14 keeps a margin and still bounds the difference from the clamp by 6e-13 * max(diag).
PSD_REL_TOL = 5e-14


@generic_njit
def is_psd_within(h, n, rel_tol, work, done):
    """True if the leading n x n block of symmetric ``h`` is PSD up to rel_tol * max(diag(h)).

    Diagonally pivoted Cholesky on a copy (``work``: (>= n, >= n), ``done``: (>= n,) scratch):
    pivot on the largest remaining diagonal entry while it exceeds tau = rel_tol * max(diag(h));
    then every entry of the remaining Schur complement S must satisfy |S_ij| <= tau (for a PSD
    S, |S_ij| <= sqrt(S_ii S_jj) <= tau). On True, h = L L^T + S with ||S||_2 <= n tau, so h is
    within n tau of a PSD matrix and its negative eigenvalues (what clamping removes) are
    >= -n tau: leaving h unchanged equals the clamp up to that bound. Works for singular PSD
    matrices (translation-invariant stencils), unlike a plain Cholesky test. O(r n^2) for rank r.
    """
    scale = 0.0
    for i in range(n):
        done[i] = 0.0
        if h[i, i] > scale:
            scale = h[i, i]
        for j in range(i + 1):
            work[i, j] = h[i, j]
    tau = rel_tol * scale
    for _ in range(n):
        p = -1
        best = tau
        for i in range(n):
            if done[i] == 0.0 and work[i, i] > best:
                best = work[i, i]
                p = i
        if p < 0:
            for i in range(n):
                if done[i] != 0.0:
                    continue
                for j in range(i + 1):
                    if done[j] == 0.0 and abs(work[i, j]) > tau:
                        return False
            return True
        done[p] = 1.0
        inv = 1.0 / best
        for i in range(n):
            if done[i] != 0.0:
                continue
            wip = work[i, p] if i > p else work[p, i]
            f = wip * inv
            for j in range(i + 1):
                if done[j] == 0.0:
                    wjp = work[j, p] if j > p else work[p, j]
                    work[i, j] -= f * wjp
    return True


@generic_njit
def project_vertex_vertex_closed_form(h, c1, c2, u, method):
    """Write the projected vertex-vertex Hessian (6, 6) into h from its closed-form eigensystem.

    For d2 = |u|^2, u = p0 - p1, the stencil Hessian is h = [[A, -A], [-A, A]] with
    A = 4 c1 u u^T + 2 c2 I (c1 = kappa s w b'', c2 = kappa s w b'). Eigenpairs of A:
    (4 c1 |u|^2 + 2 c2, u/|u|) and (2 c2, any unit vector perpendicular to u) twice; those of h are
    twice these (eigenvector (e, -e)/sqrt(2)) and zeros (translations). Projecting the two scalars
    projects h exactly: A+ = f(lam_par) u u^T / |u|^2 + f(lam_perp) (I - u u^T / |u|^2),
    f = max(., 0) for clamp/analytic, |.| for abs.
    """
    uu = u[0] * u[0] + u[1] * u[1] + u[2] * u[2]
    lam_par = clamp_scalar(4.0 * c1 * uu + 2.0 * c2, method)
    lam_perp = clamp_scalar(2.0 * c2, method)
    f = (lam_par - lam_perp) / uu if uu > 0.0 else 0.0
    for i in range(3):
        for j in range(3):
            a = f * u[i] * u[j] + (lam_perp if i == j else 0.0)
            h[i, j] = a
            h[i + 3, j + 3] = a
            h[i, j + 3] = -a
            h[i + 3, j] = -a


# ---------------------------------------------------------------------------- public helpers
def project_to_psd(h: np.ndarray, method: str = "clamp") -> np.ndarray:
    """Projected copy of a symmetric matrix h (n, n), n <= 12, by eigenvalue clamping ('clamp') or
    absolute values ('abs'). Raises ValueError for a non-square or too large matrix."""
    h = np.array(h, dtype=np.float64)
    if h.ndim != 2 or h.shape[0] != h.shape[1] or h.shape[0] > 12:
        raise ValueError(f"project_to_psd: h must be a square matrix of size <= 12, got {h.shape}")
    code = projection_code(method)
    h = 0.5 * (h + h.T)
    project_full(h, h.shape[0], code, make_workspace())
    return h


# ---------------------------------------------------------------------------- normal/tangent split
@generic_njit
def project_normal_tangent(h, nrm, ia, ib, method, ws):
    """Exact PSD projection, in place, of a (12, 12) point-plane or line-line barrier Hessian.

    Applies to h = c1 g g^T + c2 H_d (non-mollified), d2 = s^2 with s the signed distance along the
    unit normal ``nrm`` (3-tuple) of the triangle (point-triangle, P_T) or of ea x eb (edge-edge,
    EA_EB). Derivation (module doc of ``psd``, item 4):

    * moving the 4 vertices tangentially (perpendicular to ``nrm``) keeps the plane (the two
      parallel planes of the lines), so s is constant on that 8-dimensional affine set: the
      tangent-tangent block of Hess s is zero and grad s lies in the "normal" span N of the
      vectors n_a = nrm on vertex a (a = 0..3);
    * hence h's tangent-tangent block is zero and range(h) lies in N + T with T the tangent parts
      of h n_a. d s / d(normal motion of a) is a barycentric weight (1, -beta_0, -beta_1, -beta_2
      for point-triangle, -(1-ta), -ta, 1-tb, tb up to sign for line-line) whose weights sum to a
      constant, so T is spanned by the tangent parts of h n_ia and h n_ib (ia, ib = 2, 3 for
      point-triangle, 1, 3 for line-line): dim T <= 2.

    With W (12, m <= 5) an orthonormal basis of (N minus the translation) + T, h = W M W^T with
    M = W^T h W (m, m), and clamping M's eigenvalues clamps h's: h+ = W M+ W^T.
    ws: ``make_workspace()`` tuple.
    """
    if method == PROJECT_NONE:
        return
    r_mat, ws_a, ws_z, ws_w, ws_e, wmat = ws
    n0, n1, n2 = nrm
    b = _B4
    for j in range(3):
        for a in range(4):
            wmat[3 * a, j] = b[a, j] * n0
            wmat[3 * a + 1, j] = b[a, j] * n1
            wmat[3 * a + 2, j] = b[a, j] * n2
    hmax = 0.0
    for i in range(12):
        for j in range(12):
            if abs(h[i, j]) > hmax:
                hmax = abs(h[i, j])
    m = 3
    for idx in (ia, ib):
        for i in range(12):  # candidate column: tangent part of h n_idx
            wmat[i, m] = h[i, 3 * idx] * n0 + h[i, 3 * idx + 1] * n1 + h[i, 3 * idx + 2] * n2
        # the tangent part can be orders of magnitude smaller than h n_idx: remove the normal
        # components and the previous tangent columns twice (re-orthogonalisation), so the
        # normalised column is orthogonal to N and to T to round-off relative to itself
        for _ in range(2):
            for a in range(4):
                s = wmat[3 * a, m] * n0 + wmat[3 * a + 1, m] * n1 + wmat[3 * a + 2, m] * n2
                wmat[3 * a, m] -= s * n0
                wmat[3 * a + 1, m] -= s * n1
                wmat[3 * a + 2, m] -= s * n2
            for j in range(3, m):
                s = 0.0
                for i in range(12):
                    s += wmat[i, j] * wmat[i, m]
                for i in range(12):
                    wmat[i, m] -= s * wmat[i, j]
        nn = 0.0
        for i in range(12):
            nn += wmat[i, m] * wmat[i, m]
        nn = math.sqrt(nn)
        # a residual at round-off level carries no part of range(h) above 1e-13 max|h|: drop it
        if nn > 1e-13 * hmax:
            inv = 1.0 / nn
            for i in range(12):
                wmat[i, m] *= inv
            m += 1
    subspace_project(h, 12, m, method, ws)


@generic_njit
def subspace_project(h, n, m, method, ws):
    """h[:n, :n] <- W clamp(W^T h W) W^T for W = ws[5][:n, :m] with orthonormal columns spanning
    range(h) (then this is h's exact eigenvalue projection). m <= 12."""
    r_mat, ws_a, ws_z, ws_w, ws_e, wmat = ws
    for i in range(n):  # h W into ws_a
        for j in range(m):
            s = 0.0
            for k in range(n):
                s += h[i, k] * wmat[k, j]
            ws_a[i, j] = s
    for i in range(m):
        for j in range(i + 1):
            s = 0.0
            t = 0.0
            for k in range(n):
                s += wmat[k, i] * ws_a[k, j]
                t += wmat[k, j] * ws_a[k, i]
            r_mat[i, j] = 0.5 * (s + t)
            r_mat[j, i] = r_mat[i, j]
    project_symmetric_inplace(r_mat, m, method, ws_a, ws_z, ws_w, ws_e)
    for i in range(n):  # W M+ into ws_a
        for j in range(m):
            s = 0.0
            for k in range(m):
                s += wmat[i, k] * r_mat[k, j]
            ws_a[i, j] = s
    for i in range(n):
        for j in range(i + 1):
            s = 0.0
            for k in range(m):
                s += ws_a[i, k] * wmat[j, k]
            h[i, j] = s
            h[j, i] = s
