"""Sparse symmetric positive definite (SPD) factorisations owned by their user: ``Factorization``.

    f = Factorization(backend="auto")     # 'auto' | 'pardiso' | 'cholespy' | 'scipy' | 'supernodal' | 'dense'
    f.factor(A, ordering=None)            # A (n, n) SPD CSR (sorted indices) [any consistent units]
    X = f.solve(B)                        # B (n,) or (n, k) -> X of B's shape, A X = B; as often as needed
    f.reset()                             # forget analysis and orderings: the next factor depends on A alone
    f.reset(keep_analysis=True)           # the same, keeping a pardiso analysis made with a given ordering

Backends (``available_backends()``, fastest first):

* 'pardiso': MKL pardiso through pypardiso (``pardiso.PardisoSPD``), Cholesky of the upper triangle. Keeps the
  symbolic analysis while the next A has the same pattern (same size and the very same ``indptr``/``indices``
  objects, as the Newton matrices of ``reduction.SystemMatrix.free_block`` while their pattern is unchanged):
  only the numerical factorisation runs then (also for an equal pattern in other arrays when the analysis took
  the same given ordering). A pattern that grew by at most 10 % reuses the last
  fill-reducing ordering; ``ordering=compute_ordering(A0)`` of a base pattern (the contact-free Newton matrix)
  makes every analysis take that ordering instead, so results depend on A and A0 alone.
* 'cholespy': CHOLMOD through cholespy. ``CholeskySolverD`` analyses and factorises in its constructor and has
  no numerical refactorisation, so every ``factor`` is a full analysis (counted in ``analyses``).
* 'scipy': SuperLU (``scipy.sparse.linalg.splu``) in symmetric mode with diagonal pivots (an L D L^T when all
  pivots are positive, which is checked). SciPy exposes no symbolic reuse: every ``factor`` is a full analysis.
* 'supernodal': this package's supernodal Cholesky in Numba (``supernodal.SupernodalCholesky``), always there.
  It keeps its symbolic analysis while the pattern is equal and the ordering the same, and factorises under the
  given ordering (``compute_ordering``'s, one-based as MKL writes it), else under one of its own per pattern
  (``compute_ordering`` where MKL is installed, SciPy's reverse Cuthill-McKee otherwise). Its fixed costs are a
  fraction of pardiso's: on the Newton systems of a few hundred to a few thousand rows it is the faster one.
* 'dense': LAPACK Cholesky (``scipy.linalg.cho_factor``/``cho_solve``) of ``A.toarray()``.

If A is not positive definite (MKL/CHOLMOD/LAPACK reject it, or a SuperLU pivot is not positive), ``factor``
falls back to a general pivoted LU (SuperLU; LAPACK ``getrf`` for 'dense'): ``method`` says which path ran
('cholesky', 'ldlt' or 'lu'), ``backend`` which backend.

'auto' takes 'dense' for n < ``dense_below`` (default ``DENSE_BELOW`` = 300: below ~200 rows dense wins outright, up
to ~300 once a step's fresh analysis is counted), 'supernodal' for n < ``SUPERNODAL_BELOW`` and, up to
``SUPERNODAL_MAX`` rows, for patterns whose factor it finds sparse (``SUPERNODAL_ENTRIES_PER_ROW``), else the first
of pardiso > cholespy > scipy; the timings behind the thresholds are in docs/linear_solvers.md.

History: a ``Factorization`` remembers only what its owner gave it (pattern, ordering); no state is kept
process-wide. A simulation step that starts with ``reset()`` (or a new object) is a function of its input alone,
so a run resumed from a checkpoint is bit-identical to an uninterrupted one.
"""
from __future__ import annotations

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp
import scipy.sparse.csgraph as csgraph
import scipy.sparse.linalg as spla

from .pardiso import PardisoSPD, compute_ordering, pardiso_available, upper_triangle_positions
from .supernodal import SupernodalCholesky

try:  # optional: pip install cholespy (CHOLMOD in a wheel, also for arm64)
    import cholespy as _cholespy
except Exception:  # pragma: no cover - depends on the environment
    _cholespy = None

__all__ = ["Factorization", "PardisoSPD", "available_backends", "compute_ordering", "resolve_backend",
           "solve_spd", "upper_triangle_positions", "DENSE_BELOW", "SUPERNODAL_BELOW", "SUPERNODAL_ENTRIES_PER_ROW",
           "SUPERNODAL_MAX"]

#: 'auto' factorises systems with fewer rows than this densely (LAPACK); measured, see docs/linear_solvers.md.
DENSE_BELOW = 300

#: 'auto' factorises systems with fewer rows than this (and at least ``dense_below``) with 'supernodal'.
SUPERNODAL_BELOW = 2000
#: ... and larger ones up to ``SUPERNODAL_MAX`` rows too where its analysis finds a sparse factor: at most this many
#: stored entries of L a row (thin bodies: the plate rack's finger cages, 34; a bulky 8 x 8 x 8 grid of nodes, 1,536
#: rows, has 178 and is pardiso's). Measured in docs/linear_solvers.md.
SUPERNODAL_ENTRIES_PER_ROW = 48
SUPERNODAL_MAX = 20000

def available_backends() -> list[str]:
    """Names of the usable backends: the sparse library ones fastest first, then 'supernodal' and 'dense' (always
    there)."""
    return (["pardiso"] if pardiso_available() else []) + (["cholespy"] if _cholespy is not None else []) + \
        ["scipy", "supernodal", "dense"]


def resolve_backend(backend: str, n: int | None = None, dense_below: int = DENSE_BELOW) -> str:
    """The backend 'auto' stands for ('dense' for n < dense_below, 'supernodal' for n < ``SUPERNODAL_BELOW``
    when n is given, else the first of ``available_backends()``), else backend itself. (``Factorization`` may
    still take 'supernodal' for a larger pattern whose factor is sparse: ``Factorization._sparse_factor``.)"""
    if backend != "auto":
        return backend
    if n is not None and n < dense_below:
        return "dense"
    if n is not None and n < SUPERNODAL_BELOW:
        return "supernodal"
    return available_backends()[0]


def _check_backend(backend: str) -> None:
    if backend == "auto" or backend in available_backends():
        return
    if backend == "pardiso":
        raise ValueError("backend 'pardiso' needs pypardiso (pip install pypardiso)")
    if backend == "cholespy":
        raise ValueError("backend 'cholespy' needs cholespy (pip install cholespy)")
    raise ValueError(f"unknown linear-solver backend {backend!r}; choose from {available_backends()}")


def _canonical_csr(a) -> sp.csr_matrix:
    """a itself when it is a canonical CSR (sorted, no duplicates: keeps its pattern objects), else a copy."""
    if sp.issparse(a) and a.format == "csr" and a.has_canonical_format:
        return a
    a = sp.csr_matrix(a, dtype=np.float64, copy=True)
    a.sum_duplicates()
    return a


class Factorization:
    """A factorisation of sparse SPD matrices owned by its user (see the module doc).

    backend: 'auto', 'pardiso', 'cholespy', 'scipy' or 'dense'; dense_below: 'auto' uses 'dense' for n below it.
    After ``factor``: ``backend`` (the backend used), ``method`` ('cholesky', 'ldlt' or 'lu'), ``n``.
    Statistics: analyses (symbolic analyses), factorizations (numerical factorisations, LU fallbacks included),
    lu_fallbacks, solves (``solve`` calls), ordering_reuses and given_orderings (pardiso analyses that reused the
    previous ordering / took the caller's).
    """

    def __init__(self, backend: str = "auto", dense_below: int = DENSE_BELOW):
        _check_backend(backend)
        self.requested = backend
        self.dense_below = int(dense_below)
        self.backend: str | None = None
        self.method: str | None = None
        self.n: int | None = None
        self._pardiso: PardisoSPD | None = None  # created on first use; keeps its analysis between factors
        self._supernodal: SupernodalCholesky | None = None  # likewise
        self._own_ordering = None  # (indptr, indices, perm): 'supernodal''s ordering of the last pattern given none
        self._given = (None, None)  # (ordering as given, its zero-based perm)
        self._solver = None  # b -> x for the current factor
        self._analyses = 0   # analyses by the backends without reuse (pardiso counts its own)
        self.factorizations = 0
        self.lu_fallbacks = 0
        self.solves = 0

    @property
    def analyses(self) -> int:
        return self._analyses + (self._pardiso.analyses if self._pardiso is not None else 0) + \
            (self._supernodal.analyses if self._supernodal is not None else 0)

    @property
    def ordering_reuses(self) -> int:
        return self._pardiso.ordering_reuses if self._pardiso is not None else 0

    @property
    def given_orderings(self) -> int:
        return self._pardiso.given_orderings if self._pardiso is not None else 0

    def reset(self, keep_analysis: bool = False) -> None:
        """Drop the factor, the symbolic analysis and the reusable ordering: the next ``factor`` gives the same
        bits as a new ``Factorization`` would (statistics are kept). keep_analysis: keep a pardiso analysis that
        took the caller's ordering (``pardiso.PardisoSPD.reset``): the next ``factor`` of the same pattern object
        with the same ordering object skips the analysis and still gives the bits of a new object."""
        if self._pardiso is not None:
            self._pardiso.reset(keep_analysis)
        if not keep_analysis:  # a supernodal analysis depends on the pattern and ordering alone: no history
            self._supernodal = None
            self._own_ordering = None
        self._solver = None
        self.backend = self.method = self.n = None

    def factor(self, a, ordering=None) -> "Factorization":
        """Factorise a (n, n) SPD (sparse, CSR with sorted indices keeps its pattern reusable; others are
        converted); returns self. ordering: None or (perm, nnz) from ``compute_ordering`` (pardiso, see
        ``pardiso.PardisoSPD.factor``, and supernodal; the other backends ignore it). Not positive definite:
        general LU."""
        a = _canonical_csr(a)
        if a.shape[0] != a.shape[1]:
            raise ValueError(f"matrix must be square, got shape {a.shape}")
        backend = resolve_backend(self.requested, a.shape[0], self.dense_below)
        if self.requested == "auto" and backend != "supernodal" and self._sparse_factor(a, ordering):
            backend = "supernodal"
        self._solver = None
        self.backend, self.method, self.n = backend, None, a.shape[0]
        if backend == "pardiso":
            self._factor_pardiso(a, ordering)
        elif backend == "cholespy":
            self._factor_cholespy(a)
        elif backend == "scipy":
            self._factor_scipy(a)
        elif backend == "supernodal":
            self._factor_supernodal(a, ordering)
        else:
            self._factor_dense(a)
        self.factorizations += 1
        return self

    def solve(self, b: np.ndarray) -> np.ndarray:
        """x with a x = b for the last factorised a; b (n,) or (n, k), x of b's shape (float64)."""
        if self._solver is None:
            raise RuntimeError("Factorization.solve before factor (or after reset)")
        b = np.asarray(b, dtype=np.float64)
        if b.ndim not in (1, 2) or b.shape[0] != self.n:
            raise ValueError(f"right-hand side of shape {b.shape} for a system of {self.n} rows")
        self.solves += 1
        return self._solver(b)

    def _lu(self, a: sp.csr_matrix) -> None:
        """General LU (SuperLU, partial pivoting) for a matrix the SPD path rejected."""
        lu = spla.splu(a.tocsc())
        self._solver, self.method = lu.solve, "lu"
        self.lu_fallbacks += 1

    def _factor_pardiso(self, a: sp.csr_matrix, ordering) -> None:
        if self._pardiso is None:
            self._pardiso = PardisoSPD()
        if self._pardiso.factor(a, ordering):
            self._solver, self.method = self._pardiso.solve, "cholesky"
        else:
            self._lu(a)

    def _supernodal_perm(self, a: sp.csr_matrix, ordering) -> np.ndarray:
        """The zero-based ordering for 'supernodal': the given one, else one of this pattern's own."""
        if ordering is not None:
            if self._given[0] is not ordering:
                perm = np.asarray(ordering[0], np.int64)
                self._given = (ordering, perm - 1 if len(perm) and perm.min() == 1 else perm)
            return self._given[1]
        own = self._own_ordering
        if own is None or not (np.array_equal(own[0], a.indptr) and np.array_equal(own[1], a.indices)):
            perm = np.asarray(compute_ordering(a)[0], np.int64) - 1 if pardiso_available() else np.zeros(0)
            if len(perm) != a.shape[0]:  # no MKL (or no user orderings in it)
                perm = np.asarray(csgraph.reverse_cuthill_mckee(a, symmetric_mode=True), np.int64)
            own = self._own_ordering = (a.indptr.copy(), a.indices.copy(), perm)
        return own[2]

    def _sparse_factor(self, a: sp.csr_matrix, ordering) -> bool:
        """'auto' above ``SUPERNODAL_BELOW`` rows: does the supernodal analysis of a's pattern (kept for the
        factorisation, or for the next call with this pattern) find at most ``SUPERNODAL_ENTRIES_PER_ROW`` entries of
        L a row? A function of the pattern and the ordering alone."""
        n = a.shape[0]
        if not SUPERNODAL_BELOW <= n < SUPERNODAL_MAX:
            return False
        sn = self._supernodal_factor()
        sn.prepare(a, self._supernodal_perm(a, ordering))
        return sn.factor_entries <= SUPERNODAL_ENTRIES_PER_ROW * n

    def _supernodal_factor(self) -> SupernodalCholesky:
        """The supernodal factorisation object, created on first use (it keeps its analysis between factors)."""
        if self._supernodal is None:
            self._supernodal = SupernodalCholesky()
        return self._supernodal

    def _factor_supernodal(self, a: sp.csr_matrix, ordering) -> None:
        if self._supernodal_factor().factor(a, self._supernodal_perm(a, ordering)):
            self._solver, self.method = self._supernodal.solve, "cholesky"
        else:
            self._lu(a)

    def _factor_cholespy(self, a: sp.csr_matrix) -> None:
        n = a.shape[0]
        self._analyses += 1
        try:
            f = _cholespy.CholeskySolverD(n, np.ascontiguousarray(a.indptr, np.int32),
                                          np.ascontiguousarray(a.indices, np.int32),
                                          np.ascontiguousarray(a.data, np.float64), _cholespy.MatrixType.CSR)
        except ValueError:  # not positive definite
            self._lu(a)
            return

        def solve(b: np.ndarray) -> np.ndarray:
            bb = np.ascontiguousarray(b.reshape(n, -1))
            x = np.zeros_like(bb)
            f.solve(bb, x)
            return x.reshape(b.shape)

        self._solver, self.method = solve, "cholesky"

    def _factor_scipy(self, a: sp.csr_matrix) -> None:
        self._analyses += 1
        try:
            lu = spla.splu(a.tocsc(), permc_spec="MMD_AT_PLUS_A", diag_pivot_thresh=0.0,
                           options={"SymmetricMode": True})
        except RuntimeError:  # exactly singular pivot
            self._lu(a)
            return
        # SPD <=> the symmetric elimination took diagonal pivots only, all positive
        if np.array_equal(lu.perm_r, lu.perm_c) and np.all(lu.U.diagonal() > 0.0):
            self._solver, self.method = lu.solve, "ldlt"
        else:
            self._lu(a)

    def _factor_dense(self, a: sp.csr_matrix) -> None:
        try:
            c = sla.cho_factor(a.toarray(), lower=False, overwrite_a=True, check_finite=False)
        except np.linalg.LinAlgError:  # not positive definite: LAPACK getrf
            lu = sla.lu_factor(a.toarray(), overwrite_a=True, check_finite=False)
            self._solver, self.method = (lambda b: sla.lu_solve(lu, b, check_finite=False)), "lu"
            self.lu_fallbacks += 1
            return
        self._solver, self.method = (lambda b: sla.cho_solve(c, b, check_finite=False)), "cholesky"


def solve_spd(a, b: np.ndarray, backend: str = "auto", ordering=None) -> np.ndarray:
    """x with a x = b for one sparse SPD matrix a (n, n) and b (n,) or (n, k): a one-off ``Factorization``
    (no analysis is kept). backend: as for ``Factorization``; ordering: pardiso only, see ``Factorization``."""
    return Factorization(backend).factor(a, ordering).solve(b)
