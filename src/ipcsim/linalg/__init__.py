"""Sparse and dense linear algebra: the solver-owned factorization (``factorization``: pypardiso, cholespy or
SciPy behind one ``Factorization``), the direct MKL PARDISO binding (``pardiso``) and the CSR helpers
(``sparse``: canonical CSR, block assembly). Imports only ``ipcsim.runtime``.
"""
