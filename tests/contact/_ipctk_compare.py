"""Helpers comparing ipcsim's active set with ipctk's (tests only)."""
from __future__ import annotations

import numpy as np

_SWAP = {0: 0, 1: 2, 2: 1, 3: 3, 4: 6, 5: 7, 6: 4, 7: 5, 8: 8}


def ipctk_mesh(mesh):
    import ipctk

    return ipctk.CollisionMesh(mesh.rest_positions, mesh.edges.astype(np.int32), mesh.faces.astype(np.int32))


def ipctk_collisions(mesh, x, dhat, area=False, improved=False, cmesh=None):
    import ipctk

    cmesh = ipctk_mesh(mesh) if cmesh is None else cmesh
    c = ipctk.NormalCollisions()
    c.use_area_weighting = area
    c.collision_set_type = ipctk.NormalCollisions.IMPROVED_MAX_APPROX if improved else ipctk.NormalCollisions.IPC
    c.build(cmesh, x, dhat)
    return c, cmesh


def ipctk_stencil_dict(c, mesh):
    """{key: weight} with keys in vertex ids: ('vv', lo, hi), ('ev', v, e0, e1), ('ee', ea, eb, dtype), ('fv', v, f)."""
    E, F = mesh.edges, mesh.faces
    out = {}
    for cc in c.vv_collisions:
        a, b = sorted((cc.vertex0_id, cc.vertex1_id))
        out[("vv", a, b)] = out.get(("vv", a, b), 0.0) + cc.weight
    for cc in c.ev_collisions:
        k = ("ev", cc.vertex_id, *sorted(E[cc.edge_id]))
        out[k] = out.get(k, 0.0) + cc.weight
    for cc in c.ee_collisions:
        ea, eb, t = tuple(sorted(E[cc.edge0_id])), tuple(sorted(E[cc.edge1_id])), int(cc.dtype)
        if eb < ea:
            ea, eb, t = eb, ea, _SWAP[t]
        k = ("ee", ea, eb, t)
        out[k] = out.get(k, 0.0) + cc.weight
    for cc in c.fv_collisions:
        k = ("fv", cc.vertex_id, tuple(sorted(F[cc.face_id])))
        out[k] = out.get(k, 0.0) + cc.weight
    return out


def ipcsim_stencil_dict(col, mesh):
    E, F = mesh.edges, mesh.faces
    out = {}
    for k, p, t, w in zip(col.kind, col.primitives, col.dtype, col.weight):
        if k == 0:
            key = ("vv", *sorted(p))
        elif k == 1:
            key = ("ev", p[1], *sorted(E[p[0]]))
        elif k == 2:
            ea, eb, t = tuple(sorted(E[p[0]])), tuple(sorted(E[p[1]])), int(t)
            # ipcsim edges are sorted (e[0] < e[1]); ipctk dtype refers to its own edge orientation
            if eb < ea:
                ea, eb, t = eb, ea, _SWAP[t]
            key = ("ee", ea, eb, t)
        elif k == 3:
            key = ("fv", p[1], tuple(sorted(F[p[0]])))
        else:
            key = ("pv", p[0], p[1])
        key = tuple(int(v) if isinstance(v, (np.integer,)) else v for v in key)
        out[key] = out.get(key, 0.0) + float(w)
    return out


def ipctk_candidates(mesh, x, dhat):
    """ipctk's own broad-phase candidates as ipcsim Candidates, in ipctk's pair orientation.

    With the improved max approximator, ipctk merges edge-edge terms by (unordered edge pair,
    distance type relative to the stored order), so the first orientation found matters; feeding
    ipctk's orientation (and running ipctk on one thread) makes the comparison deterministic.
    """
    import ipctk

    from ipcsim.contact.broad_phase import Candidates

    c = ipctk.Candidates()
    c.build(ipctk_mesh(mesh), x, 0.5 * dhat)
    ee = np.array([[k.edge0_id, k.edge1_id] for k in c.ee_candidates], dtype=np.int64).reshape(-1, 2)
    vf = np.array([[k.vertex_id, k.face_id] for k in c.fv_candidates], dtype=np.int64).reshape(-1, 2)
    ev = np.array([[k.edge_id, k.vertex_id] for k in c.ev_candidates], dtype=np.int64).reshape(-1, 2)
    vv = np.array([[k.vertex0_id, k.vertex1_id] for k in c.vv_candidates], dtype=np.int64).reshape(-1, 2)
    return Candidates(vf=vf, ee=ee, ev=ev, vv=vv)
