"""Scene.build(): the model, controls and solver a scene describes, compared with ModelBuilder used by hand."""
import math
from pathlib import Path

import numpy as np
import pytest

from ipcsim.geometry.mesh_io import load_tet_mesh
from ipcsim.model import ModelBuilder, box_tet_mesh
from ipcsim.scene import Scene, SceneError, load_scene

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples" / "scenes"
MESHES = REPO / "examples" / "meshes"


def test_two_cubes_equals_the_hand_built_model():
    sim = load_scene(EXAMPLES / "two_cubes.json").build()
    v, t = load_tet_mesh(MESHES / "cube.msh")
    c, s = math.cos(math.radians(45)), math.sin(math.radians(45))
    ry = np.array([[c, 0, s], [0, 1, 0], [-s, 0, c]])
    b = ModelBuilder(gravity=(0.0, -9.81, 0.0))
    b.add_ground(0.0)
    b.add_body(v * 0.1 + [0, 0.001, 0], t, density=1000, youngs_modulus=1e5, poisson_ratio=0.4, material="NH")
    b.add_body((v * [0.1, 0.05, 0.1]) @ ry.T + [0.05, 0.15, 0.0], t, density=2000, youngs_modulus=5e5,
               poisson_ratio=0.3, material="FCR")
    model, state = b.finalize()
    for attr in ("tets", "fixed", "is_obstacle"):
        assert np.array_equal(getattr(sim.model, attr), getattr(model, attr)), attr
    for attr in ("rest_positions", "mass", "volume", "mu", "lam", "youngs_modulus", "gravity"):
        assert np.allclose(getattr(sim.model, attr), getattr(model, attr), rtol=1e-13, atol=1e-15), attr
    assert [(n, i.tolist()) for n, i in sim.model.material_groups] == [(n, i.tolist()) for n, i in
                                                                      model.material_groups]
    assert np.allclose(sim.state.x, state.x, atol=1e-15) and np.array_equal(sim.state.v, state.v)
    assert [(p.origin.tolist(), p.normal.tolist()) for p in sim.model.collision_mesh.planes] == [([0, 0, 0], [0, 1, 0])]
    assert (sim.dt, sim.end_time, sim.name, sim.body_names, sim.obstacle_names) == (
        0.01, 1.0, "two-cubes", ["bottom", "top"], [])
    assert sim.output == {"every": 2, "volume": True, "render": False, "checkpoint_every": 20}


def test_contact_friction_and_solver_parameters():
    sim = load_scene(EXAMPLES / "contact_friction.json").build()
    solver = sim.solver
    assert (solver.contact.dhat, solver.contact.kappa, solver.contact.convergent) == (5e-4, 1e4, True)
    assert solver.kappa == 1e4
    f = solver.friction
    assert (f.mu, f.plane_mu, f.eps_v, f.lagging_iterations) == (0.4, (0.4,), 1e-3, 2)
    assert (solver.tol, solver.max_newton_iterations, solver.linear_backend, solver.quasi_static) == (
        1e-2, 1000, "auto", False)
    assert np.allclose(sim.state.v[sim.model.tets[-1]], [0.5, 0.0, 0.0])  # the slider's initial velocity


def test_default_kappa_and_no_friction():
    sim = Scene.from_dict({"bodies": [{"mesh": {"box": {"size": [1, 1, 1], "resolution": [1, 1, 1]}},
                                       "material": {"youngs_modulus": 3e6}}]}, ".").build()
    assert sim.solver.contact.kappa is None and sim.solver.kappa == pytest.approx(3e5)
    assert sim.solver.friction is None


def test_ground_friction_alone_enables_friction():
    data = {"bodies": [{"mesh": {"box": {"size": [1, 1, 1], "resolution": [1, 1, 1]}},
                        "transform": {"translation": [0, 3, 0]}}],
            "half_spaces": [{"origin": [0, 1, 0], "normal": [0, 2, 0], "friction": 0.25}]}
    sim = Scene.from_dict(data, ".").build()
    assert sim.solver.friction is not None
    assert (sim.solver.friction.mu, sim.solver.friction.plane_mu) == (0.0, (0.25,))
    (plane,) = sim.model.collision_mesh.planes
    assert np.allclose(plane.normal, [0, 1, 0]) and np.allclose(plane.origin, [0, 1, 0])


def test_tilted_half_space_keeps_its_origin_plane():
    n = np.array([1.0, 2.0, 2.0]) / 3.0
    data = {"bodies": [{"mesh": {"box": {"size": [1, 1, 1], "resolution": [1, 1, 1]}},
                        "transform": {"translation": [5, 5, 5]}}],
            "half_spaces": [{"origin": [1.0, -2.0, 4.0], "normal": (3 * n).tolist()}]}
    (plane,) = Scene.from_dict(data, ".").build().model.collision_mesh.planes
    assert np.allclose(plane.normal, n, atol=1e-15)
    assert np.dot(plane.origin - [1.0, -2.0, 4.0], n) == pytest.approx(0.0, abs=1e-14)  # same plane


def test_quasi_static_and_dirichlet_time_ranges():
    sim = load_scene(EXAMPLES / "quasi_static.json").build()
    assert sim.solver.quasi_static
    bottom, top = sim.model.control.motions
    x = sim.model.rest_positions
    assert sorted(bottom.vertices.tolist()) == np.flatnonzero(x[:, 1] == 0.0).tolist()
    assert sorted(top.vertices.tolist()) == np.flatnonzero(np.isclose(x[:, 1], 0.2)).tolist()
    assert bottom.time_range == (0.0, math.inf) and top.time_range == (0.0, 1.0)
    assert np.array_equal(top.linear_velocity, [0.0, -0.02, 0.0])
    assert np.allclose(top.center, x[top.vertices].mean(axis=0))  # center null: the set's centroid


def test_dirichlet_center_and_angular_velocity():
    box = {"box": {"size": [1, 1, 1], "resolution": [1, 1, 1]}}
    data = {"bodies": [{"mesh": box, "dirichlet": [{"indices": [0, 1], "angular_velocity": [0, 2, 0],
                                                    "center": [3, 4, 5], "time_range": [0.5, 2.0]}]}]}
    (m,) = Scene.from_dict(data, ".").build().model.control.motions
    assert m.vertices.tolist() == [0, 1] and m.time_range == (0.5, 2.0)
    assert np.array_equal(m.center, [3, 4, 5]) and np.array_equal(m.angular_velocity, [0, 2, 0])


def test_initial_angular_velocity_about_the_centroid():
    data = {"bodies": [{"mesh": {"box": {"size": [1, 1, 1], "resolution": [1, 1, 1]}},
                        "transform": {"translation": [10, 0, 0]},
                        "initial_velocity": {"linear": [1, 0, 0], "angular": [0, 0, 2]}}]}
    sim = Scene.from_dict(data, ".").build()
    x = sim.state.x
    r = x - x.mean(axis=0)
    assert np.allclose(sim.state.v, [1, 0, 0] + np.cross([0, 0, 2], r), atol=1e-14)


def test_force_neumann_load():
    data = {"bodies": [{"mesh": {"box": {"size": [1, 1, 1], "resolution": [2, 2, 2]}},
                        "neumann": [{"box": {"min": [-0.1, 0.9, -0.1], "max": [1.1, 1.1, 1.1]},
                                     "force": [0, -2, 0], "time_range": [0.1, None]}]}]}
    model = Scene.from_dict(data, ".").build().model
    (load,) = model.control.loads
    assert sorted(load.vertices.tolist()) == np.flatnonzero(model.rest_positions[:, 1] == 1.0).tolist()
    assert np.array_equal(load.force, [0, -2, 0]) and load.time_range == (0.1, math.inf)


def test_acceleration_neumann_load_is_mass_times_acceleration():
    data = {"bodies": [{"mesh": {"box": {"size": [1, 1, 1], "resolution": [2, 2, 2]}},
                        "material": {"density": 500},
                        "neumann": [{"indices": [0, 4, 8], "acceleration": [0, 0, 3]}]}]}
    model = Scene.from_dict(data, ".").build().model
    (load,) = model.control.loads
    f = model.control.external_forces(model.n_vertices, 0.0)
    assert np.allclose(f[[0, 4, 8]], model.mass[[0, 4, 8], None] * [0, 0, 3], rtol=1e-14)
    assert np.count_nonzero(np.any(f != 0, axis=1)) == 3


def test_kinematic_obstacles():
    sim = load_scene(EXAMPLES / "kinematic_obstacle.json").build()
    model = sim.model
    n_box = len(box_tet_mesh((0.1, 0.1, 0.1), (2, 2, 2))[0])
    assert sim.obstacle_names == ["plate", "spinner"]
    assert model.is_obstacle.sum() == 4 + 8 and not model.is_obstacle[:n_box].any()
    plate, spinner = model.control.motions
    assert plate.vertices.tolist() == list(range(n_box, n_box + 4))
    assert np.array_equal(plate.linear_velocity, [0, -0.1, 0]) and plate.time_range == (0.0, 0.6)
    assert np.allclose(model.rest_positions[plate.vertices], [[-0.15, 0.15, -0.15], [0.15, 0.15, -0.15],
                                                              [0.15, 0.15, 0.15], [-0.15, 0.15, 0.15]])
    assert np.allclose(spinner.center, model.rest_positions[spinner.vertices].mean(axis=0))
    assert np.allclose(spinner.center, [0.225, 0.025, 0.025])
    assert np.array_equal(spinner.angular_velocity, [0, 3, 0]) and spinner.time_range == (0.0, math.inf)
    # the plate's two triangles and the spinner cube's 12 boundary triangles are collision faces
    assert (model.collision_mesh.body[model.collision_mesh.faces[:, 0]] >= 1).sum() == 2 + 12


def test_keyframed_edge_obstacle():
    sim = load_scene(EXAMPLES / "keyframed_obstacle.json").build()
    model = sim.model
    (motion,) = model.control.motions
    assert np.allclose(motion.times, [0.0, 0.1, 0.2, 0.3, 0.4])
    assert motion.positions.shape == (5, 3, 3)
    assert np.allclose(motion.positions[:, :, 1], (0.15 - 0.015 * np.arange(5))[:, None])
    assert np.allclose(motion.positions[:, 0, [0, 2]], [-0.1, -0.1])
    mesh = model.collision_mesh
    obstacle_edges = mesh.edges[mesh.is_obstacle[mesh.edges[:, 0]]]
    assert len(obstacle_edges) == 3
    assert not mesh.is_obstacle[mesh.faces].any()  # the wire has no face


def test_point_obstacle(tmp_path):
    (tmp_path / "p.pt").write_text("v 0 1 0\nv 1 1 0\nv 0 1 1\n")
    data = {"bodies": [{"mesh": {"box": {"size": [1, 0.5, 1], "resolution": [1, 1, 1]}}}],
            "obstacles": [{"mesh": "p.pt"}]}
    model = Scene.from_dict(data, tmp_path).build().model
    mesh = model.collision_mesh
    pts = np.flatnonzero(mesh.is_obstacle)
    assert len(pts) == 3
    assert np.allclose(mesh.rest_positions[pts], [[0, 1, 0], [1, 1, 0], [0, 1, 1]])


def test_newmark_integrator_options():
    sim = load_scene(EXAMPLES / "newmark.json").build()
    integ = sim.solver.integrator
    assert type(integ).__name__ == "Newmark" and (integ.beta, integ.gamma) == (0.25, 0.5)
    assert (sim.solver.tol, sim.solver.max_newton_iterations, sim.solver.linear_backend) == (1e-3, 50, "scipy")


def test_damping_ratio_reaches_the_solver():
    sim = load_scene(EXAMPLES / "newmark.json").build()
    assert sim.solver.damping_ratio == 0.1
    data = {"bodies": [{"mesh": {"box": {"size": [1, 1, 1], "resolution": [1, 1, 1]}}}],
            "integrator": {"type": "quasi_static", "damping_ratio": 0.5}}
    with pytest.raises(SceneError, match=r"^<dict>: integrator: .*damping"):
        Scene.from_dict(data, ".").build()


def test_unavailable_linear_solver_is_a_scene_error(monkeypatch):
    import ipcsim.linalg.factorization as linear

    monkeypatch.setattr(linear, "available_backends", lambda: ["scipy"])
    data = {"bodies": [{"mesh": {"box": {"size": [1, 1, 1], "resolution": [1, 1, 1]}}}],
            "solver": {"linear_solver": "pardiso"}}
    with pytest.raises(SceneError, match=r"^<dict>: solver\.linear_solver: 'pardiso' is not available here"):
        Scene.from_dict(data, ".").build()


def test_build_twice_gives_independent_simulations():
    scene = load_scene(EXAMPLES / "initial_velocity.json")
    a, b = scene.build(), scene.build()
    a.state.x[:] = 0.0
    assert not np.array_equal(a.state.x, b.state.x)
    assert np.array_equal(b.state.x, b.model.rest_positions)
