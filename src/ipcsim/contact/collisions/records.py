"""Contribution records of the narrow phase, before merging (one row per contribution).

Five parallel arrays (scratch, see ``build_collisions``), row r:
    rk[r]  int64    kind (VV, EV, EE, FV, PV), or NONE for an inactive candidate;
    ri[r]  int64 (2,) the two primitive ids: VV (v0, v1) | EV (edge, vertex) | EE (edge_a, edge_b) |
                    FV (face, vertex) | PV (plane, vertex);
    rd[r]  int64    EE distance type (``distance.types``), NONE for other kinds;
    rw[r]  float64  weight [1, or m^2 with area weighting], negative for the improved max approximator's
                    subtracted terms;
    re[r]  float64  EE mollifier threshold eps_x [m^4], 0 for other kinds.
"""
from __future__ import annotations

from numba import njit

from ..collisions_data import EV, VV
from ..distance import types as dt

#: Kind of an inactive record, and distance type of a non-EE record.
NONE = -1


@njit(cache=True, inline="always")
def put_record(rk, ri, rd, rw, re, r, kind, i0, i1, dtype, weight, eps_x):
    """Write record r."""
    rk[r] = kind
    ri[r, 0] = i0
    ri[r, 1] = i1
    rd[r] = dtype
    rw[r] = weight
    re[r] = eps_x


@njit(cache=True, inline="always")
def put_edge_vertex(rk, ri, rd, rw, re, r, edges, e, v, pe_type, weight):
    """Record r: an edge-vertex contribution reduced by its point-edge type (VV at an endpoint or EV);
    edges (n_edges, 2) int64."""
    if pe_type == dt.PE_P_E0:
        put_record(rk, ri, rd, rw, re, r, VV, v, edges[e, 0], NONE, weight, 0.0)
    elif pe_type == dt.PE_P_E1:
        put_record(rk, ri, rd, rw, re, r, VV, v, edges[e, 1], NONE, weight, 0.0)
    else:
        put_record(rk, ri, rd, rw, re, r, EV, e, v, NONE, weight, 0.0)
