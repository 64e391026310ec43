"""IPC 2020's legacy animation scripts (``script <type>``) as ipcsim prescribed motions.

IPC (src/AnimScripter.cpp) merges every shape of a script into one mesh V (the tet shapes and the .obj/.seg/.pt
"codimensional" shapes, in script order; ``meshCO`` objects stay apart) and, for a ``script`` other than
``null``, throws away the shapes' own DBC/NBC/linearVelocity/angularVelocity/initVel/meshSeq settings and sets
up its own in ``initAnimScript`` (shifts, handle vertices picked by fractions of V's bounding box, their
velocities) and ``stepAnimScript`` (the motion of each step, with switches tested at every step start). This
module turns that set-up into a ``Plan`` for the importer (``ipc_scene``): a vertical shift of every shape,
Dirichlet sets by vertex index, Neumann loads, initial velocities and obstacle motions.

Conventions (all lengths in the scene's world units [m], after ``size``/``rotateModel``):

* handle strips ("border vertices"): left = x < min_x + r range_x, right = x > max_x - r range_x (not left),
  r = ``handleRatio`` (default 0.01), over all of V; "the last vertex" of a strip is its highest index.
* switches tested at step starts (``stretchAndPause``, ``dragright``, ``DCOSegBedSquash``, ``DCOSqueezeOut``,
  ``DCOSquash``/``DCOSquash6``) are evaluated here by replaying IPC's step loop on the prescribed vertices,
  which move exactly as scripted (IPC's full steps), and written as time ranges or translation keyframes on
  the step grid. ``dragright`` tests the free mesh (it releases the handle when the whole mesh has cleared the
  collision objects); it is estimated here by a rigid drag and said so in a warning.
* rotations about a fixed center by a constant angular velocity about one axis are exact in both codes (IPC
  rotates the current positions by w h per step about the same point).

Differences from IPC's code, on purpose: ``DCOSqueezeOut`` starts its bottom minimum at -inf in IPC, so its
stopping test compares with NaN and the top plate never moves there; the intended test (the plate stops when its
top reaches 0.9/3.8 of the bottom object's height) is used here. ``onepoint`` and ``random`` start from a
collapsed/random configuration and are refused, like the other types listed in ``IPC_TYPES`` but not in
``SUPPORTED``.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

# every animation script type IPC knows (AnimScripter::animScriptTypeStrs)
IPC_TYPES = (
    "null", "scaleF", "hang", "hang2", "hangTopLeft", "hangLeft", "swing", "stamp", "stampTopLeft", "stampBoth",
    "undstamp", "stampInv", "stand", "standInv", "topbottomfix", "fixLowerHalf", "corner", "push", "tear",
    "upndown", "stretch", "stretchAndPause", "squash", "stretchnsquash", "bend", "twist", "twistnstretch",
    "twistnsns", "twistnsns_old", "rubberBandPull", "fourLegPull", "headTailPull", "onepoint", "random", "fall",
    "fallNoShift", "dragdown", "dragright", "toggleTop", "leftHitRight", "drop", "XYRotate", "curtain",
    "fixRightMost1", "pushRightMost1", "NMFixBottomDragLeft", "NMFixBottomDragForward", "ACOSquash", "ACOSquash6",
    "ACOSquashShear", "MCOSquash", "MCORotSquash", "MCORotCylinders", "DCORotCylinders", "DCOSquash",
    "DCOSquash6", "DCOFix", "DCOSegBedSquash", "DCOBallHitWall", "DCOSqueezeOut", "DCOVerschoorRoller",
    "DCOHammerWalnut", "DCOCut", "utopiaComparison", "meshSeqFromFile",
)
# why some known types are refused
_REFUSED = {
    "onepoint": "it starts every vertex at one point: zero-volume elements and zero contact distances, which no "
                "barrier-based step can start from",
    "random": "it starts from random vertex positions (inverted elements, intersections)",
    "scaleF": "it starts from a 1.5x scaled configuration (ipcsim starts at the rest shape)",
}
PI = math.pi


@dataclass
class Plan:
    """What a script sets up, per shape index i of the script (order of ``shapes``/``shapeMatrix``).

    lift: [m] added to every shape's y (fall, dragdown, dragright); dirichlet[i]/neumann[i]: scene entries
    (vertex indices local to shape i); velocity[i]: initial linear velocity (3,) [m/s] of body i;
    obstacle[i]: motion keys of obstacle i (velocity/angular_velocity/center/time_range or keyframes);
    codim_ok: the script prescribes the .obj/.seg/.pt shapes (IPC's "DCO" scripts); otherwise such shapes
    would be free codimensional objects in IPC, which ipcsim does not simulate.
    """

    name: str
    lift: float = 0.0
    dirichlet: dict = field(default_factory=dict)
    neumann: dict = field(default_factory=dict)
    velocity: dict = field(default_factory=dict)
    obstacle: dict = field(default_factory=dict)
    codim_ok: bool = False


def _f(values) -> list:
    return [float(v) for v in values]


class _Ctx:
    """IPC's merged mesh V of a script and the helpers that fill a Plan."""

    def __init__(self, plan: Plan, kinds, placed, mco_points, settings, params, fail, warn):
        self.plan, self.kinds, self.s, self.params = plan, list(kinds), settings, params
        self.V = np.vstack(placed).astype(np.float64)
        self.offsets = np.cumsum([0] + [len(x) for x in placed])
        self.mco = [np.asarray(x, np.float64) for x in mco_points]
        self.fail, self.warn = fail, warn
        self.dt = float(settings["dt"])
        self.n_steps = max(1, math.ceil(float(settings["end"]) / self.dt - 1e-9))

    # ------------------------------------------------------------- geometry of V
    @property
    def lo(self) -> np.ndarray:
        return self.V.min(axis=0)

    @property
    def hi(self) -> np.ndarray:
        return self.V.max(axis=0)

    @property
    def rng(self) -> np.ndarray:
        return self.hi - self.lo

    def comp(self, i: int) -> np.ndarray:
        """Current positions (n_i, 3) [m] of shape i."""
        return self.V[self.offsets[i]:self.offsets[i + 1]]

    def shift(self, dy: float) -> None:
        """Lift every shape by dy [m] along y (IPC shifts V, so the shapes of the script move together)."""
        self.V[:, 1] += dy
        self.plan.lift += dy

    def lift_half_diagonal(self) -> None:
        """fall/dragdown/dragright: V.y += half the diagonal of V's bounding box."""
        self.shift(0.5 * float(np.linalg.norm(self.rng)))

    def strips(self, ratio: float | None = None) -> tuple[np.ndarray, np.ndarray]:
        """IPC's findBorderVerts: (left, right) global indices, ascending."""
        r = self.s["handle_ratio"] if ratio is None else ratio
        x, lo, hi, rg = self.V[:, 0], self.lo[0], self.hi[0], self.rng[0]
        left = x < lo + rg * r
        right = ~left & (x > hi - rg * r)
        return np.flatnonzero(left), np.flatnonzero(right)

    # ------------------------------------------------------------- plan entries
    def _split(self, idx) -> dict:
        idx = np.asarray(idx, np.int64).reshape(-1)
        if len(idx) == 0:
            raise self.fail("selects no vertex (IPC would index an empty handle)")
        shape = np.searchsorted(self.offsets, idx, side="right") - 1
        out = {}
        for i in np.unique(shape):
            if self.kinds[i] != "tet":
                raise self.fail(f"not supported here: its handle takes vertices of the kinematic shape #{i + 1} "
                                "(a .obj/.seg/.pt shape)")
            out[int(i)] = [int(v) for v in idx[shape == i] - self.offsets[i]]
        return out

    def dirichlet(self, idx, velocity=(0.0, 0.0, 0.0), angular=(0.0, 0.0, 0.0), center=None, t0=0.0, t1=None):
        """A Dirichlet set by global indices: velocity [m/s], angular velocity [rad/s] about center (3,) [m]
        (a fixed point: only used with velocity 0), acting in the steps inside [t0, t1] [s]."""
        for i, local in self._split(idx).items():
            self.plan.dirichlet.setdefault(i, []).append({
                "indices": local, "velocity": _f(velocity), "angular_velocity": _f(angular),
                "center": None if center is None else _f(center), "time_range": [float(t0), t1]})

    def neumann(self, idx, acceleration) -> None:
        """A Neumann load by global indices: acceleration (3,) [m/s^2] in every step (IPC's default range)."""
        for i, local in self._split(idx).items():
            self.plan.neumann.setdefault(i, []).append({"indices": local, "acceleration": _f(acceleration),
                                                        "time_range": [0.0, None]})

    def codim(self, count: int | None = None) -> list[int]:
        """The scripted components of a DCO script: the first count shapes (all must be kinematic), or every
        kinematic shape when count is None."""
        self.plan.codim_ok = True
        if count is None:
            return [i for i, k in enumerate(self.kinds) if k != "tet"]
        if len(self.kinds) < count + 1 or any(k == "tet" for k in self.kinds[:count]):
            raise self.fail(f"needs its first {count} shapes to be .obj/.seg/.pt collision objects and a body "
                            "after them")
        return list(range(count))

    def bbox_center(self, i: int) -> np.ndarray:
        x = self.comp(i)
        return 0.5 * (x.min(axis=0) + x.max(axis=0))

    def moving_steps(self, moving) -> int:
        """Replays IPC's step loop: the number k of leading steps whose start passes the test moving(k)."""
        k = 0
        while k < self.n_steps and moving(k):
            k += 1
        return k

    def t(self, k: int) -> float:
        """Start time [s] of step k."""
        return k * self.dt


# ----------------------------------------------------------------------------------------- fixed handles
def _fall(c: _Ctx):
    c.lift_half_diagonal()


def _fall_no_shift(c: _Ctx):
    pass


def _hang(c: _Ctx):
    for strip in c.strips():
        c.dirichlet(strip[-1:])


def _hang_left(c: _Ctx):
    c.dirichlet(c.strips()[0])


def _fix_lower_half(c: _Ctx):
    c.dirichlet(np.flatnonzero(c.V[:, 1] < c.lo[1] + 0.5 * c.rng[1]))


def _fixed_by(rule):
    """A script holding the vertices that rule(ctx) (n,) bool selects (IPC's hang2, stand, corner, ...)."""
    def handler(c: _Ctx):
        c.dirichlet(np.flatnonzero(rule(c)))
    return handler


def _near(c: _Ctx, axis: int, side: str, frac: float) -> np.ndarray:
    """(n,) bool: vertices within frac of V's extent from its min ('lo') or max ('hi') end along axis."""
    x = c.V[:, axis]
    return x < c.lo[axis] + frac * c.rng[axis] if side == "lo" else x > c.hi[axis] - frac * c.rng[axis]


def _in_strip(c: _Ctx, which: int) -> np.ndarray:
    out = np.zeros(len(c.V), bool)
    out[c.strips()[which]] = True
    return out


def _first(mask: np.ndarray) -> np.ndarray:
    out = np.zeros_like(mask)
    out[np.flatnonzero(mask)[:1]] = True
    return out


def _swing(c: _Ctx):
    """Lifted by 1.3 times V's height, the vertices within 5% of the left end held."""
    c.shift(1.3 * float(c.rng[1]))
    c.dirichlet(np.flatnonzero(_near(c, 0, "lo", 0.05)))


def _drop(c: _Ctx):
    """Every body starts at (0, -1, 0) m/s."""
    for i in range(len(c.kinds)):
        c.plan.velocity[i] = [0.0, -1.0, 0.0]


def _nm_drag(force_x: float):
    """NMFixBottomDrag*: the bottom 5% held, the top 5% loaded by (force_x, 0, 0) m/s^2 (IPC's Neumann value)."""
    def handler(c: _Ctx):
        bottom = _near(c, 1, "lo", 0.05)
        c.dirichlet(np.flatnonzero(bottom))
        c.neumann(np.flatnonzero(~bottom & _near(c, 1, "hi", 0.05)), (force_x, 0.0, 0.0))
    return handler


_FIXED = {
    "hang2": lambda c: _near(c, 1, "hi", 0.01),
    "hangTopLeft": lambda c: _in_strip(c, 0) & _near(c, 1, "hi", 0.01) & (_near(c, 2, "hi", 0.01)
                                                                           | _near(c, 2, "lo", 0.01)),
    "stamp": lambda c: _in_strip(c, 0),
    "stampBoth": lambda c: _in_strip(c, 0) | _in_strip(c, 1),
    "stampTopLeft": lambda c: _in_strip(c, 0) & _near(c, 1, "hi", 0.01),
    "stand": lambda c: _near(c, 1, "lo", 0.01),
    "topbottomfix": lambda c: _near(c, 1, "lo", 0.02) | _near(c, 1, "hi", 0.02),
    "corner": lambda c: _near(c, 0, "lo", 0.01) | _near(c, 1, "lo", 0.01) | _near(c, 2, "lo", 0.01),
    "fixRightMost1": lambda c: _first(_near(c, 0, "hi", 1e-3)),
}


# ----------------------------------------------------------------------------------------- moving handles
def _pair(c: _Ctx, velocity_left: float):
    """stretch/squash: the left strip moves at velocity_left along x, the right one at -velocity_left [m/s]."""
    for b, strip in enumerate(c.strips()):
        c.dirichlet(strip, velocity=((-1.0) ** b * velocity_left, 0.0, 0.0))


def _stretch(c: _Ctx):
    _pair(c, -0.1)


def _squash(c: _Ctx):
    _pair(c, 0.03)


def _bend(c: _Ctx):
    """Each strip turns about z through its last vertex: left at -0.05 pi, right at +0.05 pi rad/s."""
    for b, strip in enumerate(c.strips()):
        c.dirichlet(strip, angular=(0.0, 0.0, (-1.0) ** b * -0.05 * PI), center=c.V[strip[-1]])


def _twist(c: _Ctx):
    """Each strip turns about x through the center of V's rest bounding box: left -0.4 pi, right +0.4 pi rad/s."""
    center = 0.5 * (c.lo + c.hi)
    for b, strip in enumerate(c.strips()):
        c.dirichlet(strip, angular=((-1.0) ** b * -0.4 * PI, 0.0, 0.0), center=center)


def _dragdown(c: _Ctx):
    c.lift_half_diagonal()
    x, y, lo, rg = c.V[:, 0], c.V[:, 1], c.lo, c.rng
    sel = (y < lo[1] + 0.1 * rg[1]) & (x < lo[0] + 0.52 * rg[0]) & (x > lo[0] + 0.42 * rg[0])
    c.dirichlet(np.flatnonzero(sel), velocity=(0.0, -1.5, 0.0))


def _dragright(c: _Ctx):
    """The right 4% move at +0.5 m/s along x until the mesh's min x passes the collision objects' max x."""
    c.lift_half_diagonal()
    sel = np.flatnonzero(c.V[:, 0] > c.hi[0] - 0.04 * c.rng[0])
    right_most = max((float(x[:, 0].max()) for x in c.mco if len(x)), default=-math.inf)
    min_x = float(c.lo[0])
    k = c.moving_steps(lambda k: not min_x + 0.5 * c.t(k) > right_most)
    if k == 0:
        return
    if k < c.n_steps:
        c.warn(f"the handle is released at t = {c.t(k):g} s, when a rigid drag would carry the mesh past the "
               "collision objects (IPC releases it when the simulated mesh has cleared them)")
    c.dirichlet(sel, velocity=(0.5, 0.0, 0.0), t1=c.t(k) if k < c.n_steps else None)


def _push_right_most1(c: _Ctx):
    sel = np.flatnonzero(c.V[:, 0] > c.hi[0] - 1e-3 * c.rng[0])[:1]
    c.dirichlet(sel, velocity=(-0.15, 0.0, 0.0))


def _stretch_and_pause(c: _Ctx):
    """Left 1% at -1 m/s, right 1% at +1 m/s along x while the left strip's last vertex is at x >= -0.28 m
    (tested at each step start), then both held in place."""
    left, right = c.strips(0.01)
    x0 = float(c.V[left[-1], 0]) if len(left) else -math.inf
    k = c.moving_steps(lambda k: x0 - 1.0 * c.t(k) >= -0.28)
    for strip, v in ((left, -1.0), (right, 1.0)):
        if k > 0:
            c.dirichlet(strip, velocity=(v, 0.0, 0.0), t1=c.t(k) if k < c.n_steps else None)
        if k < c.n_steps:
            c.dirichlet(strip, t0=c.t(k))


def _utopia(c: _Ctx):
    """The top (within 1e-4 of the x extent) pushed by -1.5 m/s^2 along y, the bottom held."""
    y, tol = c.V[:, 1], c.rng[0] * 1e-4
    top = y > c.hi[1] - tol
    c.neumann(np.flatnonzero(top), (0.0, -1.5, 0.0))
    c.dirichlet(np.flatnonzero(~top & (y < c.lo[1] + tol)))


# ----------------------------------------------------------------------------------------- DCO scripts
def _dco_fix(c: _Ctx):
    c.codim()


def _dco_ball_hit_wall(c: _Ctx):
    """DCOFix plus an initial velocity (v_x, 0, 0) [m/s] on every tet vertex (v_x: the script's parameter,
    default 1000)."""
    c.codim()
    vx = c.params[0] if c.params and c.params[0] == c.params[0] else 1000.0
    for i, kind in enumerate(c.kinds):
        if kind == "tet":
            c.plan.velocity[i] = [float(vx), 0.0, 0.0]


def _rotating(c: _Ctx, rates):
    """The first len(rates) shapes turn about their initial bounding-box centers at rates (3,) [rad/s]."""
    for i, w in zip(c.codim(len(rates)), rates):
        c.plan.obstacle[i] = {"angular_velocity": _f(w), "center": _f(c.bbox_center(i))}


def _dco_rot_cylinders(c: _Ctx):
    _rotating(c, [(PI / 2, 0, 0), (-PI / 2, 0, 0), (0, 0, -PI / 2), (0, 0, PI / 2)])


def _dco_verschoor_roller(c: _Ctx):
    _rotating(c, [(0, 0, -4.0), (0, 0, -2.0), (0, 0, 2.0), (0, 0, 4.0), (2.0, 0, 0), (-2.0, 0, 0)])


def _squash_walls(c: _Ctx, count: int):
    """DCOSquash(6): walls 0/1 at +-1 m/s along x (2/3 along y, 4/5 along z); every velocity flips at a step
    start where the x gap between wall 1's min and wall 0's max is below 0.1 m. Written as translation
    keyframes at the steps where the velocities change and at the end."""
    comps = c.codim(count)
    vel = np.zeros((count, 3))
    for i in range(count):
        vel[i, i // 2] = 1.0 if i % 2 == 0 else -1.0
    shift = np.zeros((count, 3))
    gap0 = float(c.comp(1)[:, 0].min() - c.comp(0)[:, 0].max())
    times, frames = [0.0], [shift.copy()]
    for k in range(c.n_steps):
        if gap0 + shift[1, 0] - shift[0, 0] < 0.1:
            vel = -vel
            if times[-1] != c.t(k):
                times.append(c.t(k))
                frames.append(shift.copy())
        shift = shift + vel * c.dt
    times.append(c.t(c.n_steps))
    frames.append(shift.copy())
    for j, i in enumerate(comps):
        c.plan.obstacle[i] = {"keyframes": {"times": _f(times), "translations": [_f(f[j]) for f in frames]}}


def _dco_squash(c: _Ctx):
    _squash_walls(c, 2)


def _dco_squash6(c: _Ctx):
    _squash_walls(c, 6)


def _dco_seg_bed_squash(c: _Ctx):
    """Kinematic shapes of the second half (index >= (n + 1) // 2) move down at 1 m/s while their lowest point
    is more than 0.1 m above the highest point of the first half's kinematic shapes."""
    comps = c.codim()
    half = (len(c.kinds) + 1) // 2
    top = [i for i in comps if i >= half]
    bottom = [i for i in comps if i < half]
    if not top or not bottom:
        raise c.fail("needs kinematic (.obj/.seg/.pt) shapes in both halves of the shape list")
    gap = min(float(c.comp(i)[:, 1].min()) for i in top) - max(float(c.comp(i)[:, 1].max()) for i in bottom)
    k = c.moving_steps(lambda k: gap - 1.0 * c.t(k) > 0.1)
    for i in top:
        c.plan.obstacle[i] = {"velocity": [0.0, -1.0, 0.0], "time_range": [0.0, c.t(k)]}


def _dco_squeeze_out(c: _Ctx):
    """Shape 1 (kinematic) moves down at 0.3 m/s while its top is above 0.9 / 3.8 of shape 2's height."""
    if len(c.kinds) < 2 or c.kinds[0] == "tet" or c.kinds[1] == "tet":
        raise c.fail("needs its first two shapes to be .obj/.seg/.pt collision objects")
    c.codim()
    top = float(c.comp(0)[:, 1].max())
    b_lo, b_hi = float(c.comp(1)[:, 1].min()), float(c.comp(1)[:, 1].max())
    k = c.moving_steps(lambda k: top - 0.3 * c.t(k) > b_lo + (b_hi - b_lo) / 3.8 * 0.9)
    c.plan.obstacle[0] = {"velocity": [0.0, -0.3, 0.0], "time_range": [0.0, c.t(k)]}


SUPPORTED = {
    "fall": _fall, "fallNoShift": _fall_no_shift, "hang": _hang, "hangLeft": _hang_left,
    "fixLowerHalf": _fix_lower_half, "stretch": _stretch, "squash": _squash, "bend": _bend, "twist": _twist,
    "dragdown": _dragdown, "dragright": _dragright, "pushRightMost1": _push_right_most1,
    "stretchAndPause": _stretch_and_pause, "utopiaComparison": _utopia, "DCOFix": _dco_fix,
    "DCOBallHitWall": _dco_ball_hit_wall, "DCORotCylinders": _dco_rot_cylinders,
    "DCOVerschoorRoller": _dco_verschoor_roller, "DCOSquash": _dco_squash, "DCOSquash6": _dco_squash6,
    "DCOSegBedSquash": _dco_seg_bed_squash, "DCOSqueezeOut": _dco_squeeze_out,
    "swing": _swing, "drop": _drop, "NMFixBottomDragLeft": _nm_drag(-600.0),
    "NMFixBottomDragForward": _nm_drag(600.0), **{k: _fixed_by(rule) for k, rule in _FIXED.items()},
}


def refusal(name: str) -> str | None:
    """None for ``null`` and the supported types, else the reason text of the one-line error."""
    if name == "null" or name in SUPPORTED:
        return None
    if name in _REFUSED:
        return f"not supported (animation script '{name}': {_REFUSED[name]})"
    if name in IPC_TYPES:
        return (f"not supported (IPC's animation script '{name}' has no ipcsim mapping yet; supported: null, "
                f"{', '.join(sorted(SUPPORTED, key=str.lower))})")
    return f"unknown animation script '{name}' (IPC's types: {', '.join(IPC_TYPES)})"


def plan_animation(name: str, params, kinds, placed, mco_points, settings, fail, warn) -> Plan:
    """The Plan of ``script name`` (a SUPPORTED type) for shapes of kinds ('tet', 'triangle', 'edge',
    'point') at placed positions (list of (n_i, 3) [m]), meshCO positions mco_points (list of (m_j, 3) [m]),
    the parser settings (dt, end [s], handle_ratio); fail(message) builds the SceneError of the script line,
    warn(message) warns about it."""
    plan = Plan(name)
    ctx = _Ctx(plan, kinds, placed, mco_points, settings, list(params),
                lambda msg: fail(f"script {name}: {msg}"), lambda msg: warn(f"script {name}: {msg}"))
    SUPPORTED[name](ctx)
    if not plan.codim_ok:
        for i, kind in enumerate(kinds):
            if kind != "tet":
                raise fail(f"script {name}: not supported with the .obj/.seg/.pt shape #{i + 1} (IPC simulates "
                           "such shapes as free codimensional objects under this script)")
    return plan
