"""The teddy grasp of Embedded IPC (004 §IV-A): two soft bubbles squeeze a soft teddy bear on the ground, lift it and
hold it (``ipcsim demo teddy-grasp``), in two set-ups (``GraspParameters.setup``).

"paper" (the default) is the paper's and Drake's ``bubble_gripper`` scene, mapped from Drake's z-up frame into ours
(``grasp_paper``: every pose and figure with its source; ``drake_to_ipcsim``, ``drake_grasp_geometry``):
- teddy: the paper's high-resolution mesh (410 vertices, 1,207 tets, shipped in ``data/demos/meshes/teddy``) at
  Drake's pose, 5.8 mm above Drake's ground (it drops onto it first), linear corotated, E 5e4 Pa, nu 0.45,
  rho 1e3 kg/m^3; mode "full" simulates it in full space, "medium" and "low" embed it in voxel cages of the
  paper's sizes (173 and 34 vertices asked, ``MODES``; ``ModelBuilder.add_embedded_body``);
- two bubbles: Drake's ``bubble.vtk`` (67 vertices, 212 tets, ``data/demos/meshes/drake``) at Drake's poses,
  linear corotated, E 1e4 Pa, nu 0.45, rho 10 kg/m^3; the 17 vertices of each flat base (those in Drake's fixed
  box) follow the fingers of Drake's ``ParallelGripperController`` cut to 4 s: the fingers close from 0.12 to
  0.04 m apart over 1.5 s, lift 0.12 m over 1.5 s, hold 1 s;
- stiffness (Rayleigh) damping 0.05 s on both bodies (``GraspParameters.damping_stiffness``, see
  ``_damping_options``);
- contact dhat 1e-3 m, friction mu 1 everywhere (teddy-bubble, teddy-ground), eps_v 1e-3 m/s, gravity 9.81 m/s^2,
  implicit Euler. kappa: the paper gives 1e4 kg/s^2 for the original barrier (energy kappa b(d) with
  b(d) = -(d - dhat)^2 ln(d / dhat) [m^2]); ipcsim's is the convergent barrier on squared distances with area
  weights A [m^2] (energy kappa A b2(d^2) / dhat^3 with b2 = -(d^2 - dhat^2)^2 ln(d^2 / dhat^2) = 2 (d + dhat)^2 b(d),
  kappa [Pa]). The two energies agree for kappa_Pa = kappa_orig dhat^3 / (2 A (d + dhat)^2): from
  kappa_orig dhat / (8 A) at d = dhat to kappa_orig dhat / (2 A) at d = 0, 6.6e3 to 2.6e4 Pa for the teddy's mean
  surface-vertex area A = 1.9e-4 m^2 (0.0588 m^2 over 312 vertices). We keep kappa = 1e4 Pa, inside that range
  (and the bubbles' modulus).

"legacy" is the set-up of issue #12 (the figures of docs/convergence.md, benchmarks/bench_grasp.py's history and
benchmarks/bench_hessian_scatter.py were measured with it): hand-made half-ellipsoid bubbles (base 0.1 x 0.15 m,
0.03 m deep, ``geometry.shapes.half_ellipsoid_tet_mesh``, neo-Hookean by default: the linear-corotated ones invert
in its squeeze), tips 0.12 -> 0.04 m apart, the teddy in its file's pose 1.5 mm above the ground, cages of cell
size 0.030 and 0.065 m (139 / 37 vertices), no damping; y up, the squeeze along x.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, replace

import numpy as np

from . import grasp_paper
from ..energies.materials import MATERIALS
from ..geometry import load_tet_mesh
from ..geometry.shapes import half_ellipsoid_tet_mesh
from .grasp_paper import drake_grasp_geometry, drake_to_ipcsim, teddy_mesh_path  # noqa: F401 (the grasp's API)
from ..model import Material, ModelBuilder
from ..scene.simulation import Simulation
from .scene_parameters import apply_run_options, parameters_from_scene

#: mode -> the teddy's embedding in the paper set-up (None: full space; else a voxel cage with about this many
#: vertices, ``geometry.voxel_cage.cage_for_vertex_count``). The paper: 173 / 533 and 34 / 61 (vertices / tets);
#: the cages made here are listed in tests/test_demo_grasp.py.
MODES = {"full": None, "medium": {"vertices": 173}, "low": {"vertices": 34}}
#: mode -> voxel-cage cell size [m] in the legacy set-up: medium 139 vertices / 411 tets, low 37 / 75
LEGACY_CELLS = {"full": None, "medium": 0.030, "low": 0.065}
SETUPS = ("paper", "legacy")

SQUEEZE, LIFT, HOLD = 1.5, 1.5, 1.0  # [s], the phases (both set-ups)
GAP_OPEN, GAP_CLOSED, LIFT_HEIGHT = 0.12, 0.04, 0.12  # [m]
BUBBLE_AXES, BUBBLE_DEPTH = (0.05, 0.075), 0.03  # [m], legacy bubbles: base semi-axes (vertical, horizontal), depth
TEDDY_CLEARANCE = 1.5e-3  # [m], the legacy teddy's initial height above the ground (outside dhat)
TEDDY_MATERIAL = Material(name="LCR", density=1e3, youngs_modulus=5e4, poisson_ratio=0.45)
BUBBLE_MATERIAL = Material(density=10.0, youngs_modulus=1e4, poisson_ratio=0.45)  # named by p.bubble_material


@dataclass
class GraspParameters:
    """The grasp's knobs: setup ("paper" or "legacy", module docstring), mode (``MODES``), time step dt [s],
    friction mu [1], end_time [s], barrier kappa [Pa] and dhat [m], friction eps_v [m/s], Newton tolerance tol
    (``NewtonSolver``), the bubbles' material model bubble_material (None: "LCR" in the paper set-up, "NH" in the
    legacy one), the stiffness-damping coefficient damping_stiffness [s] of both bodies (None: 0.05 s in the
    paper set-up, 0 in the legacy one; see ``_damping_options``) and friction_lagging, the friction's lagged
    solves per step (``FrictionParameters.lagging_iterations``): 1, 004's (normal forces and tangent frames from
    the step's start), or 0, until the lagged quantities stop changing (docs/convergence.md)."""

    mode: str = "low"
    dt: float = 0.02
    mu: float = 1.0
    end_time: float = SQUEEZE + LIFT + HOLD
    kappa: float = 1e4
    dhat: float = 1e-3
    eps_v: float = 1e-3
    tol: float = 1e-2
    bubble_material: str | None = None
    setup: str = "paper"
    damping_stiffness: float | None = None
    friction_lagging: int = 1

    def __post_init__(self):
        if self.setup not in SETUPS:
            raise ValueError(f"teddy-grasp: unknown setup {self.setup!r}; choose from {', '.join(SETUPS)}")
        if self.mode not in MODES:
            raise ValueError(f"teddy-grasp: unknown mode {self.mode!r}; choose from {', '.join(MODES)}")
        if self.bubble_material is None:
            self.bubble_material = "LCR" if self.setup == "paper" else "NH"
        if self.bubble_material not in MATERIALS:
            raise ValueError(f"teddy-grasp: unknown bubble material {self.bubble_material!r}; choose from "
                             f"{', '.join(sorted(MATERIALS))}")
        if self.damping_stiffness is None:
            self.damping_stiffness = 0.05 if self.setup == "paper" else 0.0
        if not self.damping_stiffness >= 0:
            raise ValueError(f"teddy-grasp: damping_stiffness must be >= 0, got {self.damping_stiffness}")
        if isinstance(self.friction_lagging, bool) or int(self.friction_lagging) != self.friction_lagging \
                or self.friction_lagging < 0:
            raise ValueError(f"teddy-grasp: friction_lagging must be an integer >= 0 (0: until converged), got "
                             f"{self.friction_lagging!r}")
        self.friction_lagging = int(self.friction_lagging)


def _materials(p: GraspParameters) -> tuple[Material, Material]:
    """The (teddy, bubble) materials: ``TEDDY_MATERIAL``, and ``BUBBLE_MATERIAL`` in p.bubble_material, both with
    the grasp's stiffness damping p.damping_stiffness [s] (the one place where it reaches the model)."""
    return (replace(TEDDY_MATERIAL, damping_stiffness=p.damping_stiffness),
            replace(BUBBLE_MATERIAL, name=p.bubble_material, damping_stiffness=p.damping_stiffness))


def _bubble_rotation(side: int) -> np.ndarray:
    """(3, 3), legacy bubbles: the bubble's local frame (base semi-axes along local x, y; dome along +z) in the
    world: local x -> y (vertical), local y -> +-z, dome -> +x for the left bubble (side -1), -x for the right one."""
    if side < 0:
        return np.array([[0.0, 0.0, 1.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])
    return np.array([[0.0, 0.0, -1.0], [1.0, 0.0, 0.0], [0.0, -1.0, 0.0]])


def _keyframes(side: int):
    """(times (4,) [s], translations (4, 3) [m]) of a legacy bubble's back face: squeeze, lift, hold."""
    d = -side * 0.5 * (GAP_OPEN - GAP_CLOSED)
    times = np.array([0.0, SQUEEZE, SQUEEZE + LIFT, SQUEEZE + LIFT + HOLD])
    shift = np.array([[0.0, 0.0, 0.0], [d, 0.0, 0.0], [d, LIFT_HEIGHT, 0.0], [d, LIFT_HEIGHT, 0.0]])
    return times, shift


def _add_teddy(b: ModelBuilder, p: GraspParameters, tv, tt) -> int:
    """The teddy (placed vertices (410, 3) [m], tets) in full space or embedded as p.mode asks."""
    teddy = _materials(p)[0]
    embedding = (MODES if p.setup == "paper" else LEGACY_CELLS)[p.mode]
    if embedding is None:
        return b.add_body(tv, tt, material=teddy)
    return b.add_embedded_body(tv, tt, resolution=embedding, material=teddy)


def _build_paper(p: GraspParameters, b: ModelBuilder, teddy=None) -> dict:
    """The paper set-up (module docstring) into b; teddy: (vertices in Drake's frame [m], tets) or None."""
    geo = drake_grasp_geometry()
    tv, tt = geo["teddy"] if teddy is None else teddy
    ids = {"teddy": _add_teddy(b, p, drake_to_ipcsim(tv), tt)}
    bubble = _materials(p)[1]
    for name in grasp_paper.BUBBLE_POSES:
        bv, bt = geo[name]
        body = b.add_body(drake_to_ipcsim(bv), bt, material=bubble)
        b.add_dirichlet(body, indices=geo["fixed"][name], keyframes=grasp_paper.finger_keyframes(name))
        ids[name] = body
    return ids


def _build_legacy(p: GraspParameters, b: ModelBuilder, teddy=None) -> dict:
    """The legacy set-up (module docstring) into b; teddy: (vertices, tets) or None for the shipped mesh."""
    tv, tt = load_tet_mesh(teddy_mesh_path()) if teddy is None else teddy
    tv = tv + [0.0, TEDDY_CLEARANCE - tv[:, 1].min(), 0.0]  # resting just above dhat: settles in the first steps
    ids = {"teddy": _add_teddy(b, p, tv, tt)}
    lo, hi = tv.min(axis=0), tv.max(axis=0)
    centre_y, centre_z = 0.5 * (lo[1] + hi[1]) - 0.012, 0.5 * (lo[2] + hi[2])
    bv, bt = half_ellipsoid_tet_mesh(BUBBLE_AXES, BUBBLE_DEPTH)
    back = np.flatnonzero(bv[:, 2] == 0.0)
    bubble = _materials(p)[1]
    for name, side in (("left_bubble", -1), ("right_bubble", 1)):
        base_x = side * (0.5 * GAP_OPEN + BUBBLE_DEPTH)
        body = b.add_body(bv, bt, rotation=_bubble_rotation(side), translation=(base_x, centre_y, centre_z),
                          material=bubble)
        b.add_dirichlet(body, indices=back, keyframes=_keyframes(side))
        ids[name] = body
    return ids


def build_grasp(params: GraspParameters | None = None, teddy=None):
    """The grasp's (ModelBuilder, body ids {"teddy", "left_bubble", "right_bubble"}); teddy: (vertices, tets) or
    None for the shipped mesh (in Drake's frame for the paper set-up, in its file's frame for the legacy one)."""
    p = params or GraspParameters()
    b = ModelBuilder(gravity=(0.0, -9.81, 0.0))
    b.add_ground(0.0)
    return b, (_build_paper if p.setup == "paper" else _build_legacy)(p, b, teddy)


def teddy_grasp(params: GraspParameters | None = None, teddy=None) -> tuple[Simulation, dict]:
    """The grasp as a ``Simulation`` (frames at 50 per second) and its parameters as a dict (the run's scene.json)."""
    from ..solvers.integrator_solvers import ContactParameters, FrictionParameters, ImplicitEulerSolver

    p = params or GraspParameters()
    b, ids = build_grasp(p, teddy)
    model, state = b.finalize()
    solver = ImplicitEulerSolver(model, ContactParameters(dhat=p.dhat, kappa=p.kappa),
                                 friction=FrictionParameters(mu=p.mu, eps_v=p.eps_v,
                                                             lagging_iterations=p.friction_lagging), tol=p.tol,
                                 warm_start=True)  # 3.65 -> 2.51 Newton it/step (paper, low, h = 0.02 s)
    every = max(1, int(round(0.02 / p.dt)))
    name = f"teddy-grasp-{p.mode}" if p.setup == "paper" else f"teddy-grasp-legacy-{p.mode}"
    sim = Simulation(model, state, solver, p.dt, p.end_time, {"every": every, "render": True}, name=name,
                     body_names=list(ids))
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
    # a scene.json written before the paper set-up existed has no "setup": legacy
    return parameters_from_scene(GraspParameters, data, "teddy-grasp", setup="legacy")


# ----------------------------------------------------------------------------------------------- command line
def add_arguments(parser) -> None:
    """This demo's options of ``ipcsim demo teddy-grasp`` (the command line collects every demo's)."""
    parser.add_argument("--setup", choices=SETUPS, default=None,
                        help="paper (default: Drake's bubbles, poses and gripper motion, 004 §IV-A) or legacy (issue "
                             "#12's hand-made bubbles)")
    parser.add_argument("--mode", choices=tuple(MODES), default=None,
                        help="the teddy in full space, or embedded at medium or low resolution (default low)")
    parser.add_argument("--mu", type=float, metavar="MU", help="friction coefficient (default 1)")
    parser.add_argument("--bubble-material", choices=("NH", "SNH", "LCR", "FCR"), default=None,
                        help="the bubbles' material (default: LCR, the paper's, in the paper set-up; NH in the "
                             "legacy one)")


def parameters_from_arguments(args, scene_data: dict | None = None) -> GraspParameters:
    """The ``GraspParameters`` of parsed command-line options (``args``: setup, mode, mu, bubble_material where
    given, dt and end_time), or of the OUT/scene.json of an earlier run (``scene_data``) with args' dt and end
    time. ValueError for a bad option or scene."""
    if scene_data is None:
        p = GraspParameters(mode=args.mode or "low", setup=args.setup or "paper")
    else:
        p = grasp_parameters(scene_data)
    apply_run_options(p, args)
    material = getattr(args, "bubble_material", None)  # a demo option only
    if material is not None:
        p.bubble_material = material
    return p
