"""Static model, time-varying state, and a builder for scenes of tet-mesh bodies (x = J q with J = identity).

Units: SI throughout (m, kg, s, Pa). Positions are (n, 3) float64 arrays, vertex-major when flattened.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .energies.neohookean import lame_parameters, rest_shape_data
from .geometry.collision_mesh import CollisionMesh, Plane


@dataclass
class Model:
    """Everything that does not change during a simulation.

    Attributes:
        rest_positions: (n, 3) float64 [m], all simulated vertices.
        tets: (m, 4) int64, positively oriented tets.
        dm_inv: (m, 3, 3) float64 [1/m], inverse rest edge matrices.
        volume: (m,) float64 [m^3], rest volumes.
        mu, lam: (m,) float64 [Pa], Lame parameters per tet.
        mass: (n,) float64 [kg], lumped vertex masses.
        fixed: (n,) bool, Dirichlet vertices (held at their current position).
        collision_mesh: the scene's collision surface; its full_vertex_index maps into the n vertices.
        gravity: (3,) float64 [m/s^2].
        material_groups: (material name, tet indices (k,) int64) pairs covering all tets once; names are
            keys of ``ipcsim.energies.materials.MATERIALS`` (NH, SNH, FCR, LCR, LCR_LAGGED, LE).
        youngs_modulus: (m,) float64 [Pa] per tet (sets the default physical barrier stiffness).
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

    @property
    def n_vertices(self) -> int:
        return len(self.rest_positions)


@dataclass
class State:
    """Time-varying quantities: positions x (n, 3) [m], velocities v (n, 3) [m/s], time t [s]."""

    x: np.ndarray
    v: np.ndarray
    t: float = 0.0

    def copy(self) -> "State":
        return State(self.x.copy(), self.v.copy(), self.t)


@dataclass
class _Body:
    vertices: np.ndarray
    tets: np.ndarray
    density: float
    youngs_modulus: float
    poisson_ratio: float
    velocity: np.ndarray
    fixed: np.ndarray
    material: str


class ModelBuilder:
    """Assembles a Model from several tet-mesh bodies and half-space obstacles."""

    def __init__(self, gravity=(0.0, -9.81, 0.0)):
        self._bodies: list[_Body] = []
        self._planes: list[Plane] = []
        self.gravity = np.asarray(gravity, dtype=np.float64)

    def add_body(self, vertices, tets, *, density=1000.0, youngs_modulus=1e5, poisson_ratio=0.4,
                 translation=(0.0, 0.0, 0.0), rotation=None, scale=1.0, velocity=(0.0, 0.0, 0.0), fixed=None,
                 material="NH") -> int:
        """Add a tet-mesh body; returns its id. vertices (k, 3) [m] are scaled, rotated (3x3), then translated.

        material: NH, SNH, FCR, LCR, LCR_LAGGED or LE; density [kg/m^3]; youngs_modulus [Pa]; velocity [m/s];
        fixed: (k,) bool Dirichlet mask (held in place).
        """
        from .energies.materials import material_info

        material_info(material)
        v = np.asarray(vertices, dtype=np.float64) * scale
        if rotation is not None:
            v = v @ np.asarray(rotation, dtype=np.float64).T
        v = v + np.asarray(translation, dtype=np.float64)
        fixed_mask = np.zeros(len(v), bool) if fixed is None else np.asarray(fixed, bool)
        if density <= 0 or not np.isfinite(density):
            raise ValueError(f"body {len(self._bodies)}: density must be positive, got {density}")
        self._bodies.append(_Body(v, np.asarray(tets, np.int64), float(density), float(youngs_modulus),
                                  float(poisson_ratio), np.asarray(velocity, np.float64), fixed_mask, material))
        return len(self._bodies) - 1

    def add_ground(self, height=0.0, normal=(0.0, 1.0, 0.0)) -> None:
        """A half-space obstacle {x : dot(x, n) >= height}."""
        n = np.asarray(normal, dtype=np.float64)
        n = n / np.linalg.norm(n)
        self._planes.append(Plane(origin=height * n, normal=n))

    def finalize(self) -> tuple[Model, State]:
        """Build the Model and the initial State."""
        if not self._bodies:
            raise ValueError("the scene has no body")
        offsets = np.cumsum([0] + [len(b.vertices) for b in self._bodies])
        x = np.vstack([b.vertices for b in self._bodies])
        tets = np.vstack([b.tets + o for b, o in zip(self._bodies, offsets)])
        dm_inv, volume = rest_shape_data(x, tets)
        mu = np.empty(len(tets))
        lam = np.empty(len(tets))
        density = np.empty(len(tets))
        young = np.empty(len(tets))
        groups: dict[str, list[np.ndarray]] = {}
        start = 0
        for b in self._bodies:
            m, l = lame_parameters(b.youngs_modulus, b.poisson_ratio)
            stop = start + len(b.tets)
            mu[start:stop], lam[start:stop], density[start:stop] = m, l, b.density
            young[start:stop] = b.youngs_modulus
            groups.setdefault(b.material, []).append(np.arange(start, stop, dtype=np.int64))
            start = stop
        mass = np.zeros(len(x))
        np.add.at(mass, tets.ravel(), np.repeat(density * volume / 4.0, 4))
        if np.any(mass <= 0):
            i = int(np.flatnonzero(mass <= 0)[0])
            raise ValueError(f"vertex {i} belongs to no tet")
        meshes = [CollisionMesh.from_tet_mesh(b.vertices, b.tets, body=i) for i, b in enumerate(self._bodies)]
        mesh = CollisionMesh.concatenate(meshes, full_offsets=offsets[:-1])
        mesh.planes = list(self._planes)
        model = Model(x.copy(), tets, dm_inv, volume, mu, lam, mass,
                      np.concatenate([b.fixed for b in self._bodies]), mesh, self.gravity.copy(),
                      [(name, np.concatenate(idx)) for name, idx in groups.items()], young)
        v = np.vstack([np.broadcast_to(b.velocity, b.vertices.shape) for b in self._bodies])
        return model, State(x.copy(), v.copy(), 0.0)


def box_tet_mesh(size=(1.0, 1.0, 1.0), resolution=(4, 4, 4)) -> tuple[np.ndarray, np.ndarray]:
    """A box [0, sx] x [0, sy] x [0, sz] split into resolution cells, 6 positively oriented tets per cell.

    Returns (vertices (n, 3) [m], tets (m, 4) int64).
    """
    nx, ny, nz = (int(r) for r in resolution)
    grid = np.stack(np.meshgrid(*(np.linspace(0, s, n + 1) for s, n in zip(size, (nx, ny, nz))), indexing="ij"), -1)
    vertices = grid.reshape(-1, 3)

    def vid(i, j, k):
        return (i * (ny + 1) + j) * (nz + 1) + k

    # Kuhn subdivision of the unit cube: 6 tets around the main diagonal (0,0,0)-(1,1,1).
    paths = [(0, 1, 2), (0, 2, 1), (1, 0, 2), (1, 2, 0), (2, 0, 1), (2, 1, 0)]
    i, j, k = (a.ravel() for a in np.meshgrid(np.arange(nx), np.arange(ny), np.arange(nz), indexing="ij"))
    tets = []
    for path in paths:
        corner = np.zeros((len(i), 3), np.int64)
        verts = [vid(i, j, k)]
        for axis in path:
            corner[:, axis] += 1
            verts.append(vid(i + corner[:, 0], j + corner[:, 1], k + corner[:, 2]))
        tets.append(np.stack(verts, 1))
    tets = np.vstack(tets)
    a, b, c, d = (vertices[tets[:, m]] for m in range(4))
    neg = np.einsum("ij,ij->i", np.cross(b - a, c - a), d - a) < 0
    tets[neg] = tets[neg][:, [0, 2, 1, 3]]
    return vertices, tets
