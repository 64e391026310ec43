"""Projection of small symmetric matrices onto the positive semi-definite cone (eigenvalue clamping)."""
from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def project_psd_clamp(h: np.ndarray) -> np.ndarray:
    """Nearest PSD matrix in Frobenius norm of a symmetric (m, m) matrix: eigenvalues below 0 set to 0."""
    hs = 0.5 * (h + h.T)
    w, v = np.linalg.eigh(hs)
    if w[0] >= 0.0:
        return hs
    for i in range(w.shape[0]):
        if w[i] < 0.0:
            w[i] = 0.0
    return (v * w) @ v.T
