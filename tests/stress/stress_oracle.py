"""ipctk as an independent judge of every accepted Newton update and of every frame (tests only).

``UpdateChecker`` is a hook for ``ipcsim.solvers.validation.validate_updates``: each accepted update
(xs0 -> xs1, a straight path of the collision surface) goes through ipctk's Tight-Inclusion CCD
(``is_step_collision_free``). Tight Inclusion is conservative (it may flag primitives that only come within its
tolerance), so a flagged update counts as a failure only when it is confirmed:

- a configuration sampled along the path (``SAMPLES`` + 1 evenly spaced ones) truly intersects: an edge through a
  face (``ipctk.has_intersections``) or a simulated vertex on or behind a half space;
- or a face-vertex / edge-edge pair of the broad phase truly crosses between samples: the four points become
  coplanar at a time t* where the coplanarity volume changes sign and, at t*, the point lies inside the triangle
  (the two segments cross). This catches a codimensional point or a thin plate passing through a face within one
  sample interval.

An update that starts with primitives closer than ``TOUCH`` skips Tight Inclusion (it can take minutes there) and
is judged by the exact crossing test alone.

``check_frame`` judges a frame: finite positions, no edge through a face (ipctk), every simulated collision vertex
strictly on the free side of the half spaces, and no inverted tet in the bodies whose material is guarded.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

import ipctk

#: configurations sampled along a flagged update, besides its start
SAMPLES = 64
#: Tight Inclusion's iteration cap per query (ipctk's default is 1e7): it bounds the cost of the queries where
#: contacts sit 1e-10 m apart (a soft body crushed by one 1e5 times stiffer, stress seed 73; an embedded body
#: folded onto itself, seed 87); a capped query reports a collision (conservative), which the confirmation then
#: judges exactly
CCD_MAX_ITERATIONS = 1_000
#: [m] an update that starts with two primitives closer than this skips Tight Inclusion (whose refinement of a
#: zero time of impact ignores the cap: 60 to 90 s per query measured on an update of seed 87 starting 7e-12 m
#: apart, whatever the tolerance and cap) and is judged by the exact crossing test alone (``crossings``), which
#: is complete from an intersection-free start
TOUCH = 1e-9
#: materials whose tets must never invert whatever the body's option (NH's log barrier; the bodies with
#: ``inversion="prevent"`` are guarded too: ``guarded_tets``)
INVERSION_GUARDED = frozenset({"NH"})


def ipctk_mesh(mesh) -> "ipctk.CollisionMesh":
    """ipctk's twin of an ipcsim CollisionMesh: same vertices, edges, faces and half spaces; pairs made only of
    obstacle vertices never collide (ipcsim never tests them), nor two primitives of a body without self
    contact."""
    tk = ipctk.CollisionMesh(mesh.rest_positions, mesh.edges.astype(np.int32), mesh.faces.astype(np.int32))
    tk.planes = [ipctk.Hyperplane(p.normal, p.origin) for p in mesh.planes]
    body = np.asarray(mesh.body, np.int64)
    patch = np.arange(len(body), dtype=np.int64) + 1 + (int(body.max()) + 1 if len(body) else 0)
    if mesh.self_contact is not None:
        no_self = ~np.asarray(mesh.self_contact, bool)[body]
        patch[no_self] = body[no_self]
    patch[np.asarray(mesh.is_obstacle, bool)] = -1
    if len(np.unique(patch)) < len(patch):
        tk.can_collide = ipctk.make_vertex_patches_filter(patch.astype(np.int32))
    return tk


def behind_planes(mesh, xs: np.ndarray) -> bool:
    """True if a simulated collision vertex of xs (n_surface, 3) [m] is on or behind a half space."""
    free = xs[~np.asarray(mesh.is_obstacle, bool)]
    return any(len(free) and np.min((free - p.origin) @ p.normal) <= 0.0 for p in mesh.planes)


def _ccd():
    """ipctk's Tight-Inclusion narrow phase with its default tolerance (1e-6) and ``CCD_MAX_ITERATIONS``."""
    return ipctk.TightInclusionCCD(tolerance=1e-6, max_iterations=CCD_MAX_ITERATIONS)


# ------------------------------------------------------------------------------------------- exact crossings
def _cubic_roots(f) -> np.ndarray:
    """Real roots in [0, 1] of the cubic t -> f(t) (a callable exact for cubics), where f changes sign."""
    ts = np.array([0.0, 1.0 / 3.0, 2.0 / 3.0, 1.0])
    vals = np.array([f(t) for t in ts])
    coeffs = np.linalg.solve(np.vander(ts, 4), vals)
    scale = np.max(np.abs(vals))
    if scale == 0.0 or not np.all(np.isfinite(coeffs)):
        return np.zeros(0)
    roots = np.roots(coeffs) if np.any(np.abs(coeffs[:-1]) > 1e-14 * scale) else np.zeros(0)
    roots = roots[np.abs(roots.imag) <= 1e-9].real
    roots = roots[(roots >= 0.0) & (roots <= 1.0)]
    out = []
    for t in roots:  # a true crossing: f changes sign around t (not a tangency)
        lo, hi = max(t - 1e-7, 0.0), min(t + 1e-7, 1.0)
        if f(lo) * f(hi) < 0.0:
            out.append(t)
    return np.array(out)


def _point_in_triangle(p, a, b, c) -> bool:
    """p (3,) projected into the plane of (a, b, c) lies inside the triangle (barycentric coordinates >= 0)."""
    n = np.cross(b - a, c - a)
    n2 = n @ n
    if n2 == 0.0:
        return False
    u = np.cross(c - b, p - b) @ n
    v = np.cross(a - c, p - c) @ n
    w = np.cross(b - a, p - a) @ n
    return u >= 0.0 and v >= 0.0 and w >= 0.0


def _segments_cross(a0, a1, b0, b1) -> bool:
    """Two (nearly) coplanar segments cross: their lines' closest points lie inside both segments."""
    d1, d2, r = a1 - a0, b1 - b0, a0 - b0
    a, e, b = d1 @ d1, d2 @ d2, d1 @ d2
    denom = a * e - b * b
    if a == 0.0 or e == 0.0 or denom <= 1e-14 * a * e:
        return False  # parallel: a crossing of parallel segments is an edge-face one, found by the samples
    c, f = d1 @ r, d2 @ r
    s = (b * f - c * e) / denom
    u = (a * f - b * c) / denom
    return 0.0 <= s <= 1.0 and 0.0 <= u <= 1.0


def _crossing_time(kind: str, ids, xs0, xs1):
    """The first time t in [0, 1] at which the face-vertex (ids = (p, a, b, c)) or edge-edge (ids = (a0, a1, b0,
    b1)) pair truly crosses along xs0 -> xs1 (n_surface, 3) [m], or None."""
    p0, p1 = xs0[list(ids)], xs1[list(ids)]

    def at(t):
        return (1.0 - t) * p0 + t * p1

    def volume(t):
        q = at(t)
        return np.linalg.det(np.array([q[1] - q[0], q[2] - q[0], q[3] - q[0]]))

    for t in _cubic_roots(volume):
        q = at(t)
        if (kind == "fv" and _point_in_triangle(q[0], q[1], q[2], q[3])) or (
                kind == "ee" and _segments_cross(q[0], q[1], q[2], q[3])):
            return float(t)
    return None


def crossings(tk, xs0, xs1) -> list:
    """[(kind, vertex ids, t)]: the face-vertex and edge-edge pairs of ipctk's broad phase along xs0 -> xs1 that
    truly cross (``_crossing_time``). From an intersection-free start, a surface can only come to intersect through
    such a crossing, so this test alone is complete in exact arithmetic; it is cheap enough to run on every
    candidate (no narrow-phase CCD in between)."""
    cands = ipctk.Candidates()
    cands.build(tk, xs0, xs1)
    out = []
    for kind, group in (("fv", cands.fv_candidates), ("ee", cands.ee_candidates)):
        for c in group:
            ids = c.vertex_ids(tk.edges, tk.faces)  # fv: (vertex, face corners); ee: (a0, a1, b0, b1)
            t = _crossing_time(kind, ids, xs0, xs1)
            if t is not None:
                out.append((kind, tuple(int(i) for i in ids), t))
    return out


# ------------------------------------------------------------------------------------------- the hook
@dataclass
class UpdateFailure:
    """A confirmed failure: which update (its 0-based count), where along it and what intersects."""

    update: int
    t: float
    what: str


@dataclass
class UpdateChecker:
    """check(mesh, xs0, xs1) for ``validate_updates``: counts updates, flags (Tight Inclusion) and confirmed
    failures (``UpdateFailure``), with the ipctk mesh built once per ipcsim mesh."""

    samples: int = SAMPLES
    updates: int = 0
    flagged: int = 0
    near: int = 0  # updates starting with primitives closer than TOUCH (judged by the exact crossing test alone)
    failures: list = field(default_factory=list)
    _meshes: dict = field(default_factory=dict)

    def tk_mesh(self, mesh):
        key = id(mesh)
        if key not in self._meshes:
            self._meshes[key] = (mesh, ipctk_mesh(mesh))  # the mesh kept alive: its id stays its own
        return self._meshes[key][1]

    def __call__(self, mesh, xs0, xs1) -> None:
        tk = self.tk_mesh(mesh)
        k = self.updates
        self.updates += 1
        xs0, xs1 = np.asarray(xs0, np.float64), np.asarray(xs1, np.float64)
        if not (np.all(np.isfinite(xs0)) and np.all(np.isfinite(xs1))):
            self.failures.append(UpdateFailure(k, 1.0, "non-finite positions"))
            return
        if self.starts_in_touch(tk, xs0):  # Tight Inclusion would take minutes: the exact test alone judges it
            self.near += 1
            hits = crossings(tk, xs0, xs1)
            if hits:
                self.failures.append(_crossing_failure(k, hits))
            return
        if ipctk.is_step_collision_free(tk, xs0, xs1, narrow_phase_ccd=_ccd()):
            return
        self.flagged += 1
        failure = self.confirm(tk, mesh, xs0, xs1, k)
        if failure is not None:
            self.failures.append(failure)

    @staticmethod
    def starts_in_touch(tk, xs0) -> bool:
        """Some pair of primitives is closer than ``TOUCH`` at the update's start xs0."""
        near = ipctk.NormalCollisions()
        near.build(tk, xs0, TOUCH)
        return len(near) > 0

    def confirm(self, tk, mesh, xs0, xs1, k: int) -> UpdateFailure | None:
        """The confirmed failure of a flagged update k, or None (a conservative flag)."""
        for t in np.linspace(0.0, 1.0, self.samples + 1):
            xt = (1.0 - t) * xs0 + t * xs1
            if ipctk.has_intersections(tk, xt):
                return UpdateFailure(k, float(t), "an edge passes through a face")
            if behind_planes(mesh, xt):
                return UpdateFailure(k, float(t), "a vertex is on or behind a half space")
        hits = crossings(tk, xs0, xs1)
        return _crossing_failure(k, hits) if hits else None


def _crossing_failure(k: int, hits) -> UpdateFailure:
    """The failure of update k from its crossings (``crossings``): the earliest one."""
    kind, ids, t = min(hits, key=lambda h: h[2])
    what = {"fv": "vertex {} crosses face ({}, {}, {})", "ee": "edge ({}, {}) crosses edge ({}, {})"}[kind]
    return UpdateFailure(k, t, what.format(*ids))


# ------------------------------------------------------------------------------------------- frames
def guarded_tets(model) -> np.ndarray:
    """(m,) bool: the tets no step may invert: those of a body with ``inversion="prevent"``
    (``Model.prevent_inversion``) and every tet of a material in ``INVERSION_GUARDED``."""
    guarded = np.asarray(model.prevent_inversion, bool).copy()
    for name, t in model.material_groups:
        if name in INVERSION_GUARDED:
            guarded[t] = True
    return guarded


def inverted_tets(model, x: np.ndarray, guarded: bool = True) -> int:
    """Number of tets whose signed volume at x (n, 3) [m] is <= 0 (det F <= 0) among the guarded tets
    (``guarded_tets``), or among the others with guarded=False."""
    from ipcsim.geometry.surface import tet_signed_volumes

    mask = guarded_tets(model) == guarded
    if not mask.any():
        return 0
    return int(np.count_nonzero(tet_signed_volumes(x, model.tets[mask]) <= 0.0))


def inverted_unguarded(model, x: np.ndarray) -> int:
    """Inverted tets (signed volume <= 0 at x (n, 3) [m]) of bodies whose inversion nothing prevents
    (``inversion="allow"``, a material outside ``INVERSION_GUARDED``): reported by the suite, not a failure."""
    return inverted_tets(model, x, guarded=False)


def check_frame(model, tk, x: np.ndarray) -> list[str]:
    """What is wrong with the frame x (n, 3) [m] (an empty list when nothing): non-finite positions, an
    intersection (ipctk), a simulated vertex on or behind a half space, inverted guarded tets."""
    if not np.all(np.isfinite(x)):
        return ["non-finite positions"]
    mesh = model.collision_mesh
    xs = model.surface_positions(x)
    out = []
    if ipctk.has_intersections(tk, xs):
        out.append("intersection (ipctk)")
    if behind_planes(mesh, xs):
        out.append("a vertex behind a half space")
    n_inv = inverted_tets(model, x)
    if n_inv:
        out.append(f"{n_inv} inverted tets where inversion is prevented")
    return out
