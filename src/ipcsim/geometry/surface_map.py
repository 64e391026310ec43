"""The linear map from a scene's nodes to its collision surface: x_surface = J q.

Every simulated body is ``x = J q`` (docs/simulator.md, ARCHITECTURE.md): the unknowns are the positions q of
the scene's *nodes* (tet-mesh vertices of full-space bodies, coarse cage vertices of embedded bodies, the four
nodes of an affine body's tet, obstacle vertices), and each collision-surface vertex s is a fixed linear
combination of at most four nodes,

    x_s = sum_a weights[s, a] * q[nodes[s, a]]                                   (004 Eq. 13-17)

- a full-space body selects its boundary vertices: one node per surface vertex, weight 1;
- an embedded body takes the barycentric weights of the coarse tet that contains the fine vertex (weights may
  lie outside [0, 1] for vertices slightly outside the coarse mesh);
- an affine body writes each vertex in the barycentric frame of its enclosing tet (any weights summing to 1).

Prescribed nodes (obstacles, Dirichlet sets) are rows of q too; splitting q into unknowns and prescribed
coordinates gives x = J_free q_free + b with b the prescribed part. Because x is linear in q, a straight step
q -> q + p moves every surface vertex on a straight line, so additive CCD runs on (J q, J (q + p)) unchanged.
Chain rule: grad_q = J^T grad_x, H_q = J^T H_x J (PSD stays PSD).
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from numba import njit

#: Largest number of nodes a surface vertex may depend on (a tet's four corners).
MAX_WEIGHTS = 4


@njit(cache=True)
def _apply(nodes, weights, q):
    """x (n_surface, 3) = sum_a weights[:, a] q[nodes[:, a]] (the sum in slot order a = 0, 1, ...)."""
    n, k = nodes.shape
    out = np.empty((n, 3))
    for s in range(n):
        for d in range(3):
            acc = weights[s, 0] * q[nodes[s, 0], d]
            for a in range(1, k):
                acc += weights[s, a] * q[nodes[s, a], d]
            out[s, d] = acc
    return out


@njit(cache=True)
def _pull_gradient(nodes, weights, g, n_nodes):
    """J^T g (3 n_nodes,): g (n_surface, 3) scattered with the weights, summed in (s, a, d) order."""
    out = np.zeros(3 * n_nodes)
    n, k = nodes.shape
    for s in range(n):
        for a in range(k):
            w = weights[s, a]
            base = 3 * nodes[s, a]
            for d in range(3):
                out[base + d] += w * g[s, d]
    return out


class SurfaceMap:
    """x_surface (n_surface, 3) [m] = J q, q (n_nodes, 3) [m] the node positions.

    Attributes:
        nodes: (n_surface, k) int64, node indices of each surface vertex, 1 <= k <= 4 (unused slots: weight 0,
            any valid node).
        weights: (n_surface, k) float64 [1], their weights.
        n_nodes: number of rows of q.
        is_selection: True when k == 1 and every weight is exactly 1 (full-space bodies): the map is then
            ``q[index]`` and every pull-back is an exact copy/scatter (the fast path).
        index: (n_surface,) int64, ``nodes[:, 0]`` (the selected node of each surface vertex when a selection).
    """

    def __init__(self, nodes, weights, n_nodes: int):
        nodes = np.asarray(nodes, np.int64)
        weights = np.asarray(weights, np.float64)
        if nodes.ndim == 1:
            nodes, weights = nodes[:, None], weights.reshape(-1, 1)
        if nodes.ndim != 2 or not 1 <= nodes.shape[1] <= MAX_WEIGHTS or weights.shape != nodes.shape:
            raise ValueError(f"surface map: nodes and weights must both be (n_surface, k) with 1 <= k <= "
                             f"{MAX_WEIGHTS}, got {nodes.shape} and {weights.shape}")
        if nodes.size and (nodes.min() < 0 or nodes.max() >= n_nodes):
            raise ValueError(f"surface map: node indices must lie in 0..{n_nodes - 1}")
        if not np.all(np.isfinite(weights)):
            raise ValueError("surface map: weights must be finite")
        self.nodes = np.ascontiguousarray(nodes)
        self.weights = np.ascontiguousarray(weights)
        self.n_nodes = int(n_nodes)
        self.index = np.ascontiguousarray(self.nodes[:, 0])
        self.is_selection = self.nodes.shape[1] == 1 and bool(np.all(self.weights == 1.0))
        self._matrix = None
        self._columns = []  # [(coordinate index array, J[:, it])], the last few asked for (``columns``)

    @classmethod
    def selection(cls, index, n_nodes: int) -> "SurfaceMap":
        """The map x_surface = q[index]; index (n_surface,) int."""
        index = np.asarray(index, np.int64).reshape(-1)
        return cls(index[:, None], np.ones((len(index), 1)), n_nodes)

    @property
    def n_surface(self) -> int:
        """Number of surface vertices (rows of x_surface)."""
        return len(self.nodes)

    @property
    def width(self) -> int:
        """k: weights per surface vertex."""
        return self.nodes.shape[1]

    def apply(self, q: np.ndarray) -> np.ndarray:
        """x_surface (n_surface, 3) [m] = J q for node positions q (n_nodes, 3) [m] (also displacements)."""
        q = np.asarray(q, dtype=np.float64)
        if self.is_selection:
            return q[self.index]
        return _apply(self.nodes, self.weights, np.ascontiguousarray(q))

    def pull_gradient(self, g_surface: np.ndarray) -> np.ndarray:
        """J^T g: a surface gradient (3 n_surface,) (or (n_surface, 3)) to the nodes, (3 n_nodes,)."""
        g = np.asarray(g_surface, np.float64).reshape(-1, 3)
        if self.is_selection:
            out = np.zeros((self.n_nodes, 3))
            out[self.index] = g  # a selection's surface vertices are distinct nodes
            return out.ravel()
        return _pull_gradient(self.nodes, self.weights, np.ascontiguousarray(g), self.n_nodes)

    @property
    def matrix(self) -> sp.csr_matrix:
        """J over coordinates, (3 n_surface, 3 n_nodes) CSR (vertex-major; J = J_vertex kron I_3)."""
        if self._matrix is None:
            n_s, k = self.nodes.shape
            rows = np.repeat(np.arange(3 * n_s), k)
            cols = (3 * np.repeat(self.nodes, 3, axis=0) + np.tile(np.arange(3), n_s)[:, None]).ravel()
            vals = np.repeat(self.weights, 3, axis=0).ravel()
            j = sp.csr_matrix((vals, (rows, cols)), shape=(3 * n_s, 3 * self.n_nodes))
            j.sum_duplicates()
            self._matrix = j
        return self._matrix

    def pull_hessian(self, h_surface: sp.spmatrix, rows=None, cols=None) -> sp.csr_matrix:
        """J^T H J: a symmetric surface Hessian (3 n_surface, 3 n_surface) to the nodes, (3 n_nodes, 3 n_nodes).

        With rows and cols (node-coordinate indices (r,), (c,) int, e.g. the free and the prescribed ones) only
        the block J_r^T H J_c (r, c) = (H J_r)^T J_c, J_r = J[:, rows] (``columns``), is formed; cols None or
        the same array object as rows: J_r^T (H J_r)."""
        if rows is None:
            j = self.matrix
            return (j.T @ sp.csr_matrix(h_surface) @ j).tocsr()
        j_r = self.columns(rows)
        h_j = sp.csr_matrix(h_surface) @ j_r
        if cols is None or cols is rows:
            return (j_r.T @ h_j).tocsr()
        return (h_j.T @ self.columns(cols)).tocsr()

    def columns(self, coords) -> sp.csr_matrix:
        """J[:, coords] (3 n_surface, len(coords)) CSR for node-coordinate indices coords (k,) int; the slices of
        the last four index arrays are kept (found again when the same array object is passed)."""
        for key, j in self._columns:
            if key is coords:
                return j
        j = self.matrix.tocsc()[:, np.asarray(coords, np.int64)].tocsr()
        self._columns = [(coords, j)] + self._columns[:3]
        return j

    def coordinate_map(self, node_to_reduced: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(reduced (3 n_surface, k) int64, weights (3 n_surface, k) float64): for each surface coordinate
        3 s + r, the reduced index ``node_to_reduced[3 nodes[s, a] + r]`` (-1: not an unknown) and weight of
        each of its k node coordinates; node_to_reduced (3 n_nodes,) int64."""
        n_s, k = self.nodes.shape
        coords = 3 * np.repeat(self.nodes, 3, axis=0) + np.tile(np.arange(3), n_s)[:, None]
        red = np.ascontiguousarray(node_to_reduced[coords], np.int64)
        w = np.ascontiguousarray(np.repeat(self.weights, 3, axis=0))
        red[w == 0.0] = -1  # padding slots contribute nothing
        return red, w

    def nodes_of(self, surface_vertices) -> np.ndarray:
        """The nodes (sorted, unique) with a non-zero weight for the given surface vertices."""
        sv = np.asarray(surface_vertices, np.int64)
        n = self.nodes[sv]
        return np.unique(n[self.weights[sv] != 0.0])
