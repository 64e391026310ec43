"""Scene resolution: defaults, absolute paths, relative dhat/eps_v, placement, selections, round trip, dispatch."""
import json
import math
import os
import sys
import types
from pathlib import Path

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from ipcsim.geometry.mesh_io import load_tet_mesh
from ipcsim.scene import SCHEMA, Scene, SceneError, load_scene
from ipcsim.scene.mesh_files import read_mesh_data, read_seg
from ipcsim.scene.placement import place, rotation_from_degrees

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples" / "scenes"
CUBE = REPO / "examples" / "meshes" / "cube.msh"


def minimal(**extra) -> dict:
    return {"bodies": [{"mesh": {"box": {"size": [0.1, 0.2, 0.3]}}}], **extra}


def test_schema_is_a_valid_draft_2020_12_schema():
    from jsonschema import Draft202012Validator

    Draft202012Validator.check_schema(SCHEMA)
    assert SCHEMA["$schema"].endswith("2020-12/schema")


def test_defaults_are_filled():
    s = Scene.from_dict(minimal(), "/nowhere", source="/some/dir/my-scene.json")
    d = s.data
    assert d["format"] == "ipcsim-scene/1" and d["name"] == "my-scene"
    assert d["time"] == {"end": 5.0, "dt": 0.025}
    assert d["gravity"] == [0.0, -9.81, 0.0]
    assert d["integrator"] == {"type": "implicit_euler", "damping_ratio": 0.0}
    assert d["solver"] == {"tol": 1e-2, "max_newton_iterations": 1000, "linear_solver": "auto", "warm_start": False}
    assert d["output"] == {"every": 1, "volume": False, "render": False, "checkpoint_every": 10}
    assert d["obstacles"] == [] and d["half_spaces"] == []
    b = d["bodies"][0]
    assert b["name"] == "body0"
    assert b["mesh"] == {"box": {"size": [0.1, 0.2, 0.3], "resolution": [4, 4, 4]}}
    assert b["transform"] == {"scale": 1.0, "rotation": [0.0, 0.0, 0.0], "translation": [0.0, 0.0, 0.0]}
    assert b["material"] == {"model": "NH", "density": 1000.0, "youngs_modulus": 1e5, "poisson_ratio": 0.4}
    assert b["initial_velocity"] == {"linear": [0.0, 0.0, 0.0], "angular": [0.0, 0.0, 0.0]}
    assert b["dirichlet"] == [] and b["neumann"] == []
    # relative dhat / eps_v: 1e-3 of the bounding-box diagonal of the box 0.1 x 0.2 x 0.3
    diag = math.sqrt(0.1 ** 2 + 0.2 ** 2 + 0.3 ** 2)
    assert d["contact"] == {"dhat": pytest.approx(1e-3 * diag, rel=1e-14), "kappa": None, "convergent": True}
    assert d["friction"] == {"mu": 0.0, "eps_v": pytest.approx(1e-3 * diag, rel=1e-14), "lagging_iterations": 1,
                             "pairs": []}
    assert Scene.from_dict(minimal(), ".").data["name"] == "scene"


def test_newmark_defaults_and_given_values():
    d = Scene.from_dict(minimal(integrator={"type": "newmark"}), ".").data
    assert d["integrator"] == {"type": "newmark", "beta": 0.25, "gamma": 0.5, "damping_ratio": 0.0}
    d = Scene.from_dict(minimal(integrator={"type": "newmark", "gamma": 0.6, "damping_ratio": 0.2}), ".").data
    assert d["integrator"] == {"type": "newmark", "beta": 0.25, "gamma": 0.6, "damping_ratio": 0.2}


def test_relative_contact_parameters_use_all_bodies_and_obstacles():
    data = {
        "bodies": [{"mesh": {"box": {"size": [1.0, 1.0, 1.0], "resolution": [1, 1, 1]}},
                    "transform": {"translation": [0.0, 2.0, 0.0]}}],
        "obstacles": [{"mesh": str(REPO / "examples" / "meshes" / "plate.obj"),
                       "transform": {"scale": 4.0, "translation": [0.0, -1.0, 0.0]}}],
        "half_spaces": [{"origin": [0, -100, 0]}],  # half spaces do not count
        "contact": {"dhat_relative": 0.01},
        "friction": {"eps_v_relative": 0.002, "mu": 0.1},
    }
    s = Scene.from_dict(data, ".")
    # plate spans x, z in [-2, 2] at y = -1; the cube x, z in [0, 1], y in [2, 3]
    diag = math.sqrt(4.0 ** 2 + 4.0 ** 2 + 4.0 ** 2)
    assert s.bbox_diagonal == pytest.approx(diag, rel=1e-14)
    assert s.data["contact"]["dhat"] == pytest.approx(0.01 * diag, rel=1e-14)
    assert s.data["friction"]["eps_v"] == pytest.approx(0.002 * diag, rel=1e-14)
    assert "dhat_relative" not in s.data["contact"] and "eps_v_relative" not in s.data["friction"]
    given = Scene.from_dict({**data, "contact": {"dhat": 0.5}, "friction": {"eps_v": 0.25}}, ".").data
    assert given["contact"]["dhat"] == 0.5 and given["friction"]["eps_v"] == 0.25


def test_mesh_paths_become_absolute(tmp_path):
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "cube.msh").write_bytes(CUBE.read_bytes())
    (tmp_path / "sub" / "k0.seg").write_text("v 0 2 0\nv 1 2 0\ns 1 2\n")
    (tmp_path / "sub" / "k1.seg").write_text("v 0 3 0\nv 1 3 0\ns 1 2\n")
    data = {"bodies": [{"mesh": "sub/cube.msh"}],
            "obstacles": [{"mesh": "sub/k0.seg", "keyframes": {"files": ["sub/k0.seg", "./sub/k1.seg"], "dt": 0.5}}]}
    (tmp_path / "scene.json").write_text(json.dumps(data))
    d = load_scene(tmp_path / "scene.json").data
    assert d["bodies"][0]["mesh"] == str(tmp_path / "sub" / "cube.msh")
    assert d["obstacles"][0]["mesh"] == str(tmp_path / "sub" / "k0.seg")
    assert d["obstacles"][0]["keyframes"] == {"files": [str(tmp_path / "sub" / "k0.seg"),
                                                        str(tmp_path / "sub" / "k1.seg")], "dt": 0.5}
    assert all(os.path.isabs(f) for f in d["obstacles"][0]["keyframes"]["files"])


def test_rotation_convention_matches_extrinsic_xyz_euler_angles():
    rng = np.random.default_rng(7)
    for _ in range(5):
        angles = rng.uniform(-180, 180, 3)
        expected = Rotation.from_euler("xyz", angles, degrees=True).as_matrix()  # extrinsic x, y, z = Rz Ry Rx
        assert np.allclose(rotation_from_degrees(angles), expected, atol=1e-14)
    # a 90 degree turn about z takes +x to +y
    assert np.allclose(rotation_from_degrees([0, 0, 90]) @ [1, 0, 0], [0, 1, 0], atol=1e-15)


def test_placement_scales_rotates_then_translates():
    v = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]])
    out = place(v, {"scale": [2.0, 3.0, 4.0], "rotation": [0, 0, 90], "translation": [10.0, 0.0, 0.0]})
    # scale: (2,0,0), (0,3,0), (0,0,4); Rz(90): (x, y) -> (-y, x); then + (10, 0, 0)
    assert np.allclose(out, [[10.0, 2.0, 0.0], [7.0, 0.0, 0.0], [10.0, 0.0, 4.0]], atol=1e-14)
    r = Rotation.from_euler("xyz", [10, 20, 30], degrees=True).as_matrix()
    assert np.allclose(place(v, {"rotation": r.tolist()}), v @ r.T, atol=1e-15)


def test_body_vertices_in_the_model_follow_the_transform():
    data = {"bodies": [{"mesh": str(CUBE), "transform": {"scale": [0.1, 0.2, 0.3], "rotation": [30, -45, 60],
                                                         "translation": [1.0, 2.0, 3.0]}}]}
    sim = Scene.from_dict(data, ".").build()
    v, t = load_tet_mesh(CUBE)
    r = Rotation.from_euler("xyz", [30, -45, 60], degrees=True).as_matrix()
    expected = (v * [0.1, 0.2, 0.3]) @ r.T + [1.0, 2.0, 3.0]
    assert np.allclose(sim.model.rest_positions, expected, atol=1e-14)
    assert np.allclose(sim.state.x, expected, atol=1e-14)


def test_relative_and_world_selection_boxes():
    # a 2 x 1 x 1 m bar of 4 x 1 x 1 cells, shifted to x in [5, 7]: relative x in [0.76, 1.01] is x >= 6.52
    bar = {"box": {"size": [2.0, 1.0, 1.0], "resolution": [4, 1, 1]}}
    data = {"bodies": [{"mesh": bar, "transform": {"translation": [5.0, 0.0, 0.0]},
                        "dirichlet": [{"box": {"min": [0.76, -0.1, -0.1], "max": [1.01, 1.1, 1.1]}}],
                        "neumann": [{"box": {"min": [4.9, -1, -1], "max": [5.1, 2, 2], "relative": False},
                                     "force": [0.0, 1.0, 0.0]}]}]}
    s = Scene.from_dict(data, ".")
    assert s.data["bodies"][0]["dirichlet"][0]["box"]["relative"] is True
    model = s.build().model
    x = model.rest_positions
    (motion,) = model.control.motions
    assert sorted(motion.vertices.tolist()) == np.flatnonzero(x[:, 0] >= 6.52).tolist()
    assert len(motion.vertices) == 4 and np.all(x[motion.vertices, 0] == 7.0)
    (load,) = model.control.loads
    assert sorted(load.vertices.tolist()) == np.flatnonzero(x[:, 0] == 5.0).tolist()


def test_round_trip_gives_identical_data_and_model(tmp_path):
    for path in sorted(EXAMPLES.glob("*.json")):
        first = load_scene(path)
        text = json.dumps(first.data)
        other = tmp_path / path.parent.name / "elsewhere" / "scene.json"  # relative base dir must not matter
        other.parent.mkdir(parents=True, exist_ok=True)
        other.write_text(text)
        second = load_scene(other)
        assert second.data == first.data, path.name
        assert json.dumps(second.data) == text
        a, b = first.build(), second.build()
        for attr in ("rest_positions", "tets", "mass", "fixed", "volume", "mu", "lam", "is_obstacle"):
            assert np.array_equal(getattr(a.model, attr), getattr(b.model, attr)), (path.name, attr)
        assert np.array_equal(a.state.x, b.state.x) and np.array_equal(a.state.v, b.state.v)
        assert control_summary(a.model) == control_summary(b.model), path.name
        assert (a.dt, a.end_time, a.output, a.name, a.body_names, a.obstacle_names) == \
               (b.dt, b.end_time, b.output, b.name, b.body_names, b.obstacle_names)


def control_summary(model):
    motions = [(type(m).__name__, m.vertices.tolist(), m.time_range,
                [np.asarray(getattr(m, k)).tolist() for k in ("linear_velocity", "angular_velocity", "center",
                                                              "times", "positions") if hasattr(m, k)])
               for m in model.control.motions]
    loads = [(ld.vertices.tolist(), np.asarray(ld.force).tolist(), ld.time_range) for ld in model.control.loads]
    planes = [(p.origin.tolist(), p.normal.tolist()) for p in model.collision_mesh.planes]
    return motions, loads, planes


def test_resolution_is_idempotent_from_a_dict():
    for path in sorted(EXAMPLES.glob("*.json")):
        s = load_scene(path)
        again = Scene.from_dict(json.loads(json.dumps(s.data)), "/unrelated", source="other.json")
        assert again.data == s.data, path.name


def test_ipc_script_dispatch(tmp_path, monkeypatch):
    """.txt files go to ipcsim.scene.ipc_script.parse_script (a stand-in here) and resolve like JSON."""
    calls = []

    def parse_script(path):
        calls.append(Path(path))
        return {"bodies": [{"mesh": {"box": {"size": [1.0, 1.0, 1.0], "resolution": [1, 1, 1]}}}],
                "time": {"end": 1.0, "dt": 0.05}}

    fake = types.ModuleType("ipcsim.scene.ipc_script")
    fake.parse_script = parse_script
    monkeypatch.setitem(sys.modules, "ipcsim.scene.ipc_script", fake)
    script = tmp_path / "fall.txt"
    script.write_text("shapes input 1\n")
    s = load_scene(script)
    assert calls == [script]
    assert s.data["name"] == "fall" and s.data["time"] == {"end": 1.0, "dt": 0.05}
    assert s.data["contact"]["dhat"] == pytest.approx(1e-3 * math.sqrt(3.0), rel=1e-14)


def test_ipc_script_through_the_real_importer(shared_data):
    s = load_scene(shared_data / "ipc" / "input" / "tutorialExamples" / "2cubesFall.txt")
    assert s.data["name"] == "2cubesFall" and len(s.data["bodies"]) == 2
    sim = s.build()
    assert sim.model.n_vertices == 16 and len(sim.model.tets) == 12


def test_seg_and_pt_readers(tmp_path):
    p = tmp_path / "tri.seg"
    p.write_text("# a comment\nv 0 0 0\nv 1 0 0\n\nv 0 0 1\ns 1 2\ns 2 3\ns 3 1\n")
    v, s = read_seg(p)
    assert np.array_equal(v, [[0, 0, 0], [1, 0, 0], [0, 0, 1]])
    assert np.array_equal(s, [[0, 1], [1, 2], [2, 0]])
    assert read_mesh_data(p).kind == "edge"
    q = tmp_path / "tri.pt"
    q.write_text("v 0 0 0\nv 1 0 0\n")
    m = read_mesh_data(q)
    assert m.kind == "point" and m.elements is None and m.vertices.shape == (2, 3)


def test_quads_are_split_into_triangles(tmp_path):
    p = tmp_path / "quad.obj"
    p.write_text("v 0 0 0\nv 1 0 0\nv 1 0 1\nv 0 0 1\nf 1 2 3 4\n")
    m = read_mesh_data(p)
    assert m.kind == "triangle" and m.elements.tolist() == [[0, 1, 2], [0, 2, 3]]


def test_scene_error_is_a_value_error():
    assert issubclass(SceneError, ValueError)
    with pytest.raises(ValueError):
        Scene.from_dict({"bodies": "none"}, ".")


def test_from_dict_accepts_tuples_and_numpy_values_and_does_not_alias_them():
    center = [1.0, 2.0, 3.0]
    data = {"bodies": [{"mesh": {"box": {"size": np.array([1.0, 1.0, 1.0]), "resolution": (1, 1, 1)}},
                        "transform": {"translation": (np.float64(0.5), 0, 0)},
                        "dirichlet": [{"indices": np.arange(2), "center": center}]}],
            "gravity": (0.0, np.float32(-9.5), 0.0)}
    s = Scene.from_dict(data, ".")
    assert s.data["gravity"] == [0.0, -9.5, 0.0]
    assert json.loads(json.dumps(s.data)) == s.data  # plain JSON types only
    center[0] = 99.0
    assert s.data["bodies"][0]["dirichlet"][0]["center"] == [1.0, 2.0, 3.0]


def test_body_mesh_with_a_vertex_outside_every_tet(tmp_path):
    (tmp_path / "extra.vtk").write_text(
        "# vtk DataFile Version 2.0\nt\nASCII\nDATASET UNSTRUCTURED_GRID\nPOINTS 5 double\n"
        "0 0 0\n1 0 0\n0 1 0\n0 0 1\n5 5 5\nCELLS 1 5\n4 0 1 2 3\nCELL_TYPES 1\n10\n")
    with pytest.raises(SceneError, match=r"^<dict>: bodies\[0\]\.mesh: cannot use 'extra\.vtk': vertex 4 belongs "
                                         r"to no tet \(1 such vertices\)$"):
        Scene.from_dict({"bodies": [{"mesh": "extra.vtk"}]}, tmp_path)
