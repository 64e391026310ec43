"""Elastic energy of a Model, summed over its material groups, with sparse PSD Hessian assembly."""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ..energies.materials import elastic_energy, elastic_gradient_and_hessian_blocks, needs_inversion_guard
from ..energies.neohookean import max_step_without_inversion
from ..model import Model


class ElasticTerm:
    """Psi(x) [J] of all tets; gradient (3n,) [N] and PSD-projected Hessian (3n, 3n) [N/m] vertex-major."""

    def __init__(self, model: Model):
        self.model = model
        self._groups = []
        for name, idx in model.material_groups:
            tets = np.ascontiguousarray(model.tets[idx])
            rows = (3 * tets[:, :, None] + np.arange(3)).reshape(len(tets), 12)
            self._groups.append((name, tets, np.ascontiguousarray(model.dm_inv[idx]), model.volume[idx],
                                 model.mu[idx], model.lam[idx], rows))
        self.guarded_tets = np.vstack([g[1] for g in self._groups if needs_inversion_guard(g[0])] or
                                      [np.zeros((0, 4), np.int64)])

    def energy(self, x: np.ndarray) -> float:
        return sum(elastic_energy(name, x, t, dm, vol, mu, lam) for name, t, dm, vol, mu, lam, _ in self._groups)

    def gradient_and_hessian(self, x: np.ndarray) -> tuple[np.ndarray, sp.csr_matrix]:
        n3 = 3 * self.model.n_vertices
        grad = np.zeros(n3)
        data, rows, cols = [], [], []
        for name, t, dm, vol, mu, lam, r in self._groups:
            g, h = elastic_gradient_and_hessian_blocks(name, x, t, dm, vol, mu, lam, True, True)
            np.add.at(grad, r.ravel(), g.ravel())
            data.append(h.ravel())
            rows.append(np.repeat(r, 12, axis=1).ravel())
            cols.append(np.tile(r, (1, 12)).ravel())
        hess = sp.csr_matrix((np.concatenate(data), (np.concatenate(rows), np.concatenate(cols))), shape=(n3, n3))
        return grad, hess

    def max_step(self, x: np.ndarray, p: np.ndarray, safety: float = 0.9) -> float:
        """Largest step fraction keeping every inversion-guarded tet positively oriented (1.0 if none)."""
        if len(self.guarded_tets) == 0:
            return 1.0
        return float(max_step_without_inversion(x, p, self.guarded_tets, safety))
