"""The mass matrix M (3n, 3n) [kg] over the scene's node coordinates (vertex-major).

Full-space tet bodies use the lumped diagonal (each vertex gets a quarter of its tets' mass), the fast special
case: M = diag(m) kron I_3 with m (n,) [kg]. Embedded bodies get J^T M_fine J and affine bodies 12x12 blocks
(004 §III): a general symmetric sparse matrix, held as ``matrix`` next to the lumped row sums. Every user
(inertia, Newmark, damping, the consistent acceleration, the stats' energy) goes through this class.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp


class Mass:
    """M (3n, 3n) [kg], lumped (diagonal) or general symmetric sparse.

    Attributes:
        node_masses: (n,) float64 [kg], the lumped masses (general M: the sum of each node's x rows, i.e. the mass
            a rigid translation of that node carries); 0 for massless nodes (obstacles).
        matrix: None for a lumped mass, else the (3n, 3n) symmetric CSR [kg].
    """

    def __init__(self, node_masses: np.ndarray, matrix: sp.spmatrix | None = None):
        self.node_masses = np.ascontiguousarray(node_masses, np.float64)
        n = len(self.node_masses)
        if matrix is not None:
            matrix = sp.csr_matrix(matrix, dtype=np.float64)
            if matrix.shape != (3 * n, 3 * n):
                raise ValueError(f"mass matrix must be ({3 * n}, {3 * n}), got {matrix.shape}")
            matrix.sum_duplicates()
            matrix.sort_indices()
        self.matrix = matrix
        self._diagonal3 = np.repeat(self.node_masses, 3)

    @classmethod
    def lumped(cls, node_masses: np.ndarray) -> "Mass":
        """The diagonal mass diag(node_masses) kron I_3; node_masses (n,) [kg]."""
        return cls(node_masses)

    @classmethod
    def from_matrix(cls, matrix: sp.spmatrix) -> "Mass":
        """A general mass from its (3n, 3n) symmetric matrix [kg]; node masses are the x-row sums."""
        m = sp.csr_matrix(matrix, dtype=np.float64)
        rows = np.asarray(m.sum(axis=1)).ravel()
        return cls(rows[0::3], m)

    @property
    def is_lumped(self) -> bool:
        """True for the diagonal (fast) case."""
        return self.matrix is None

    @property
    def n_nodes(self) -> int:
        """Number of nodes n."""
        return len(self.node_masses)

    @property
    def diagonal3(self) -> np.ndarray:
        """(3n,) [kg] the lumped diagonal, per coordinate (lumped mass only)."""
        return self._diagonal3

    def apply(self, dx: np.ndarray) -> np.ndarray:
        """M dx (n, 3) [kg m] for dx (n, 3) [m]."""
        if self.matrix is None:
            return self.node_masses[:, None] * dx
        return (self.matrix @ np.asarray(dx, np.float64).ravel()).reshape(-1, 3)

    def quadratic(self, dx: np.ndarray) -> float:
        """dx^T M dx [kg m^2] for dx (n, 3) [m]."""
        if self.matrix is None:
            return float(np.sum(self.node_masses[:, None] * dx * dx))
        d = np.asarray(dx, np.float64).ravel()
        return float(d @ (self.matrix @ d))

    def as_matrix(self) -> sp.csr_matrix:
        """M (3n, 3n) [kg] as a CSR matrix (diagonal for the lumped case)."""
        return sp.diags(self._diagonal3).tocsr() if self.matrix is None else self.matrix

    def solve_free(self, f: np.ndarray, free_nodes: np.ndarray) -> np.ndarray:
        """a (n, 3) [m/s^2] with (M a)_free = f_free on the free nodes (free_nodes (n,) bool) and a = 0 elsewhere;
        f (n, 3) [N]. Massless free nodes get a = 0 (lumped case)."""
        a = np.zeros_like(np.asarray(f, np.float64))
        if self.matrix is None:
            ok = free_nodes & (self.node_masses > 0)
            a[ok] = f[ok] / self.node_masses[ok, None]
            return a
        from scipy.sparse.linalg import spsolve

        fc = np.repeat(free_nodes, 3)
        if fc.any():
            a.ravel()[fc] = spsolve(self.matrix[fc][:, fc].tocsc(), np.asarray(f, np.float64).ravel()[fc])
        return a
