"""Shared driver of the scene regression tests: step a scene and check every step (tests only).

Every step must converge and leave the scene intersection-free (judged by ipctk and by ipcsim's own exact test),
free of inverted tets, and strictly on the free side of every half-space (ground) obstacle. The driver records
what the report needs per scene: steps, wall time, Newton iterations, contacts and the smallest contact distance.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numpy as np

import ipctk
from ipcsim.contact.intersection import find_intersections
from _tet_checks import count_inverted_tets
from ipcsim.geometry.mesh_io import read_mesh


@dataclass
class SceneRecord:
    """What a scene run did: per-step lists (one entry per step), the wall time [s] of the whole run (checks
    included) and the part of it spent in ``solver.step``."""

    name: str
    newton_iterations: list = field(default_factory=list)
    n_contacts: list = field(default_factory=list)
    min_distance: list = field(default_factory=list)  # [m], inf for a step ending without contact
    wall_time: float = 0.0
    solver_time: float = 0.0

    @property
    def steps(self) -> int:
        return len(self.newton_iterations)

    def summary(self) -> str:
        """One line for the test log (``pytest -s`` or a failure report)."""
        d = [v for v in self.min_distance if math.isfinite(v)]
        return (f"{self.name}: {self.steps} steps, {self.wall_time:.1f} s ({self.solver_time:.1f} s stepping), "
                f"Newton {sum(self.newton_iterations)} "
                f"(max {max(self.newton_iterations, default=0)}/step), contacts max {max(self.n_contacts, default=0)}"
                f", min distance {min(d) if d else math.inf:.3g} m")


def ipctk_mesh(model) -> "ipctk.CollisionMesh":
    """ipctk's collision mesh of the model's collision surface (rest positions, same edges and faces)."""
    mesh = model.collision_mesh
    return ipctk.CollisionMesh(mesh.rest_positions, mesh.edges.astype(np.int32), mesh.faces.astype(np.int32))


def check_state(model, x: np.ndarray, tk_mesh, label: str, ipcsim_test: bool = True) -> None:
    """Assert that full positions x (n, 3) [m] are intersection-free (ipctk, and ipcsim unless ipcsim_test is
    False), have no inverted tet and keep every collision vertex strictly on the free side of the half-space
    obstacles."""
    mesh = model.collision_mesh
    xs = mesh.select_positions(x)
    assert not ipctk.has_intersections(tk_mesh, xs), f"{label}: ipctk finds an intersection"
    if ipcsim_test:
        hits = find_intersections(mesh, xs, max_count=1)
        assert len(hits) == 0, f"{label}: ipcsim finds edge {hits[0, 0]} through face {hits[0, 1]}"
    inverted = count_inverted_tets(x, model.tets)
    assert inverted == 0, f"{label}: {inverted} inverted tets"
    for plane in mesh.planes:
        gap = float(np.min((xs[~mesh.is_obstacle] - plane.origin) @ plane.normal))
        assert gap > 0.0, f"{label}: a vertex is {-gap:.3g} m behind the plane with normal {plane.normal}"


def run_scene(model, state, solver, h: float, n_steps: int, name: str, on_step=None):
    """Advance ``state`` by n_steps steps of h [s] with ``solver``, checking every step (``check_state``).

    on_step(k, state, stats) is called after each checked step k (1-based) for scene-specific checks.
    Returns (final State, SceneRecord).
    """
    tk_mesh = ipctk_mesh(model)
    # ipcsim's own test of the initial state is the solver's scene check (first step), which raises on a hit
    check_state(model, state.x, tk_mesh, f"{name} initial state", ipcsim_test=False)
    record = SceneRecord(name)
    start = time.perf_counter()
    for k in range(1, n_steps + 1):
        new = state.copy()
        t0 = time.perf_counter()
        stats = solver.step(state, new, None, h)
        record.solver_time += time.perf_counter() - t0
        state = new
        record.newton_iterations.append(stats.newton_iterations)
        record.n_contacts.append(stats.n_contacts)
        record.min_distance.append(stats.min_distance)
        label = f"{name} step {k} (t = {state.t:.3f} s)"
        assert stats.converged, f"{label}: Newton did not converge in {stats.newton_iterations} iterations"
        assert np.all(np.isfinite(state.x)), f"{label}: non-finite positions"
        check_state(model, state.x, tk_mesh, label)
        if on_step is not None:
            on_step(k, state, stats)
    record.wall_time = time.perf_counter() - start
    print(record.summary())
    return state, record


def velocity_resolution(solver) -> float:
    """Smallest velocity change [m/s] that the solver resolves: Newton stops once ||p||_inf / h < tol * (bounding-box
    diagonal of the simulated vertices), so a body at rest may keep velocities up to this size."""
    m = solver.model
    return solver.tol * float(np.linalg.norm(np.ptp(m.rest_positions[~m.is_obstacle], axis=0)))


def surface_heights(points: np.ndarray, x: np.ndarray, faces: np.ndarray) -> np.ndarray:
    """(p,) float64 [m]: the largest height y, over the faces (f, 3) (rows into x (n, 3) [m]) whose projection on
    the xz plane contains the point, of that face above the point's (x, z); NaN where no face does.

    points: (p, 3) [m]. Meant for surfaces that are height fields over the points (a mat, a bowl)."""
    out = np.full(len(points), np.nan)
    a, b, c = (x[faces[:, k]][None] for k in range(3))  # (1, f, 3)

    def cross_y(u, v, w):  # twice the signed xz-area of the triangle u, v, w
        return (v[..., 2] - u[..., 2]) * (w[..., 0] - u[..., 0]) - (v[..., 0] - u[..., 0]) * (w[..., 2] - u[..., 2])

    area = cross_y(a, b, c)
    for start in range(0, len(points), 256):  # chunks keep the (p, f) temporaries small
        p = points[start:start + 256, None, :]
        l0, l1, l2 = cross_y(p, b, c) / area, cross_y(a, p, c) / area, cross_y(a, b, p) / area
        inside = (l0 >= 0) & (l1 >= 0) & (l2 >= 0)
        height = np.where(inside, l0 * a[..., 1] + l1 * b[..., 1] + l2 * c[..., 1], -np.inf)
        best = height.max(axis=1)
        out[start:start + 256] = np.where(np.isfinite(best), best, np.nan)
    return out


def points_below_surface(points: np.ndarray, x: np.ndarray, faces: np.ndarray) -> np.ndarray:
    """(p,) bool: points (p, 3) [m] strictly below the height-field surface faces (f, 3) into x (n, 3) [m]
    (``surface_heights``); points outside the surface's xz footprint are not below it."""
    h = surface_heights(points, x, faces)
    return np.isfinite(h) & (points[:, 1] < np.nan_to_num(h, nan=-np.inf))


def load_triangle_mesh(path) -> tuple[np.ndarray, np.ndarray]:
    """(vertices (n, 3) float64 [file units], triangles (f, 3) int64) of a surface mesh file."""
    points, cells = read_mesh(path)
    return points, cells["triangle"]


def rotation_y(degrees: float) -> np.ndarray:
    """Rotation matrix (3, 3) about the +y axis by an angle in degrees."""
    c, s = np.cos(np.deg2rad(degrees)), np.sin(np.deg2rad(degrees))
    return np.array([[c, 0.0, s], [0.0, 1.0, 0.0], [-s, 0.0, c]])


def placed_at(vertices: np.ndarray, rotation: np.ndarray, bottom_center) -> np.ndarray:
    """Translation (3,) [m] that, after ``rotation`` (3, 3), puts the centre of the bounding box of vertices
    (k, 3) [m] over bottom_center (x, z) with its lowest point at bottom_center's y."""
    r = np.asarray(vertices) @ rotation.T
    lo, hi = r.min(axis=0), r.max(axis=0)
    return np.asarray(bottom_center, float) - np.array([(lo[0] + hi[0]) / 2, lo[1], (lo[2] + hi[2]) / 2])
