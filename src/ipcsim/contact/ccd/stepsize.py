"""Collision-free step size: the earliest ACCD time of impact over all broad-phase candidates.

The candidates are processed in chunks, in a Numba parallel region or (mid-sized inputs on machines with
fewer than 4 cores, ``runtime.threads.split_in_two``) the even and the odd chunks in two Python threads.
Each chunk keeps its own earliest time and uses the smallest time found by any chunk so far as ``tmax`` to
stop ACCD early on pairs that cannot matter. The pruning never changes the result: a pair is dropped only
once its ACCD time is certified to be no earlier than a time already found.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

from ...runtime.jit import dynamic_schedule, twin
from ...runtime.threads import beside, numba_threads, split_in_two, threads_for
from ..collisions_data import EE, EV, FV, VV
from ..stencils import stencil_size
from .additive import CONSERVATIVE_RESCALING, MAX_ITERATIONS, additive_ccd, point_plane_ccd

_REFRESH_EVERY = 16  # candidates between two looks at the other chunks' earliest times
_CHUNKS_PER_THREAD = 8


@njit(cache=True, inline="always")
def _stencil_ids(kind, pairs, j, faces, edges):
    """(i0, i1, i2, i3, adjacent): the vertex ids of candidate j of ``pairs``, the candidate array of ``kind`` (FV:
    [vertex, face], EE: [edge, edge], EV: [edge, vertex], VV: [vertex, vertex]; unused ids repeat the last one) and
    whether two of them coincide (adjacent primitives, whose pairs are skipped)."""
    if kind == FV:
        f = pairs[j, 1]
        i0, i1, i2, i3 = pairs[j, 0], faces[f, 0], faces[f, 1], faces[f, 2]
    elif kind == EE:
        e0, e1 = pairs[j, 0], pairs[j, 1]
        i0, i1, i2, i3 = edges[e0, 0], edges[e0, 1], edges[e1, 0], edges[e1, 1]
    elif kind == EV:
        e = pairs[j, 0]
        i0, i1, i2 = pairs[j, 1], edges[e, 0], edges[e, 1]
        return i0, i1, i2, i2, i0 == i1 or i0 == i2 or i1 == i2
    else:
        i0, i1 = pairs[j, 0], pairs[j, 1]
        return i0, i1, i1, i1, i0 == i1
    return i0, i1, i2, i3, i0 == i1 or i0 == i2 or i0 == i3 or i1 == i2 or i1 == i3 or i2 == i3


@njit(cache=True, inline="always")
def _lowered(kind, i0, i1, i2, i3, motion, t_best, scratch, best, c) -> float:
    """t_best lowered to the ACCD time of impact of the stencil of ``kind`` on vertices i0..i3 (its first
    ``stencil_size(kind)``), pruned at t_best (``additive_ccd``), and best[c] with it. motion: (x0, x1,
    min_distance, conservative_rescaling, max_iterations); scratch: four (4, 3) arrays."""
    x0, x1, min_distance, conservative_rescaling, max_iterations = motion
    a, b, x, dx = scratch
    n = stencil_size(kind)
    for k in range(3):
        a[0, k], b[0, k] = x0[i0, k], x1[i0, k]
        a[1, k], b[1, k] = x0[i1, k], x1[i1, k]
        if n > 2:
            a[2, k], b[2, k] = x0[i2, k], x1[i2, k]
        if n > 3:
            a[3, k], b[3, k] = x0[i3, k], x1[i3, k]
    t = additive_ccd(kind, a, b, min_distance, t_best, conservative_rescaling, max_iterations, x, dx)
    if t < t_best:
        best[c] = t
        return t
    return t_best


@njit(cache=True, inline="always")
def _segment_toi(kind, pairs, first, span, t_best, faces, edges, motion, scratch) -> float:
    """t_best lowered over the candidates of ``pairs`` (the array of ``kind``, whose first candidate is number
    ``first`` of the concatenation) that fall in the chunk; span: (lo, hi, best, c) of the chunk (``_chunk_toi``).
    Inlined where the kind is a constant, so its branches fold away."""
    lo, hi, best, c = span
    for j in range(max(lo, first), min(hi, first + pairs.shape[0])):
        t_best = _refreshed(j, lo, best, t_best)
        i0, i1, i2, i3, adjacent = _stencil_ids(kind, pairs, j - first, faces, edges)
        if not adjacent:
            t_best = _lowered(kind, i0, i1, i2, i3, motion, t_best, scratch, best, c)
    return t_best


@njit(cache=True)
def _chunk_toi(c, n_chunks, vf, ee, ev, vv, faces, edges, x0, x1, min_distance, conservative_rescaling,
               max_iterations, best):
    """ACCD over chunk c of n_chunks equal runs of the candidates (see ``earliest_candidate_toi``), lowering
    best[c] to the earliest time found; the other chunks' best[...] cap it along the way.

    The chunk's part of each candidate array runs in a loop of its own, the kind a constant there: a lookup that
    branched on the kind per candidate, through a (4,) id array or even in locals, cost 4 to 6 times as much
    (teddy grasp, 584 calls of 1,239 candidates: 35 ms against 6 ms for the lookups alone; 98.5 % of the
    candidates are then pruned by ``additive_ccd``'s first bound, so the lookup was a third)."""
    m = vf.shape[0] + ee.shape[0] + ev.shape[0] + vv.shape[0]
    span = ((c * m) // n_chunks, ((c + 1) * m) // n_chunks, best, c)
    motion = (x0, x1, min_distance, conservative_rescaling, max_iterations)
    scratch = (np.empty((4, 3)), np.empty((4, 3)), np.empty((4, 3)), np.empty((4, 3)))
    t = _segment_toi(FV, vf, 0, span, best[c], faces, edges, motion, scratch)
    t = _segment_toi(EE, ee, vf.shape[0], span, t, faces, edges, motion, scratch)
    t = _segment_toi(EV, ev, vf.shape[0] + ee.shape[0], span, t, faces, edges, motion, scratch)
    _segment_toi(VV, vv, m - vv.shape[0], span, t, faces, edges, motion, scratch)


@njit(cache=True, inline="always")
def _refreshed(j, lo, best, t_best) -> float:
    """t_best lowered to every chunk's earliest time in best, every ``_REFRESH_EVERY`` candidates of a chunk
    starting at lo (racy reads are safe: the values only decrease)."""
    if (j - lo) % _REFRESH_EVERY == 0:
        for other in range(best.shape[0]):
            t_best = min(t_best, best[other])
    return t_best


@twin  # one Numba thread: the serial variant (a minimum: the same result)
def earliest_candidate_toi(
    vf, ee, ev, vv, faces, edges, x0, x1,
    min_distance: float, conservative_rescaling: float, max_iterations: int, n_chunks: int, tmax: float,
) -> float:
    """Minimum over candidates of the ACCD time of impact, capped at tmax.

    Args:
        vf, ee, ev, vv: (k, 2) int64 candidate pairs ([vertex, face], [edge, edge], [edge, vertex],
            [vertex, vertex]); pairs of adjacent primitives (shared vertex) are skipped.
        faces (n_faces, 3), edges (n_edges, 2): int64 mesh connectivity.
        x0, x1: (n_vertices, 3) float64 [m], positions at t = 0 and t = 1.
        min_distance: [m] separation that counts as contact.
        conservative_rescaling, max_iterations: ACCD parameters (see ``additive_ccd``).
        n_chunks: number of parallel work chunks (>= 1).
        tmax: an already known upper bound of the result (e.g. from the planes), 1.0 if none.

    Returns:
        alpha in [0, tmax].
    """
    best = np.full(n_chunks, tmax)
    for c in prange(n_chunks):
        _chunk_toi(c, n_chunks, vf, ee, ev, vv, faces, edges, x0, x1, min_distance, conservative_rescaling,
                   max_iterations, best)
    return best.min()


@njit(cache=True, nogil=True)
def chunks_toi(first, stride, vf, ee, ev, vv, faces, edges, x0, x1, min_distance, conservative_rescaling,
               max_iterations, best):
    """``earliest_candidate_toi``'s chunks first, first + stride, ... of len(best) chunks, one after the other,
    without the GIL: two Python threads share ``best`` (n_chunks,), filled with tmax beforehand."""
    for c in range(first, best.shape[0], stride):
        _chunk_toi(c, best.shape[0], vf, ee, ev, vv, faces, edges, x0, x1, min_distance, conservative_rescaling,
                   max_iterations, best)


@njit(cache=True)
def earliest_plane_toi(pv, origins, normals, x0, x1, min_distance: float, conservative_rescaling: float) -> float:
    """Minimum, capped at 1, of the point-plane times of impact of the (plane, vertex) pairs pv (m, 2) int64.

    origins, normals: (n_planes, 3) float64 ([m], unit); x0, x1: (n_vertices, 3) float64 [m].
    """
    alpha = 1.0
    for j in range(pv.shape[0]):
        p, v = pv[j, 0], pv[j, 1]
        t = point_plane_ccd(x0[v], x1[v], origins[p], normals[p], min_distance, alpha, conservative_rescaling)
        alpha = min(alpha, t)
    return alpha


@njit(cache=True, inline="always")
def _segment_stencils(kind, pairs, first, faces, edges, kinds, stencils) -> None:
    """kinds[first + j] and stencils[first + j] of candidate j of ``pairs`` (the array of ``kind``)."""
    n = stencil_size(kind)
    for j in range(pairs.shape[0]):
        i0, i1, i2, i3, adjacent = _stencil_ids(kind, pairs, j, faces, edges)
        kinds[first + j] = -1 if adjacent else kind
        stencils[first + j, 0], stencils[first + j, 1] = i0, i1
        stencils[first + j, 2] = i2 if n > 2 else -1
        stencils[first + j, 3] = i3 if n > 3 else -1


@njit(cache=True)
def _stencils_of(vf, ee, ev, vv, faces, edges):
    m = vf.shape[0] + ee.shape[0] + ev.shape[0] + vv.shape[0]
    kinds = np.empty(m, dtype=np.int64)
    stencils = np.empty((m, 4), dtype=np.int64)
    _segment_stencils(FV, vf, 0, faces, edges, kinds, stencils)
    _segment_stencils(EE, ee, vf.shape[0], faces, edges, kinds, stencils)
    _segment_stencils(EV, ev, vf.shape[0] + ee.shape[0], faces, edges, kinds, stencils)
    _segment_stencils(VV, vv, m - vv.shape[0], faces, edges, kinds, stencils)
    return kinds, stencils


def _pairs(candidates, name: str, n_first: int, n_second: int, what: tuple[str, str]) -> np.ndarray:
    a = getattr(candidates, name, None)
    if a is None:
        return np.zeros((0, 2), dtype=np.int64)
    a = np.asarray(a)
    if a.size == 0:
        return np.zeros((0, 2), dtype=np.int64)
    if a.ndim != 2 or a.shape[1] != 2 or not np.issubdtype(a.dtype, np.integer):
        raise ValueError(f"candidates.{name} must be an (n, 2) integer array, got {a.dtype} {a.shape}")
    a = np.ascontiguousarray(a, dtype=np.int64)
    for col, bound in enumerate((n_first, n_second)):
        if a[:, col].min() < 0 or a[:, col].max() >= bound:
            bad = np.flatnonzero((a[:, col] < 0) | (a[:, col] >= bound))[0]
            raise ValueError(f"candidates.{name}[{bad}] = {a[bad].tolist()}: {what[col]} id outside 0..{bound - 1}")
    return a


_KINDS = ("vf", "ee", "ev", "vv", "pv")


def _candidate_arrays(mesh, candidates):
    """The (vf, ee, ev, vv, pv) pairs of ``candidates`` as contiguous int64 arrays, their ids checked against the
    mesh's sizes. The result is kept on the candidates object while it holds the same array objects for a mesh of
    the same sizes: the Newton loop asks again for every CCD of a line search that reuses a broad phase (a
    ``CandidateSkin``), and the checks cost about half as much as the time-of-impact kernel itself on the teddy
    grasp (1,239 candidates). Arrays changed in place after a first call are not checked again."""
    nv, nf, ne, npl = mesh.n_vertices, mesh.n_faces, mesh.n_edges, len(mesh.planes)
    given = tuple(getattr(candidates, name, None) for name in _KINDS)
    kept = getattr(candidates, "_checked_arrays", None)
    if kept is not None and kept[0] == (nv, nf, ne, npl) and all(a is b for a, b in zip(kept[1], given)):
        return kept[2]
    arrays = (
        _pairs(candidates, "vf", nv, nf, ("vertex", "face")),
        _pairs(candidates, "ee", ne, ne, ("edge", "edge")),
        _pairs(candidates, "ev", ne, nv, ("edge", "vertex")),
        _pairs(candidates, "vv", nv, nv, ("vertex", "vertex")),
        _pairs(candidates, "pv", npl, nv, ("plane", "vertex")),
    )
    try:
        candidates._checked_arrays = ((nv, nf, ne, npl), given, arrays)
    except AttributeError:  # an object that takes no new attributes: checked on every call
        pass
    return arrays


def _connectivity(mesh):
    faces = np.ascontiguousarray(mesh.faces, dtype=np.int64).reshape(-1, 3)
    edges = np.ascontiguousarray(mesh.edges, dtype=np.int64).reshape(-1, 2)
    return faces, edges


def candidate_stencils(mesh, candidates) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Stencils of a broad-phase candidate set (in the order vf, ee, ev, vv).

    Returns:
        kinds (m,) int64 (FV, EE, EV, VV; -1 for pairs of adjacent primitives, which are skipped),
        stencils (m, 4) int64 vertex ids in stencil order (-1 padded), and the (plane, vertex)
        pairs (k, 2) int64.
    """
    vf, ee, ev, vv, pv = _candidate_arrays(mesh, candidates)
    kinds, stencils = _stencils_of(vf, ee, ev, vv, *_connectivity(mesh))
    return kinds, stencils, pv


def _positions(x, n: int, name: str) -> np.ndarray:
    arr = np.ascontiguousarray(x, dtype=np.float64)
    if arr.shape != (n, 3):
        raise ValueError(f"{name} must have shape ({n}, 3) (one row per collision vertex), got {arr.shape}")
    if not np.isfinite(arr).all():
        bad = int(np.flatnonzero(~np.all(np.isfinite(arr), axis=1))[0])
        raise ValueError(f"{name}: vertex {bad} has a non-finite coordinate")
    return arr


def compute_collision_free_stepsize(
    mesh,
    x0,
    x1,
    candidates=None,
    min_distance: float = 0.0,
    *,
    conservative_rescaling: float = CONSERVATIVE_RESCALING,
    max_iterations: int = MAX_ITERATIONS,
) -> float:
    """Largest alpha in [0, 1] such that x0 -> x0 + alpha (x1 - x0) keeps every pair of primitives apart.

    Args:
        mesh: ``ipcsim.geometry.CollisionMesh`` (faces, edges, planes).
        x0, x1: (n_vertices, 3) float64 [m], collision-vertex positions at the start and end of the step.
        candidates: broad-phase result with int64 arrays ``vf`` (n, 2) [vertex, face], ``ee`` [edge, edge],
            ``ev`` [edge, vertex], ``vv`` [vertex, vertex], ``pv`` [plane, vertex] (missing ones count as
            empty). Built with ``ipcsim.contact.broad_phase.build_candidates`` on the swept boxes,
            inflated by min_distance / 2, when None.
        min_distance: [m] separation that must be kept.
        conservative_rescaling, max_iterations: ACCD parameters.

    Returns:
        alpha: the minimum ACCD time of impact over all candidates, 1.0 when nothing collides,
        0.0 when some pair already starts within min_distance.
    """
    for attr in ("faces", "edges", "planes", "n_vertices", "planes_array"):
        if not hasattr(mesh, attr):
            raise ValueError(f"mesh must be an ipcsim CollisionMesh (missing '{attr}')")
    min_distance = float(min_distance)
    if not math.isfinite(min_distance) or min_distance < 0.0:
        raise ValueError(f"min_distance must be a finite number >= 0, got {min_distance}")
    s = float(conservative_rescaling)
    if not (0.0 < s <= 1.0):
        raise ValueError(f"conservative_rescaling must lie in (0, 1], got {s}")
    if int(max_iterations) < 1:
        raise ValueError(f"max_iterations must be >= 1, got {max_iterations}")
    x0 = _positions(x0, mesh.n_vertices, "x0")
    x1 = _positions(x1, mesh.n_vertices, "x1")
    if candidates is None:
        from ..broad_phase import build_candidates

        candidates = build_candidates(mesh, x0, x1, inflation_radius=0.5 * min_distance)
    vf, ee, ev, vv, pv = _candidate_arrays(mesh, candidates)
    alpha = 1.0
    if len(pv):
        origins, normals = mesh.planes_array()
        alpha = earliest_plane_toi(pv, origins, normals, x0, x1, min_distance, s)
    m = len(vf) + len(ee) + len(ev) + len(vv)
    if m and alpha > 0.0:
        args = (vf, ee, ev, vv, *_connectivity(mesh), x0, x1, min_distance, s, int(max_iterations))
        if split_in_two(m):  # small machines: two serial halves in two Python threads (see runtime.threads)
            best = np.full(2 * _CHUNKS_PER_THREAD, alpha)
            beside(lambda: chunks_toi(0, 2, *args, best), lambda: chunks_toi(1, 2, *args, best))
            return float(best.min())
        with numba_threads(threads_for(m)) as threads:  # small inputs: one thread (see runtime.threads)
            n_chunks = max(1, min(m, threads * _CHUNKS_PER_THREAD))
            with dynamic_schedule(threads > 1):  # robust to a core shared with another process
                alpha = earliest_candidate_toi(*args, n_chunks, alpha)
    return float(alpha)
