"""The collision-aware vertex set x2 of the face solver (000 §3.1, chosen automatically).

000 marks x2 (the simulation vertices that embed the collision proxy, Fig. 2b) by hand and names automation as
future work. Here it is derived from the proxy map W (s = W x, ``FaceModel.proxy_map``): a barrier on proxy
vertex s touches exactly the simulation vertices with a non-zero weight in row s of W, so

* ``collision_aware_vertices(model)``: the nodes of every tet that embeds a proxy vertex. No contact can ever reach
  outside this set, so the Schur and Woodbury solvers never fall back; n2 is as large as the proxy's footprint.
* ``collision_aware_vertices(model, proxy=ids)``: the same for a subset of the proxy vertices, e.g. those a
  cheap contact-free pass of the animation brings close to other proxy parts (``contact_prone_proxy``): a much
  smaller x2 when the proxy is large (a whole face) but contacts stay local (the lips). A contact outside it
  later is still solved exactly (the solver's direct fallback, counted).
* ``rings``: grow the set by that many rings of the tet mesh's vertex adjacency.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ..contact.collisions import build_collisions
from ..contact.collisions_data import STENCIL_SIZE


def vertex_adjacency(n: int, tets: np.ndarray) -> sp.csr_matrix:
    """(n, n) CSR boolean: vertices sharing a tet (diagonal included)."""
    t = np.asarray(tets, np.int64)
    rows = np.repeat(t, 4, axis=1).ravel()
    cols = np.tile(t, (1, 4)).ravel()
    a = sp.csr_matrix((np.ones(len(rows), bool), (rows, cols)), shape=(n, n))
    a.sum_duplicates()
    return a


def grow_rings(vertices: np.ndarray, n: int, tets: np.ndarray, rings: int) -> np.ndarray:
    """The vertex set (sorted ids) grown by ``rings`` rings of tet adjacency."""
    mask = np.zeros(n, bool)
    mask[np.asarray(vertices, np.int64)] = True
    if rings > 0:
        adj = vertex_adjacency(n, tets)
        for _ in range(int(rings)):
            mask = (adj @ mask.astype(np.int8)) > 0
    return np.flatnonzero(mask).astype(np.int64)


def collision_aware_vertices(model, proxy=None, rings: int = 0) -> np.ndarray:
    """x2 as simulation-vertex ids (sorted, bone vertices included; the solver drops them): the nodes with a
    non-zero weight in the rows ``proxy`` (None: all) of the proxy map, grown by ``rings`` rings."""
    w = model.proxy_map
    rows = np.arange(w.n_surface) if proxy is None else np.asarray(proxy, np.int64)
    return grow_rings(w.nodes_of(rows), len(model.rest), model.tets, rings)


def close_proxy_vertices(mesh, s: np.ndarray, radius: float) -> np.ndarray:
    """Proxy vertices (sorted ids) of every stencil (vertex-vertex, edge-vertex, edge-edge, face-vertex) closer
    than radius [m] at proxy positions s (p, 3) [m] (the active-set search, without weights)."""
    coll = build_collisions(mesh, s, float(radius))
    if not len(coll):
        return np.zeros(0, np.int64)
    k = STENCIL_SIZE[np.asarray(coll.kind)]
    v = np.asarray(coll.vertices)
    used = np.arange(4)[None, :] < k[:, None]
    return np.unique(v[used]).astype(np.int64)


def contact_prone_proxy(model, mesh, frames_x, radius: float) -> np.ndarray:
    """Proxy vertices (sorted ids) within radius [m] of another proxy primitive in any of the simulation-vertex
    configurations frames_x (iterable of (n, 3) [m], e.g. a contact-free PD run of the animation), or crossing
    it (an intersecting pair has distance 0)."""
    found = [close_proxy_vertices(mesh, model.proxy_map.apply(x), radius) for x in frames_x]
    return np.unique(np.concatenate(found)) if found else np.zeros(0, np.int64)
