"""Shape-targeting actuation from prescribed boundary displacements (000_face_pd_ipc_paper.txt §2.1, Eq. 1).

A blendshape prescribes the displacement of a soft body's outer surface (and of its bone attachment); the
displacement is extended into the volume harmonically (each coordinate solves the P1 Laplace equation with those
Dirichlet data, natural boundary conditions elsewhere), which reproduces every affine displacement exactly. Each
tet's target deformation gradient F_i = D_target D_rest^-1 is then split F = R S (polar decomposition, R a
rotation); the symmetric factor S is the tet's actuation target A_i.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla


def _edge_matrices(x, tets):
    c = np.asarray(x, np.float64)[np.asarray(tets, np.int64)]
    return (c[:, 1:] - c[:, :1]).transpose(0, 2, 1)  # (m, 3, 3), columns x_a - x_0


def tet_laplacian(vertices, tets) -> sp.csr_matrix:
    """P1 stiffness matrix K (n, n) [m] of a tet mesh: K_ab = sum_tets V grad(phi_a) . grad(phi_b); K 1 = 0."""
    tets = np.asarray(tets, np.int64)
    dm = _edge_matrices(vertices, tets)
    vol = np.abs(np.linalg.det(dm)) / 6.0
    inv = np.linalg.inv(dm)  # rows: gradients of the barycentric coordinates 1..3
    grads = np.concatenate([-inv.sum(axis=1, keepdims=True), inv], axis=1)  # (m, 4, 3) [1/m]
    local = vol[:, None, None] * np.einsum("mai,mbi->mab", grads, grads)
    rows = np.repeat(tets, 4, axis=1).ravel()
    cols = np.tile(tets, (1, 4)).ravel()
    n = int(np.asarray(vertices).shape[0])
    return sp.coo_matrix((local.ravel(), (rows, cols)), shape=(n, n)).tocsr()


class HarmonicExtension:
    """Harmonic extension of Dirichlet data on a fixed vertex set into a tet mesh; factor once, solve many.

    Args:
        vertices: (n, 3) [m]; tets: (m, 4) int64; fixed: (k,) int64, the Dirichlet vertices.
    """

    def __init__(self, vertices, tets, fixed):
        n = len(vertices)
        self.fixed = np.unique(np.asarray(fixed, np.int64))
        self.free = np.setdiff1d(np.arange(n), self.fixed)
        k = tet_laplacian(vertices, tets)
        self._coupling = k[self.free][:, self.fixed].tocsc()
        self._solve = spla.factorized(k[self.free][:, self.free].tocsc())
        self.n = n

    def __call__(self, values) -> np.ndarray:
        """The extension (n, 3) of values (k, 3) given on ``fixed`` (in the order of np.unique(fixed))."""
        values = np.asarray(values, np.float64).reshape(len(self.fixed), -1)
        out = np.zeros((self.n, values.shape[1]))
        out[self.fixed] = values
        rhs = -(self._coupling @ values)
        for c in range(values.shape[1]):
            out[self.free, c] = self._solve(np.ascontiguousarray(rhs[:, c]))
        return out


def deformation_gradients(rest, tets, deformed) -> np.ndarray:
    """F (m, 3, 3) [1] = D_deformed D_rest^-1 of each tet; rest, deformed (n, 3) [m]."""
    return _edge_matrices(deformed, tets) @ np.linalg.inv(_edge_matrices(rest, tets))


def symmetric_factor(F) -> tuple[np.ndarray, np.ndarray]:
    """Polar decomposition F = R S of F (m, 3, 3): (S (m, 3, 3) symmetric [1], det F (m,)).

    R is a proper rotation; for det F <= 0 (an inverted target) S = R^T F has a non-positive eigenvalue."""
    u, s, vt = np.linalg.svd(F)
    det = np.linalg.det(F)
    flip = np.linalg.det(u) * np.linalg.det(vt) < 0  # U V^T is a reflection: flip the smallest singular pair
    s = s.copy()
    s[flip, 2] *= -1.0
    S = np.einsum("mki,mk,mkj->mij", vt, s, vt)
    return 0.5 * (S + S.transpose(0, 2, 1)), det


def actuation_targets(rest, tets, displacement, min_stretch: float | None = None,
                      max_stretch: float | None = None) -> tuple[np.ndarray, int]:
    """A_i (m, 3, 3) [1], the symmetric factors of the target gradients of rest + displacement (n, 3) [m], and
    the number of tets whose target is inverted (det F <= 0). min_stretch, max_stretch [1]: clamp the
    eigenvalues of each A_i to that range (None: keep them; an inverted target has a negative one)."""
    F = deformation_gradients(rest, tets, np.asarray(rest) + np.asarray(displacement))
    S, det = symmetric_factor(F)
    if min_stretch is not None or max_stretch is not None:
        lam, q = np.linalg.eigh(S)
        S = np.einsum("mik,mk,mjk->mij", q, np.clip(lam, min_stretch, max_stretch), q)
        S = 0.5 * (S + S.transpose(0, 2, 1))
    return S, int(np.count_nonzero(det <= 0))
