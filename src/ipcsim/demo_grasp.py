"""The teddy grasp of Embedded IPC (004 §IV-A): two soft bubbles squeeze a soft teddy bear on the ground, lift it and
hold it (``ipcsim demo teddy-grasp``).

Set-up (y up; the paper's squeezing axis y is our x, its lifting axis z our y):
- teddy: the paper's high-resolution mesh (410 vertices, 1,207 tets, shipped in ``data/demos/meshes/teddy``),
  linear corotated, E 5e4 Pa, nu 0.45, rho 1e3 kg/m^3, resting on the ground; mode "full" simulates it in full
  space, "medium" and "low" embed it in voxel cages (``ModelBuilder.add_embedded_body``; see ``MODES``);
- two bubbles: solid half ellipsoids (base 0.1 x 0.15 m, 0.03 m deep, 67 surface vertices and one inner vertex,
  ``geometry.shapes.half_ellipsoid_tet_mesh``), E 1e4 Pa, nu 0.45, rho 10 kg/m^3, whose flat back faces are
  position-controlled (keyframed Dirichlet sets): their tips close from 0.12 m to 0.04 m apart over 1.5 s (the
  squeeze), lift 0.12 m over 1.5 s, hold for 1 s. Their material is neo-Hookean by default (``bubble_material``),
  not the paper's linear corotated: the squeeze presses each tip 3.3 cm into the 10.6 cm wide teddy, and the
  3 cm deep linear-corotated bubbles, which nothing keeps from inverting, turn up to 28 of their tets inside out (volume
  ratios down to -1.3 from t = 1.2 s on); neo-Hookean's log-barrier on the volume and the solver's inversion bound
  keep every tet positive (``bubble_material="LCR"`` reproduces the paper's setting; docs/embedded.md);
- contact kappa 1e4 Pa, dhat 1e-3 m, friction mu 1 everywhere (teddy-bubble, teddy-ground), eps_v 1e-3 m/s,
  gravity 9.81 m/s^2, implicit Euler with h = 0.005, 0.01 or 0.02 s.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass
from importlib import resources
from pathlib import Path

import numpy as np

from .energies.materials import MATERIALS
from .geometry import load_tet_mesh
from .geometry.shapes import half_ellipsoid_tet_mesh
from .model import ModelBuilder
from .runner import Simulation

#: mode -> voxel-cage cell size [m] of the teddy's embedding (None: full space). At these sizes the cages hold
#: every fine vertex: medium 139 vertices / 411 tets, low 37 / 75 (the paper: 173 / 533 and 34 / 61).
MODES = {"full": None, "medium": 0.030, "low": 0.065}

SQUEEZE, LIFT, HOLD = 1.5, 1.5, 1.0  # [s], the phases
GAP_OPEN, GAP_CLOSED, LIFT_HEIGHT = 0.12, 0.04, 0.12  # [m]
BUBBLE_AXES, BUBBLE_DEPTH = (0.05, 0.075), 0.03  # [m]: base semi-axes (vertical, horizontal), dome height
TEDDY_CLEARANCE = 1.5e-3  # [m], the teddy's initial height above the ground (outside dhat)


@dataclass
class GraspParameters:
    """The grasp's knobs: mode (``MODES``), time step dt [s], friction mu [1], end_time [s], barrier kappa [Pa] and
    dhat [m], friction eps_v [m/s], Newton tolerance tol (``NewtonSolver``), and the bubbles' material model
    bubble_material ("NH" by default, inversion-free; "LCR" is the paper's, see the module docstring)."""

    mode: str = "low"
    dt: float = 0.02
    mu: float = 1.0
    end_time: float = SQUEEZE + LIFT + HOLD
    kappa: float = 1e4
    dhat: float = 1e-3
    eps_v: float = 1e-3
    tol: float = 1e-2
    bubble_material: str = "NH"

    def __post_init__(self):
        if self.mode not in MODES:
            raise ValueError(f"teddy-grasp: unknown mode {self.mode!r}; choose from {', '.join(MODES)}")
        if self.bubble_material not in MATERIALS:
            raise ValueError(f"teddy-grasp: unknown bubble material {self.bubble_material!r}; choose from "
                             f"{', '.join(sorted(MATERIALS))}")


def teddy_mesh_path() -> Path:
    """The shipped teddy tet mesh (``data/demos/meshes/teddy/teddy.vtk``)."""
    return Path(str(resources.files("ipcsim") / "data" / "demos" / "meshes" / "teddy" / "teddy.vtk"))


def _bubble_rotation(side: int) -> np.ndarray:
    """(3, 3): the bubble's local frame (base semi-axes along local x, y; dome along +z) in the world: local x -> y
    (vertical), local y -> +-z, dome -> +x for the left bubble (side -1), -x for the right one (side +1)."""
    if side < 0:
        return np.array([[0.0, 0.0, 1.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])
    return np.array([[0.0, 0.0, -1.0], [1.0, 0.0, 0.0], [0.0, -1.0, 0.0]])


def _keyframes(side: int):
    """(times (4,) [s], translations (4, 3) [m]) of a bubble's back face: squeeze, lift, hold."""
    d = -side * 0.5 * (GAP_OPEN - GAP_CLOSED)
    times = np.array([0.0, SQUEEZE, SQUEEZE + LIFT, SQUEEZE + LIFT + HOLD])
    shift = np.array([[0.0, 0.0, 0.0], [d, 0.0, 0.0], [d, LIFT_HEIGHT, 0.0], [d, LIFT_HEIGHT, 0.0]])
    return times, shift


def build_grasp(params: GraspParameters | None = None, teddy=None):
    """The grasp's (ModelBuilder, body ids {"teddy", "left_bubble", "right_bubble"}); teddy: (vertices, tets) or
    None for the shipped mesh."""
    p = params or GraspParameters()
    tv, tt = load_tet_mesh(teddy_mesh_path()) if teddy is None else teddy
    tv = tv + [0.0, TEDDY_CLEARANCE - tv[:, 1].min(), 0.0]  # resting just above dhat: settles in the first steps
    b = ModelBuilder(gravity=(0.0, -9.81, 0.0))
    b.add_ground(0.0)
    kw = dict(density=1e3, youngs_modulus=5e4, poisson_ratio=0.45, material="LCR")
    cell = MODES[p.mode]
    ids = {"teddy": b.add_body(tv, tt, **kw) if cell is None else b.add_embedded_body(tv, tt, resolution=cell, **kw)}
    lo, hi = tv.min(axis=0), tv.max(axis=0)
    centre_y, centre_z = 0.5 * (lo[1] + hi[1]) - 0.012, 0.5 * (lo[2] + hi[2])
    bv, bt = half_ellipsoid_tet_mesh(BUBBLE_AXES, BUBBLE_DEPTH)
    back = np.flatnonzero(bv[:, 2] == 0.0)
    for name, side in (("left_bubble", -1), ("right_bubble", 1)):
        base_x = side * (0.5 * GAP_OPEN + BUBBLE_DEPTH)
        body = b.add_body(bv, bt, rotation=_bubble_rotation(side), translation=(base_x, centre_y, centre_z),
                          density=10.0, youngs_modulus=1e4, poisson_ratio=0.45, material=p.bubble_material)
        b.add_dirichlet(body, indices=back, keyframes=_keyframes(side))
        ids[name] = body
    return b, ids


def teddy_grasp(params: GraspParameters | None = None, teddy=None) -> tuple[Simulation, dict]:
    """The grasp as a ``Simulation`` (frames at 50 per second) and its parameters as a dict (the run's scene.json)."""
    from .solvers.implicit_euler import ContactParameters, FrictionParameters, ImplicitEulerSolver

    p = params or GraspParameters()
    b, ids = build_grasp(p, teddy)
    model, state = b.finalize()
    solver = ImplicitEulerSolver(model, ContactParameters(dhat=p.dhat, kappa=p.kappa),
                                 friction=FrictionParameters(mu=p.mu, eps_v=p.eps_v), tol=p.tol)
    every = max(1, int(round(0.02 / p.dt)))
    sim = Simulation(model, state, solver, p.dt, p.end_time, {"every": every, "render": True},
                     name=f"teddy-grasp-{p.mode}", body_names=list(ids))
    return sim, grasp_scene_data(p, sim.name)


def grasp_scene_data(p: GraspParameters, name: str) -> dict:
    """The run's scene.json: {"name", "demo": "teddy-grasp", "time": {"end", "dt"}, the other parameters}. The time
    sits where a scene file keeps it, so a resumed run may change the end time (``runner.scene_fingerprint``);
    ``grasp_parameters`` reads it back (``ipcsim run OUT/scene.json``)."""
    params = asdict(p)
    time = {"end": params.pop("end_time"), "dt": params.pop("dt")}
    return {"name": name, "demo": "teddy-grasp", "time": time, **params}


def grasp_parameters(data: dict) -> GraspParameters:
    """The ``GraspParameters`` of a teddy-grasp scene.json (``grasp_scene_data``); ValueError naming a bad key."""
    given = {k: v for k, v in data.items() if k not in ("name", "demo", "time", "output")}
    time = data.get("time", {})
    known = set(GraspParameters.__dataclass_fields__) - {"end_time", "dt"}
    unknown = sorted(set(given) - known) + sorted(set(time) - {"end", "dt"})
    if unknown:
        raise ValueError(f"teddy-grasp scene: unknown key {unknown[0]!r} (allowed: time.end, time.dt, "
                         f"{', '.join(sorted(known))})")
    if "end" in time:
        given["end_time"] = float(time["end"])
    if "dt" in time:
        given["dt"] = float(time["dt"])
    return GraspParameters(**given)
