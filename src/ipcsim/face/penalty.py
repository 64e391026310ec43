"""The standard-PD collision baseline of 000 Fig. 3: penalty springs on the collision proxy instead of IPC.

000 compares its IPC face against "the spring-like repulsion method in the standard PD" (Bouaziz et al. 2014:
a collision is a constraint that pulls a penetrating point back to the surface, a quadratic spring added to the
PD energy; no continuous collision detection, no barrier). Here, on the same proxy s = W x as the IPC solver:

* the active springs at s: every (proxy vertex q, proxy triangle t = (a, b, c)) with q outside the k-ring
  neighbourhood of t's corners (``exclude_rings``), q's projection on t's plane inside t, and q's signed distance
  d = n . (q - a) from t's plane (n the unit normal of t, the skin's outward side) in (-depth, margin): a point
  approaching t from its front side (closer than ``margin``) or slightly through it (less than ``depth`` behind);
* the energy of a spring: k/2 (margin - d)^2 [J], k [N/m]; its gradient is exact (d's gradient in q, a, b, c,
  ``signed_distance_gradient``); its Hessian is the Gauss-Newton (PD-style, positive semi-definite) k g g^T,
  g = grad d (12,), pulled back through W like the barrier's;
* no CCD: the global step is taken whole when the energy decreases (the same backtracking line search on the
  total energy as the IPC solver, with the springs re-detected at every trial).

So the springs push the lips apart once they come within ``margin`` or cross by less than ``depth``; what they
miss (a point that jumps past ``depth`` in one step, edge-edge crossings, a point beside a triangle's edge) stays
intersecting. ``PenaltyFacePDSolver`` is ``FacePDSolver`` with IPC off and these springs on.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from ..contact.broad_phase import build_candidates
from .solver import FaceContact, FacePDSolver


@dataclass
class PenaltyContact:
    """The springs' parameters. stiffness: k [N/m] per spring (None: stiffness_scale times the mean
    shape-targeting stiffness [Pa] times the proxy's mean rest edge length [m]); margin [m] (None: margin_rel
    times the proxy's rest bounding-box diagonal, the IPC solver's dhat by default); depth [m] (None: depth_rel
    times that diagonal): how far behind a triangle a point is still pushed back; exclude_rings: a vertex within
    this many edge rings of a triangle's corners gets no spring from it (its own neighbourhood)."""

    stiffness: float | None = None
    stiffness_scale: float = 100.0
    margin: float | None = None
    margin_rel: float = 1e-3
    depth: float | None = None
    depth_rel: float = 0.02
    exclude_rings: int = 2


@dataclass
class Springs:
    """Active springs at proxy positions s: point (k,) and tri (k,) ids, corners (k, 4) [q, a, b, c] proxy
    vertex ids, d (k,) [m] signed distances, grad (k, 4, 3) [1] their gradients, energy [J] in all."""

    point: np.ndarray
    tri: np.ndarray
    corners: np.ndarray
    d: np.ndarray
    grad: np.ndarray
    energy: float

    def __len__(self) -> int:
        return len(self.point)


# ------------------------------------------------------------------------------------------- per-spring math
def signed_distance(q, a, b, c) -> np.ndarray:
    """Signed distances (k,) [m] of points q (k, 3) [m] from the planes of triangles (a, b, c) (each (k, 3) [m]),
    positive on the side of n = (b - a) x (c - a)."""
    n = np.cross(b - a, c - a)
    return np.einsum("kj,kj->k", n, q - a) / np.linalg.norm(n, axis=1)


def signed_distance_gradient(q, a, b, c) -> np.ndarray:
    """Gradients (k, 4, 3) [1] of ``signed_distance`` in (q, a, b, c). With N = (b - a) x (c - a),
    V = N . (q - a) and d = V / |N|: grad d = (grad V - d grad |N|) / |N|, grad_q V = N, grad_b V = (c - a) x
    (q - a), grad_c V = (q - a) x (b - a), grad_b |N| = (c - a) x n, grad_c |N| = n x (b - a), and the a rows
    minus the sum of the others (d is invariant under translation)."""
    e1, e2, r = b - a, c - a, q - a
    big_n = np.cross(e1, e2)
    area2 = np.linalg.norm(big_n, axis=1)
    n = big_n / area2[:, None]
    d = np.einsum("kj,kj->k", n, r)
    g = np.empty((len(q), 4, 3))
    g[:, 0] = n
    g[:, 2] = (np.cross(e2, r) - d[:, None] * np.cross(e2, n)) / area2[:, None]
    g[:, 3] = (np.cross(r, e1) - d[:, None] * np.cross(n, e1)) / area2[:, None]
    g[:, 1] = -(g[:, 0] + g[:, 2] + g[:, 3])
    return g


def projection_inside(q, a, b, c) -> np.ndarray:
    """(k,) bool: the orthogonal projection of q (k, 3) on the plane of (a, b, c) lies in the triangle
    (barycentric coordinates all >= 0)."""
    e1, e2, r = b - a, c - a, q - a
    d11, d12, d22 = (np.einsum("kj,kj->k", u, v) for u, v in ((e1, e1), (e1, e2), (e2, e2)))
    r1, r2 = np.einsum("kj,kj->k", r, e1), np.einsum("kj,kj->k", r, e2)
    det = d11 * d22 - d12 * d12
    v = (d22 * r1 - d12 * r2) / det
    w = (d11 * r2 - d12 * r1) / det
    return (v >= 0) & (w >= 0) & (v + w <= 1)


def spring_energy(d, k: float, margin: float) -> np.ndarray:
    """Energies (k,) [J] k/2 (margin - d)^2 of springs at signed distances d (k,) [m]."""
    return 0.5 * k * (margin - d) ** 2


# ------------------------------------------------------------------------------------------- the springs
def ring_neighbourhood(faces, n: int, rings: int) -> sp.csr_matrix:
    """(n, n) CSR: non-zero where two vertices of the triangle mesh faces (f, 3) are at most ``rings`` edges apart
    (the diagonal included)."""
    f = np.asarray(faces, np.int64)
    rows, cols = np.repeat(f, 3, axis=1).ravel(), np.tile(f, (1, 3)).ravel()
    adj = sp.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(n, n)) + sp.identity(n, format="csr")
    adj.data[:] = 1.0
    out = sp.identity(n, format="csr")
    for _ in range(int(rings)):
        out = out @ adj
        out.data[:] = 1.0
    return out.tocsr()


class PenaltySprings:
    """Spring detection and assembly on a proxy mesh (``CollisionMesh`` of the proxy triangles, its vertices the
    proxy vertices)."""

    def __init__(self, mesh, k: float, margin: float, depth: float, exclude_rings: int):
        self.mesh = mesh
        self.faces = np.asarray(mesh.faces, np.int64)
        self.p = mesh.n_vertices
        self.k, self.margin, self.depth = float(k), float(margin), float(depth)
        # excluded (vertex, vertex) keys u * p + v, sorted: v within exclude_rings edge rings of u
        near = ring_neighbourhood(self.faces, self.p, exclude_rings).tocoo()
        self._excluded = np.unique(near.row.astype(np.int64) * self.p + near.col)

    def _excluded_pair(self, point, tri) -> np.ndarray:
        keys = np.stack([self.faces[tri, j] * self.p + point for j in range(3)], axis=1)
        pos = np.searchsorted(self._excluded, keys).clip(max=len(self._excluded) - 1)
        return np.any(self._excluded[pos] == keys, axis=1)

    def detect(self, s) -> Springs:
        """The active springs (module doc) at proxy positions s (p, 3) [m]."""
        s = np.asarray(s, np.float64)
        cand = build_candidates(self.mesh, s, None, inflation_radius=0.5 * max(self.margin, self.depth)).vf
        point, tri = cand[:, 0], cand[:, 1]
        q, a, b, c = s[point], *(s[self.faces[tri, j]] for j in range(3))
        d = signed_distance(q, a, b, c)
        keep = (d > -self.depth) & (d < self.margin)
        keep[keep] = projection_inside(q[keep], a[keep], b[keep], c[keep])
        keep[keep] = ~self._excluded_pair(point[keep], tri[keep])
        tri, point, d = tri[keep], point[keep], d[keep]
        corners = np.concatenate([point[:, None], self.faces[tri]], axis=1)
        grad = signed_distance_gradient(*(s[corners[:, j]] for j in range(4)))
        energy = float(spring_energy(d, self.k, self.margin).sum())
        return Springs(point, tri, corners, d, grad, energy)

    def gradient(self, springs: Springs) -> np.ndarray:
        """Energy gradient (p, 3) [N] on the proxy vertices: -k (margin - d) grad d, summed per vertex."""
        g = np.zeros((self.p, 3))
        coef = -self.k * (self.margin - springs.d)
        np.add.at(g, springs.corners.ravel(), (coef[:, None, None] * springs.grad).reshape(-1, 3))
        return g

    def hessian(self, springs: Springs) -> sp.csr_matrix:
        """Gauss-Newton Hessian (3p, 3p) CSR [N/m]: sum of k g g^T over the springs, g (12,) = grad d."""
        g = springs.grad.reshape(len(springs), 12)
        blocks = self.k * g[:, :, None] * g[:, None, :]
        dofs = (3 * springs.corners[:, :, None] + np.arange(3)).reshape(len(springs), 12)
        rows = np.repeat(dofs, 12, axis=1).ravel()
        cols = np.tile(dofs, (1, 12)).ravel()
        return sp.csr_matrix((blocks.ravel(), (rows, cols)), shape=(3 * self.p, 3 * self.p))


# ------------------------------------------------------------------------------------------- the solver
class PenaltyFacePDSolver(FacePDSolver):
    """``FacePDSolver`` with the standard-PD collision springs (module doc) in place of IPC: no barrier, no CCD.
    Args as ``FacePDSolver`` (its ``contact`` is fixed to FaceContact(enabled=False)), and penalty:
    ``PenaltyContact``. FrameStats.n_contacts counts the active springs at the frame's end, min_distance is their
    smallest signed distance [m] (negative: a point behind a triangle; inf without springs)."""

    def __init__(self, model, solver="woodbury", penalty: PenaltyContact | None = None, **kwargs):
        if "contact" in kwargs:
            raise TypeError("PenaltyFacePDSolver has no IPC contact; give penalty=PenaltyContact(...)")
        super().__init__(model, solver, FaceContact(enabled=False), **kwargs)
        self.penalty = pc = penalty or PenaltyContact()
        faces, rest = self.mesh.faces, self.mesh.rest_positions
        edges = np.r_[faces[:, [0, 1]], faces[:, [1, 2]], faces[:, [2, 0]]]
        mean_edge = float(np.linalg.norm(rest[edges[:, 0]] - rest[edges[:, 1]], axis=1).mean())
        k_auto = pc.stiffness_scale * float(np.mean(model.stiffness)) * mean_edge
        k = pc.stiffness if pc.stiffness is not None else k_auto
        margin = pc.margin if pc.margin is not None else pc.margin_rel * self.bbox
        depth = pc.depth if pc.depth is not None else pc.depth_rel * self.bbox
        self.springs = PenaltySprings(self.mesh, k, margin, depth, pc.exclude_rings)

    def _evaluate(self, x, a, candidates):
        pt = super()._evaluate(x, a, candidates)
        pt.springs = self.springs.detect(pt.s)
        pt.energy += pt.springs.energy
        return pt

    def _contact_terms(self, pt, arrived: bool):
        """The springs' (gradient on the nodes (n, 3) [N], B_ff, B_fb [N/m]) in place of the barrier's, pulled
        back through W like it (``FacePDSolver._contact_terms``)."""
        sp_ = getattr(pt, "springs", None)
        if sp_ is None or not len(sp_):
            return None, None, None
        w = self.model.proxy_map
        g = w.pull_gradient(self.springs.gradient(sp_)).reshape(-1, 3)
        hs = self.springs.hessian(sp_)
        b_ff = w.pull_hessian(hs, self._free_dofs, self._free_dofs)
        b_fb = w.pull_hessian(hs, self._free_dofs, self._bone_dofs) if len(self.bone) and not arrived else None
        return g, b_ff, b_fb

    def _finish(self, pt, stats, ncs, pcg0, fb0) -> None:
        super()._finish(pt, stats, ncs, pcg0, fb0)
        springs = getattr(pt, "springs", None)
        if springs is not None and len(springs):
            stats.n_contacts = len(springs)
            stats.min_distance = float(springs.d.min())
        else:
            stats.n_contacts, stats.min_distance = 0, math.inf
