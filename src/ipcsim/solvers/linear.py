"""Sparse symmetric positive (semi-)definite solves: pypardiso (MKL) when installed, else SciPy."""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla

try:  # optional extra: pip install ipcsim[fast]
    import pypardiso as _pypardiso
except Exception:  # pragma: no cover - depends on the environment
    _pypardiso = None


def available_backends() -> list[str]:
    """Names of the usable backends, fastest first."""
    return (["pardiso"] if _pypardiso is not None else []) + ["scipy"]


def solve_spd(a: sp.spmatrix, b: np.ndarray, backend: str = "auto") -> np.ndarray:
    """Solve a x = b for a sparse SPD matrix a (n, n) and b (n,)."""
    a = sp.csr_matrix(a)
    if backend == "auto":
        backend = available_backends()[0]
    if backend == "pardiso":
        if _pypardiso is None:
            raise ValueError("backend 'pardiso' needs pypardiso (pip install ipcsim[fast])")
        return _pypardiso.spsolve(a, b)
    if backend == "scipy":
        return spla.spsolve(a.tocsc(), b)
    raise ValueError(f"unknown linear-solver backend {backend!r}; choose from {available_backends()}")
