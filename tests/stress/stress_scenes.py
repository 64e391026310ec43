"""The stress suite's scene generator: ``make_scene(seed)`` draws one small scene from a seeded generator.

Scene kinds (``KINDS``; seed % len(KINDS) picks the kind, the rest of the draw comes from the seed's generator):

    throw      a body thrown at up to 20 m/s (random direction, spin up to 30 rad/s) at the ground
    plate      a thin plate (1 to 5 mm thick) hit by a cube thrown at it, or dropped on an obstacle box
    stack      ten cubes stacked on the ground, each turned about the vertical
    ratio      a body on another body 1e5 times stiffer (or softer), thrown together at the ground
    wire       a body thrown at thin wires (codimensional edge obstacles)
    points     a body thrown on a bed of codimensional points
    sweep      a kinematic wire or point row sweeping through the space of a free body at up to 20 m/s
    embedded   a body embedded in a voxel cage (Embedded IPC) thrown at the ground or an obstacle
    affine     affine bodies (ABD) thrown at each other and at the ground
    collide    two bodies (any kind and material) thrown at each other at up to 20 m/s each, no gravity

Every body draws its kind (full-space, embedded, affine) and material (``MATERIALS``) unless the scene kind fixes
it; time steps are drawn up to 0.05 s, friction is on in about half the scenes, and Newmark replaces implicit
Euler in a quarter. The scenes are small (at most a few hundred tets) and run a few steps each.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from scipy.spatial.transform import Rotation

from ipcsim.model import ModelBuilder, box_tet_mesh
from ipcsim.solvers.integrator_solvers import ContactParameters, FrictionParameters

KINDS = ("throw", "plate", "stack", "ratio", "wire", "points", "sweep", "embedded", "affine", "collide")
#: the tet-mesh materials a body may draw (affine bodies are ABD)
MATERIALS = ("NH", "SNH", "FCR", "LCR", "LCR_LAGGED", "LE")
MAX_SPEED = 20.0  # [m/s]
MAX_H = 0.05  # [s]


@dataclass
class StressScene:
    """A drawn scene: its model and initial state, the step h [s] and count, the solver's keyword arguments
    (``make_solver``) and a one-line description of what was drawn."""

    seed: int
    kind: str
    model: object
    state: object
    h: float
    steps: int
    solver_kwargs: dict = field(default_factory=dict)
    description: str = ""


class _Draw:
    """The builder of one scene with its random generator and the notes that make its description."""

    def __init__(self, seed: int):
        self.rng = np.random.default_rng(seed)
        # a stream of its own for each body's inversion option, so the other draws of a seed stay as they were
        self.inversion_rng = np.random.default_rng([seed, 22])
        self.b = ModelBuilder()
        self.notes: list[str] = []
        self.dhat = 1e-3

    def uniform(self, lo, hi) -> float:
        return float(self.rng.uniform(lo, hi))

    def log_uniform(self, lo, hi) -> float:
        return float(math.exp(self.rng.uniform(math.log(lo), math.log(hi))))

    def material(self) -> str:
        return str(self.rng.choice(MATERIALS))

    def rotation(self, about_y_only=False) -> np.ndarray:
        if about_y_only:
            return Rotation.from_euler("y", self.uniform(0.0, 2 * math.pi)).as_matrix()
        return Rotation.random(random_state=int(self.rng.integers(2**31))).as_matrix()

    def velocity(self, speed: float, down=True) -> np.ndarray:
        d = self.rng.normal(size=3)
        d /= np.linalg.norm(d)
        if down:
            d[1] = -abs(d[1]) - 0.5
            d /= np.linalg.norm(d)
        return speed * d

    def body(self, v, t, *, kind=None, material=None, youngs=None, velocity=(0, 0, 0), omega=(0, 0, 0)) -> int:
        """Add a body of kind 'tet' / 'embedded' / 'affine' (None: drawn) from placed vertices v (k, 3) [m]."""
        kind = kind or str(self.rng.choice(("tet", "tet", "embedded", "affine")))
        kw = dict(velocity=velocity, angular_velocity=omega,
                  inversion=str(self.inversion_rng.choice(("prevent", "allow"))))
        if kind == "affine":
            youngs = youngs or self.log_uniform(1e6, 1e8)
            i = self.b.add_affine_body(v, t, stiffness=youngs, **kw)
            self.notes.append(f"affine({youngs:.0e},{kw['inversion']})")
            return i
        material = material or self.material()
        youngs = youngs or self.log_uniform(1e4, 1e7)
        nu = self.uniform(0.0, 0.45)
        if kind == "embedded":
            size = float(np.max(np.ptp(v, axis=0)))
            i = self.b.add_embedded_body(v, t, resolution=size / self.uniform(1.2, 2.5), youngs_modulus=youngs,
                                         poisson_ratio=nu, material=material, **kw)
        else:
            i = self.b.add_body(v, t, youngs_modulus=youngs, poisson_ratio=nu, material=material, **kw)
        self.notes.append(f"{kind}:{material}({youngs:.0e},{kw['inversion']})")
        return i

    def finish(self, seed, kind, h, steps, **solver) -> StressScene:
        model, state = self.b.finalize()
        kw = dict(contact=ContactParameters(dhat=self.dhat), max_newton_iterations=300)
        if self.rng.random() < 0.5:
            mu = self.uniform(0.1, 0.6)
            kw["friction"] = FrictionParameters(mu=mu)
            self.notes.append(f"mu={mu:.2f}")
        if self.rng.random() < 0.25:
            kw["integrator"] = "newmark"
            self.notes.append("newmark")
        kw.update(solver)
        desc = f"h={h:.3g} steps={steps} dhat={self.dhat:.1e} " + " ".join(self.notes)
        return StressScene(seed, kind, model, state, h, steps, kw, desc)


def _box(size, res=(1, 1, 1)):
    return box_tet_mesh(size, res)


def _place(v, rot, bottom=None, center_xz=(0.0, 0.0), center=None) -> np.ndarray:
    """v (k, 3) [m] rotated about its centroid, then moved so that its centroid's xz is center_xz and its lowest
    point is at height bottom (or its centroid at center)."""
    c = v.mean(axis=0)
    out = (v - c) @ np.asarray(rot).T
    if center is not None:
        return out + np.asarray(center, float)
    out[:, [0, 2]] += center_xz
    out[:, 1] += bottom - out[:, 1].min()
    return out


def _impact_gap(d: _Draw, speed: float, h: float) -> float:
    """A start gap [m] that the body closes within the first steps at speed [m/s]."""
    return 3 * d.dhat + d.uniform(0.0, 1.5) * speed * h


# ------------------------------------------------------------------------------------------- kinds
def _throw(d: _Draw, seed):
    h, speed = d.log_uniform(1e-3, MAX_H), d.uniform(1.0, MAX_SPEED)
    size = d.uniform(0.05, 0.2)
    v, t = _box((size, size * d.uniform(0.5, 1.0), size), (int(d.rng.integers(1, 3)),) * 3)
    d.b.add_ground(0.0)
    v = _place(v, d.rotation(), bottom=_impact_gap(d, speed, h))
    d.body(v, t, velocity=d.velocity(speed), omega=d.rng.uniform(-30, 30, 3))
    d.notes.insert(0, f"speed={speed:.1f}")
    return d.finish(seed, "throw", h, 6)


def _plate(d: _Draw, seed):
    h, speed = d.log_uniform(1e-3, MAX_H), d.uniform(0.5, MAX_SPEED)
    thick, side = d.log_uniform(1e-3, 5e-3), d.uniform(0.1, 0.2)
    d.dhat = min(1e-3, 0.2 * thick)
    v, t = _box((side, thick, side), (3, 1, 3))
    d.b.add_ground(0.0)
    mat = d.material()
    if d.rng.random() < 0.5:  # the plate on the ground, a cube thrown at it
        d.body(_place(v, np.eye(3), bottom=3 * d.dhat), t, kind="tet", material=mat)
        c, ct = _box((0.05,) * 3)
        cube = _place(c, d.rotation(), bottom=3 * d.dhat + thick + _impact_gap(d, speed, h),
                      center_xz=d.rng.uniform(-0.03, 0.03, 2))
        d.body(cube, ct, velocity=d.velocity(speed))
        d.notes.insert(0, f"thick={thick * 1e3:.1f}mm cube at {speed:.1f}m/s")
    else:  # the plate thrown at a static box obstacle (its tets' boundary), tilted
        o, ot = _box((0.06, 0.06, 0.06))
        d.b.add_obstacle(_place(o, d.rotation(True), bottom=0.0), ot)
        rot = Rotation.from_euler("xz", d.rng.uniform(-0.3, 0.3, 2)).as_matrix()
        plate = _place(v, rot, bottom=0.06 + _impact_gap(d, speed, h), center_xz=d.rng.uniform(-0.03, 0.03, 2))
        d.body(plate, t, kind="tet", material=mat, velocity=d.velocity(speed), omega=d.rng.uniform(-5, 5, 3))
        d.notes.insert(0, f"thick={thick * 1e3:.1f}mm plate at {speed:.1f}m/s")
    return d.finish(seed, "plate", h, 6)


def _stack(d: _Draw, seed):
    h = d.log_uniform(1e-3, MAX_H)
    size = d.uniform(0.03, 0.08)
    v, t = _box((size,) * 3)
    d.b.add_ground(0.0)
    y = 2 * d.dhat
    for _ in range(10):
        d.body(_place(v, d.rotation(True), bottom=y, center_xz=d.rng.uniform(-0.1, 0.1, 2) * size),
               t, kind=str(d.rng.choice(("tet", "tet", "affine"))))
        y += size + 3 * d.dhat  # turned about the vertical only: each cube stays size tall
    d.notes.insert(0, f"size={size:.3f}")
    return d.finish(seed, "stack", h, 6)


def _ratio(d: _Draw, seed):
    h, speed = d.log_uniform(1e-3, MAX_H), d.uniform(0.0, MAX_SPEED)
    e_soft = d.log_uniform(1e3, 1e5)
    size = d.uniform(0.05, 0.12)
    v, t = _box((size,) * 3, (2, 1, 2))
    d.b.add_ground(0.0)
    soft_below = d.rng.random() < 0.5
    vel = d.velocity(speed)
    y0 = _impact_gap(d, speed, h)
    for k in range(2):
        e = e_soft if (k == 0) == soft_below else e_soft * 1e5
        body = _place(v, d.rotation(True), bottom=y0 + k * (size + 2 * d.dhat),
                      center_xz=d.rng.uniform(-0.2, 0.2, 2) * size)
        d.body(body, t, kind="tet", youngs=e, velocity=vel)
    d.notes.insert(0, f"E ratio 1e5 ({'soft' if soft_below else 'stiff'} below) at {speed:.1f}m/s")
    return d.finish(seed, "ratio", h, 6)


def _wire(d: _Draw, seed):
    h, speed = d.log_uniform(1e-3, MAX_H), d.uniform(1.0, MAX_SPEED)
    n = int(d.rng.integers(1, 4))
    pts, edges = [], []
    for k in range(n):  # wires across the xz plane at height 0, through random directions
        a = d.uniform(0, math.pi)
        off = d.rng.uniform(-0.03, 0.03, 2)
        dirv = np.array([math.cos(a), 0.0, math.sin(a)])
        p0, p1 = np.array([off[0], 0.0, off[1]]) - 0.4 * dirv, np.array([off[0], 0.0, off[1]]) + 0.4 * dirv
        seg = int(d.rng.integers(1, 6))  # a wire of seg segments
        for s in range(seg + 1):
            pts.append(p0 + (p1 - p0) * s / seg + [0.0, 1e-4 * k, 0.0])
        edges += [[len(pts) - seg - 1 + s, len(pts) - seg + s] for s in range(seg)]
    d.b.add_obstacle(np.array(pts), np.array(edges))
    size = d.uniform(0.04, 0.15)
    v, t = _box((size,) * 3, (int(d.rng.integers(1, 3)),) * 3)
    body = _place(v, d.rotation(), bottom=_impact_gap(d, speed, h), center_xz=d.rng.uniform(-0.02, 0.02, 2))
    d.body(body, t, velocity=d.velocity(speed), omega=d.rng.uniform(-10, 10, 3))
    d.notes.insert(0, f"{n} wires at {speed:.1f}m/s")
    return d.finish(seed, "wire", h, 6)


def _points(d: _Draw, seed):
    h, speed = d.log_uniform(1e-3, MAX_H), d.uniform(1.0, MAX_SPEED)
    spacing = d.uniform(0.01, 0.04)
    g = np.arange(-4, 5) * spacing
    pts = np.array([[x, d.uniform(-2e-3, 0.0), z] for x in g for z in g])
    d.b.add_obstacle(pts, None)
    size = d.uniform(0.05, 0.12)
    v, t = _box((size,) * 3, (2, 2, 2))
    body = _place(v, d.rotation(), bottom=_impact_gap(d, speed, h), center_xz=d.rng.uniform(-0.02, 0.02, 2))
    d.body(body, t, velocity=d.velocity(speed), omega=d.rng.uniform(-10, 10, 3))
    d.notes.insert(0, f"{len(pts)} points spaced {spacing:.3f} at {speed:.1f}m/s")
    return d.finish(seed, "points", h, 6)


def _sweep(d: _Draw, seed):
    h, speed = d.log_uniform(1e-3, MAX_H), d.uniform(1.0, MAX_SPEED)
    size = d.uniform(0.05, 0.12)
    v, t = _box((size,) * 3, (2, 2, 2))
    d.body(_place(v, d.rotation(), center=(0.0, 0.0, 0.0)), t)
    reach = 0.5 * math.sqrt(3) * size + 3 * d.dhat  # outside the body's bounding sphere
    ys = d.rng.uniform(-0.3, 0.3, 2) * size
    if d.rng.random() < 0.5:  # a wire along z, moving along x
        pts = np.array([[-reach, ys[0], -0.3], [-reach, ys[1], 0.3]])
        els = np.array([[0, 1]])
        what = "wire"
    else:  # a row of points along z
        z = np.linspace(-0.3 * size, 0.3 * size, 5)
        pts = np.column_stack([np.full(5, -reach), np.linspace(ys[0], ys[1], 5), z])
        els = None
        what = "points"
    d.b.add_obstacle(pts, els, velocity=(speed, 0.0, 0.0))
    d.b.gravity = np.zeros(3)
    d.notes.insert(0, f"{what} sweeping at {speed:.1f}m/s")
    return d.finish(seed, "sweep", h, 6)


def _embedded(d: _Draw, seed):
    h, speed = d.log_uniform(1e-3, MAX_H), d.uniform(1.0, MAX_SPEED)
    size = d.uniform(0.06, 0.15)
    v, t = _box((size, size * d.uniform(0.3, 1.0), size), (3, 2, 3))
    if d.rng.random() < 0.5:
        d.b.add_ground(0.0)
        floor = 0.0
    else:
        o, ot = _box((0.2, 0.02, 0.2), (2, 1, 2))
        d.b.add_obstacle(_place(o, d.rotation(True), bottom=0.0), ot)
        floor = 0.02
    body = _place(v, d.rotation(), bottom=floor + _impact_gap(d, speed, h))
    d.body(body, t, kind="embedded", velocity=d.velocity(speed), omega=d.rng.uniform(-20, 20, 3))
    d.notes.insert(0, f"at {speed:.1f}m/s")
    return d.finish(seed, "embedded", h, 6)


def _affine(d: _Draw, seed):
    h, speed = d.log_uniform(1e-3, MAX_H), d.uniform(1.0, MAX_SPEED)
    d.b.add_ground(0.0)
    y = _impact_gap(d, speed, h)
    for k in range(int(d.rng.integers(2, 4))):
        size = d.uniform(0.04, 0.1)
        v, t = _box((size,) * 3, (2, 2, 2))
        body = _place(v, d.rotation(), bottom=y, center_xz=d.rng.uniform(-0.02, 0.02, 2))
        d.body(body, t, kind="affine", velocity=d.velocity(d.uniform(0.0, speed)), omega=d.rng.uniform(-20, 20, 3))
        y += math.sqrt(3) * size + 3 * d.dhat
    d.notes.insert(0, f"up to {speed:.1f}m/s")
    return d.finish(seed, "affine", h, 6)


def _collide(d: _Draw, seed):
    h = d.log_uniform(1e-3, MAX_H)
    d.b.gravity = np.zeros(3)
    speeds = []
    for side in (-1.0, 1.0):
        size = d.uniform(0.04, 0.12)
        v, t = _box((size, size * d.uniform(0.2, 1.0), size), (2, 1, 2))
        reach = 0.5 * math.sqrt(3) * size + 2 * d.dhat  # bounding spheres apart
        speed = d.uniform(0.5, MAX_SPEED)
        speeds.append(speed)
        gap = d.uniform(0.0, 1.0) * speed * h
        body = _place(v, d.rotation(), center=(side * (reach + gap), d.uniform(-0.3, 0.3) * size, 0.0))
        vel = -side * speed * np.array([1.0, 0.0, 0.0]) + d.rng.normal(size=3) * 0.2 * speed
        d.body(body, t, velocity=vel, omega=d.rng.uniform(-30, 30, 3))
    d.notes.insert(0, f"at {speeds[0]:.1f} and {speeds[1]:.1f}m/s")
    return d.finish(seed, "collide", h, 6)


_BUILDERS = {"throw": _throw, "plate": _plate, "stack": _stack, "ratio": _ratio, "wire": _wire,
             "points": _points, "sweep": _sweep, "embedded": _embedded, "affine": _affine, "collide": _collide}


def make_scene(seed: int) -> StressScene:
    """The scene of a seed: kind KINDS[seed % len(KINDS)], everything else drawn from default_rng(seed)."""
    kind = KINDS[seed % len(KINDS)]
    return _BUILDERS[kind](_Draw(seed), seed)
