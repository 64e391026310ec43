"""Embedded and affine bodies, keyframed Dirichlet sets and generated half ellipsoids in JSON scenes: the models
they build equal ModelBuilder used by hand, resolved scenes reload identically, and bad meshes are one-line
errors naming the key path."""
import json
import math
from pathlib import Path

import numpy as np
import pytest

from ipcsim.geometry.mesh_io import load_tet_mesh
from ipcsim.geometry.shapes import half_ellipsoid_tet_mesh
from ipcsim.model import ModelBuilder, box_tet_mesh
from ipcsim.scene import Scene, SceneError, load_scene
from ipcsim.scene.placement import rotation_from_degrees

REPO = Path(__file__).resolve().parents[2]
CUBE = REPO / "examples" / "meshes" / "cube.msh"
OCTAHEDRON = REPO / "examples" / "meshes" / "octahedron.obj"
BOX = {"box": {"size": [0.1, 0.1, 0.1], "resolution": [3, 3, 3]}}


def same_model(a, b, atol=1e-15):
    """Assert two Models are the same (node positions, tets, masses, volumes, materials, surface map, controls)."""
    for attr in ("tets", "fixed", "is_obstacle", "mu", "lam", "youngs_modulus"):
        assert np.array_equal(getattr(a, attr), getattr(b, attr)), attr
    for attr in ("rest_positions", "mass", "volume"):
        assert np.allclose(getattr(a, attr), getattr(b, attr), rtol=1e-13, atol=atol), attr
    assert [(n, i.tolist()) for n, i in a.material_groups] == [(n, i.tolist()) for n, i in b.material_groups]
    assert np.array_equal(a.surface_map.nodes, b.surface_map.nodes)
    assert np.allclose(a.surface_map.weights, b.surface_map.weights, atol=1e-13)
    assert a.mass_matrix.is_lumped == b.mass_matrix.is_lumped
    if not a.mass_matrix.is_lumped:
        assert abs(a.mass_matrix.matrix - b.mass_matrix.matrix).max() < 1e-13
    assert len(a.control.motions) == len(b.control.motions)
    for m1, m2 in zip(a.control.motions, b.control.motions):
        assert type(m1) is type(m2) and np.array_equal(m1.vertices, m2.vertices)
        if hasattr(m1, "positions"):
            assert np.array_equal(m1.times, m2.times) and np.allclose(m1.positions, m2.positions, atol=atol)
    assert [ld.vertices.tolist() for ld in a.control.loads] == [ld.vertices.tolist() for ld in b.control.loads]


def reloaded(scene: Scene) -> Scene:
    """The scene reloaded from its resolved JSON (from another base directory), which must resolve identically."""
    again = Scene.from_dict(json.loads(json.dumps(scene.data)), "/unrelated", source="scene.json")
    assert again.data == scene.data
    return again


def test_embedded_by_cell_size_with_a_transform_equals_the_builder():
    transform = {"scale": 2.0, "rotation": [10, 20, 30], "translation": [0.5, 1.0, -0.2]}
    data = {"bodies": [{"mesh": BOX, "transform": transform, "embedding": {"resolution": 0.15},
                        "material": {"model": "FCR", "density": 800, "youngs_modulus": 3e5, "poisson_ratio": 0.3},
                        "initial_velocity": {"angular": [0, 1, 0]}}]}
    scene = Scene.from_dict(data, ".")
    assert scene.data["bodies"][0]["embedding"] == {"resolution": 0.15, "mass": "lumped"}
    sim = scene.build()
    v, t = box_tet_mesh([0.1, 0.1, 0.1], [3, 3, 3])
    b = ModelBuilder()
    b.add_embedded_body(v, t, resolution=0.15, scale=2.0, rotation=rotation_from_degrees([10, 20, 30]),
                        translation=[0.5, 1.0, -0.2], density=800, youngs_modulus=3e5, poisson_ratio=0.3,
                        material="FCR", angular_velocity=[0, 1, 0])
    model, state = b.finalize()
    same_model(sim.model, model)
    assert np.allclose(sim.state.v, state.v, atol=1e-14)
    assert sim.model.n_vertices < len(v)  # the cage's nodes are the unknowns
    same_model(reloaded(scene).build().model, sim.model, atol=0.0)


def test_embedded_in_a_coarse_mesh_file_with_consistent_mass_and_a_node_selection():
    data = {"bodies": [{"mesh": {"box": {"size": [1, 1, 1], "resolution": [2, 2, 2]}},
                        "transform": {"scale": 0.1, "translation": [0, 0.2, 0]},
                        "embedding": {"mesh": str(CUBE), "mass": "consistent"},
                        "dirichlet": [{"box": {"min": [-0.01, -0.01, -0.01], "max": [1.01, 0.01, 1.01]}}],
                        "neumann": [{"indices": [1], "force": [0, 0, 1]}]}]}
    scene = Scene.from_dict(data, ".")
    assert scene.data["bodies"][0]["embedding"] == {"mesh": str(CUBE), "mass": "consistent"}
    sim = scene.build()
    cv, ct = load_tet_mesh(CUBE)
    v, t = box_tet_mesh([1, 1, 1], [2, 2, 2])
    b = ModelBuilder()
    i = b.add_embedded_body(v, t, coarse=(cv, ct), mass="consistent", scale=0.1, translation=[0, 0.2, 0])
    b.add_dirichlet(i, box=([-1, 0.19, -1], [1, 0.201, 1]))
    b.add_neumann(i, [0, 0, 1], indices=[1])
    model, _ = b.finalize()
    same_model(sim.model, model)
    assert not sim.model.mass_matrix.is_lumped
    (motion,) = sim.model.control.motions
    assert sorted(motion.vertices.tolist()) == np.flatnonzero(cv[:, 1] == 0).tolist()  # the cube's bottom nodes
    same_model(reloaded(scene).build().model, sim.model, atol=0.0)


def test_embedded_by_vertex_count_and_nodes_picked_in_the_generated_cage():
    data = {"bodies": [{"mesh": BOX, "embedding": {"vertices": 20},
                        "dirichlet": [{"box": {"min": [-0.01, -0.01, -0.01], "max": [1.01, 0.01, 1.01]}}]}]}
    scene = Scene.from_dict(data, ".")
    sim = scene.build()
    v, t = box_tet_mesh([0.1, 0.1, 0.1], [3, 3, 3])
    b = ModelBuilder()
    b.add_embedded_body(v, t, resolution={"vertices": 20})
    model, _ = b.finalize()
    x = model.rest_positions
    assert abs(len(x) - 20) <= 12
    (motion,) = sim.model.control.motions
    assert sorted(motion.vertices.tolist()) == np.flatnonzero(x[:, 1] == x[:, 1].min()).tolist()
    b.add_dirichlet(0, indices=motion.vertices)
    same_model(sim.model, b.finalize()[0])


def _write_octahedron(path: Path, flip: bool) -> Path:
    lines = OCTAHEDRON.read_text().splitlines()
    if flip:
        lines = [" ".join(["f", *line.split()[1:][::-1]]) if line.startswith("f ") else line for line in lines]
    path.write_text("\n".join(lines) + "\n")
    return path


def test_closed_triangle_surfaces_embed_in_either_orientation(tmp_path):
    outward = _write_octahedron(tmp_path / "out.obj", flip=False)
    inward = _write_octahedron(tmp_path / "in.obj", flip=True)
    models = []
    for name in (outward.name, inward.name):
        data = {"bodies": [{"mesh": name, "transform": {"scale": 0.1}, "embedding": {"resolution": 0.06}}]}
        models.append(Scene.from_dict(data, tmp_path).build().model)
    same_model(*models)
    from ipcsim.geometry.mesh_io import read_mesh

    points, cells = read_mesh(outward)
    b = ModelBuilder()
    b.add_embedded_body(points, cells["triangle"].reshape(-1, 3), resolution=0.06, scale=0.1)
    same_model(models[0], b.finalize()[0])
    assert models[0].mass.sum() == pytest.approx(1000.0 * 4.0 / 3.0 * 0.1 ** 3, rel=1e-12)  # the octahedron


@pytest.mark.parametrize("text,message", [
    ("v 0 0 0\nv 1 0 0\nv 0 1 0\nv 0 0 1\nf 1 3 2\nf 1 2 4\nf 1 4 3\n",
     r"cannot use 'm\.obj': not a closed surface: edge \[\d, \d\] belongs to 1 triangle\(s\), not 2$"),
    ("v 0 0 0\nv 1 0 0\nv 0 1 0\nv 0 0 1\nf 1 3 2\nf 1 2 4\nf 1 4 3\nf 2 4 3\n",
     r"cannot use 'm\.obj': inconsistently oriented triangles: two of them run along edge \[\d, \d\] the same way$"),
    ("v 0 0 0\nv 1 0 0\nv 0 1 0\nv 0 0 1\nv 5 5 5\nf 1 3 2\nf 1 2 4\nf 1 4 3\nf 2 3 4\n",
     r"cannot use 'm\.obj': vertex 4 belongs to no triangle \(1 such vertices\)$"),
])
def test_bad_triangle_surfaces_are_scene_errors(tmp_path, text, message):
    (tmp_path / "m.obj").write_text(text)
    with pytest.raises(SceneError, match=r"^<dict>: bodies\[0\]\.mesh: " + message):
        Scene.from_dict({"bodies": [{"mesh": "m.obj", "affine": {}}]}, tmp_path)


def test_an_embedded_body_needs_tets_or_triangles(tmp_path):
    (tmp_path / "m.seg").write_text("v 0 0 0\nv 1 0 0\ns 1 2\n")
    with pytest.raises(SceneError, match=r"^<dict>: bodies\[0\]\.mesh: cannot read 'm\.seg': holds no tetrahedra or "
                                         r"triangles \(found 1 edges\); an embedded or affine body needs a tet mesh "
                                         r"or a closed triangle surface$"):
        Scene.from_dict({"bodies": [{"mesh": "m.seg", "embedding": {"resolution": 0.1}}]}, tmp_path)


def test_a_full_space_body_still_needs_tets(tmp_path):
    _write_octahedron(tmp_path / "o.obj", flip=False)
    with pytest.raises(SceneError, match=r"bodies\[0\]\.mesh: cannot read 'o\.obj': holds no tetrahedra \(found 8 "
                                         r"triangles\); a full-space body needs a tet mesh \(embedded and affine "
                                         r"bodies may be closed triangle surfaces\)$"):
        Scene.from_dict({"bodies": [{"mesh": "o.obj"}]}, tmp_path)


def test_affine_bodies_equal_the_builder():
    data = {"bodies": [
        {"name": "spinner", "mesh": str(OCTAHEDRON), "transform": {"scale": 0.05, "translation": [0, 0.2, 0]},
         "material": {"density": 2500}, "affine": {"stiffness": 5e6},
         "initial_velocity": {"linear": [1, 0, 0], "angular": [0, 0, 3]},
         "dirichlet": [{"indices": [0, 1, 2, 3], "velocity": [0, 0.1, 0], "time_range": [0.0, 0.5]}]},
        {"name": "anvil", "mesh": BOX, "material": {"density": 7000}, "affine": {"fixed": True}}]}
    scene = Scene.from_dict(data, ".")
    spinner, anvil = scene.data["bodies"]
    assert spinner["material"] == {"density": 2500} and spinner["affine"] == {"stiffness": 5e6, "fixed": False}
    assert anvil["material"] == {"density": 1000.0 * 7} and anvil["affine"] == {"stiffness": 1e7, "fixed": True}
    assert "embedding" not in spinner and "affine" not in Scene.from_dict({"bodies": [{"mesh": BOX}]}, ".").data[
        "bodies"][0]
    sim = scene.build()
    from ipcsim.geometry.mesh_io import read_mesh

    points, cells = read_mesh(OCTAHEDRON)
    b = ModelBuilder()
    i = b.add_affine_body(points, cells["triangle"].reshape(-1, 3), density=2500, stiffness=5e6, scale=0.05,
                          translation=[0, 0.2, 0], velocity=[1, 0, 0], angular_velocity=[0, 0, 3])
    b.add_dirichlet(i, indices=range(4), velocity=[0, 0.1, 0], time_range=(0.0, 0.5))
    v, t = box_tet_mesh([0.1, 0.1, 0.1], [3, 3, 3])
    b.add_affine_body(v, t, density=7000, fixed=True)
    model, state = b.finalize()
    same_model(sim.model, model)
    assert np.allclose(sim.state.v, state.v, atol=1e-14)
    assert sim.model.n_vertices == 8 and sim.model.fixed.tolist() == [False] * 4 + [True] * 4
    assert [n for n, _ in sim.model.material_groups] == ["ABD"] and sim.model.mu.tolist() == [5e6, 1e7]
    same_model(reloaded(scene).build().model, sim.model, atol=0.0)


def test_keyframed_dirichlet_sets_by_translations_and_positions():
    frames = [[[0, 0, 0], [0.1, 0, 0]], [[0, 0.1, 0], [0.1, 0.1, 0]], [[0, 0.2, 0], [0.1, 0.2, 0]]]
    data = {"bodies": [{"mesh": BOX, "transform": {"translation": [0, 0.5, 0]},
                        "dirichlet": [
                            {"box": {"min": [-0.01, 0.99, -0.01], "max": [1.01, 1.01, 1.01]},
                             "keyframes": {"times": [0.0, 0.5, 1.0],
                                           "translations": [[0, 0, 0], [0, 0.05, 0], [0.02, 0.05, 0]]}},
                            {"indices": [1, 0], "keyframes": {"times": [0.2, 0.4, 0.6], "positions": frames}}]}]}
    scene = Scene.from_dict(data, ".")
    top, pair = scene.data["bodies"][0]["dirichlet"]
    assert set(top) == {"box", "keyframes"} and set(pair) == {"indices", "keyframes"}  # no velocity etc.
    sim = scene.build()
    v, t = box_tet_mesh([0.1, 0.1, 0.1], [3, 3, 3])
    b = ModelBuilder()
    b.add_body(v + [0, 0.5, 0], t)
    b.add_dirichlet(0, box=([-1, 0.5999, -1], [1, 1, 1]), keyframes=(
        np.array([0.0, 0.5, 1.0]), np.array([[0, 0, 0], [0, 0.05, 0], [0.02, 0.05, 0]])))
    b.add_dirichlet(0, indices=[0, 1], keyframes=(np.array([0.2, 0.4, 0.6]), np.array(frames, float)))
    model, _ = b.finalize()
    same_model(sim.model, model)
    m_top, m_pair = sim.model.control.motions
    assert np.allclose(m_top.positions_at(0.25) - sim.model.rest_positions[m_top.vertices], [0, 0.025, 0])
    assert np.allclose(m_pair.positions_at(1.0), frames[-1])  # held after the last time
    same_model(reloaded(scene).build().model, sim.model, atol=0.0)


def test_half_ellipsoid_meshes_for_bodies_and_obstacles():
    given = {"semi_axes": [0.04, 0.06], "depth": 0.02, "rim": 12, "dome": [10, 6], "base": [], "layers": [0.6, 0.3]}
    data = {"bodies": [{"mesh": {"half_ellipsoid": {"semi_axes": [0.05, 0.075], "depth": 0.03}},
                        "transform": {"translation": [0, 0.001, 0]}},
                       {"mesh": {"half_ellipsoid": given}, "transform": {"translation": [0.3, 0.001, 0]}}],
            "obstacles": [{"mesh": {"half_ellipsoid": given}, "transform": {"translation": [-0.3, 0.0, 0]}}]}
    scene = Scene.from_dict(data, ".")
    first, second = scene.data["bodies"]
    assert first["mesh"] == {"half_ellipsoid": {"semi_axes": [0.05, 0.075], "depth": 0.03, "rim": 20,
                                                "dome": [18, 13, 7], "base": [7], "layers": []}}
    assert second["mesh"] == {"half_ellipsoid": given}
    model = scene.build().model
    v0, t0 = half_ellipsoid_tet_mesh((0.05, 0.075), 0.03)
    v1, t1 = half_ellipsoid_tet_mesh((0.04, 0.06), 0.02, 12, (10, 6), (), (0.6, 0.3))
    assert np.array_equal(model.tets, np.vstack([t0, t1 + len(v0)]))
    n = len(v0) + len(v1)
    assert np.array_equal(model.rest_positions[:n], np.vstack([v0 + [0, 0.001, 0], v1 + [0.3, 0.001, 0]]))
    assert model.is_obstacle[n:].all() and len(model.rest_positions) == n + len(v1)
    same_model(reloaded(scene).build().model, model, atol=0.0)


def test_a_coarse_mesh_that_the_body_does_not_fill_is_a_build_error():
    data = {"bodies": [{"mesh": BOX, "embedding": {"mesh": {"box": {"size": [1, 1, 1], "resolution": [2, 2, 2]}}}}]}
    scene = Scene.from_dict(data, ".", source="s.json")
    with pytest.raises(SceneError, match=r"^s\.json: bodies\[0\]\.embedding: add_embedded_body: coarse node \d+ "
                                         r"carries no fine material"):
        scene.build()


def test_the_examples_resolve_embedding_and_affine_as_documented():
    d = load_scene(REPO / "examples" / "scenes" / "embedded_affine.json").data
    jelly, gem, die = d["bodies"]
    assert jelly["embedding"] == {"mesh": str(CUBE), "mass": "consistent"}
    assert gem["embedding"] == {"vertices": 20, "mass": "lumped"} and gem["mesh"] == str(OCTAHEDRON)
    assert die["affine"] == {"stiffness": 1e7, "fixed": False} and die["material"] == {"density": 2000}
    assert math.isclose(d["contact"]["dhat"], 1e-3 * load_scene(REPO / "examples" / "scenes" /
                                                                "embedded_affine.json").bbox_diagonal)
