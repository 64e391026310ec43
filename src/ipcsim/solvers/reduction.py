"""The Newton matrix kept as its terms, and its free-coordinate block assembled on a cached sparsity pattern.

    H = w_E E + diag(d) + sum_k w_k J^T C_k J + sum_j w_j F_j                     (3n, 3n) [kg or N/m]

E: the elastic Hessian on the model's fixed tet pattern (``elastic.TetBlockPattern``), d (3n,) the lumped
mass diagonal, C_k surface Hessians (contact, friction) on the collision surface (3 n_surface)^2 with J the
model's map from nodes to surface (``geometry.surface_map.SurfaceMap``: a selection for full-space bodies, up to
four weights per surface vertex for embedded and affine bodies), F_j node-coordinate terms (lagged damping, a
general mass matrix). The solver needs H_ff (free rows and columns) for the
Newton system and H_fp p_p (free rows, prescribed columns) for prescribed motions. Building H with SciPy sums and
then slicing ``H[free][:, free]`` costs several passes over all entries per iteration; here H_ff is written
straight into a CSR pattern that is cached per free mask:

* pattern = (E restricted to free x free) U (free diagonal) U (surface entries seen so far); the elastic part is
  copied with a precomputed gather map, the surface terms are added row by row (a surface
  entry (s, t) of C goes to the k x k node-coordinate pairs of J's rows s and t with weight J_sa C_st J_tb,
  summed per reduced row in a dense scratch row, ``_scatter_mapped``, then added to the pattern in one walk
  along its row, ``_flush_row``; a selection is the case k = 1, weight 1, kept on its own exact path);
* when a surface term has entries outside the pattern, the pattern grows by them (a new pattern object), so
  the linear solver's symbolic analysis can be reused for as long as the pattern object stays the same
  (``linear.Factorization`` recognises it by identity); the fill's data moves to the grown pattern with the
  missed values added (``FreePattern.carried``: the bits of a second fill, without its cost); a step whose fill
  misses the same entries as a recent one takes the pattern grown then (``PatternCache.grown``);
* a node-coordinate term whose entries all lie in the pattern (a general mass matrix) is gathered with a map kept
  on the pattern (``_full_term_gather``), not scattered row by row.
The result equals the SciPy path to round-off (the same additions in the same order: bit-for-bit in practice).

The scatter and gather kernels (``_flush_row``, ``_gather``, ``_scatter_surface``, ``_scatter_mapped``) read their
indices as unsigned integers (``numba.uint64``; every index there is >= 0 once the -1 of "not free" is tested):
with signed ones Numba adds a negative-index wrap-around to every array access. The same
additions in the same order, so the same bits; ``_scatter_mapped`` on the teddy grasp's contact Hessians (400
calls captured from the paper set-up's low run, one thread, old and new in turn): 14.9-15.5 -> 10.2-10.8 ms.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from numba import njit
from numba import uint64 as U

from ..linalg.sparse import canonical_csr, csr_lower_bound

#: A pattern grown this many times since its base is rebuilt from the current matrix's entries instead (dropping
#: the stale surface entries of earlier matrices; a solver clears its pattern every step, so few accumulate).
MAX_GROWTHS = 8

#: Grown patterns a ``PatternCache`` keeps, each with its parent and the set of entries it added: a later fill that
#: misses the same set on the same parent takes the kept object instead of growing it again. A grown pattern is a
#: function of its parent and that set, so steps stay history-free (plate rack, clean run: 475 of 526 growths
#: repeat one seen before, each 0.7 ms of ``_grow_rows``).
GROWN_KEPT = 4


@njit(cache=True, inline="always")
def _flush_row(r, indptr, indices, data, acc, mark, touched, nt, miss_r, miss_c, miss_v, n_miss):
    """data[(r, c)] += acc[c] for the nt marked columns touched[:nt] of reduced row r, found by one walk along
    the pattern's row r (cheaper than a binary search per entry once a row has more than a few entries); the
    columns not in the pattern go to miss_r/miss_c with their values in miss_v (in touched order, while there is
    room). Clears acc and mark for those columns; returns the updated count of misses. r and the entries of
    touched are uint64, like the indices the kernels here read (module note on unsigned indices)."""
    for pp in range(U(indptr[r]), U(indptr[r + U(1)])):
        c = U(indices[pp])
        if mark[c]:
            data[pp] += acc[c]
            acc[c] = 0.0
            mark[c] = False
    for t in range(nt):
        c = touched[t]
        if mark[c]:
            if n_miss < len(miss_r):
                miss_r[n_miss] = r
                miss_c[n_miss] = c
                miss_v[n_miss] = acc[c]
            n_miss += 1
            acc[c] = 0.0
            mark[c] = False
    return n_miss


@njit(cache=True)
def _gather(data, dst, src, values, weight, add):
    """data[dst] = weight * values[src] (add False) or data[dst] += weight * values[src] (add True), in one pass
    (NumPy's fancy indexing makes two temporaries); the same arithmetic, so the same bits."""
    if add:
        for k in range(dst.shape[0]):
            data[U(dst[k])] += weight * values[U(src[k])]
    else:
        for k in range(dst.shape[0]):
            data[U(dst[k])] = weight * values[U(src[k])]


@njit(cache=True)
def _scatter_surface(weight, s_indptr, s_indices, s_data, surf_to_red, indptr, indices, data, miss_r, miss_c,
                     miss_v):
    """data += weight * C for C's entries in free rows/cols (surf_to_red: reduced index of each C row/column, -1
    when not free); returns how many were outside the pattern (their reduced
    (row, col) and value go to miss_r/miss_c/miss_v while there is room)."""
    n_miss = 0
    n_red = len(indptr) - 1
    acc = np.zeros(n_red)
    mark = np.zeros(n_red, np.bool_)
    touched = np.empty(n_red, np.uint64)
    for rs in range(U(len(s_indptr) - 1)):
        ri = surf_to_red[rs]
        if ri < 0:
            continue
        r, nt = U(ri), U(0)
        for k in range(U(s_indptr[rs]), U(s_indptr[rs + U(1)])):
            ci = surf_to_red[U(s_indices[k])]
            if ci < 0:
                continue
            c = U(ci)
            if not mark[c]:
                mark[c] = True
                touched[nt] = c
                nt += U(1)
            acc[c] += weight * s_data[k]
        if nt:
            n_miss = _flush_row(r, indptr, indices, data, acc, mark, touched, nt, miss_r, miss_c, miss_v, n_miss)
    return n_miss


@njit(cache=True)
def _scatter_mapped(weight, s_indptr, s_indices, s_data, red, w, jt_indptr, jt_src, jt_w, indptr, indices, data,
                    miss_r, miss_c, miss_v):
    """data += weight * J^T C J for a surface matrix C (CSR) and a weighted map: surface coordinate i depends
    on the reduced coordinates red[i, a] (-1: prescribed or padding) with weights w[i, a]; (jt_indptr, jt_src,
    jt_w) is J^T by reduced row (``_transpose_map``). Each reduced row r of the product is summed in a dense
    scratch row first (sum over the surface rows of J^T's row r, their C entries, and J's weights), so every
    product entry is added to the pattern once, however many surface coordinates share its nodes (an
    embedded triangle's three vertices usually share their coarse tet). Returns how many entries fell outside the
    pattern (their reduced (row, col) and value go to miss_r/miss_c/miss_v while there is room)."""
    n_miss = 0
    k = U(red.shape[1])
    n_red = U(len(jt_indptr) - 1)
    acc = np.zeros(n_red)
    mark = np.zeros(n_red, np.bool_)
    touched = np.empty(n_red, np.uint64)
    for r in range(n_red):
        nt = U(0)
        for q in range(U(jt_indptr[r]), U(jt_indptr[r + U(1)])):
            rs = U(jt_src[q])
            wa = weight * jt_w[q]
            for p in range(U(s_indptr[rs]), U(s_indptr[rs + U(1)])):
                cs = U(s_indices[p])
                v = wa * s_data[p]
                for b in range(k):
                    ci = red[cs, b]
                    if ci < 0:
                        continue
                    c = U(ci)
                    if not mark[c]:
                        mark[c] = True
                        touched[nt] = c
                        nt += U(1)
                    acc[c] += v * w[cs, b]
        if nt:
            n_miss = _flush_row(r, indptr, indices, data, acc, mark, touched, nt, miss_r, miss_c, miss_v, n_miss)
    return n_miss


def _transpose_map(red: np.ndarray, w: np.ndarray, n_red: int):
    """J^T by reduced row: (indptr (n_red + 1,), surface coordinate (m,), weight (m,)) of the weighted map
    (red, w) (see ``_scatter_mapped``), surface coordinates increasing within a row."""
    flat = red.ravel()
    keep = np.flatnonzero(flat >= 0)
    rows = flat[keep]
    order = np.argsort(rows, kind="stable")
    src = (keep // red.shape[1])[order]
    indptr = np.zeros(n_red + 1, np.int64)
    np.cumsum(np.bincount(rows, minlength=n_red), out=indptr[1:])
    return indptr, np.ascontiguousarray(src), np.ascontiguousarray(w.ravel()[keep][order])


@njit(cache=True)
def _grow_rows(old_indptr, old_indices, rows, cols, nf):
    """The CSR pattern (n rows, sorted) old_indptr/old_indices with the entries (rows[k], cols[k]) added
    (duplicates and entries already there allowed), row by row in one pass: each row's new columns are found with
    a stamp per column (nf columns), sorted, and merged with the old ones. Returns (indptr, indices, moved): the
    merged pattern (the old arrays' dtypes) and moved (n_old,), the new position of each old entry."""
    n, m = old_indptr.shape[0] - 1, rows.shape[0]
    start = np.zeros(n + 1, np.int64)                 # the new entries bucketed by row, in their order
    for k in range(m):
        start[rows[k] + 1] += 1
    for r in range(n):
        start[r + 1] += start[r]
    put = start[:n].copy()
    bucket = np.empty(m, np.int64)
    for k in range(m):
        bucket[put[rows[k]]] = cols[k]
        put[rows[k]] += 1
    stamp = np.full(max(nf, 1), -1, np.int64)
    n_old = old_indices.shape[0]
    indices = np.empty(n_old + m, old_indices.dtype)
    indptr = np.empty(n + 1, old_indptr.dtype)
    moved = np.empty(n_old, np.int64)
    fresh = np.empty(m, np.int64)
    indptr[0] = 0
    t = 0
    for r in range(n):
        lo, hi = old_indptr[r], old_indptr[r + 1]
        for p in range(lo, hi):
            stamp[old_indices[p]] = r
        nt = 0
        for q in range(start[r], start[r + 1]):
            c = bucket[q]
            if stamp[c] != r:
                stamp[c] = r
                fresh[nt] = c
                nt += 1
        fresh[:nt].sort()
        i, j = lo, 0
        while i < hi or j < nt:
            if j < nt and (i >= hi or fresh[j] < old_indices[i]):
                indices[t] = fresh[j]
                j += 1
            else:
                indices[t] = old_indices[i]
                moved[i] = t
                i += 1
            t += 1
        indptr[r + 1] = t
    return indptr, indices[:t].copy(), moved


@njit(cache=True)
def _carry(indptr, indices, moved, data, rows, cols, values):
    """Data (nnz,) on the pattern indptr/indices: data (n_old,) at positions moved, then values[k] added at
    (rows[k], cols[k]) (entries of the pattern) in order, found by a binary search along the row."""
    out = np.zeros(indices.shape[0])
    for i in range(moved.shape[0]):
        out[moved[i]] = data[i]
    for k in range(rows.shape[0]):
        out[csr_lower_bound(indptr, indices, rows[k], cols[k])] += values[k]
    return out


def _full_term_gather(pat, h: sp.csr_matrix):
    """(dst, src) int64 with h.data[src] going to pat's data[dst] for the entries of the node-coordinate matrix h
    (canonical CSR) in free rows and columns, or None when one of them lies outside pat; kept on pat for h's pattern
    (a constant matrix such as a general mass matrix is added to every Newton matrix). The
    additions are those of ``_scatter_surface`` (one term per entry), without its walk over every row."""
    kept = pat._full_gathers
    for indptr, indices, found in kept:
        if np.array_equal(indptr, h.indptr) and np.array_equal(indices, h.indices):
            return found
    f2r = pat.full_to_free
    r, c = f2r[_expand_rows(h.indptr)], f2r[np.asarray(h.indices, np.int64)]
    src = np.flatnonzero((r >= 0) & (c >= 0))
    keys, pat_keys = r[src] * max(pat.n_free, 1) + c[src], pat._keys
    dst = np.minimum(np.searchsorted(pat_keys, keys), max(len(pat_keys) - 1, 0))
    found = (dst, src) if len(pat_keys) and np.array_equal(pat_keys[dst], keys) else None
    kept.append((h.indptr.copy(), h.indices.copy(), found))
    del kept[:-4]
    return found


def _expand_rows(indptr: np.ndarray) -> np.ndarray:
    """Row index (nnz,) int64 of every entry of a CSR with this indptr."""
    return np.repeat(np.arange(len(indptr) - 1, dtype=np.int64), np.diff(indptr))


class FreePattern:
    """CSR pattern of H_ff for one free mask (see the module doc).

    Attributes:
        free: (3n,) bool; full_to_free: (3n,) int64 reduced index or -1; n_free: int.
        indptr (n_free + 1,), indices (nnz,): int32 (int64 when large), sorted, no duplicates.
        elastic_src, elastic_dst: (k,) int64, E.data[elastic_src] goes to data[elastic_dst].
        diagonal: (n_free,) int64 data position of each diagonal entry.
        n_surface_entries: entries added for surface terms (beyond E's block and the diagonal).
        _full_gathers: the (indptr, indices, map) of node-coordinate terms gathered on it (``_full_term_gather``).
    """

    def __init__(self, e_indptr, e_indices, free, extra_rows=None, extra_cols=None):
        free = np.asarray(free, bool)
        self.free = free
        self.n_free = nf = int(free.sum())
        f2r = np.full(len(free), -1, np.int64)
        f2r[free] = np.arange(nf)
        self.full_to_free = f2r
        er = f2r[_expand_rows(e_indptr)]
        ec = f2r[np.asarray(e_indices, np.int64)]
        keep = np.flatnonzero((er >= 0) & (ec >= 0))
        diag = np.arange(nf, dtype=np.int64)
        xr = np.zeros(0, np.int64) if extra_rows is None else np.asarray(extra_rows, np.int64)
        xc = np.zeros(0, np.int64) if extra_cols is None else np.asarray(extra_cols, np.int64)
        keys = np.concatenate([er[keep] * nf + ec[keep], diag * (nf + 1), xr * nf + xc])
        order = np.argsort(keys, kind="stable")          # E entries first among equal keys
        sorted_keys = keys[order]
        first = np.ones(len(keys), bool)
        first[1:] = sorted_keys[1:] != sorted_keys[:-1]
        ukeys = sorted_keys[first]
        rows, cols = ukeys // max(nf, 1), ukeys % max(nf, 1)
        big = len(ukeys) >= 2**31 - 1
        itype = np.int64 if big else np.int32
        self.indptr = np.concatenate([[0], np.cumsum(np.bincount(rows, minlength=nf))]).astype(itype)
        self.indices = cols.astype(itype)
        upos = np.cumsum(first) - 1                       # position in ukeys of each sorted key
        pos_of = np.empty(len(keys), np.int64)
        pos_of[order] = upos
        n_e = len(keep)
        self.elastic_src = keep
        self.elastic_dst = pos_of[:n_e]
        self.diagonal = pos_of[n_e:n_e + nf]
        in_base = np.zeros(len(ukeys), bool)
        in_base[self.elastic_dst] = True
        in_base[self.diagonal] = True
        self.n_surface_entries = int(len(ukeys) - in_base.sum())
        self.growths = 0                                  # ``grown`` steps since this pattern
        self._e_indices = e_indices                       # identity of the elastic pattern it was built for
        self._full_gathers = []                           # ``_full_term_gather``'s maps on this pattern

    def grown(self, rows: np.ndarray, cols: np.ndarray) -> FreePattern:
        """A new pattern = this one plus the entries (rows[k], cols[k]) (reduced indices, duplicates allowed).

        Identical to ``FreePattern(e_indptr, e_indices, free, old extra + new rows, old extra + new cols)`` but
        built row by row in one pass (``_grow_rows``: O(nnz), only each row's new columns are sorted).
        """
        if self.nnz == 0:
            raise ValueError("cannot grow an empty pattern (no free coordinates)")
        nf = max(self.n_free, 1)
        out = FreePattern.__new__(FreePattern)
        out.free, out.n_free, out.full_to_free = self.free, self.n_free, self.full_to_free
        out._e_indices = self._e_indices
        big = self.nnz + len(rows) >= 2**31 - 1
        old_indices = self.indices.astype(np.int64) if big else self.indices
        old_indptr = self.indptr.astype(np.int64) if big else self.indptr
        out.indptr, out.indices, out._moved = _grow_rows(
            old_indptr, old_indices, np.asarray(rows, np.int64), np.asarray(cols, np.int64), nf)
        if big and out.nnz < 2**31 - 1:  # the dtype a pattern built from scratch would have
            out.indptr, out.indices = out.indptr.astype(np.int32), out.indices.astype(np.int32)
        out.elastic_dst, out.diagonal = out._moved[self.elastic_dst], out._moved[self.diagonal]
        out.elastic_src = self.elastic_src
        out.n_surface_entries = self.n_surface_entries + out.nnz - self.nnz
        out.growths = self.growths + 1
        out._full_gathers = []
        return out

    def carried(self, data: np.ndarray, rows: np.ndarray, cols: np.ndarray, values: np.ndarray) -> np.ndarray:
        """Data (nnz,) on this pattern, grown from its parent by ``grown``: the parent's data (its nnz,) moved to
        their new positions, plus values[k] at (rows[k], cols[k]) added in order (the entries a fill on the
        parent missed). Equal, bit for bit, to filling this pattern afresh: every entry receives the same terms
        in the same order."""
        return _carry(self.indptr, self.indices, self._moved, np.asarray(data, np.float64),
                      np.asarray(rows, np.int64), np.asarray(cols, np.int64), np.asarray(values, np.float64))

    @property
    def _keys(self) -> np.ndarray:
        """(nnz,) int64 row * n_free + col of the entries, ascending."""
        return _expand_rows(self.indptr) * max(self.n_free, 1) + self.indices

    @property
    def nnz(self) -> int:
        """Number of stored entries."""
        return len(self.indices)

    def matches(self, e_indices, free) -> bool:
        """True if built for this elastic pattern (by identity) and this free mask."""
        return self._e_indices is e_indices and np.array_equal(self.free, free)

    def csr(self, data: np.ndarray) -> sp.csr_matrix:
        """(n_free, n_free) CSR on this pattern (shares indptr/indices)."""
        return canonical_csr(data, self.indices, self.indptr, self.n_free)


class PatternCache:
    """Holds the last ``FreePattern`` of a solver (``SystemMatrix.free_block`` reads and replaces it), so that
    consecutive Newton matrices share one pattern object while it does not change, and the last base pattern
    (elastic block and diagonal, no surface entries: a function of the model and the free mask alone)."""

    def __init__(self):
        self.pattern: FreePattern | None = None
        self.base: FreePattern | None = None
        self._mapped_key = None  # (full_to_free, surface map) of ``_mapped``
        self._mapped = None
        self._grown: list = []   # (parent, entries (rows, cols) as bytes, grown pattern), the most recent last

    def grown(self, parent: FreePattern, rows: np.ndarray, cols: np.ndarray) -> FreePattern:
        """``parent.grown(rows, cols)``, or the very pattern object an earlier call made from the same parent
        object and the same list of entries (see ``GROWN_KEPT``; a fill's misses come in the order of its terms and
        rows, so a step whose contacts repeat an earlier step's repeats its list)."""
        key = np.asarray(rows, np.int64).tobytes() + np.asarray(cols, np.int64).tobytes()  # the same list: the same set
        for i, (p, k, pat) in enumerate(self._grown):
            if p is parent and k == key:
                self._grown.append(self._grown.pop(i))
                return pat
        pat = parent.grown(rows, cols)
        self._grown.append((parent, key, pat))
        del self._grown[:-GROWN_KEPT]
        return pat

    def mapped(self, jmap, pat: FreePattern) -> tuple:
        """(red, w, J^T by reduced row) of the weighted map jmap for pat's free mask (``SurfaceMap.coordinate_map``
        and ``_transpose_map``), kept while the mask (the ``full_to_free`` array object) and the map stay the
        same: a function of the model and the mask alone."""
        key = self._mapped_key
        if key is None or key[0] is not pat.full_to_free or key[1] is not jmap:
            red, w = jmap.coordinate_map(pat.full_to_free)
            self._mapped = (red, w, _transpose_map(red, w, pat.n_free))
            self._mapped_key = (pat.full_to_free, jmap)
        return self._mapped

    def clear(self) -> None:
        """Forget the surface entries seen (history-free steps): back to the base pattern, whose object is
        kept, so that a factorisation can keep its analysis of it across steps."""
        self.pattern = self.base


class SystemMatrix:
    """H = w_E E + diag(d) + sum_k w_k J^T C_k J + sum_j w_j F_j over the node coordinates, kept as its terms.

    Args:
        surface_map: the model's ``SurfaceMap`` J (nodes -> collision surface).
        elastic: E (3n, 3n) CSR (None: set later by ``set_elastic``; its pattern is the base of H_ff's);
        elastic_weight: w_E; diagonal: d (3n,) (kept as ``diagonal_term``).
        cache: a ``PatternCache`` shared by the solver's matrices (None: a private one).
    ``add_diagonal(d)`` adds to d, ``add_surface(weight, C)`` appends a surface term, ``add_full(weight, F)`` a
    node-coordinate term;
    ``H @ v`` is the full product; ``free_block(free)`` the (n_free, n_free) CSR H_ff;
    ``prescribed_coupling(free, p)`` = H_fp p_p; ``tocsr()`` the full matrix (SciPy, reference path).
    """

    def __init__(self, surface_map, elastic: sp.csr_matrix, elastic_weight: float, diagonal: np.ndarray,
                 cache: PatternCache | None = None):
        self.surface_map = surface_map
        self.cache = cache if cache is not None else PatternCache()
        self.elastic = elastic
        self.elastic_weight = float(elastic_weight)
        self.diagonal_term = np.asarray(diagonal, np.float64)
        self.surface_terms: list[tuple[float, sp.csr_matrix]] = []
        self.full_terms: list[tuple[float, sp.csr_matrix]] = []
        self.shape = elastic.shape if elastic is not None else (len(self.diagonal_term),) * 2

    def set_elastic(self, weight: float, elastic: sp.csr_matrix) -> None:
        """Set w_E E (E (3n, 3n) CSR on the model's tet pattern)."""
        self.elastic, self.elastic_weight = elastic, float(weight)

    def add_diagonal(self, d: np.ndarray) -> None:
        """diag(d) += d (3n,) (a lumped mass)."""
        self.diagonal_term = self.diagonal_term + d

    def add_surface(self, weight: float, h_surface: sp.spmatrix) -> None:
        """Add weight * J^T h_surface J; h_surface (3 n_surface, 3 n_surface)."""
        h = h_surface if type(h_surface) is sp.csr_matrix else sp.csr_matrix(h_surface)
        if h.nnz:
            self.surface_terms.append((float(weight), h))

    def add_full(self, weight: float, h_full: sp.spmatrix) -> None:
        """Add weight * h_full, a (3n, 3n) matrix over the node coordinates (e.g. lagged Rayleigh damping, a
        general mass); cheapest when it has the elastic matrix's pattern."""
        h = sp.csr_matrix(h_full)
        if not h.has_canonical_format:
            h = h.copy()
            h.sum_duplicates()
        self.full_terms.append((float(weight), h))

    def _same_as_elastic(self, h: sp.csr_matrix) -> bool:
        """True when h has the elastic matrix's sparsity pattern (its data can be gathered directly)."""
        e = self.elastic
        return h.indices is e.indices or (h.nnz == e.nnz and np.array_equal(h.indptr, e.indptr)
                                          and np.array_equal(h.indices, e.indices))

    def __matmul__(self, v: np.ndarray) -> np.ndarray:
        v = np.asarray(v, np.float64)
        out = self.elastic_weight * (self.elastic @ v) + self.diagonal_term * v
        for w, h in self.full_terms:
            out += w * (h @ v)
        if self.surface_terms:
            jmap = self.surface_map
            if jmap.is_selection:
                sc = (3 * jmap.index[:, None] + np.arange(3)).ravel()
                vs = v[sc]
            else:
                vs = jmap.apply(v.reshape(-1, 3)).ravel()
            acc = np.zeros(len(vs))
            for w, h in self.surface_terms:
                acc += w * (h @ vs)
            if jmap.is_selection:
                out[sc] += acc
            else:
                out += jmap.pull_gradient(acc)
        return out

    def prescribed_coupling(self, free: np.ndarray, p: np.ndarray) -> np.ndarray:
        """H_fp p_p (n_free,): the free rows of H times p (3n,) restricted to its prescribed coordinates."""
        q = np.where(free, 0.0, p)
        return (self @ q)[free]

    def tocsr(self) -> sp.csr_matrix:
        """The full (3n, 3n) matrix, summed with SciPy (reference path)."""
        h = self.elastic_weight * self.elastic + sp.diags(self.diagonal_term)
        for w, c in self.surface_terms:
            h = h + w * self.surface_map.pull_hessian(c)
        for w, c in self.full_terms:
            h = h + w * c
        return h.tocsr()

    def free_block(self, free: np.ndarray) -> sp.csr_matrix:
        """H_ff (n_free, n_free) CSR on the cached pattern of this free mask (grown by new surface entries)."""
        free = np.asarray(free, bool)
        e = self.elastic
        pat = self.cache.pattern
        if pat is None or not pat.matches(e.indices, free):
            base = self.cache.base
            if base is None or not base.matches(e.indices, free):
                base = self.cache.base = FreePattern(e.indptr, e.indices, free)
            pat = base
        data, miss = self._fill(pat)
        if miss is not None and pat.growths < MAX_GROWTHS:  # grow: keep the entries seen before
            pat = self.cache.grown(pat, miss[0], miss[1])
            data = pat.carried(data, *miss)
        elif miss is not None:                              # grown often: start afresh from the base
            pat = FreePattern(e.indptr, e.indices, free)
            _, miss = self._fill(pat)
            pat = FreePattern(e.indptr, e.indices, free, miss[0], miss[1])
            data, miss = self._fill(pat)
            if miss is not None:
                raise RuntimeError("internal error: surface entries outside the rebuilt pattern")
        self.cache.pattern = pat
        return pat.csr(data)

    def _fill(self, pat: FreePattern):
        """H_ff data (nnz,) on pat, and the (rows, cols, values) of surface entries outside it, in the order of the
        terms (None if none)."""
        data = np.zeros(pat.nnz)
        _gather(data, pat.elastic_dst, pat.elastic_src, self.elastic.data, self.elastic_weight, False)
        data[pat.diagonal] += self.diagonal_term[pat.free]
        jmap = self.surface_map
        if jmap.is_selection:
            s2r = pat.full_to_free[(3 * jmap.index[:, None] + np.arange(3)).ravel()]
            red = w_map = None
        else:
            s2r = None
            red, w_map, jt = self.cache.mapped(jmap, pat)
        # the terms in the order of the SciPy sum (tocsr): surface terms, then node-coordinate terms
        terms = [(w, h, False, True) for w, h in self.surface_terms]
        terms += [(w, h, self._same_as_elastic(h), False) for w, h in self.full_terms]
        rows, cols, vals = [], [], []
        for w, h, same, surface in terms:
            if same:  # the elastic pattern: a direct gather
                _gather(data, pat.elastic_dst, pat.elastic_src, h.data, w, True)
                continue
            found = None if surface else _full_term_gather(pat, h)
            if found is not None:  # a node-coordinate term inside the pattern (a general mass matrix)
                _gather(data, found[0], found[1], h.data, w, True)
                continue
            if surface and red is not None:
                size = h.nnz * red.shape[1] ** 2
                mr, mc, mv = np.empty(size, np.int64), np.empty(size, np.int64), np.empty(size)
                n_miss = _scatter_mapped(w, h.indptr, h.indices, h.data, red, w_map, *jt, pat.indptr, pat.indices,
                                         data, mr, mc, mv)
            else:
                mr, mc, mv = np.empty(h.nnz, np.int64), np.empty(h.nnz, np.int64), np.empty(h.nnz)
                n_miss = _scatter_surface(w, h.indptr, h.indices, h.data, s2r if surface else pat.full_to_free,
                                          pat.indptr, pat.indices, data, mr, mc, mv)
            if n_miss:
                rows.append(mr[:n_miss])
                cols.append(mc[:n_miss])
                vals.append(mv[:n_miss])
        if rows:
            return data, (np.concatenate(rows), np.concatenate(cols), np.concatenate(vals))
        return data, None
