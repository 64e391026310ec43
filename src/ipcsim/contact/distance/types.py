"""Distance types: which pair of sub-primitives realises the distance (Voronoi region).

Integer codes equal ipc-toolkit's enum values, so ``int(ipctk.point_triangle_distance_type(...))``
compares directly. The ``*_AUTO`` codes ask the typed distance functions to classify themselves.

point-edge      PE_P_E0=0 (point-e0), PE_P_E1=1 (point-e1), PE_P_E=2 (point-line)
point-triangle  P_T0..P_T2=0..2 (point-vertex), P_E0..P_E2=3..5 (point-edge ti-t(i+1)),
                P_T=6 (point-plane)
edge-edge       EA0_EB0..EA1_EB1=0..3 (point-point), EA_EB0=4, EA_EB1=5 (eb_i to line a),
                EA0_EB=6, EA1_EB=7 (ea_i to line b), EA_EB=8 (line-line)

All classifiers take 1D float64 arrays of length 3 [m] and return an int.

Ties. On exactly aligned geometry (a point right above a mesh vertex or edge, edges crossing at
an end point) the region test sits on its boundary and the answer is decided by rounding. To
give the same answer as ipctk 1.6.1 there, the classifiers evaluate every quantity in the same
order and with the same fused multiply-adds as ipctk's compiled code (see ``_fused.py``): the
same comparisons on bit-identical numbers.
"""
from __future__ import annotations

from ...runtime.jit import generic_njit
from ._fused import edge_frame_coordinates, fcross, fdot, fdot_yxz, fma, fsquared_norm, plain_dot
from ._vec import check_vertex, sub, vec3

# point-edge
PE_P_E0 = 0
PE_P_E1 = 1
PE_P_E = 2
PE_AUTO = 3
# point-triangle
P_T0 = 0
P_T1 = 1
P_T2 = 2
P_E0 = 3
P_E1 = 4
P_E2 = 5
P_T = 6
PT_AUTO = 7
# edge-edge
EA0_EB0 = 0
EA0_EB1 = 1
EA1_EB0 = 2
EA1_EB1 = 3
EA_EB0 = 4
EA_EB1 = 5
EA0_EB = 6
EA1_EB = 7
EA_EB = 8
EE_AUTO = 9

#: Edges count as parallel when |ea x eb|^2 < EE_PARALLEL_THRESHOLD |ea|^2 |eb|^2, i.e.
#: sin^2(angle) < 2.5e-16 (the relative rule of ipc-toolkit, checked against ipctk 1.6.1).
EE_PARALLEL_THRESHOLD = 2.5e-16

@generic_njit(error_model="numpy")
def point_edge_distance_type(p, e0, e1):
    """Closest feature of segment (e0, e1) [m] to point p [m]: PE_P_E0, PE_P_E1 or PE_P_E.

    A degenerate edge (e0 == e1) gives PE_P_E0.
    """
    if not (check_vertex(p) & check_vertex(e0) & check_vertex(e1)):
        raise ValueError("point_edge_distance_type: p, e0, e1 must be float arrays of shape (3,)")
    return point_edge_type(vec3(p), vec3(e0), vec3(e1))


@generic_njit(error_model="numpy")
def point_edge_type(p, e0, e1):
    """``point_edge_distance_type`` on 3-tuples (no checks; for njit callers).

    ratio = e.(p - e0) / |e|^2 with e = e1 - e0: |e|^2 fused (x, y, z), the dot unfused, as ipctk.
    """
    e = sub(e1, e0)
    e_len2 = fdot(e, e)
    if e_len2 == 0.0:
        return PE_P_E0
    ratio = plain_dot(sub(p, e0), e) / e_len2
    if ratio < 0.0:
        return PE_P_E0
    if ratio > 1.0:
        return PE_P_E1
    return PE_P_E


@generic_njit(error_model="numpy")
def point_triangle_distance_type(p, t0, t1, t2):
    """Voronoi region of triangle (t0, t1, t2) [m] containing point p [m]: one of P_T0, P_T1,
    P_T2, P_E0, P_E1, P_E2, P_T (the region of the closest point on the triangle).

    For each edge i (origin o_i, direction e_i = t(i+1) - t(i)), the coordinates (s_i, h_i) of
    p - o_i in the frame (e_i, e_i x n) (n = (t1 - t0) x (t2 - t0)) decide: 0 < s_i < 1 and
    h_i >= 0 -> P_Ei (edges tested in order 0, 1, 2); else s_0 <= 0 and s_2 >= 1 -> P_T0,
    s_1 <= 0 and s_0 >= 1 -> P_T1, s_2 <= 0 and s_1 >= 1 -> P_T2; else P_T. Degenerate
    triangles give s = h = 0 (pseudo-inverse), hence P_T.
    """
    if not (check_vertex(p) & check_vertex(t0) & check_vertex(t1) & check_vertex(t2)):
        raise ValueError("point_triangle_distance_type: p, t0, t1, t2 must be float arrays of shape (3,)")
    return point_triangle_type(vec3(p), vec3(t0), vec3(t1), vec3(t2))


@generic_njit(error_model="numpy")
def _edge_frame(p, o, e, normal):
    """(s, h) of p - o in the frame (e, e x normal); see ``_fused.edge_frame_coordinates``."""
    return edge_frame_coordinates(e, fcross(e, normal), sub(p, o))


@generic_njit(error_model="numpy")
def point_triangle_type(p, t0, t1, t2):
    """``point_triangle_distance_type`` on 3-tuples (no checks; for njit callers)."""
    normal = fcross(sub(t1, t0), sub(t2, t0))
    s0, h0 = _edge_frame(p, t0, sub(t1, t0), normal)
    if s0 > 0.0 and s0 < 1.0 and h0 >= 0.0:
        return P_E0
    s1, h1 = _edge_frame(p, t1, sub(t2, t1), normal)
    if s1 > 0.0 and s1 < 1.0 and h1 >= 0.0:
        return P_E1
    s2, h2 = _edge_frame(p, t2, sub(t0, t2), normal)
    if s2 > 0.0 and s2 < 1.0 and h2 >= 0.0:
        return P_E2
    if s0 <= 0.0 and s2 >= 1.0:
        return P_T0
    if s1 <= 0.0 and s0 >= 1.0:
        return P_T1
    if s2 <= 0.0 and s1 >= 1.0:
        return P_T2
    return P_T


@generic_njit(error_model="numpy")
def edge_edge_parallel_distance_type(ea0, ea1, eb0, eb1):
    """Distance type of two (nearly) parallel edges [m]: never EA_EB (the lines are degenerate);
    the type is chosen from the projections alpha, beta of eb0, eb1 on the line of edge a."""
    if not (check_vertex(ea0) & check_vertex(ea1) & check_vertex(eb0) & check_vertex(eb1)):
        raise ValueError("edge_edge_parallel_distance_type: ea0, ea1, eb0, eb1 must be float arrays of shape (3,)")
    return edge_edge_parallel_type(vec3(ea0), vec3(ea1), vec3(eb0), vec3(eb1))


@generic_njit(error_model="numpy")
def edge_edge_parallel_type(ea0, ea1, eb0, eb1):
    """``edge_edge_parallel_distance_type`` on 3-tuples (no checks)."""
    ea = sub(ea1, ea0)
    ea_len2 = fsquared_norm(ea)
    alpha = fdot_yxz(sub(eb0, ea0), ea) / ea_len2
    beta = fdot_yxz(sub(eb1, ea0), ea) / ea_len2
    # eac: 0 -> ea0, 1 -> ea1, 2 -> interior of a;  ebc likewise for edge b
    if alpha < 0.0:
        eac = 2 if (0.0 <= beta and beta <= 1.0) else 0
        ebc = 0 if beta <= alpha else (1 if beta <= 1.0 else 2)
    elif alpha > 1.0:
        eac = 2 if (0.0 <= beta and beta <= 1.0) else 1
        ebc = 0 if beta >= alpha else (1 if 0.0 <= beta else 2)
    else:
        eac = 2
        ebc = 0
    if ebc < 2:
        return (eac << 1) | ebc
    return 6 + eac


@generic_njit(error_model="numpy")
def edge_edge_distance_type(ea0, ea1, eb0, eb1):
    """Closest-feature pair of segments a = (ea0, ea1) and b = (eb0, eb1) [m]: one of EA0_EB0 ..
    EA_EB (see module docstring).

    Clamped closest points of the two lines (the classic s, t parametrisation). Degenerate
    edges: both points -> EA0_EB0, a a point -> EA0_EB, b a point -> EA_EB0. Nearly parallel
    edges (|ea x eb|^2 < 2.5e-16 |ea|^2 |eb|^2) are routed to
    ``edge_edge_parallel_distance_type``, so EA_EB is never returned for them.
    """
    if not (check_vertex(ea0) & check_vertex(ea1) & check_vertex(eb0) & check_vertex(eb1)):
        raise ValueError("edge_edge_distance_type: ea0, ea1, eb0, eb1 must be float arrays of shape (3,)")
    return edge_edge_type(vec3(ea0), vec3(ea1), vec3(eb0), vec3(eb1))


@generic_njit(error_model="numpy")
def _edge_edge_cross_squarednorm(u, v):
    """|u x v|^2 rounded as in the classifier (fused cross product and sum)."""
    return fsquared_norm(fcross(u, v))


@generic_njit(error_model="numpy")
def edge_edge_type(ea0, ea1, eb0, eb1):
    """``edge_edge_distance_type`` on 3-tuples (no checks; for njit callers)."""
    u = sub(ea1, ea0)
    v = sub(eb1, eb0)
    a = fsquared_norm(u)
    c = fsquared_norm(v)
    if a == 0.0 and c == 0.0:
        return EA0_EB0
    if a == 0.0:
        return EA0_EB
    if c == 0.0:
        return EA_EB0
    if _edge_edge_cross_squarednorm(u, v) < EE_PARALLEL_THRESHOLD * a * c:
        return edge_edge_parallel_type(ea0, ea1, eb0, eb1)

    w = sub(ea0, eb0)
    b = fdot(u, v)
    d = fdot(u, w)
    e = fdot(w, v)
    default_case = EA_EB
    sN = fma(b, e, -(c * d))  # closest point on line a at s = sN / D
    if sN <= 0.0:  # s <= 0: ea0 sees edge b
        tN = e
        tD = c
        default_case = EA0_EB
    else:
        D = fma(-b, b, a * c)
        if sN >= D:  # s >= 1: ea1 sees edge b
            tN = e + b
            tD = c
            default_case = EA1_EB
        else:
            tN = fma(a, e, -(b * d))
            tD = D
    if tN <= 0.0:  # t <= 0: eb0 sees edge a
        if -d <= 0.0:
            return EA0_EB0
        if -d >= a:
            return EA1_EB0
        return EA_EB0
    if tN >= tD:  # t >= 1: eb1 sees edge a
        if b - d <= 0.0:
            return EA0_EB1
        if b - d >= a:
            return EA1_EB1
        return EA_EB1
    return default_case


@generic_njit(error_model="numpy")
def edge_edge_is_parallel(ea0, ea1, eb0, eb1):
    """True if |ea x eb|^2 < EE_PARALLEL_THRESHOLD |ea|^2 |eb|^2 (the classifier's rule, rounded
    the same way); 3-tuples or (3,) arrays [m]."""
    u = sub(ea1, ea0)
    v = sub(eb1, eb0)
    return _edge_edge_cross_squarednorm(u, v) < EE_PARALLEL_THRESHOLD * fsquared_norm(u) * fsquared_norm(v)
