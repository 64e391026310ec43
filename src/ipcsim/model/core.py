"""Model (static) and State (time-varying) of a scene (Newton's data model: Model / State / Control / Solver).

Units: SI throughout (m, kg, s, Pa). Node positions are (n, 3) float64 arrays, vertex-major when flattened.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..energies.mass import Mass
from ..geometry.collision_mesh import CollisionMesh
from ..geometry.surface_map import SurfaceMap
from .control import Control

#: a body's ``inversion`` option: "prevent" bounds every Newton step so that no tet of the body that is positively
#: oriented at the start of a Newton iteration becomes degenerate or inverted along it (for every material);
#: "allow" leaves it out of the bound (neo-Hookean tets keep it either way: their energy is +inf when inverted)
INVERSION_MODES = ("prevent", "allow")
#: the default is "allow": "prevent" stalls Newton on the teddy grasp with the paper's linear-corotated bubbles
#: (``ipcsim demo teddy-grasp --bubble-material LCR``: from the squeeze on, step 55 in the low mode, every step ends
#: unconverged at 1,000 iterations against the bound, where "allow" converges in 3.65 iterations per step with up
#: to 31 inverted tets; ``benchmarks/bench_inversion.py``)
DEFAULT_INVERSION = "allow"


def check_inversion(value, what: str) -> str:
    """value if it is one of ``INVERSION_MODES``, else ValueError naming ``what`` (e.g. "body 2"; "": no prefix)."""
    if value not in INVERSION_MODES:
        prefix = f"{what}: " if what else ""
        raise ValueError(f"{prefix}inversion must be one of {', '.join(map(repr, INVERSION_MODES))}, got {value!r}")
    return value


@dataclass(kw_only=True)
class Model:
    """Everything that does not change during a simulation, built by keyword (``ModelBuilder.finalize`` is the
    one maker).

    Attributes:
        rest_positions: (n, 3) float64 [m], all simulated vertices.
        tets: (m, 4) int64, positively oriented tets.
        dm_inv: (m, 3, 3) float64 [1/m], inverse rest edge matrices.
        volume: (m,) float64 [m^3], rest volumes.
        mu, lam: (m,) float64 [Pa], Lame parameters per tet.
        mass: (n,) float64 [kg], lumped node masses (0 for obstacle vertices); the mass matrix itself is
            ``mass_matrix``.
        fixed: (n,) bool, vertices held at their current position, obstacle vertices included (prescribed in
            every step; Dirichlet sets with a time range are in ``control`` instead).
        collision_mesh: the scene's collision surface (its vertices are x_surface = surface_map.apply(x)).
        gravity: (3,) float64 [m/s^2].
        material_groups: (material name, tet indices (k,) int64) pairs covering all tets once; names are
            keys of ``ipcsim.energies.materials.MATERIALS`` (NH, SNH, FCR, LCR, LCR_LAGGED, LE).
        youngs_modulus: (m,) float64 [Pa] per tet (sets the default physical barrier stiffness).
        is_obstacle: (n,) bool, obstacle vertices (static or kinematic; no tet, no mass).
        control: prescribed motions (kinematic obstacles, Dirichlet sets) and Neumann loads.
        surface_map: x_surface = J x, the map from the n nodes to the collision surface (default: the selection
            ``collision_mesh.full_vertex_index``, full-space bodies).
        mass_matrix: M (3n, 3n) [kg] (default: the lumped diagonal of ``mass``).
        prevent_inversion: (m,) bool, the tets whose orientation the Newton step bound keeps positive (the
            bodies with ``inversion="prevent"``, see ``INVERSION_MODES``; default: as ``DEFAULT_INVERSION``).
        damping_stiffness: (m,) float64 [s] per tet, the stiffness-proportional (Rayleigh) damping coefficient
            beta of its body (damping force -beta K v, ``ipcsim.solvers.stiffness_damping``; default zeros).
    """

    rest_positions: np.ndarray
    tets: np.ndarray
    dm_inv: np.ndarray
    volume: np.ndarray
    mu: np.ndarray
    lam: np.ndarray
    mass: np.ndarray
    fixed: np.ndarray
    collision_mesh: CollisionMesh
    gravity: np.ndarray = field(default_factory=lambda: np.array([0.0, -9.81, 0.0]))
    material_groups: list = field(default_factory=list)
    youngs_modulus: np.ndarray = field(default_factory=lambda: np.zeros(0))
    is_obstacle: np.ndarray | None = None
    control: Control = field(default_factory=Control)
    surface_map: SurfaceMap | None = None
    mass_matrix: Mass | None = None
    prevent_inversion: np.ndarray | None = None
    damping_stiffness: np.ndarray | None = None

    def __post_init__(self):
        if self.prevent_inversion is None:
            self.prevent_inversion = np.full(len(self.tets), DEFAULT_INVERSION == "prevent")
        if self.damping_stiffness is None:
            self.damping_stiffness = np.zeros(len(self.tets))
        if self.is_obstacle is None:
            self.is_obstacle = np.zeros(len(self.rest_positions), bool)
        if self.surface_map is None:
            self.surface_map = SurfaceMap.selection(self.collision_mesh.full_vertex_index,
                                                    len(self.rest_positions))
        if self.mass_matrix is None:
            self.mass_matrix = Mass.lumped(self.mass)

    def surface_positions(self, x: np.ndarray) -> np.ndarray:
        """Collision-surface positions (n_surface, 3) [m] of node positions x (n, 3) [m]: J x."""
        return self.surface_map.apply(x)

    @property
    def n_vertices(self) -> int:
        """Number of nodes (rows of x: simulated nodes and obstacle vertices)."""
        return len(self.rest_positions)


@dataclass
class State:
    """Time-varying quantities: positions x (n, 3) [m], velocities v (n, 3) [m/s], time t [s], accelerations
    a (n, 3) [m/s^2] (Newmark's history; None gives zeros, IPC's initial acceleration)."""

    x: np.ndarray
    v: np.ndarray
    t: float = 0.0
    a: np.ndarray | None = None

    def __post_init__(self):
        if self.a is None:
            self.a = np.zeros(np.shape(self.x))

    def copy(self) -> "State":
        """A deep copy (x, v, a arrays copied)."""
        return State(self.x.copy(), self.v.copy(), self.t, self.a.copy())
