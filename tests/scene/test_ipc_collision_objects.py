"""IPC 2020 scripts with awkward collision objects: one that dwarfs the simulated bodies (dHat and epsv stay
relative to the bodies' rest-space bounding box, IPC's ``Mesh::matSpaceBBoxSize2(3)``), and IPC's Erleben
spike-in-a-hole test, whose ``hole.obj`` has four pinched vertices (a warning, and it runs)."""
import math
import warnings
from pathlib import Path

import ipctk
import numpy as np
import pytest

from ipcsim.model.sanity import SanityWarning, check_scene
from ipcsim.scene import load_scene
from ipcsim.scene.ipc_script import IPCScriptWarning

SAMPLES = Path(__file__).parent / "ipc_samples"

FIVE_CUBES = """energy NH
timeIntegration BE
time 3 0.025
stiffness 1e5 0.4

shapes input 5
input/tetMeshes/cube.msh  0.0 {y} 0.0  0 0 0  0.11 0.11 0.11
input/tetMeshes/cube.msh  0.3 {y} 0.0  0 0 0  0.11 0.11 0.11
input/tetMeshes/cube.msh  0.6 {y} 0.0  0 0 0  0.11 0.11 0.11
input/tetMeshes/cube.msh  0.0 {y} 0.3  0 0 0  0.11 0.11 0.11
input/tetMeshes/cube.msh  0.3 {y} 0.3  0 0 0  0.11 0.11 0.11

meshCO input/triMeshes/plane.obj  0.3 0 0.2  360  1e10 0.2
"""


def _build(path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", IPCScriptWarning)
        return load_scene(path)


def _intersection_mesh(mesh):
    """ipctk's mesh of ours, obstacles one patch (they never meet each other)."""
    tk = ipctk.CollisionMesh(mesh.rest_positions, mesh.edges.astype(np.int32), mesh.faces.astype(np.int32))
    obstacle = np.asarray(mesh.is_obstacle, bool)
    tk.can_collide = ipctk.make_vertex_patches_filter(np.where(obstacle, -1, np.arange(len(obstacle)))
                                                      .astype(np.int32))
    return tk


def test_a_collision_object_that_dwarfs_the_bodies_keeps_ipcs_dhat(tmp_path, shared_data):
    """Five 0.11 m cubes 1 mm over a 360 m meshCO plane: dHat = 1e-3 of the cubes' rest bounding-box diagonal
    (0.83 m: 0.83 mm), not of a box with the plane (509 m: 0.51 m, a barrier spanning the cubes); the first
    steps see only the plane's few contacts."""
    (tmp_path / "input").symlink_to(shared_data / "ipc" / "input")
    path = tmp_path / "five_cubes.txt"
    path.write_text(FIVE_CUBES.format(y=0.001))
    scene = _build(path)
    lo, hi = np.array([0.0, 0.001, 0.0]), np.array([0.71, 0.111, 0.41])  # the cubes' placed rest box
    diag = float(np.linalg.norm(hi - lo))
    assert scene.data["contact"]["dhat"] == pytest.approx(1e-3 * diag, rel=1e-12)
    assert scene.data["friction"]["eps_v"] == pytest.approx(1e-3 * diag, rel=1e-12)
    assert scene.bbox_diagonal > 500.0  # the JSON rule's box holds the plane: not used for scripts
    sim = scene.build()
    state = sim.state
    pairs = []
    for _ in range(3):
        new = state.copy()
        stats = sim.solver.step(state, new, None, sim.dt)
        assert stats.converged
        pairs.append(stats.n_contacts)
        state = new
    # cubes 1 mm above the plane, dhat 0.83 mm: the bottom faces' vertices and edges against the two plane
    # triangles, at most 5 x (4 + 5) x 2 = 90 pairs (measured: 22, 22, 20; with dhat 0.51 m, 1,467 pairs before
    # the first step, most of them inside the cubes)
    assert 0 < max(pairs) <= 90
    assert state.x[~sim.model.is_obstacle, 1].min() > 0.0


def test_erleben_spike_in_a_hole_loads_and_runs_intersection_free(tmp_path):
    """IPC's paperExamples/11_erleben/spikeHoleCO.txt: a spike dragged right through a hole whose obstacle mesh
    has four pinched vertices. The scene check warns (naming them) and the first steps stay intersection-free."""
    scene = _build(SAMPLES / "spikeHoleCO.txt")
    sim = scene.build()
    mesh = sim.model.collision_mesh
    with pytest.warns(SanityWarning, match=r"obstacle body 1 has 4 pinched vertex\(es\) whose faces form separate "
                                           r"fans: \d+, \d+, \d+, \d+ \(contact works on any triangle soup"):
        report = check_scene(sim.model, sim.state, dhat=scene.data["contact"]["dhat"])
    assert report.ok
    tk = _intersection_mesh(mesh)
    state = sim.state
    start = sim.model.surface_positions(state.x)
    contacts = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SanityWarning)
        for k in range(160):  # 0.8 s: dragged onto the hole object from about step 90 on
            new = state.copy()
            stats = sim.solver.step(state, new, None, sim.dt)
            assert stats.converged, f"step {k}"
            contacts.append(stats.n_contacts)
            state = new
            assert not ipctk.has_intersections(tk, sim.model.surface_positions(state.x)), f"step {k}"
    assert max(contacts) > 0  # it touched the obstacle (measured: 5 pairs at step 100)
    moved = sim.model.surface_positions(state.x) - start
    assert np.abs(moved[~mesh.is_obstacle, 0]).max() > 0.2  # dragged right at 0.5 m/s
    assert math.isfinite(float(np.abs(state.x).max()))
