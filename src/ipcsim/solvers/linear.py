"""Sparse symmetric positive definite solves: pypardiso (MKL) when installed, else cholespy (CHOLMOD) when
installed, else SciPy (SuperLU).

The pardiso backend factorises the upper triangle as a real SPD matrix (MKL's Cholesky, ``mtype=2``) and keeps
its symbolic analysis (fill-reducing ordering, elimination tree) for the next call when that call's matrix has
the same sparsity pattern: same shape and the very same ``indptr`` and ``indices`` array objects (the Newton
matrices of ``reduction.SystemMatrix.free_block`` share them while the pattern is unchanged). Only the numerical
factorisation then runs (pardiso phase 23 instead of 13). When the pattern does change but keeps its size and
has grown by at most ``PardisoSPD.ORDERING_REUSE_GROWTH`` (contact entries appearing), the new analysis reuses
the previous fill-reducing ordering (MKL's user permutation, iparm(5) = 1) and skips the nested dissection.
The caller may also pass an ordering of its own (``PardisoSPD.compute_ordering`` of a base pattern, e.g. the
contact-free Newton matrix of a model): analyses then take it, which keeps them independent of earlier solves.
If MKL rejects the matrix (not positive definite), the solve falls back to a general LU factorisation
(SciPy's SuperLU).
"""
from __future__ import annotations

import ctypes

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla
from numba import njit

try:  # a default dependency on x86_64 Linux/Windows (pyproject marker)
    import pypardiso as _pypardiso
except Exception:  # pragma: no cover - depends on the environment
    _pypardiso = None

try:  # optional: pip install cholespy (CHOLMOD in a wheel, also for arm64)
    import cholespy as _cholespy
except Exception:  # pragma: no cover - depends on the environment
    _cholespy = None


def available_backends() -> list[str]:
    """Names of the usable backends, fastest first: 'pardiso', 'cholespy', 'scipy'."""
    return (["pardiso"] if _pypardiso is not None else []) + (["cholespy"] if _cholespy is not None else []) + \
        ["scipy"]


def _solve_cholespy(a: sp.csr_matrix, b: np.ndarray) -> np.ndarray:
    """CHOLMOD (via cholespy) Cholesky of a (n, n) SPD CSR, fresh analysis each call; b (n,)."""
    n = a.shape[0]
    f = _cholespy.CholeskySolverD(n, np.ascontiguousarray(a.indptr, np.int32),
                                  np.ascontiguousarray(a.indices, np.int32),
                                  np.ascontiguousarray(a.data, np.float64), _cholespy.MatrixType.CSR)
    x = np.zeros((n, 1))
    f.solve(np.ascontiguousarray(b, np.float64).reshape(n, 1), x)
    return x.ravel()


@njit(cache=True)
def _upper_pattern(indptr, indices):
    """(positions (k,) int64, indptr (n + 1,) int32, indices (k,) int32) of the entries with column >= row of a
    CSR pattern, in CSR order: the upper triangle's own CSR pattern and where its entries sit in the input."""
    n = indptr.shape[0] - 1
    count = 0
    for r in range(n):
        for k in range(indptr[r], indptr[r + 1]):
            if indices[k] >= r:
                count += 1
    pos = np.empty(count, np.int64)
    u_ptr = np.empty(n + 1, np.int32)
    u_ind = np.empty(count, np.int32)
    t = 0
    u_ptr[0] = 0
    for r in range(n):
        for k in range(indptr[r], indptr[r + 1]):
            if indices[k] >= r:
                pos[t] = k
                u_ind[t] = indices[k]
                t += 1
        u_ptr[r + 1] = t
    return pos, u_ptr, u_ind


def _upper_csr(a: sp.csr_matrix, with_values: bool) -> tuple[np.ndarray, sp.csr_matrix]:
    """(positions (k,), upper triangle (n, n) CSR with int32 index arrays): pardiso's input for the SPD matrix a,
    holding a's values (or zeros, with_values False) and where they sit in a.data."""
    pos, u_ptr, u_ind = _upper_pattern(np.asarray(a.indptr), np.asarray(a.indices))
    u = sp.csr_matrix(a.shape, dtype=np.float64)
    u.indptr, u.indices = u_ptr, u_ind
    u.data = np.ascontiguousarray(a.data[pos], np.float64) if with_values else np.zeros(len(pos))
    u.has_sorted_indices = True
    return pos, u


def upper_triangle_positions(indptr: np.ndarray, indices: np.ndarray) -> np.ndarray:
    """Data positions (k,) int64 of the entries with column >= row of a CSR pattern, in CSR order."""
    return _upper_pattern(np.asarray(indptr), np.asarray(indices))[0]


class PardisoSPD:
    """MKL pardiso Cholesky with symbolic-analysis reuse for repeated patterns (see the module doc).

    Attributes (statistics): analyses (new patterns seen), ordering_reuses (analyses that reused the previous
    fill-reducing ordering), given_orderings (analyses that took the caller's ordering), factorizations
    (numerical factorisations done).
    """

    #: Largest relative growth of the number of entries for which a new pattern reuses the last ordering.
    ORDERING_REUSE_GROWTH = 0.1

    def __init__(self):
        if _pypardiso is None:
            raise ValueError("backend 'pardiso' needs pypardiso (pip install pypardiso)")
        self._solver = self._new_solver()
        self._pattern = None   # (n, indptr, indices) of the analysed matrix, compared by identity
        self._upper = None     # (positions, upper-triangle CSR with reusable index arrays)
        self._ordering = None  # (n, nnz, perm (n,) int32 one-based) of the last analysis that computed one
        self._computes_ordering = False
        self.analyses = 0
        self.ordering_reuses = 0
        self.given_orderings = 0
        self.factorizations = 0

    @staticmethod
    def _new_solver():
        """A pypardiso solver for mtype 2 with MKL's default iparm filled in (pardisoinit), so that iparm(5)
        (user permutation) is honoured; without pardisoinit the defaults apply and no ordering is reused."""
        s = _pypardiso.PyPardisoSolver(mtype=2)
        try:
            init = s.libmkl.pardisoinit
            init.restype = None
            init.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_int32), ctypes.c_void_p]
            init(s.pt.ctypes.data, ctypes.byref(ctypes.c_int32(2)), s.iparm.ctypes.data)
        except (AttributeError, OSError):  # pragma: no cover - unusual MKL builds
            s.iparm[:] = 0
        return s

    def _choose_ordering(self, n: int, nnz: int, given=None) -> None:
        """Set iparm(5)/perm for the next analysis: the given ordering (perm, nnz it was computed for), the last
        ordering, or a new one (computed by the analysis and kept for later)."""
        s = self._solver
        self._computes_ordering = False
        if s.iparm[0] != 1:
            return
        if given is not None and len(given[0]) == n and nnz <= (1.0 + self.ORDERING_REUSE_GROWTH) * given[1]:
            s.iparm[4] = 1
            s.perm = np.array(given[0], np.int32)
            self.given_orderings += 1
            return
        o = self._ordering
        if o is not None and o[0] == n and o[1] <= nnz <= (1.0 + self.ORDERING_REUSE_GROWTH) * o[1]:
            s.iparm[4] = 1
            s.perm = o[2].copy()
            self.ordering_reuses += 1
        else:
            s.iparm[4] = 2
            s.perm = np.zeros(n, np.int32)
            self._computes_ordering = True

    def _pattern_reset(self) -> None:
        """Forget the analysed pattern: the next solve runs a fresh analysis (phase 13)."""
        if self._pattern is not None:
            self._solver.set_phase(-1)
            self._solver._call_pardiso(self._upper[1], np.zeros(self._upper[1].shape[0]))
            self._pattern = None

    def _same_pattern(self, a: sp.csr_matrix) -> bool:
        p = self._pattern
        return p is not None and p[0] == a.shape[0] and p[1] is a.indptr and p[2] is a.indices

    def compute_ordering(self, a: sp.csr_matrix) -> tuple[np.ndarray, int]:
        """(perm (n,) int32, a.nnz): MKL's fill-reducing ordering of a's pattern (nested dissection), computed
        by a separate analysis, for ``solve(..., ordering=...)``; a: (n, n) CSR, sorted indices."""
        _, u = _upper_csr(a, True)
        s = self._new_solver()
        if s.iparm[0] != 1:  # pragma: no cover - unusual MKL builds: no user orderings
            return np.zeros(0, np.int32), a.nnz
        s.iparm[4] = 2
        s.perm = np.zeros(a.shape[0], np.int32)
        b = np.zeros(a.shape[0])
        s.set_phase(11)
        s._call_pardiso(u, b)
        perm = s.perm.copy()
        s.set_phase(-1)
        s._call_pardiso(u, b)
        return perm, a.nnz

    def _analyse(self, a: sp.csr_matrix, ordering=None) -> None:
        self._pattern_reset()  # release the previous factorisation and analysis
        self._upper = _upper_csr(a, False)
        self._pattern = (a.shape[0], a.indptr, a.indices)
        self._choose_ordering(a.shape[0], a.nnz, ordering)
        self.analyses += 1

    def solve(self, a: sp.csr_matrix, b: np.ndarray, ordering=None) -> np.ndarray:
        """x (n,) with a x = b; a (n, n) SPD CSR with sorted indices (use its upper triangle), b (n,).

        ordering: None, or (perm, nnz) from ``compute_ordering`` for a pattern that a's contains (a contact-free
        Newton matrix): a new analysis then takes it instead of computing one (while a has at most
        ``ORDERING_REUSE_GROWTH`` more entries), so that its result depends on a alone and not on earlier calls.
        """
        fresh = not self._same_pattern(a)
        if fresh:
            self._analyse(a, ordering)
        pos, u = self._upper
        u.data = np.ascontiguousarray(a.data[pos], np.float64)
        if np.any(np.diff(u.indptr) == 0):
            raise ValueError("Newton matrix has an empty row (singular)")
        self._solver.set_phase(13 if fresh else 23)
        b = np.asfortranarray(b, dtype=np.float64)
        try:
            x = self._solver._call_pardiso(u, b)
        except _pypardiso.pardiso_wrapper.PyPardisoError:
            self._pattern = None  # the factorisation state is unusable; analyse afresh next time
            try:
                self._solver.free_memory(everything=True)
            except _pypardiso.pardiso_wrapper.PyPardisoError:  # pragma: no cover - MKL state already gone
                pass
            self._solver = self._new_solver()
            self._ordering = None
            return spla.spsolve(a.tocsc(), b)
        if fresh and self._computes_ordering:
            self._ordering = (a.shape[0], a.nnz, self._solver.perm.copy())
        self.factorizations += 1
        return x


_PARDISO: PardisoSPD | None = None


def pardiso_solver() -> PardisoSPD:
    """The process-wide ``PardisoSPD`` used by ``solve_spd`` (it keeps the last analysed pattern)."""
    global _PARDISO
    if _PARDISO is None:
        _PARDISO = PardisoSPD()
    return _PARDISO


def forget_history() -> None:
    """Drop what the process-wide pardiso solver remembers from earlier solves (analysed pattern and reusable
    fill-reducing ordering), so the next solve depends on its matrix alone: the ordering decides the round-off, and
    a simulation resumed from a checkpoint must take the same steps as an uninterrupted one."""
    if _PARDISO is not None:
        _PARDISO._ordering = None
        _PARDISO._pattern_reset()


def resolve_backend(backend: str) -> str:
    """The backend name 'auto' stands for (the first of ``available_backends()``), else backend itself."""
    return available_backends()[0] if backend == "auto" else backend


def solve_spd(a: sp.spmatrix, b: np.ndarray, backend: str = "auto", ordering=None) -> np.ndarray:
    """Solve a x = b for a sparse SPD matrix a (n, n) and b (n,); backend 'auto' (the first of
    ``available_backends()``), 'pardiso', 'cholespy' or 'scipy'. ordering: pardiso only, see
    ``PardisoSPD.solve`` (ignored by the other backends)."""
    backend = resolve_backend(backend)
    if backend == "pardiso":
        if _pypardiso is None:
            raise ValueError("backend 'pardiso' needs pypardiso (pip install pypardiso)")
        if not (sp.isspmatrix_csr(a) and a.has_canonical_format):
            a = sp.csr_matrix(a, copy=True)
            a.sum_duplicates()  # sorted indices, no duplicates
        return pardiso_solver().solve(a, b, ordering)
    if backend == "cholespy":
        if _cholespy is None:
            raise ValueError("backend 'cholespy' needs cholespy (pip install cholespy)")
        a = sp.csr_matrix(a, copy=True)
        a.sum_duplicates()
        try:
            return _solve_cholespy(a, b)
        except ValueError:  # not positive definite: general LU
            return spla.spsolve(a.tocsc(), b)
    if backend == "scipy":
        return spla.spsolve(sp.csc_matrix(a), b)
    raise ValueError(f"unknown linear-solver backend {backend!r}; choose from {available_backends()}")
