"""MKL pardiso (through pypardiso) as a sparse SPD Cholesky with a reusable symbolic analysis.

``PardisoSPD`` factorises the upper triangle of a real SPD matrix (MKL's Cholesky, ``mtype=2``) and keeps its
symbolic analysis (fill-reducing ordering, elimination tree) while the next matrix has the same sparsity pattern:
same size and the very same ``indptr`` and ``indices`` array objects (the Newton matrices of
``reduction.SystemMatrix.free_block`` share them while the pattern is unchanged). Only the numerical
factorisation then runs (pardiso phase 22 instead of 12); solves (phase 33) take one or many right-hand sides.

An analysis that took the caller's ordering (below) is also reused for an equal pattern in other arrays when the
same ordering object is given (a new step's Newton matrix whose contact entries repeat the last one's): it
depends on the pattern's content and that ordering alone.

When the pattern changes but keeps its size and has grown by at most ``PardisoSPD.ORDERING_REUSE_GROWTH``
(contact entries appearing), the new analysis reuses the previous fill-reducing ordering (MKL's user
permutation, iparm(5) = 1) and skips the nested dissection. The caller may also give an ordering of its own
(``compute_ordering`` of a base pattern, e.g. the contact-free Newton matrix of a model): analyses then take it,
which keeps them independent of earlier factorisations. ``reset`` forgets the analysed pattern and the reusable
ordering. Use it through ``linear.Factorization``, which adds the LU fallback for matrices MKL rejects.
"""
from __future__ import annotations

import ctypes
import functools
import os

import numpy as np
import scipy.sparse as sp
from numba import njit

from ..runtime.threads import cpu_cores

try:  # a default dependency on x86_64 Linux/Windows (pyproject marker)
    import pypardiso as _pypardiso
except Exception:  # pragma: no cover - depends on the environment
    _pypardiso = None


def pardiso_available() -> bool:
    """Whether pypardiso (and so MKL pardiso) can be used."""
    return _pypardiso is not None


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


def upper_triangle_positions(indptr: np.ndarray, indices: np.ndarray) -> np.ndarray:
    """Data positions (k,) int64 of the entries with column >= row of a CSR pattern, in CSR order."""
    return _upper_pattern(np.asarray(indptr), np.asarray(indices))[0]


def _upper_csr(a: sp.csr_matrix) -> tuple[np.ndarray, sp.csr_matrix]:
    """(positions (k,), upper triangle (n, n) CSR with int32 index arrays and a's values): pardiso's input for
    the SPD matrix a, and where its entries sit in a.data (to refill it for the same pattern)."""
    pos, u_ptr, u_ind = _upper_pattern(np.asarray(a.indptr), np.asarray(a.indices))
    u = sp.csr_matrix(a.shape, dtype=np.float64)
    u.indptr, u.indices = u_ptr, u_ind
    u.data = np.ascontiguousarray(a.data[pos], np.float64)
    u.has_sorted_indices = True
    return pos, u


@functools.lru_cache(maxsize=1)
def _mkl_rt_path() -> str:
    """Path of the mkl_rt library that pypardiso finds (its search runs ldconfig and globs: ~0.1 s)."""
    return _pypardiso.PyPardisoSolver(mtype=2).libmkl._name


def _new_pypardiso():
    """A new ``PyPardisoSolver(mtype=2)``, pointed at the library found once (pypardiso's documented
    ``PYPARDISO_MKL_RT`` variable, set for the construction only unless the user set it), so that a handle costs
    microseconds instead of a library search."""
    if "PYPARDISO_MKL_RT" in os.environ:
        return _pypardiso.PyPardisoSolver(mtype=2)
    os.environ["PYPARDISO_MKL_RT"] = _mkl_rt_path()
    try:
        return _pypardiso.PyPardisoSolver(mtype=2)
    finally:
        del os.environ["PYPARDISO_MKL_RT"]


#: MKL's threading layer (``MKL_Set_Threading_Layer``: 0 Intel OpenMP, 1 sequential, 3 GNU OpenMP), pinned before
#: MKL's first call. Left alone, mkl_rt picks it at its first call from the process's state: GNU OpenMP when
#: libgomp is already loaded (Numba's 'omp' threading layer, once a parallel kernel has run), else Intel OpenMP
#: (libiomp5). The layers give different round-off even on one thread, so a Newton solve's bits (and, on a
#: delicate scene such as the 20_pencilStickSlip IPC sample, whether it converges) depended on whether some
#: earlier code in the process (e.g. a ``FacePDSolver``, which factorises before any parallel kernel) called
#: pardiso first. GNU: what a simulation gets when its kernels start first, and one OpenMP runtime with Numba's.
#: A user's MKL_THREADING_LAYER is respected.
MKL_THREADING_LAYER = 3

_layer_pinned = False


def _pin_threading_layer(libmkl) -> None:
    """Sets MKL's threading layer to ``MKL_THREADING_LAYER`` once per process, before MKL's first call (see
    there); a no-op when the user set MKL_THREADING_LAYER or the library has no setter."""
    global _layer_pinned
    if _layer_pinned:
        return
    _layer_pinned = True
    if "MKL_THREADING_LAYER" in os.environ:
        return
    try:
        setter = libmkl.MKL_Set_Threading_Layer
    except AttributeError:  # pragma: no cover - unusual MKL builds
        return
    setter.restype = ctypes.c_int
    setter.argtypes = [ctypes.c_int]
    setter(MKL_THREADING_LAYER)


#: iparm(8) = 0 instead of pardisoinit's 2: MKL's defaults refine every solution twice (three substitutions and
#: two products per solve), which a Cholesky solution of an SPD matrix does not need: on the small-scene teddy's
#: Newton matrix (1,230 rows) the relative residual is 3.1e-14 without and 2.4e-14 with refinement, the solutions
#: differ by 2.9e-14 (relative), and a solve takes 0.11-0.12 ms instead of 0.26-0.30. MKL still refines twice
#: when it had to perturb pivots (the meaning of 0).
ITERATIVE_REFINEMENT = 0

#: Systems with fewer rows run on one MKL thread on machines with fewer than 4 cores (see the module doc); a
#: tenth of it on larger machines, where the second thread rarely has to wait for a core.
SERIAL_BELOW_ROWS = 12_000


def _serial_below() -> int:
    return SERIAL_BELOW_ROWS if cpu_cores() < 4 else SERIAL_BELOW_ROWS // 10


_LOCAL_SETTERS: dict = {}  # libmkl -> its MKL_Set_Num_Threads_Local (None: the library has none)


def _set_local_threads(libmkl):
    """Sets this thread's MKL thread count to 1 and returns the setter (call it with 0 to restore MKL's global
    count), or None when the library has no thread-local setting. The setter is looked up once per library."""
    try:
        setter = _LOCAL_SETTERS[libmkl]
    except KeyError:
        setter = getattr(libmkl, "MKL_Set_Num_Threads_Local", None)
        if setter is not None:
            setter.restype = ctypes.c_int
            setter.argtypes = [ctypes.c_int]
        _LOCAL_SETTERS[libmkl] = setter
    if setter is not None:
        setter(1)
    return setter


class _MKLHandle:
    """One MKL pardiso handle (``pt``, ``iparm``, ``perm``) for real SPD matrices, driven phase by phase.

    pypardiso's public API (``PyPardisoSolver.factorize`` / ``.solve``) always runs a full analysis (phase 12
    or 13), recognises an already factorised matrix by comparing a stored copy of it, and never calls
    ``pardisoinit``, so MKL ignores a user permutation. Phase-level control (11: ordering only, 12: analysis +
    factorisation, 22: numerical factorisation only, 33: solve, -1: release) and a caller-given ordering
    therefore call MKL's ``pardiso`` and ``pardisoinit`` directly, from the library pypardiso found (its public
    ``libmkl``); this class is the only place that does. The pattern's one-based index arrays are kept for as long
    as the pattern's arrays are the same objects (pypardiso's private ``_call_pardiso`` converted them at every
    call: on the teddy grasp's 393-row Newton matrix a solve took 63 us with it and takes 41 us). Public parts of
    pypardiso used: the constructor, ``pt``/``iparm``/``perm``, ``libmkl`` and ``PyPardisoError``.
    """

    def __init__(self):
        if _pypardiso is None:
            raise ValueError("backend 'pardiso' needs pypardiso (pip install pypardiso)")
        self._s = _new_pypardiso()
        _pin_threading_layer(self._s.libmkl)
        self._pardiso = self._s.libmkl["pardiso"]  # a function pointer of our own (pypardiso's keeps its argtypes)
        self._pardiso.restype = None
        self._pardiso.argtypes = [ctypes.c_void_p] * 16
        self._scalars = np.zeros(8, np.int32)  # maxfct, mnum, mtype, phase, n, nrhs, msglvl, error
        self._one_based = None                 # (indptr, indices, ia, ja): the last pattern's one-based arrays
        self.init()

    @property
    def iparm(self) -> np.ndarray:
        return self._s.iparm

    @property
    def perm(self) -> np.ndarray:
        return self._s.perm

    @perm.setter
    def perm(self, value: np.ndarray) -> None:
        self._s.perm = np.ascontiguousarray(value, np.int32)

    def init(self) -> None:
        """MKL's defaults for mtype 2 (``pardisoinit``: clears ``pt``, fills ``iparm``), as for a new handle, so
        that iparm(5) (user permutation) is honoured; without pardisoinit no ordering can be given."""
        s = self._s
        try:
            init = s.libmkl.pardisoinit
            init.restype = None
            init.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_int32), ctypes.c_void_p]
            init(s.pt.ctypes.data, ctypes.byref(ctypes.c_int32(2)), s.iparm.ctypes.data)
        except (AttributeError, OSError):  # pragma: no cover - unusual MKL builds
            s.pt[:] = 0
            s.iparm[:] = 0
        if s.iparm[0] == 1:
            s.iparm[7] = ITERATIVE_REFINEMENT  # iparm(8): see ITERATIVE_REFINEMENT
        s.perm = np.zeros(0, np.int32)

    def run(self, phase: int, u: sp.csr_matrix, b: np.ndarray) -> np.ndarray:
        """pardiso phase on the upper-triangle CSR u (n, n) and right-hand sides b (n,) or (n, k) (Fortran order);
        raises ``PardisoError`` when MKL reports an error (e.g. -4: not positive definite). One MKL thread for
        fewer than ``SERIAL_BELOW_ROWS`` rows (see the module doc)."""
        local = _set_local_threads(self._s.libmkl) if u.shape[0] < _serial_below() else None
        try:
            return self._call(phase, u, b)
        finally:
            if local is not None:
                local(0)  # back to MKL's global setting

    def _call(self, phase: int, u: sp.csr_matrix, b: np.ndarray) -> np.ndarray:
        """One call of MKL's pardiso: the phase on u (float64 data, int32 indices) and b (float64, Fortran order);
        returns x (C order), raises ``PardisoError`` with MKL's error code."""
        kept = self._one_based
        if kept is None or kept[0] is not u.indptr or kept[1] is not u.indices:
            kept = self._one_based = (u.indptr, u.indices, u.indptr.astype(np.int32) + 1,
                                      u.indices.astype(np.int32) + 1)
        s, sc = self._s, self._scalars
        sc[:] = (1, 1, 2, phase, u.shape[0], 1 if b.ndim == 1 else b.shape[1], 0, 0)
        x = np.zeros_like(b)
        at = sc.ctypes.data
        self._pardiso(s.pt.ctypes.data, at, at + 4, at + 8, at + 12, at + 16, u.data.ctypes.data,
                      kept[2].ctypes.data, kept[3].ctypes.data, s.perm.ctypes.data, at + 20, s.iparm.ctypes.data,
                      at + 24, b.ctypes.data, x.ctypes.data, at + 28)
        if sc[7] != 0:
            raise PardisoError(int(sc[7]))
        return np.ascontiguousarray(x)

    def release(self) -> None:
        """Free MKL's memory for this handle (phase -1) and return it to its initial state."""
        try:
            self.run(-1, sp.csr_matrix((0, 0)), np.zeros(0))
        except PardisoError:  # pragma: no cover - MKL state already gone
            pass
        self.init()


PardisoError = _pypardiso.pardiso_wrapper.PyPardisoError if _pypardiso is not None else RuntimeError


class PardisoSPD:
    """MKL pardiso Cholesky with symbolic-analysis reuse for repeated patterns (see the module doc).

    Attributes (statistics): analyses (new patterns analysed), ordering_reuses (analyses that reused the
    previous fill-reducing ordering), given_orderings (analyses that took the caller's ordering),
    factorizations (numerical factorisations done), solves (phase-33 calls).
    """

    #: Largest relative growth of the number of entries for which a new pattern reuses the last ordering.
    ORDERING_REUSE_GROWTH = 0.1

    #: Systems with fewer rows take a caller's ordering for up to ``SMALL_GIVEN_GROWTH`` more entries (instead of
    #: ``ORDERING_REUSE_GROWTH``): there a new ordering costs more than the fill it saves. Teddy grasp, low
    #: embedding (351 rows; contact makes the pattern 1.55x the contact-free one): analysis + factorisation
    #: 0.65-0.70 ms with the contact-free ordering against 1.32 ms computing a new one, numerical
    #: refactorisations 273 against 278-283 us.
    SMALL_ROWS = 2_000
    SMALL_GIVEN_GROWTH = 1.0

    def __init__(self):
        self._mkl = _MKLHandle()
        self._pattern = None   # (n, indptr, indices) of the factorised matrix, compared by identity
        self._upper = None     # (positions, upper-triangle CSR holding the last factorised values)
        self._ordering = None  # (n, nnz, perm (n,) int32 one-based) of the last analysis that computed one
        self._factored = False
        self._given = None     # the caller's ordering object the current analysis took, else None
        self._kept = False     # the analysis outlived a ``reset(keep_analysis=True)``
        self.analyses = 0
        self.ordering_reuses = 0
        self.given_orderings = 0
        self.factorizations = 0
        self.solves = 0

    def reset(self, keep_analysis: bool = False) -> None:
        """Forget the analysed pattern, the factor and the reusable ordering: the next ``factor`` depends on its
        matrix (and given ordering) alone, as in a new object. keep_analysis: keep the analysis when it took the
        caller's ordering (it depends on the pattern and that ordering alone); the next ``factor`` reuses it only
        for the same pattern object and the same ordering object, with the bits of a fresh analysis."""
        self._ordering = None
        if keep_analysis and self._factored and self._given is not None:
            self._kept = True
            return
        if self._factored:
            self._mkl.release()
        self._pattern = self._upper = None
        self._factored = False
        self._given = None

    def _choose_ordering(self, n: int, nnz: int, given=None) -> bool:
        """Set iparm(5)/perm for the next analysis: the given ordering (perm, nnz it was computed for), the last
        ordering, or a new one; True when the analysis computes a new one (to keep for later)."""
        m = self._mkl
        if m.iparm[0] != 1:  # pragma: no cover - pardisoinit unavailable: MKL's defaults, no user orderings
            return False
        growth = self.SMALL_GIVEN_GROWTH if n < self.SMALL_ROWS else self.ORDERING_REUSE_GROWTH
        if given is not None and len(given[0]) == n and nnz <= (1.0 + growth) * given[1]:
            m.iparm[4], m.perm = 1, np.array(given[0], np.int32)
            self.given_orderings += 1
            self._given = given
            return False
        o = self._ordering
        if o is not None and o[0] == n and o[1] <= nnz <= (1.0 + self.ORDERING_REUSE_GROWTH) * o[1]:
            m.iparm[4], m.perm = 1, o[2].copy()
            self.ordering_reuses += 1
            return False
        m.iparm[4], m.perm = 2, np.zeros(n, np.int32)
        return True

    def _same_pattern(self, a: sp.csr_matrix, ordering) -> bool:
        """Whether a's analysis is the current one: the very same pattern objects (and, after a
        ``reset(keep_analysis=True)``, the same given ordering), or, when the current analysis took the caller's
        ordering and that same ordering object is given again, an equal pattern in other arrays (such an analysis
        depends on the pattern's content and the ordering alone, so reusing it gives the bits of a fresh one)."""
        p = self._pattern
        if p is None or p[0] != a.shape[0]:
            return False
        if p[1] is a.indptr and p[2] is a.indices:
            return not self._kept or self._given is ordering
        if ordering is None or self._given is not ordering or len(p[2]) != len(a.indices):
            return False
        return bool(np.array_equal(p[1], a.indptr) and np.array_equal(p[2], a.indices))

    def factor(self, a: sp.csr_matrix, ordering=None) -> bool:
        """Cholesky of a (n, n) SPD CSR with sorted indices (its upper triangle is read); False (and a state as
        after ``reset``) when MKL rejects it (not positive definite), True otherwise.

        ordering: None, or (perm, nnz) from ``compute_ordering`` for a pattern that a's contains (a contact-free
        Newton matrix): a new analysis then takes it instead of computing one (while a has at most
        ``ORDERING_REUSE_GROWTH`` more entries, ``SMALL_GIVEN_GROWTH`` below ``SMALL_ROWS`` rows), so that the result
        depends on a alone and not on earlier calls.
        """
        fresh = not self._same_pattern(a, ordering)
        self._kept = False
        computes = False
        if fresh:
            self._given = None
            if np.any(np.diff(a.indptr) == 0):  # MKL would crash on it
                raise ValueError("matrix has an empty row (singular)")
            if self._factored:
                self._mkl.release()
            self._pattern, self._factored = None, False
            self._upper = _upper_csr(a)
            computes = self._choose_ordering(a.shape[0], a.nnz, ordering)
            self.analyses += 1
        else:
            pos, u = self._upper
            u.data = np.ascontiguousarray(a.data[pos], np.float64)
        try:
            self._mkl.run(12 if fresh else 22, self._upper[1], np.zeros((a.shape[0], 1), order="F"))
        except PardisoError:  # the MKL state is unusable: free it, analyse afresh next time
            self._mkl.release()
            self._pattern = self._upper = self._ordering = self._given = None
            self._factored = False
            return False
        self._pattern = (a.shape[0], a.indptr, a.indices)
        self._factored = True
        if computes:
            self._ordering = (a.shape[0], a.nnz, self._mkl.perm.copy())
        self.factorizations += 1
        return True

    def solve(self, b: np.ndarray) -> np.ndarray:
        """x with a x = b for the last factorised a; b (n,) or (n, k), x the same shape."""
        self.solves += self._factored  # counted as before: once a factor exists, even if MKL then fails
        return self._substitute(33, b, "solve")

    def forward(self, b: np.ndarray) -> np.ndarray:
        """y = L^-1 P b for the last factorised a = P^T L L^T P (MKL's Cholesky, phase 331: the forward
        substitution alone); b (n,) or (n, k), y the same shape. ``backward(forward(b))`` is ``solve(b)`` to the
        bit (a full solve is these two passes), and y . y = b . a^-1 b."""
        return self._substitute(331, b, "forward")

    def backward(self, y: np.ndarray) -> np.ndarray:
        """x = P^T L^-T y for the last factorised a (phase 333: the backward substitution alone); y (n,) or
        (n, k), x the same shape (see ``forward``)."""
        return self._substitute(333, y, "backward")

    def _substitute(self, phase: int, b: np.ndarray, name: str) -> np.ndarray:
        """pardiso's solve phase 33 (both passes), 331 (forward) or 333 (backward) on b with the current factor;
        name: the calling method, for the error before any factor."""
        if not self._factored:
            raise RuntimeError(f"PardisoSPD.{name} before a successful factor")
        return self._mkl.run(phase, self._upper[1], np.asfortranarray(b, dtype=np.float64))

    def compute_ordering(self, a: sp.csr_matrix) -> tuple[np.ndarray, int]:
        """(perm (n,) int32, a.nnz): the module's ``compute_ordering`` of a's pattern, computed by separate
        analyses that leave this object untouched; a: (n, n) CSR, sorted indices."""
        return compute_ordering(a)


#: The fill-reducing orderings ``compute_ordering`` compares (MKL's iparm(2)), the first winning ties: 2 nested
#: dissection (METIS, MKL's default), 0 minimum degree. Measured on each run's first Newton matrix, predicted Mflop
#: nested dissection / minimum degree, and the median refactorisation over 40 of the run's matrices with each
#: ordering: plate rack (two thin finger cages, 7,872 rows) 10 / 7, 3.40 / 2.74 ms; teddy grasp in full space (1,530
#: rows) 9 / 5, 1.32 / 1.14 ms; its low embedding (393 rows) 0 / 0, a tie: nested dissection, whose 0.30 ms beat
#: 0.36 ms there though minimum degree predicted fewer entries (12,232 against 14,059). A bulky cube of nodes
#: (16^3) goes the other way.
ORDERING_METHODS = (2, 0)


def compute_ordering(a: sp.csr_matrix) -> tuple[np.ndarray, int]:
    """(perm (n,) int32, a.nnz): a fill-reducing ordering of a's pattern, for ``PardisoSPD.factor(...,
    ordering=...)``: of MKL's orderings in ``ORDERING_METHODS``, the one whose Cholesky factor MKL's analysis
    predicts the fewest floating-point operations for, in whole Mflop (the first on a tie).
    a: (n, n) CSR with sorted indices. Depends on a's pattern alone."""
    _, u = _upper_csr(a)
    best = None
    for method in ORDERING_METHODS:
        m = _MKLHandle()
        if m.iparm[0] != 1:  # pragma: no cover - unusual MKL builds: no user orderings
            return np.zeros(0, np.int32), a.nnz
        m.iparm[1], m.iparm[18] = method, -1  # iparm(19) = -1: report the factorisation's Mflop
        m.iparm[4], m.perm = 2, np.zeros(a.shape[0], np.int32)
        m.run(11, u, np.zeros((a.shape[0], 1), order="F"))
        cost = int(m.iparm[18])
        if best is None or cost < best[0]:
            best = (cost, m.perm.copy())
        m.release()
    return best[1], a.nnz
