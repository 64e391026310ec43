"""ModelBuilder: assembles a Model and its initial State from tet-mesh bodies, obstacles, half spaces,
Dirichlet sets and Neumann loads.

Units: SI throughout (m, kg, s, Pa). Positions are (n, 3) float64 arrays, vertex-major when flattened. The node
array holds the simulated body vertices first, then the obstacle vertices (massless, never unknowns: they
follow the scene's ``Control``); ``Model.surface_map`` maps the nodes to the collision surface.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ..energies.mass import Mass
from ..energies.neohookean import lame_parameters, rest_shape_data
from ..geometry.collision_mesh import CollisionMesh, Plane
from ..geometry.voxel_cage import box_tet_mesh  # noqa: F401  (re-exported: ipcsim.model.box_tet_mesh)
from .control import BoundingBoxStepMotion, Control, KeyframedMotion, NeumannLoad, PrescribedMotion, _time_range
from .core import Model, State
from .values import AFFINE_STIFFNESS, Material, Transform, body_material, placement


@dataclass
class _Body:
    vertices: np.ndarray  # (k, 3) [m], placed
    tets: np.ndarray  # (m, 4) int
    material: Material  # name, E, nu, density, damping beta [s], inversion
    velocity: np.ndarray  # (3,) [m/s]
    fixed: np.ndarray  # (k,) bool
    angular_velocity: np.ndarray = field(default_factory=lambda: np.zeros(3))  # (3,) [rad/s]
    embedded: object = None  # model.embedded.EmbeddedData for an embedded body


@dataclass
class _Obstacle:
    vertices: np.ndarray
    elements: np.ndarray  # (k, 3) faces, (k, 4) tets, (k, 2) edges or (k, 1) points
    linear_velocity: np.ndarray
    angular_velocity: np.ndarray
    center: np.ndarray
    time_range: tuple
    keyframes: tuple | None = None  # (times (K,), positions (K, k, 3)) [s, m]
    bbox_steps: bool = False  # center="bbox": IPC's stepwise motion about the moving bounding-box center


def _vec3(value, name: str) -> np.ndarray:
    a = np.asarray(value, dtype=np.float64)
    if a.shape != (3,) or not np.all(np.isfinite(a)):
        raise ValueError(f"{name} must be a finite 3-vector, got {value!r}")
    return a


class ModelBuilder:
    """Assembles a Model from tet-mesh bodies, triangle/tet-mesh obstacles (static or kinematic), half-space
    obstacles, Dirichlet vertex sets and Neumann loads."""

    def __init__(self, gravity=(0.0, -9.81, 0.0)):
        self._bodies: list[_Body] = []
        self._obstacles: list[_Obstacle] = []
        self._planes: list[Plane] = []
        self._dirichlet: list[tuple] = []
        self._neumann: list[tuple] = []
        self._no_self_contact: set[int] = set()
        self._grippers: list[dict] = []
        self.gravity = np.asarray(gravity, dtype=np.float64)

    def add_body(self, vertices, tets, *, transform=None, material=None, velocity=(0.0, 0.0, 0.0),
                 angular_velocity=(0.0, 0.0, 0.0), fixed=None, translation=None, rotation=None, scale=None,
                 density=None, youngs_modulus=None, poisson_ratio=None, inversion=None,
                 damping_stiffness=None) -> int:
        """Add a tet-mesh body (vertices (k, 3) [m], tets (m, 4) int); returns its id.

        transform: a ``Transform`` (vertices scaled, rotated (3x3), then translated), or the same through the
        keywords translation (3,) [m], rotation (3, 3), scale [1] (not both; none: in place).
        material: a ``Material``, or its name (NH, SNH, FCR, LCR, LCR_LAGGED or LE; ABD: see ``add_affine_body``)
        with the keywords density [kg/m^3], youngs_modulus [Pa], poisson_ratio, inversion and damping_stiffness
        [s] (not both; a keyword not given takes ``Material``'s default: NH, 1000 kg/m^3, 1e5 Pa, 0.4).
        inversion: "prevent" (every Newton step is bounded so that no positively oriented tet of the body
        inverts; a step may then end unconverged against the bound) or "allow" (the default,
        ``model.core.DEFAULT_INVERSION``; NH tets are bounded either way); damping_stiffness: beta [s] >= 0 of
        stiffness-proportional (Rayleigh) damping, force -beta K(x) v on the body's tets (Drake's and the Embedded
        IPC paper's 0.05 s; 0: none; ``ipcsim.solvers.stiffness_damping``).
        velocity [m/s] and angular_velocity [rad/s] (about the body's vertex centroid): the initial rigid
        velocity; fixed: (k,) bool Dirichlet mask (held in place).
        """
        what = f"body {len(self._bodies)}"
        mat = body_material(material, what, density=density, youngs_modulus=youngs_modulus,
                            poisson_ratio=poisson_ratio, inversion=inversion, damping_stiffness=damping_stiffness)
        place = placement(transform, what, translation=translation, rotation=rotation, scale=scale)
        return self._append_body(place.apply(vertices), tets, mat, velocity, angular_velocity, fixed)

    def _append_body(self, v, tets, material: Material, velocity, angular_velocity, fixed) -> int:
        """Append a body of placed vertices v (k, 3) [m]; returns its id. (The embedded and affine bodies pass
        their coarse nodes through ``Transform().apply``, as they went through add_body's identity placement
        before: the same checks, and the same bits: -0.0 + 0.0 = +0.0.)"""
        fixed_mask = np.zeros(len(v), bool) if fixed is None else np.asarray(fixed, bool)
        if fixed_mask.shape != (len(v),):
            raise ValueError(f"body {len(self._bodies)}: fixed must be a ({len(v)},) bool mask")
        self._bodies.append(_Body(v, np.asarray(tets, np.int64), material, _vec3(velocity, "velocity"), fixed_mask,
                                  _vec3(angular_velocity, "angular_velocity")))
        return len(self._bodies) - 1

    def set_self_contact(self, body: int, enabled: bool) -> None:
        """Switch contact between a body's own surface primitives on (default) or off; its contacts with other
        bodies and obstacles stay on (IPC's ``selfCollisionOff``)."""
        if not 0 <= int(body) < len(self._bodies):
            raise ValueError(f"set_self_contact: no body {body} (bodies 0..{len(self._bodies) - 1})")
        (self._no_self_contact.discard if enabled else self._no_self_contact.add)(int(body))

    def add_embedded_body(self, fine_vertices, fine_elements, *, coarse=None, resolution=None, transform=None,
                          material=None, velocity=(0.0, 0.0, 0.0), angular_velocity=(0.0, 0.0, 0.0), fixed=None,
                          mass="lumped", translation=None, rotation=None, scale=None, density=None,
                          youngs_modulus=None, poisson_ratio=None, inversion=None, damping_stiffness=None) -> int:
        """Add a fine body embedded in a coarse tet mesh (Embedded IPC, ``model.embedded``); returns its body id.

        fine_vertices (n, 3) [m] with fine_elements (t, 4) tets or (f, 3) a closed triangle surface: the collision
        surface (the tets' boundary), its mass and its volume. coarse: (vertices (n_c, 3) [m], tets (m, 4)),
        placed with the same transform, or None for a voxel cage at ``resolution`` (a cell size [m], or
        {"vertices": target count}). The body's nodes are the coarse vertices (Dirichlet/Neumann
        selections by box or index refer to them); elasticity on the coarse tets with the fine volume inside
        each; mass "lumped" (default) or "consistent" (see ``model.embedded``); damping_stiffness [s] damps the
        coarse tets (the elasticity lives there). Other arguments as ``add_body``.
        """
        from .embedded import embed_body

        what = f"body {len(self._bodies)}"
        mat = body_material(material, what, density=density, youngs_modulus=youngs_modulus,
                            poisson_ratio=poisson_ratio, inversion=inversion, damping_stiffness=damping_stiffness)
        place = placement(transform, what, translation=translation, rotation=rotation, scale=scale)
        placed = None if coarse is None else (place.apply(coarse[0]), coarse[1])
        data = embed_body(place.apply(fine_vertices), fine_elements, placed, resolution, mat.density, mass)
        i = self._append_body(Transform().apply(data.coarse_vertices), data.coarse_tets, mat, velocity,
                              angular_velocity, fixed)
        self._bodies[i].embedded = data
        return i

    def add_affine_body(self, vertices, elements, *, transform=None, material=None, velocity=(0.0, 0.0, 0.0),
                        angular_velocity=(0.0, 0.0, 0.0), fixed=False, translation=None, rotation=None, scale=None,
                        density=None, stiffness=None, inversion=None, damping_stiffness=None) -> int:
        """Add an affine body (ABD, 004 §III-D): a stiff body whose only unknowns are the 4 nodes of one tet
        enclosing it (12 dofs: x = A X + p), carrying the body's whole surface for contact; returns its body id.

        vertices (n, 3) [m] with elements (t, 4) tets or (f, 3) a closed triangle surface (its volume and mass);
        material: ``Material.affine(stiffness, density, damping_stiffness, inversion)`` (a Material named "ABD"),
        or the same through the keywords (not both): stiffness kappa_a [Pa] of the orthogonality energy
        kappa_a ||F F^T - I||^2 times the body's volume (the paper's stiff parts use 1e7 Pa, the default); the
        mass is the full 12x12 J^T M J of the fine body (its exact inertia about any axis). fixed: True holds the
        body in place (an affine obstacle that still reports its contact forces). Its 4 nodes are the body's
        vertices 0..3 for ``add_dirichlet`` (e.g. ``add_dirichlet(i, indices=range(4), ...)`` drives the whole
        body). inversion: "prevent" keeps det A > 0
        (A the body's affine map: the F of its enclosing tet, so every tet of the body keeps its orientation);
        "allow" lets A reflect. damping_stiffness [s] damps the orthogonality energy's stretch and shear of A (its
        Hessian at a rotation annihilates infinitesimal rotations, and any translation: the rigid motion is not
        damped). Other arguments as ``add_body``.
        """
        from .embedded import embed_body, enclosing_tet

        what = f"body {len(self._bodies)}"
        fine = placement(transform, what, translation=translation, rotation=rotation, scale=scale).apply(vertices)
        if material is None:
            mat = body_material("ABD", what, youngs_modulus=AFFINE_STIFFNESS if stiffness is None else stiffness,
                                poisson_ratio=0.0, density=density, inversion=inversion,
                                damping_stiffness=damping_stiffness)
        elif isinstance(material, Material) and material.name == "ABD":
            mat = body_material(material, what, stiffness=stiffness, density=density, inversion=inversion,
                                damping_stiffness=damping_stiffness)
        else:
            raise ValueError(f"{what}: an affine body's material must be a Material named 'ABD' (Material.affine), "
                             f"got {material!r}")
        data = embed_body(fine, elements, enclosing_tet(fine), None, mat.density, "consistent")
        i = self._append_body(Transform().apply(data.coarse_vertices), data.coarse_tets, mat, velocity,
                              angular_velocity, np.full(4, bool(fixed)))
        self._bodies[i].embedded = data
        return i

    def add_obstacle(self, vertices, elements, *, transform=None, velocity=(0.0, 0.0, 0.0),
                     angular_velocity=(0.0, 0.0, 0.0), center=None, time_range=(0.0, math.inf), keyframes=None,
                     translation=None, rotation=None, scale=None) -> int:
        """Add a static or kinematic obstacle; returns its obstacle index (its collision body id is the
        number of bodies plus this index).

        Args:
            vertices: (k, 3) [m], placed like ``add_body`` (transform, or translation, rotation, scale).
            elements: (f, 3) int triangles (an open or closed surface), (t, 4) int tets (their boundary),
                (e, 2) int edges (codimensional segments), (p, 1) int point indices, or None (every vertex is a
                codimensional point).
            velocity: (3,) [m/s] linear velocity of ``center``; angular_velocity: (3,) [rad/s] about it.
            center: (3,) [m] rotation center at time_range[0] (default: vertex centroid after placement), or
                "bbox": IPC's scripted motion (``BoundingBoxStepMotion``: each step rotates by Rx Ry Rz about the
                bounding-box center of the vertices at the step start).
            time_range: (start, end) [s] during which the motion runs; the obstacle is static outside it.
            keyframes: optional (times (K,) [s], positions (K, k, 3) [m]): world positions of the k vertices at
                strictly increasing times, linearly interpolated, held before the first and after the last
                frame (not transformed by scale/rotation/translation); exclusive with velocity/angular_velocity.
        The obstacle's vertices are not unknowns: at every step they move to their prescribed positions.
        """
        i = len(self._obstacles)
        place = placement(transform, f"obstacle {i}", translation=translation, rotation=rotation, scale=scale)
        v = place.apply(vertices)
        if elements is None:
            e = np.arange(len(v), dtype=np.int64).reshape(-1, 1)
        else:
            e = np.asarray(elements, dtype=np.int64)
        if e.ndim != 2 or e.shape[1] not in (1, 2, 3, 4) or len(e) == 0:
            raise ValueError(f"obstacle {i}: elements must be (f, 3) triangles, (t, 4) tets, (e, 2) edges or "
                             f"(p, 1) points, got shape {e.shape}")
        if e.min() < 0 or e.max() >= len(v):
            raise ValueError(f"obstacle {i}: element indices must lie in 0..{len(v) - 1}")
        if e.shape[1] > 1 and np.any(np.sort(e, axis=1)[:, 1:] == np.sort(e, axis=1)[:, :-1]):
            raise ValueError(f"obstacle {i}: degenerate elements (an element repeats a vertex)")
        c = _center(center, v)
        lin, ang = _vec3(velocity, "velocity"), _vec3(angular_velocity, "angular_velocity")
        if keyframes is not None:
            if np.any(lin) or np.any(ang):
                raise ValueError(f"obstacle {i}: give keyframes or velocity/angular_velocity, not both")
            times, positions = keyframes
            try:
                motion = KeyframedMotion(np.arange(len(v)), times, positions)
            except ValueError as exc:
                raise ValueError(f"obstacle {i}: {exc}") from None
            keyframes = (motion.times, motion.positions)
        self._obstacles.append(_Obstacle(v, e, lin, ang, c, _time_range(time_range), keyframes,
                                         isinstance(center, str)))
        return i

    def add_ground(self, height=0.0, normal=(0.0, 1.0, 0.0)) -> None:
        """A half-space obstacle {x : dot(x, n) >= height}."""
        n = np.asarray(normal, dtype=np.float64)
        n = n / np.linalg.norm(n)
        self._planes.append(Plane(origin=height * n, normal=n))

    def add_dirichlet(self, body: int, *, box=None, indices=None, velocity=(0.0, 0.0, 0.0),
                      angular_velocity=(0.0, 0.0, 0.0), center=None, time_range=(0.0, math.inf),
                      keyframes=None) -> None:
        """Prescribe a rigid motion on some vertices of a body during time_range [s] (free outside it), or a
        keyframed trajectory (position control, prescribed at every step).

        Select by box ((3,) min, (3,) max) [m] on the placed vertices, or by indices (local to the body).
        velocity [m/s], angular_velocity [rad/s] about center (default: centroid of the set at the start;
        "bbox": IPC's stepwise motion about the set's moving bounding-box center, see ``add_obstacle``).
        keyframes: (times (K,) [s], translations (K, 3) [m] of the set from its placed rest position, or
        positions (K, k, 3) [m] of its k vertices), linearly interpolated and held before the first and after
        the last time; exclusive with velocity/angular_velocity/time_range.
        """
        sel = self._select(body, box, indices, "add_dirichlet")
        if keyframes is not None:
            if np.any(velocity) or np.any(angular_velocity) or tuple(time_range) != (0.0, math.inf):
                raise ValueError(f"add_dirichlet (body {body}): give keyframes or velocity/angular_velocity/"
                                 "time_range, not both")
            times, values = keyframes
            values = np.asarray(values, np.float64)
            if values.ndim == 2 and values.shape[-1] == 3:
                values = self._bodies[body].vertices[sel][None, :, :] + values[:, None, :]
            try:
                motion = KeyframedMotion(sel, times, values)
            except ValueError as exc:
                raise ValueError(f"add_dirichlet (body {body}): {exc}") from None
            self._dirichlet.append((body, sel, motion))
            return
        self._dirichlet.append((body, sel, _vec3(velocity, "velocity"),
                                _vec3(angular_velocity, "angular_velocity"), center, _time_range(time_range)))

    def add_neumann(self, body: int, force=None, *, acceleration=None, box=None, indices=None,
                    time_range=(0.0, math.inf)) -> None:
        """Load the selected vertices of a body (box or local indices) during time_range [s]: either force (3,)
        [N] on each vertex, or acceleration (3,) [m/s^2] (each vertex gets its lumped mass [kg] times it,
        resolved in ``finalize``). Exactly one of force and acceleration."""
        if (force is None) == (acceleration is None):
            raise ValueError("add_neumann: give exactly one of force [N] and acceleration [m/s^2]")
        sel = self._select(body, box, indices, "add_neumann")
        if force is not None:
            self._neumann.append((body, sel, _vec3(force, "force"), _time_range(time_range), False))
        else:
            self._neumann.append((body, sel, _vec3(acceleration, "acceleration"), _time_range(time_range), True))

    def add_gripper(self, trajectory, attachments, *, axis=(1.0, 0.0, 0.0)) -> int:
        """A rigid gripper frame following a recorded trajectory and carrying attachments; returns its index.

        trajectory: a ``geometry.trajectory.Trajectory`` or the path of its CSV file (``time, x, y, z, qw, qx, qy,
        qz, width``; positions linear, rotations slerp; see ``model.gripper`` for the motion of the nodes).
        attachments: dicts, each {"body": id, "box": (min (3,), max (3,)) [m] or "indices": local node indices
        (neither: the whole body; an affine body's whole body is its 4 nodes, so it moves rigidly), "side": -1,
        0 or +1} or {"obstacle": index, "side": ...}: side -1 / +1 moves the set by -width/2 / +width/2 along
        axis (the two fingers), 0 (default) carries it with the frame. axis: (3,) the opening axis in the gripper
        frame. Attached nodes are prescribed at every step (an attached obstacle must have no motion of its own).
        """
        from ..geometry.trajectory import read_trajectory_csv
        from .gripper import SIDES, _unit_axis

        g = len(self._grippers)
        traj = trajectory if hasattr(trajectory, "pose") else read_trajectory_csv(trajectory)
        out = []
        for j, a in enumerate(attachments):
            what = f"add_gripper: gripper {g}, attachment {j}"
            a = dict(a)
            side = a.pop("side", 0)
            if side not in SIDES:
                raise ValueError(f"{what}: side must be -1, 0 or +1, got {side!r}")
            if ("body" in a) == ("obstacle" in a):
                raise ValueError(f"{what}: give exactly one of 'body' and 'obstacle'")
            if "obstacle" in a:
                o = int(a.pop("obstacle"))
                if not 0 <= o < len(self._obstacles) or a:
                    raise ValueError(f"{what}: no obstacle {o}, or keys {sorted(a)} (an obstacle attaches whole)")
                ob = self._obstacles[o]
                if ob.keyframes is not None or np.any(ob.linear_velocity) or np.any(ob.angular_velocity):
                    raise ValueError(f"{what}: obstacle {o} has a motion of its own")
                out.append(("obstacle", o, None, side))
                continue
            body = int(a.pop("body"))
            whole = "box" not in a and "indices" not in a
            sel = None if whole else self._select(body, a.pop("box", None), a.pop("indices", None), what)
            if whole and not 0 <= body < len(self._bodies):
                raise ValueError(f"{what}: no body {body} (the scene has {len(self._bodies)})")
            if a:
                raise ValueError(f"{what}: unknown keys {sorted(a)}")
            out.append(("body", body, sel, side))
        self._grippers.append({"trajectory": traj, "axis": _unit_axis(axis), "attachments": out})
        return g

    def _select(self, body, box, indices, what) -> np.ndarray:
        if not 0 <= int(body) < len(self._bodies):
            raise ValueError(f"{what}: no body {body} (the scene has {len(self._bodies)})")
        v = self._bodies[body].vertices
        if (box is None) == (indices is None):
            raise ValueError(f"{what}: give exactly one of box and indices")
        if box is not None:
            lo, hi = (np.asarray(b, np.float64).reshape(3) for b in box)
            sel = np.flatnonzero(np.all((v >= lo) & (v <= hi), axis=1))
        else:
            sel = np.unique(np.asarray(indices, np.int64).ravel())
            if len(sel) and (sel[0] < 0 or sel[-1] >= len(v)):
                raise ValueError(f"{what}: indices out of range for body {body} ({len(v)} vertices)")
        if len(sel) == 0:
            raise ValueError(f"{what}: the selection holds no vertex of body {body}")
        return sel

    def _add_node_motions(self, control: Control, x: np.ndarray, mass: np.ndarray, offsets: np.ndarray,
                          obs_offsets: np.ndarray) -> None:
        """Append to control the Dirichlet sets' motions, the grippers' and the Neumann loads; offsets
        (bodies + 1,) and obs_offsets (obstacles + 1,) index the nodes of x (n, 3) [m] and mass (n,) [kg]."""
        for body, sel, *motion in self._dirichlet:
            idx = sel + offsets[body]
            if len(motion) == 1:  # keyframes
                control.motions.append(KeyframedMotion(idx, motion[0].times, motion[0].positions))
                continue
            vel, ang, center, trange = motion
            kind = BoundingBoxStepMotion if isinstance(center, str) else PrescribedMotion
            control.motions.append(kind(idx, vel, ang, _center(center, x[idx]), trange, obstacle=False))
        if self._grippers:
            from .gripper import check_disjoint, gripper_motions

            carried = [gripper_motions(g, offsets, obs_offsets, x) for g in self._grippers]
            check_disjoint(carried)
            control.motions.extend(m for motions in carried for m in motions)
        for body, sel, value, trange, per_mass in self._neumann:
            idx = sel + offsets[body]
            force = mass[idx, None] * value if per_mass else value
            control.loads.append(NeumannLoad(idx, force, trange))

    def finalize(self) -> tuple[Model, State]:
        """Build the Model and the initial State."""
        if not self._bodies:
            raise ValueError("the scene has no body")
        offsets = np.cumsum([0] + [len(b.vertices) for b in self._bodies])
        n_body = int(offsets[-1])
        obs_offsets = n_body + np.cumsum([0] + [len(o.vertices) for o in self._obstacles])
        x_body = np.vstack([b.vertices for b in self._bodies])
        tets = np.vstack([b.tets + o for b, o in zip(self._bodies, offsets)])
        dm_inv, volume = rest_shape_data(x_body, tets)
        mu = np.empty(len(tets))
        lam = np.empty(len(tets))
        density = np.empty(len(tets))
        young = np.empty(len(tets))
        groups: dict[str, list[np.ndarray]] = {}
        start = 0
        for b in self._bodies:
            mat = b.material
            m, l = ((mat.youngs_modulus, 0.0) if mat.name == "ABD"  # kappa_a ||F^T F - I||^2, kappa_a = mu
                    else lame_parameters(mat.youngs_modulus, mat.poisson_ratio))
            stop = start + len(b.tets)
            mu[start:stop], lam[start:stop], density[start:stop] = m, l, mat.density
            young[start:stop] = mat.youngs_modulus
            groups.setdefault(mat.name, []).append(np.arange(start, stop, dtype=np.int64))
            start = stop
        prevent = np.concatenate([np.full(len(b.tets), b.material.inversion == "prevent") for b in self._bodies])
        x = np.vstack([x_body] + [o.vertices for o in self._obstacles])
        mass = np.zeros(len(x))
        np.add.at(mass, tets.ravel(), np.repeat(density * volume / 4.0, 4))
        t_offsets = np.cumsum([0] + [len(b.tets) for b in self._bodies])
        for b, o, to in zip(self._bodies, offsets, t_offsets):
            if b.embedded is not None:  # the fine volume inside each coarse tet, the fine body's mass
                volume[to:to + len(b.tets)] = b.embedded.volumes
                mass[o:o + len(b.vertices)] = b.embedded.node_masses
        if np.any(mass[:n_body] <= 0):
            i = int(np.flatnonzero(mass[:n_body] <= 0)[0])
            raise ValueError(f"vertex {i} belongs to no tet")
        meshes = [CollisionMesh.from_tet_mesh(b.vertices, b.tets, body=i) if b.embedded is None else
                  CollisionMesh.from_triangle_mesh(b.embedded.surface_vertices, b.embedded.faces, body=i)
                  for i, b in enumerate(self._bodies)]
        control = Control()
        for j, o in enumerate(self._obstacles):
            body_id = len(self._bodies) + j
            meshes.append(_obstacle_collision_mesh(o, body_id))
            if o.keyframes is not None:
                control.motions.append(KeyframedMotion(np.arange(obs_offsets[j], obs_offsets[j + 1]),
                                                       *o.keyframes))
            elif np.any(o.linear_velocity) or np.any(o.angular_velocity):
                kind = BoundingBoxStepMotion if o.bbox_steps else PrescribedMotion
                control.motions.append(kind(
                    np.arange(obs_offsets[j], obs_offsets[j + 1]), o.linear_velocity, o.angular_velocity,
                    o.center, o.time_range, obstacle=True))
        self._add_node_motions(control, x, mass, offsets, obs_offsets)
        mesh = CollisionMesh.concatenate(meshes, full_offsets=np.concatenate([offsets[:-1], obs_offsets[:-1]]))
        mesh.planes = list(self._planes)
        if self._no_self_contact:
            mesh.self_contact = np.ones(len(meshes), bool)
            mesh.self_contact[sorted(self._no_self_contact)] = False
        is_obstacle = np.zeros(len(x), bool)
        is_obstacle[n_body:] = True
        fixed = np.concatenate([b.fixed for b in self._bodies] + [np.ones(len(x) - n_body, bool)])
        surface_map, mass_matrix = _embedded_maps(self._bodies, meshes, mass,
                                                  np.concatenate([offsets[:-1], obs_offsets[:-1]]))
        model = Model(rest_positions=x.copy(), tets=tets, dm_inv=dm_inv, volume=volume, mu=mu, lam=lam, mass=mass,
                      fixed=fixed, collision_mesh=mesh, gravity=self.gravity.copy(),
                      material_groups=[(name, np.concatenate(idx)) for name, idx in groups.items()],
                      youngs_modulus=young, is_obstacle=is_obstacle, control=control, surface_map=surface_map,
                      mass_matrix=mass_matrix, prevent_inversion=prevent,
                      damping_stiffness=np.repeat([b.material.damping_stiffness for b in self._bodies],
                                                  [len(b.tets) for b in self._bodies]).astype(np.float64))
        v = np.zeros_like(x)
        for b, o in zip(self._bodies, offsets):
            r = b.vertices - (b.vertices.mean(axis=0) if b.embedded is None else b.embedded.centroid)
            v[o:o + len(b.vertices)] = b.velocity + np.cross(b.angular_velocity, r)
        for m in control.motions:  # gripper nodes start at the trajectory's velocity
            if hasattr(m, "velocities"):
                v[m.vertices] = m.velocities(0.0)
        return model, State(x.copy(), v, 0.0)


def _embedded_maps(bodies, meshes, mass, offsets) -> tuple:
    """(surface_map, mass_matrix) of a scene with embedded bodies ((None, None) without: the Model defaults)."""
    from .embedded import compose_mass_matrix, compose_surface_map

    matrix = compose_mass_matrix(bodies, mass, offsets[:len(bodies)])
    return compose_surface_map(bodies, meshes, len(mass), offsets), None if matrix is None else Mass.from_matrix(
        matrix)


def _center(center, points: np.ndarray) -> np.ndarray:
    """A rotation center (3,) [m]: None -> centroid of points (k, 3); "bbox" -> their bounding-box center."""
    if center is None:
        return points.mean(axis=0)
    if isinstance(center, str):
        if center != "bbox":
            raise ValueError(f"center must be a 3-vector [m], None or 'bbox', got {center!r}")
        return 0.5 * (points.min(axis=0) + points.max(axis=0))
    return _vec3(center, "center")


def _obstacle_collision_mesh(o: _Obstacle, body_id: int) -> CollisionMesh:
    """The collision mesh of an obstacle by element kind: tets (boundary), triangles, edges or points."""
    kind = o.elements.shape[1]
    if kind == 4:
        return CollisionMesh.from_tet_mesh(o.vertices, o.elements, body=body_id, is_obstacle=True)
    if kind == 3:
        return CollisionMesh.from_triangle_mesh(o.vertices, o.elements, body=body_id, is_obstacle=True)
    if kind == 2:
        return CollisionMesh.from_edges(o.vertices, o.elements, body=body_id, is_obstacle=True)
    sel = np.unique(o.elements.ravel())
    mesh = CollisionMesh.from_points(o.vertices[sel], body=body_id, is_obstacle=True)
    mesh.full_vertex_index = sel.astype(np.int64)
    return mesh
