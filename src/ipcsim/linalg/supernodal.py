"""A supernodal sparse Cholesky factorisation in Numba, for the small and middling Newton systems of one step.

    c = SupernodalCholesky()
    ok = c.factor(a, perm)      # a (n, n) SPD CSR (sorted, both triangles); perm (n,) a fill-reducing ordering
    x = c.solve(b)              # b (n,) or (n, k)

Why: MKL pardiso spends most of a call on fixed costs at these sizes. On the teddy grasp's low embedding (393
rows, L with 10-20 thousand entries, under one Mflop) its numerical factorisation took 140-510 us and its
analysis with a given ordering 500-750 us more; this one takes 73-210 us and 200-600 us more
(``benchmarks/bench_factorization.py``, docs/linear_solvers.md).

The factor is L L^T of P A P^T, P the given ordering (perm[i] is the row of A that becomes row i).

* Symbolic (``SupernodalCholesky.analyse``, once per pattern and ordering): the permuted lower triangle's
  pattern (with the map from a.data to it), the elimination tree (Liu's algorithm with path compression), the
  row subtrees that give L's column structures, and the fundamental supernodes: column j joins j - 1's
  supernode when j is j - 1's parent and L's column j has one entry fewer (then both have the same structure
  below the diagonal).
  ``_schedule`` lists, for each supernode s, the earlier supernodes d whose rows meet s's columns, with the
  positions of d's rows inside s's row list.
* Numeric (``_numeric``, left-looking): for each supernode s, its columns of P A P^T go into a dense column-major
  block (rows: L's structure of s's first column), each descendant d subtracts L_d[rows >= s] L_d[rows in s]^T,
  then a dense Cholesky of the block's diagonal part and the scaling of the rows below it. A pivot that is not
  positive stops it: the matrix is not positive definite (``factor`` returns False).
* Two threads (``SupernodalCholesky._split``, ``_two_parts``): supernodes in disjoint subtrees never touch each
  other's blocks, so two sets of whole subtrees of about equal work are factorised at once (one on the helper
  thread, ``runtime.threads.beside``), then their ancestors. Every supernode gets the same updates in the same
  order as on one thread: the same bits. The plate rack's two fingers: 1.7-2.7 -> 0.9-1.5 ms a factorisation.
* The kernels index with unsigned integers: Numba then emits no negative-index wrap-around and LLVM vectorises
  the inner loops (4x on a 72 x 72 dense block, measured).
"""
from __future__ import annotations

import numpy as np
from numba import njit
from numba import uint64 as U

from ..runtime.jit import current_threads
from ..runtime.threads import beside, cpu_cores

__all__ = ["SupernodalCholesky"]

SPLIT_MIN_FLOPS = 1e6
"""Fewest flops (about: sum over L's columns of their entries squared) for which ``SupernodalCholesky.factor`` runs
two subtrees at once on two threads (the hand-over to the helper thread costs ~0.1 ms; 1e6 flops take ~0.3 ms)."""
SPLIT_MAX_SPAN = 0.6
"""Largest estimated span (the larger subtree part's work plus the ancestors', over the total) for which it does."""
ENTRY_FLOPS = 48.0
"""A supernode's work as ``_two_parts`` estimates it: per column of L, its entries squared (the updates) plus this many
times its entries (assembly, scatter, per-block overheads). Fitted on ten subtree sets of the plate rack's
factorisations, one thread (3.0-4.4 Mflop, 83-151 thousand entries, 0.78-1.07 ms): within 0.03 ms; with the flops
alone, sets of equal flops took 0.82 and 1.06 ms."""


@njit(cache=True)
def _permuted_lower(indptr, indices, perm):
    """The lower triangle of P A P^T in CSC with sorted rows: (colptr (n+1,), rows (m,), src (m,)), src the
    position in a.data of each entry. a: CSR (indptr, indices), both triangles; perm (n,) int64."""
    n = len(perm)
    inv = np.empty(n, np.int64)
    for i in range(n):
        inv[perm[i]] = i
    colptr = np.zeros(n + 1, np.int64)
    for r in range(n):
        for p in range(indptr[r], indptr[r + 1]):
            if inv[r] >= inv[indices[p]]:
                colptr[inv[indices[p]] + 1] += 1
    for j in range(n):
        colptr[j + 1] += colptr[j]
    fill = colptr[:n].copy()
    rows = np.empty(colptr[n], np.int64)
    src = np.empty(colptr[n], np.int64)
    for i in range(n):  # permuted rows in increasing order: each column's rows come out sorted
        r = perm[i]
        for p in range(indptr[r], indptr[r + 1]):
            j = inv[indices[p]]
            if i >= j:
                rows[fill[j]], src[fill[j]] = i, p
                fill[j] += 1
    return colptr, rows, src


@njit(cache=True)
def _upper_rows(colptr, rows, n):
    """Row k's entries left of the diagonal in the permuted lower triangle: (rowptr (n+1,), cols)."""
    rowptr = np.zeros(n + 1, np.int64)
    for j in range(n):
        for p in range(colptr[j], colptr[j + 1]):
            if rows[p] > j:
                rowptr[rows[p] + 1] += 1
    for i in range(n):
        rowptr[i + 1] += rowptr[i]
    fill = rowptr[:n].copy()
    cols = np.empty(rowptr[n], np.int64)
    for j in range(n):
        for p in range(colptr[j], colptr[j + 1]):
            i = rows[p]
            if i > j:
                cols[fill[i]] = j
                fill[i] += 1
    return rowptr, cols


@njit(cache=True)
def _etree(rowptr, cols, n):
    """parent (n,): the elimination tree (Liu's algorithm, path compression; -1 at roots)."""
    parent = np.full(n, -1, np.int64)
    ancestor = np.full(n, -1, np.int64)
    for k in range(n):
        for p in range(rowptr[k], rowptr[k + 1]):
            i = cols[p]
            while i != -1 and i < k:
                nxt = ancestor[i]
                ancestor[i] = k
                if nxt == -1:
                    parent[i] = k
                i = nxt
    return parent


@njit(cache=True)
def _structure(rowptr, cols, parent, n):
    """L's columns: (lp (n+1,), li (nnz(L),)), each column's rows sorted with the diagonal first. Row k of L is
    the union of the tree paths from row k's entries up to k (its row subtree)."""
    flag = np.full(n, -1, np.int64)
    count = np.ones(n, np.int64)
    for k in range(n):
        flag[k] = k
        for p in range(rowptr[k], rowptr[k + 1]):
            i = cols[p]
            while flag[i] != k:
                count[i] += 1
                flag[i] = k
                i = parent[i]
    lp = np.zeros(n + 1, np.int64)
    for j in range(n):
        lp[j + 1] = lp[j] + count[j]
    li = np.empty(lp[n], np.int64)
    pos = lp[:n].copy()
    for j in range(n):
        li[pos[j]] = j
        pos[j] += 1
    flag[:] = -1
    for k in range(n):  # rows in increasing k: every column's list comes out sorted
        flag[k] = k
        for p in range(rowptr[k], rowptr[k + 1]):
            i = cols[p]
            while flag[i] != k:
                li[pos[i]] = k
                pos[i] += 1
                flag[i] = k
                i = parent[i]
    return lp, li


@njit(cache=True)
def _supernodes(parent, lp, n):
    """(first (ns+1,), block offsets (ns+1,), supernode of each column (n,)): fundamental supernodes, each
    stored as a dense column-major block of (rows of its first column) x (its columns)."""
    first = np.empty(n + 1, np.int64)
    ns = 0
    for j in range(n):
        if j > 0 and parent[j - 1] == j and lp[j] - lp[j - 1] == lp[j + 1] - lp[j] + 1:
            continue
        first[ns] = j
        ns += 1
    first[ns] = n
    first = first[:ns + 1].copy()
    offset = np.zeros(ns + 1, np.int64)
    owner = np.empty(n, np.int64)
    for s in range(ns):
        f, e = first[s], first[s + 1]
        offset[s + 1] = offset[s] + (lp[f + 1] - lp[f]) * (e - f)
        for j in range(f, e):
            owner[j] = s
    return first, offset, owner


@njit(cache=True)
def _schedule(lp, li, first, owner):
    """The updates d -> s in order of s: (start (ns+1,) into the lists, d, p1, p2, roff, rel). Update q takes
    descendant d's rows p1 <= r < p2 (those in s's columns) and all its rows from p1 down; rel[roff[q] + t - p1]
    is row t's position in s's row list."""
    ns = len(first) - 1
    count = 0
    for d in range(ns):
        f = first[d]
        last = -1
        for r in range(lp[f] + first[d + 1] - f, lp[f + 1]):
            if owner[li[r]] != last:
                count += 1
                last = owner[li[r]]
    start = np.zeros(ns + 1, np.int64)
    dd, ss = np.empty(count, np.int64), np.empty(count, np.int64)
    p1, p2 = np.empty(count, np.int64), np.empty(count, np.int64)
    q = 0
    for d in range(ns):
        f = first[d]
        r, nrow = first[d + 1] - f, lp[f + 1] - lp[f]
        while r < nrow:
            s = owner[li[lp[f] + r]]
            r2 = r
            while r2 < nrow and owner[li[lp[f] + r2]] == s:
                r2 += 1
            dd[q], ss[q], p1[q], p2[q] = d, s, r, r2
            start[s + 1] += 1
            q += 1
            r = r2
    order = np.argsort(ss, kind="mergesort")  # by target, descendants in increasing order
    dd, p1, p2 = dd[order], p1[order], p2[order]
    for s in range(ns):
        start[s + 1] += start[s]
    roff = np.zeros(count + 1, np.int64)
    for q in range(count):
        f = first[dd[q]]
        roff[q + 1] = roff[q] + lp[f + 1] - lp[f] - p1[q]
    rel = np.empty(roff[count], np.int64)
    where = np.empty(len(owner), np.int64)
    for s in range(ns):
        f = first[s]
        for r in range(lp[f + 1] - lp[f]):
            where[li[lp[f] + r]] = r
        for q in range(start[s], start[s + 1]):
            g = first[dd[q]]
            for t in range(p1[q], lp[g + 1] - lp[g]):
                rel[roff[q] + t - p1[q]] = where[li[lp[g] + t]]
    return start, dd, p1, p2, roff, rel


@njit(cache=True)
def _assemble(data, src, colptr, rows, lp, li, first, offset, s, lx, where):
    """Supernode s's block of lx zeroed, then its columns of P A P^T (data[src]) put in. where (n,): scratch,
    left holding each of s's rows' position in its row list. All index arrays uint64."""
    one = U(1)
    f, e, b = first[s], first[s + one], offset[s]
    r0, nrow = lp[f], lp[f + one] - lp[f]
    for r in range(nrow):
        where[li[r0 + r]] = r
    for q in range(b, b + nrow * (e - f)):
        lx[q] = 0.0
    for c in range(e - f):
        cb = b + c * nrow
        for p in range(colptr[f + c], colptr[f + c + one]):
            lx[cb + where[rows[p]]] = data[src[p]]


@njit(cache=True)
def _update(lp, first, offset, s, d, p1, p2, rel, ro, lx, tmp):
    """Block s -= L_d[p1:, :] L_d[p1:p2, :]^T, scattered through rel (rel[ro + t - p1]: the position of d's row t
    in s's row list). tmp (n,): scratch. Unsigned arithmetic wraps, so ro - p1 + t is exact. The last column of
    d is added while scattering (one pass over tmp fewer: 10-15 % of a factorisation, measured)."""
    one = U(1)
    f = first[s]
    nrow, b = lp[f + one] - lp[f], offset[s]
    df = first[d]
    dw, dnrow, db = first[d + one] - df, lp[df + one] - lp[df], offset[d]
    base = ro - p1
    for jj in range(p1, p2):
        col = db
        ljk = lx[col + jj]
        for t in range(jj, dnrow):
            tmp[t] = lx[col + t] * ljk
        for k in range(one, dw - one):
            col = db + k * dnrow
            ljk = lx[col + jj]
            for t in range(jj, dnrow):
                tmp[t] += lx[col + t] * ljk
        dst = b + rel[base + jj] * nrow
        if dw > one:
            col = db + (dw - one) * dnrow
            ljk = lx[col + jj]
            for t in range(jj, dnrow):
                lx[dst + rel[base + t]] -= tmp[t] + lx[col + t] * ljk
        else:
            for t in range(jj, dnrow):
                lx[dst + rel[base + t]] -= tmp[t]


@njit(cache=True)
def _dense(lp, first, offset, s, lx):
    """Cholesky of supernode s's block in place: the diagonal part's L, the rows below scaled. Returns -1, or the
    column whose pivot is not positive."""
    one = U(1)
    f = first[s]
    w, nrow, b = first[s + one] - f, lp[f + one] - lp[f], offset[s]
    for c in range(w):
        cb = b + c * nrow
        pivot = lx[cb + c]
        if not pivot > 0.0:
            return np.int64(f + c)
        pivot = np.sqrt(pivot)
        lx[cb + c] = pivot
        inv = 1.0 / pivot
        for r in range(cb + c + one, cb + nrow):
            lx[r] *= inv
        for c2 in range(c + one, w):
            l2 = lx[cb + c2]
            shift = b + c2 * nrow - cb
            for r in range(cb + c2, cb + nrow):
                lx[shift + r] -= lx[r] * l2
    return np.int64(-1)


@njit(cache=True, nogil=True)
def _numeric(data, src, colptr, rows, lp, li, first, offset, start, dd, p1, p2, roff, rel, lx, order):
    """The supernodes ``order`` (k,) (increasing; their descendants outside it already done) of the supernodal L
    into lx (offset[-1],) from a.data (data); index arrays uint64 (``SupernodalCholesky.analyse``, ``_schedule``).
    Returns -1, or the first column whose pivot is not positive (not positive definite)."""
    n = len(colptr) - 1
    where = np.empty(n, np.uint64)
    tmp = np.empty(n)
    for s in order:
        _assemble(data, src, colptr, rows, lp, li, first, offset, s, lx, where)
        for q in range(start[s], start[s + 1]):
            _update(lp, first, offset, s, dd[q], p1[q], p2[q], rel, roff[q], lx, tmp)
        bad = _dense(lp, first, offset, s, lx)
        if bad >= 0:
            return bad
    return np.int64(-1)


@njit(cache=True)
def _supernode_tree(parent, lp, first, owner):
    """(parent supernode (ns,) (-1 at roots), work (ns,) [flops, about], subtree work (ns,)) of the supernodes:
    a supernode's work is sum over its columns c of L of c^2 + ``ENTRY_FLOPS`` c (c: the column's entries)."""
    ns = len(first) - 1
    up = np.full(ns, -1, np.int64)
    work = np.zeros(ns)
    for s in range(ns):
        for j in range(first[s], first[s + 1]):
            c = lp[j + 1] - lp[j]
            work[s] += c * c + ENTRY_FLOPS * c
        p = parent[first[s + 1] - 1]
        if p >= 0:
            up[s] = owner[p]
    sub = work.copy()
    for s in range(ns):  # a parent's index is above its children's
        if up[s] >= 0:
            sub[up[s]] += sub[s]
    return up, work, sub


@njit(cache=True)
def _two_bins(roots, sub):
    """(bin (len(roots),) 0 or 1, bin loads (2,)): the subtrees, largest first, each to the lighter bin."""
    order = np.argsort(-sub[roots], kind="mergesort")
    side = np.zeros(len(roots), np.int64)
    load = np.zeros(2)
    for k in order:
        b = 1 if load[1] < load[0] else 0
        side[k] = b
        load[b] += sub[roots[k]]
    return side, load


@njit(cache=True)
def _two_parts(parent, lp, first, owner):
    """Supernode labels (ns,): 0 or 1 for two sets of whole subtrees of the supernodal tree that two threads can
    factorise at once, 2 for the rest (their ancestors, factorised after both), and the estimated span (the
    larger set's work plus the rest's) over the total work. Greedy: starting from the tree's roots, the heaviest
    open subtree is opened (its root moves to the rest, its children become open) while a span 1 % below the best
    yet can still come; open subtrees go to the two sets largest first, each to the lighter one."""
    up, work, sub = _supernode_tree(parent, lp, first, owner)
    ns = len(up)
    kid_ptr = np.zeros(ns + 1, np.int64)
    for s in range(ns):
        if up[s] >= 0:
            kid_ptr[up[s] + 1] += 1
    for s in range(ns):
        kid_ptr[s + 1] += kid_ptr[s]
    kids, fill = np.empty(kid_ptr[ns], np.int64), kid_ptr[:ns].copy()
    for s in range(ns):
        if up[s] >= 0:
            kids[fill[up[s]]] = s
            fill[up[s]] += 1
    opened = np.empty(ns, np.int64)  # the open subtrees' roots
    k = 0
    for s in range(ns):
        if up[s] < 0:
            opened[k] = s
            k += 1
    total = work.sum()
    best, serial, best_open = np.inf, 0.0, opened[:k].copy()
    while k > 0 and best > 1.01 * 0.5 * (total + serial):  # no later span is below (total + serial) / 2
        _, load = _two_bins(opened[:k], sub)
        if max(load[0], load[1]) + serial < best:
            best, best_open = max(load[0], load[1]) + serial, opened[:k].copy()
        i = np.argmax(sub[opened[:k]])
        big = opened[i]
        opened[i] = opened[k - 1]
        k -= 1
        serial += work[big]
        for q in range(kid_ptr[big], kid_ptr[big + 1]):
            opened[k] = kids[q]
            k += 1
    label = np.full(ns, 2, np.int64)
    side, _ = _two_bins(best_open, sub)
    for i in range(len(best_open)):
        label[best_open[i]] = side[i]
    for s in range(ns - 1, -1, -1):  # parents first: a subtree takes its open root's label
        if label[s] == 2 and up[s] >= 0 and label[up[s]] < 2:
            label[s] = label[up[s]]
    return label, best / total if total > 0 else 1.0


@njit(cache=True)
def _forward(lp, li, first, offset, lx, x, tmp):
    """x (n,) overwritten by L^-1 x: per supernode the dense diagonal block, then the rows below it gathered in
    tmp (n,) and scattered once."""
    one = U(1)
    for s in range(len(first) - 1):
        f = first[s]
        w, r0, nrow, b = first[s + 1] - f, lp[f], lp[f + one] - lp[f], offset[s]
        for c in range(w):
            cb = b + c * nrow
            xj = x[f + c] / lx[cb + c]
            x[f + c] = xj
            for r in range(c + one, w):
                x[f + r] -= lx[cb + r] * xj
        for r in range(w, nrow):
            tmp[r] = 0.0
        for c in range(w):
            cb = b + c * nrow
            xj = x[f + c]
            for r in range(w, nrow):
                tmp[r] += lx[cb + r] * xj
        for r in range(w, nrow):
            x[li[r0 + r]] -= tmp[r]


@njit(cache=True)
def _backward(lp, li, first, offset, lx, x, tmp):
    """x (n,) overwritten by L^-T x: per supernode, last first, the rows below its block gathered in tmp (n,)."""
    one = U(1)
    for s1 in range(len(first) - 1, 0, -1):
        s = U(s1 - 1)
        f = first[s]
        w, r0, nrow, b = first[s + one] - f, lp[f], lp[f + one] - lp[f], offset[s]
        for r in range(w, nrow):
            tmp[r] = x[li[r0 + r]]
        for c1 in range(w, 0, -1):
            c = U(c1 - 1)
            cb = b + c * nrow
            t = x[f + c]
            for r in range(c + one, w):
                t -= lx[cb + r] * x[f + r]
            for r in range(w, nrow):
                t -= lx[cb + r] * tmp[r]
            x[f + c] = t / lx[cb + c]


@njit(cache=True)
def _solve(lp, li, first, offset, lx, x):
    """x (n, k) overwritten by (L L^T)^-1 x (permuted order), column by column."""
    tmp = np.empty(x.shape[0])
    col = np.empty(x.shape[0])
    for k in range(x.shape[1]):
        col[:] = x[:, k]
        _forward(lp, li, first, offset, lx, col, tmp)
        _backward(lp, li, first, offset, lx, col, tmp)
        x[:, k] = col


def _unsigned(*arrays):
    """The int64 index arrays (all entries >= 0) seen as uint64 (views, no copies) for the kernels."""
    return tuple(np.ascontiguousarray(a, dtype=np.int64).view(np.uint64) for a in arrays)


class SupernodalCholesky:
    """L L^T = P A P^T for sparse SPD A, in Numba (the module doc). Keeps its symbolic analysis while the next A
    has the same pattern (the same ``indptr``/``indices`` objects or equal arrays) and the same ordering.
    Counters: analyses, factorizations."""

    def __init__(self):
        self._key = None     # (indptr, indices, perm) of the analysis
        self._sym = None     # uint64 arrays for the kernels
        self._perm = None
        self._lx = None
        self._parts = None   # (part one, part two, rest, every): ``_split``
        self.analyses = 0
        self.factorizations = 0

    def _same_pattern(self, a, perm) -> bool:
        if self._key is None:
            return False
        indptr, indices, p = self._key
        if p is not perm and not np.array_equal(p, perm):
            return False
        if indptr is a.indptr and indices is a.indices:
            return True
        return np.array_equal(indptr, a.indptr) and np.array_equal(indices, a.indices)

    def analyse(self, a, perm: np.ndarray) -> None:
        """The symbolic factorisation of a's pattern (CSR, sorted, both triangles) under perm (n,)."""
        n = a.shape[0]
        colptr, rows, src = _permuted_lower(np.asarray(a.indptr, np.int64), np.asarray(a.indices, np.int64),
                                            np.asarray(perm, np.int64))
        rowptr, cols = _upper_rows(colptr, rows, n)
        parent = _etree(rowptr, cols, n)
        lp, li = _structure(rowptr, cols, parent, n)
        first, offset, owner = _supernodes(parent, lp, n)
        plan = _schedule(lp, li, first, owner)
        self._sym = _unsigned(src, colptr, rows, lp, li, first, offset, *plan)
        self._parts = self._split(parent, lp, first, owner)
        self._lx = np.empty(offset[-1])
        self._key = (a.indptr, a.indices, perm)
        self._perm = np.asarray(perm, np.int64)
        self.analyses += 1

    def prepare(self, a, perm: np.ndarray) -> None:
        """The analysis of a's pattern under perm: kept if it is the last one's, else made (``analyse``)."""
        if not self._same_pattern(a, perm):
            self.analyse(a, perm)

    def factor(self, a, perm: np.ndarray) -> bool:
        """Factorise a (n, n) SPD CSR (sorted indices, both triangles) under the ordering perm (n,) (perm[i]: the
        row of a that becomes row i). False if a is not positive definite (the factor is then unusable)."""
        self.prepare(a, perm)
        self.factorizations += 1
        args = (np.ascontiguousarray(a.data, dtype=np.float64), *self._sym, self._lx)
        one, two, rest, every = self._parts
        if len(two) and cpu_cores() >= 2 and current_threads() >= 2:
            bad = beside(lambda: _numeric(*args, one), lambda: _numeric(*args, two))
            return max(bad) < 0 and _numeric(*args, rest) < 0
        return _numeric(*args, every) < 0

    @staticmethod
    def _split(parent, lp, first, owner):
        """(part one, part two, rest, every): uint64 supernode lists, increasing, for ``factor``'s two threads, what
        follows them (``_two_parts``) and all supernodes for one thread. Parts one and two are empty when the
        factorisation is too small to share (``SPLIT_MIN_FLOPS``) or its tree too lopsided (``SPLIT_MAX_SPAN``)."""
        every = np.arange(len(first) - 1)
        none = np.zeros(0, np.int64)
        if float(np.square(np.diff(lp), dtype=np.float64).sum()) >= SPLIT_MIN_FLOPS:
            label, span = _two_parts(parent, lp, first, owner)
            if span <= SPLIT_MAX_SPAN:
                return _unsigned(*(np.flatnonzero(label == k) for k in range(3)), every)
        return _unsigned(none, none, none, every)

    @property
    def factor_entries(self) -> int:
        """Entries stored for L (dense supernode blocks, their strict upper parts included)."""
        return 0 if self._lx is None else len(self._lx)

    def solve(self, b: np.ndarray) -> np.ndarray:
        """x with A x = b for the last factorised A; b (n,) or (n, k)."""
        _, _, _, lp, li, first, offset, *_ = self._sym
        b = np.asarray(b, dtype=np.float64)
        x = b.reshape(len(self._perm), -1)[self._perm].copy()
        _solve(lp, li, first, offset, self._lx, x)
        out = np.empty_like(x)
        out[self._perm] = x
        return out.reshape(b.shape)
