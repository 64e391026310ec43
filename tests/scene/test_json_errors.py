"""Every class of scene error is a one-line SceneError naming the file and the key path (or line:column)."""
import copy
import json

import pytest

from ipcsim.scene import Scene, SceneError, load_scene


def base_scene() -> dict:
    return {
        "bodies": [{"name": "a", "mesh": {"box": {"size": [0.1, 0.1, 0.1], "resolution": [1, 1, 1]}},
                    "transform": {"translation": [0.0, 0.01, 0.0]}}],
        "half_spaces": [{"origin": [0, 0, 0], "normal": [0, 1, 0]}],
    }


def set_path(d: dict, path: list, value):
    for k in path[:-1]:
        d = d[k]
    if value is _DELETE:
        del d[path[-1]]
    else:
        d[path[-1]] = value


_DELETE = object()
BOX = {"box": {"min": [0, 0, 0], "max": [1, 1, 1]}}
BOX_MESH = {"box": {"size": [0.1, 0.1, 0.1], "resolution": [1, 1, 1]}}
KEYFRAMES = {"times": [0.0, 1.0], "translations": [[0, 0, 0], [0, 0.1, 0]]}

# (edit path, value, expected message after "scene.json: ")
CASES = [
    (["bodies", 0, "material"], {"youngs_modulus": -1},
     "bodies[0].material.youngs_modulus: expected a number > 0, got -1"),
    (["bodies", 0, "material"], {"poisson_ratio": 0.5},
     "bodies[0].material.poisson_ratio: expected a number >= 0 and < 0.5, got 0.5"),
    (["bodies", 0, "material"], {"poisson_ratio": -0.1},
     "bodies[0].material.poisson_ratio: expected a number >= 0 and < 0.5, got -0.1"),
    (["bodies", 0, "material"], {"density": True}, "bodies[0].material.density: expected a number > 0, got true"),
    (["bodies", 0, "material"], {"model": "StVK"},
     'bodies[0].material.model: expected one of "NH", "SNH", "FCR", "LCR", "LCR_LAGGED", "LE", got "StVK"'),
    (["time"], {"dt": 0}, "time.dt: expected a number > 0, got 0"),
    (["time"], {"end": "5"}, 'time.end: expected a number > 0, got "5"'),
    (["gravity"], [0, -9.81], "gravity: expected a list of 3 numbers, got [0, -9.81]"),
    (["gravity"], [0, "down", 0], 'gravity[1]: expected a number, got "down"'),
    (["colour"], "red", "colour: unknown key (allowed: bodies, contact, format, friction, gravity, grippers, "
                        "half_spaces, integrator, name, obstacles, output, solver, time)"),
    (["bodies", 0, "materal"], {}, "bodies[0].materal: unknown key (allowed: affine, damping, dirichlet, embedding, "
                                   "initial_velocity, inversion, material, mesh, name, neumann, self_contact, "
                                   "transform)"),
    (["bodies", 0, "damping"], {"stiffness": -0.05}, "bodies[0].damping.stiffness: expected a number >= 0, got -0.05"),
    (["bodies", 0, "damping"], {"beta": 0.05}, "bodies[0].damping.beta: unknown key (allowed: stiffness)"),
    (["bodies", 0, "mesh"], _DELETE, "bodies[0].mesh: missing required key"),
    (["bodies"], [], "bodies: expected a list of bodies (at least 1), got []"),
    (["bodies", 0, "mesh"], 3, 'bodies[0].mesh: expected a mesh file path, {"box": {"size": [sx, sy, sz], ...}} '
                               'or {"half_ellipsoid": {"semi_axes": [a, b], "depth": d, ...}}, got 3'),
    (["bodies", 0, "mesh", "box", "size"], [0.1, 0.1], "bodies[0].mesh.box.size: expected a list of 3 numbers > 0, "
                                                       "got [0.1, 0.1]"),
    (["bodies", 0, "transform", "scale"], 0, "bodies[0].transform.scale: expected a number > 0 or a list of 3 "
                                             "numbers > 0, got 0"),
    (["bodies", 0, "transform", "rotation"], [[1, 0, 0], [0, 1, 0], [0, 0, 2]],
     "bodies[0].transform.rotation: expected a rotation matrix (orthonormal rows, det +1)"),
    (["bodies", 0, "transform", "rotation"], [[1, 0, 0], [0, 1, 0], [0, 0, -1]],
     "bodies[0].transform.rotation: expected a rotation matrix (orthonormal rows, det +1)"),
    (["contact"], {"dhat": 1e-3, "dhat_relative": 1e-3}, "contact: give either 'dhat' or 'dhat_relative', not both"),
    (["contact"], {"kappa": 0}, "contact.kappa: expected a number > 0 or null, got 0"),
    (["friction"], {"eps_v": 1e-3, "eps_v_relative": 1e-3},
     "friction: give either 'eps_v' or 'eps_v_relative', not both"),
    (["friction"], {"mu": -0.1}, "friction.mu: expected a number >= 0, got -0.1"),
    (["friction"], {"lagging_iterations": -1}, "friction.lagging_iterations: expected an integer >= 0, got -1"),
    (["solver"], {"max_newton_iterations": 2.5}, "solver.max_newton_iterations: expected an integer >= 1, got 2.5"),
    (["solver"], {"linear_solver": "mkl"}, 'solver.linear_solver: expected one of "auto", "pardiso", "supernodal", '
                                           '"scipy", got "mkl"'),
    (["integrator"], {"type": "rk4"}, 'integrator.type: expected one of "implicit_euler", "newmark", '
                                      '"quasi_static", got "rk4"'),
    (["integrator"], {"beta": 0.3}, "integrator.beta: only used by the newmark integrator"),
    (["integrator"], {"type": "newmark", "beta": 0}, "integrator.beta: expected a number > 0 and <= 1.0, got 0"),
    (["output"], {"every": 0}, "output.every: expected an integer >= 1, got 0"),
    (["format"], "ipcsim-scene/2", 'format: expected "ipcsim-scene/1", got "ipcsim-scene/2"'),
    (["bodies", 0, "dirichlet"], [{"velocity": [0, 0, 0]}],
     "bodies[0].dirichlet[0]: give exactly one of 'box' and 'indices'"),
    (["bodies", 0, "dirichlet"], [{**BOX, "indices": [0]}],
     "bodies[0].dirichlet[0]: give exactly one of 'box' and 'indices'"),
    (["bodies", 0, "dirichlet"], [{**BOX, "time_range": [1.0, 0.5]}],
     "bodies[0].dirichlet[0].time_range: end before start, got [1.0, 0.5]"),
    (["bodies", 0, "dirichlet"], [{**BOX, "time_range": [1.0]}],
     "bodies[0].dirichlet[0].time_range: expected [start, end] in seconds (start >= 0, end >= start or null), "
     "got [1.0]"),
    (["bodies", 0, "dirichlet"], [{"box": {"min": [0, 2, 0], "max": [1, 1, 1]}}],
     "bodies[0].dirichlet[0].box: min > max in some axis: min [0, 2, 0], max [1, 1, 1]"),
    (["bodies", 0, "dirichlet"], [{"indices": [0, -1]}],
     "bodies[0].dirichlet[0].indices[1]: expected an integer >= 0, got -1"),
    (["bodies", 0, "neumann"], [{**BOX, "force": [0, 1, 0], "acceleration": [0, 1, 0]}],
     "bodies[0].neumann[0]: give exactly one of 'acceleration' and 'force'"),
    (["bodies", 0, "neumann"], [{**BOX}], "bodies[0].neumann[0]: give exactly one of 'acceleration' and 'force'"),
    (["half_spaces"], [{"friction": 0.1}, {"friction": -0.2}],
     "half_spaces[1].friction: expected a number >= 0, got -0.2"),
    (["obstacles"], [{"mesh": BOX_MESH, "friction": -1}], "obstacles[0].friction: expected a number >= 0 or null, got -1"),
    (["friction"], {"pairs": [{"bodies": ["a"], "mu": 0.1}]},
     'friction.pairs[0].bodies: expected a list of 2 names of bodies or obstacles, got ["a"]'),
    (["half_spaces"], [{"normal": [0, 0, 0]}], "half_spaces[0].normal: expected a nonzero normal, got [0, 0, 0]"),
    (["obstacles"], [{"mesh": "plate.obj", "keyframes": {"files": ["a.seg"], "dt": 0.1}, "velocity": [1, 0, 0]}],
     "obstacles[0].velocity: a keyframed obstacle follows its keyframes: give no velocity"),
    (["obstacles"], [{"mesh": "plate.obj", "keyframes": {"files": ["a.seg"], "dt": 0.1}, "time_range": [0, 1]}],
     "obstacles[0].time_range: a keyframed obstacle follows its keyframes: give no time_range"),
    (["obstacles"], [{"mesh": "plate.obj", "keyframes": {"files": []}}],
     "obstacles[0].keyframes.files: expected a list of file paths (at least 1), got []"),
    # embedded and affine bodies
    (["bodies", 0, "embedding"], {}, "bodies[0].embedding: give exactly one of 'resolution', 'vertices' and 'mesh'"),
    (["bodies", 0, "embedding"], {"resolution": 0.05, "vertices": 10},
     "bodies[0].embedding: give exactly one of 'resolution', 'vertices' and 'mesh'"),
    (["bodies", 0, "embedding"], {"resolution": -1}, "bodies[0].embedding.resolution: expected a number > 0, got -1"),
    (["bodies", 0, "embedding"], {"vertices": 2}, "bodies[0].embedding.vertices: expected an integer >= 4, got 2"),
    (["bodies", 0, "embedding"], {"resolution": 0.05, "mass": "diagonal"},
     'bodies[0].embedding.mass: expected one of "lumped", "consistent", got "diagonal"'),
    (["bodies", 0, "embedding"], {"mesh": {"box": {"size": [1, 1]}}},
     "bodies[0].embedding.mesh.box.size: expected a list of 3 numbers > 0, got [1, 1]"),
    (["bodies", 0, "embedding"], {"resolution": 0.05, "colour": "red"},
     "bodies[0].embedding.colour: unknown key (allowed: mass, mesh, resolution, vertices)"),
    (["bodies", 0, "affine"], {"stiffness": 0}, "bodies[0].affine.stiffness: expected a number > 0, got 0"),
    (["bodies", 0, "affine"], {"fixed": 1}, "bodies[0].affine.fixed: expected true or false, got 1"),
    (["bodies", 0], {"mesh": BOX_MESH, "embedding": {"resolution": 0.05}, "affine": {}},
     "bodies[0]: give either 'embedding' or 'affine', not both"),
    (["bodies", 0], {"mesh": BOX_MESH, "affine": {}, "material": {"density": 5, "youngs_modulus": 1e6}},
     "bodies[0].material.youngs_modulus: an affine body takes only 'density' from its material (its stiffness is "
     "'affine.stiffness' [Pa])"),
    # keyframed Dirichlet sets
    (["bodies", 0, "dirichlet"], [{**BOX, "keyframes": KEYFRAMES, "velocity": [0, 0, 0]}],
     "bodies[0].dirichlet[0].velocity: a keyframed Dirichlet set follows its keyframes: give no velocity"),
    (["bodies", 0, "dirichlet"], [{**BOX, "keyframes": KEYFRAMES, "angular_velocity": [0, 1, 0]}],
     "bodies[0].dirichlet[0].angular_velocity: a keyframed Dirichlet set follows its keyframes: give no "
     "angular_velocity"),
    (["bodies", 0, "dirichlet"], [{**BOX, "keyframes": KEYFRAMES, "time_range": [0, None]}],
     "bodies[0].dirichlet[0].time_range: a keyframed Dirichlet set follows its keyframes: give no time_range"),
    (["bodies", 0, "dirichlet"], [{**BOX, "keyframes": {"times": [0, 1, 1], "translations": [[0, 0, 0]] * 3}}],
     "bodies[0].dirichlet[0].keyframes.times: expected strictly increasing times [s], got [0, 1, 1]"),
    (["bodies", 0, "dirichlet"], [{**BOX, "keyframes": {"times": [0, 1], "translations": [[0, 0, 0]]}}],
     "bodies[0].dirichlet[0].keyframes.translations: expected one entry per time (2), got 1"),
    (["bodies", 0, "dirichlet"], [{**BOX, "keyframes": {"times": [0, 1]}}],
     "bodies[0].dirichlet[0].keyframes: give exactly one of 'translations' and 'positions'"),
    (["bodies", 0, "dirichlet"], [{**BOX, "keyframes": {"translations": [[0, 0, 0]]}}],
     "bodies[0].dirichlet[0].keyframes.times: missing required key"),
    (["bodies", 0, "dirichlet"], [{**BOX, "keyframes": {"times": [-1], "translations": [[0, 0, 0]]}}],
     "bodies[0].dirichlet[0].keyframes.times[0]: expected a number >= 0, got -1"),
    (["bodies", 0, "dirichlet"], [{**BOX, "keyframes": {"times": [0], "translations": [[0, 0]]}}],
     "bodies[0].dirichlet[0].keyframes.translations[0]: expected a list of 3 numbers, got [0, 0]"),
    (["bodies", 0, "dirichlet"], [{"indices": [0, 1], "keyframes": {"times": [0, 1], "positions": [
        [[0, 0, 0], [0, 0, 0]], [[0, 0, 0]]]}}],
     "bodies[0].dirichlet[0].keyframes.positions[1]: 1 positions, frame 0 has 2"),
    (["bodies", 0, "dirichlet"], [{"indices": [0, 1], "keyframes": {"times": [0], "positions": [[[0, 0, 0]]]}}],
     "bodies[0].dirichlet[0].keyframes.positions[0]: 1 positions, but the set holds 2 vertices"),
    # generated half ellipsoids
    (["bodies", 0, "mesh"], {"half_ellipsoid": {"semi_axes": [0.1], "depth": 0.1}},
     "bodies[0].mesh.half_ellipsoid.semi_axes: expected a list of 2 numbers > 0, got [0.1]"),
    (["bodies", 0, "mesh"], {"half_ellipsoid": {"semi_axes": [0.1, 0.1]}},
     "bodies[0].mesh.half_ellipsoid.depth: missing required key"),
    (["bodies", 0, "mesh"], {"half_ellipsoid": {"semi_axes": [0.1, 0.1], "depth": 0.05, "layers": [0.3, 0.5]}},
     "bodies[0].mesh.half_ellipsoid.layers: expected decreasing scales, got [0.3, 0.5]"),
    (["bodies", 0, "mesh"], {"half_ellipsoid": {"semi_axes": [0.1, 0.1], "depth": 0.05, "layers": [1.0]}},
     "bodies[0].mesh.half_ellipsoid.layers[0]: expected a number > 0 and < 1, got 1.0"),
    (["bodies", 0, "mesh"], {"half_ellipsoid": {"semi_axes": [0.1, 0.1], "depth": 0.05, "dome": [5, 2]}},
     "bodies[0].mesh.half_ellipsoid.dome[1]: expected an integer >= 3, got 2"),
    (["obstacles"], [{"mesh": {"half_ellipsoid": {"semi_axes": [0.1, 0.1], "depth": 0.05, "rim": 2}}}],
     "obstacles[0].mesh.half_ellipsoid.rim: expected an integer >= 3, got 2"),
    (["time"], {"dt": float("nan")}, "time.dt: expected a finite number, got nan"),
    (["gravity"], [0, float("-inf"), 0], "gravity[1]: expected a finite number, got -inf"),
]


@pytest.mark.parametrize("path,value,expected", CASES, ids=[c[2].split(":")[0] + f"-{i}" for i, c in enumerate(CASES)])
def test_schema_error_names_key_path(path, value, expected):
    data = base_scene()
    set_path(data, path, value if value is _DELETE else copy.deepcopy(value))
    with pytest.raises(SceneError) as info:
        Scene.from_dict(data, ".", source="scene.json")
    message = str(info.value)
    assert "\n" not in message
    assert message == "scene.json: " + expected


def test_duplicate_names_including_defaults():
    data = base_scene()
    data["bodies"].append({"mesh": data["bodies"][0]["mesh"], "name": "a"})
    with pytest.raises(SceneError, match=r"^scene\.json: bodies\[1\]\.name: duplicate name \"a\" \(also bodies\[0\]\)$"):
        Scene.from_dict(data, ".", source="scene.json")
    data["bodies"][1]["name"] = "body2"  # a later body's default name "body2" clashes with it
    data["bodies"].append({"mesh": data["bodies"][0]["mesh"]})
    with pytest.raises(SceneError, match=r"^scene\.json: bodies\[2\]\.name: duplicate name 'body2'"):
        Scene.from_dict(data, ".", source="scene.json")


def test_selection_errors_are_found_at_load_time():
    data = base_scene()
    data["bodies"][0]["dirichlet"] = [{"indices": [0, 8]}]  # a 1x1x1 box mesh has 8 vertices: 0..7
    with pytest.raises(SceneError, match=r"^scene\.json: bodies\[0\]\.dirichlet\[0\]\.indices: vertex index 8 out "
                                         r"of range \(the mesh has 8 vertices\)$"):
        Scene.from_dict(data, ".", source="scene.json")
    data["bodies"][0]["dirichlet"] = [{"box": {"min": [0.4, 0.4, 0.4], "max": [0.6, 0.6, 0.6]}}]
    with pytest.raises(SceneError, match=r"^scene\.json: bodies\[0\]\.dirichlet\[0\]\.box: the box \(relative to "
                                         r"the body's bounding box\) holds no vertex of the body$"):
        Scene.from_dict(data, ".", source="scene.json")
    data["bodies"][0]["dirichlet"] = [{"box": {"min": [0, 0, 0], "max": [1, 0.005, 1], "relative": False}}]
    with pytest.raises(SceneError, match=r"bodies\[0\]\.dirichlet\[0\]\.box: the box \(in world coordinates"):
        Scene.from_dict(data, ".", source="scene.json")  # the body sits at y >= 0.01
    data["bodies"][0]["dirichlet"] = [{"box": {"min": [0, 0, 0], "max": [1, 0.015, 1], "relative": False}}]
    Scene.from_dict(data, ".", source="scene.json")  # its bottom face at y = 0.01 is inside


def test_selections_of_embedded_and_affine_bodies_pick_nodes():
    data = base_scene()
    data["bodies"][0].update(embedding={"resolution": 0.05}, dirichlet=[{"indices": [99]}])
    with pytest.raises(SceneError, match=r"^scene\.json: bodies\[0\]\.dirichlet\[0\]\.indices: node index 99 out of "
                                         r"range \(the body has \d+ nodes, the vertices of its coarse mesh\)$"):
        Scene.from_dict(data, ".", source="scene.json")
    data = base_scene()
    data["bodies"][0].update(affine={}, neumann=[{"indices": [4], "force": [0, 1, 0]}])
    with pytest.raises(SceneError, match=r"^scene\.json: bodies\[0\]\.neumann\[0\]\.indices: node index 4 out of "
                                         r"range \(the body has 4 nodes, the 4 corners of its enclosing tet\)$"):
        Scene.from_dict(data, ".", source="scene.json")
    data["bodies"][0]["neumann"] = [{"box": {"min": [0.4, 0.4, 0.4], "max": [0.6, 0.6, 0.6]}, "force": [0, 1, 0]}]
    with pytest.raises(SceneError, match=r"^scene\.json: bodies\[0\]\.neumann\[0\]\.box: the box \(relative to the "
                                         r"bounding box of the body's nodes\) holds no node of the body \(the 4 "
                                         r"corners of its enclosing tet\)$"):
        Scene.from_dict(data, ".", source="scene.json")
    data["bodies"][0]["neumann"] = [{"indices": [0, 1, 2, 3], "force": [0, 1, 0]}]
    Scene.from_dict(data, ".", source="scene.json")


def test_missing_coarse_mesh_and_a_coarse_mesh_without_tets(tmp_path):
    data = base_scene()
    data["bodies"][0]["embedding"] = {"mesh": "coarse.msh"}
    with pytest.raises(SceneError) as info:
        load_scene(write(tmp_path, json.dumps(data)))
    assert str(info.value) == (f"{tmp_path / 'scene.json'}: bodies[0].embedding.mesh: cannot read 'coarse.msh': "
                               "no such file")
    (tmp_path / "tri.obj").write_text("v 0 0 0\nv 1 0 0\nv 0 0 1\nf 1 2 3\n")
    data["bodies"][0]["embedding"] = {"mesh": "tri.obj"}
    with pytest.raises(SceneError, match=r": bodies\[0\]\.embedding\.mesh: cannot read 'tri\.obj': holds no "
                                         r"tetrahedra \(found 1 triangles\); a coarse mesh needs tets$"):
        load_scene(write(tmp_path, json.dumps(data)))


# ---------------------------------------------------------------------------------------------- JSON files
def write(tmp_path, text: str, name="scene.json"):
    p = tmp_path / name
    p.write_text(text)
    return p


@pytest.mark.parametrize("text,line,col", [
    ('{\n  "bodies": [\n    {"mesh": "a.msh",}\n  ]\n}\n', 3, 22),
    ('{"bodies": [}', 1, 13),
    ('', 1, 1),
])
def test_malformed_json_names_line_and_column(tmp_path, text, line, col):
    p = write(tmp_path, text)
    with pytest.raises(SceneError) as info:
        load_scene(p)
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith(f"{p}:{line}:{col}: invalid JSON: ")


def test_nan_literal_in_file_is_rejected_with_key_path(tmp_path):
    data = base_scene()
    text = json.dumps(data)[:-1] + ', "time": {"end": NaN, "dt": 0.01}}'
    with pytest.raises(SceneError, match=r": time\.end: expected a finite number, got nan$"):
        load_scene(write(tmp_path, text))
    text = json.dumps(data)[:-1] + ', "time": {"end": 1.0, "dt": Infinity}}'
    with pytest.raises(SceneError, match=r": time\.dt: expected a finite number, got inf$"):
        load_scene(write(tmp_path, text))


def test_duplicate_key_and_top_level_type(tmp_path):
    with pytest.raises(SceneError, match=r"duplicate key 'time' in a JSON object$"):
        load_scene(write(tmp_path, '{"time": {}, "time": {}, "bodies": []}'))
    with pytest.raises(SceneError, match=r"scene\.json: expected a JSON object at the top level, got \[1, 2\]$"):
        load_scene(write(tmp_path, "[1, 2]"))


def test_scene_file_errors(tmp_path):
    with pytest.raises(SceneError, match=r"missing\.json: cannot read scene file: No such file"):
        load_scene(tmp_path / "missing.json")
    with pytest.raises(SceneError, match=r"scene\.yaml: unknown scene file type '\.yaml'"):
        load_scene(write(tmp_path, "bodies: []", "scene.yaml"))
    p = tmp_path / "latin1.json"
    p.write_bytes(b'{"name": "caf\xe9"}')
    with pytest.raises(SceneError, match=r"latin1\.json: not UTF-8 text"):
        load_scene(p)


# ---------------------------------------------------------------------------------------------- mesh files
def scene_with_mesh(tmp_path, mesh: str, where="bodies") -> str:
    data = base_scene()
    if where == "bodies":
        data["bodies"].append({"mesh": mesh})
    else:
        data["obstacles"] = [{"mesh": mesh}]
    return write(tmp_path, json.dumps(data))


def test_missing_mesh(tmp_path):
    with pytest.raises(SceneError) as info:
        load_scene(scene_with_mesh(tmp_path, "meshes/x.msh"))
    assert str(info.value) == f"{tmp_path / 'scene.json'}: bodies[1].mesh: cannot read 'meshes/x.msh': no such file"


def test_unknown_mesh_format(tmp_path):
    (tmp_path / "x.abc").write_text("v 0 0 0\n")
    with pytest.raises(SceneError, match=r": obstacles\[0\]\.mesh: cannot read 'x\.abc': unknown mesh format '\.abc'"):
        load_scene(scene_with_mesh(tmp_path, "x.abc", "obstacles"))


def test_body_mesh_without_tets(tmp_path):
    (tmp_path / "tri.obj").write_text("v 0 0 0\nv 1 0 0\nv 0 0 1\nf 1 2 3\n")
    with pytest.raises(SceneError, match=r": bodies\[1\]\.mesh: cannot read 'tri\.obj': holds no tetrahedra "
                                         r"\(found 1 triangles\); a full-space body needs a tet mesh \(embedded and "
                                         r"affine bodies may be closed triangle surfaces\)$"):
        load_scene(scene_with_mesh(tmp_path, "tri.obj"))


def test_malformed_mesh_files(tmp_path):
    (tmp_path / "bad.msh").write_text("$MeshFormat\n4.1 0 8\n$EndMeshFormat\n$Nodes\nnonsense\n")
    with pytest.raises(SceneError) as info:
        load_scene(scene_with_mesh(tmp_path, "bad.msh"))
    message = str(info.value)
    assert "\n" not in message and message.startswith(f"{tmp_path / 'scene.json'}: bodies[1].mesh: cannot read "
                                                      "'bad.msh': ")
    (tmp_path / "bad.seg").write_text("v 0 0 0\nv 1 0 oops\n")
    with pytest.raises(SceneError, match=r"obstacles\[0\]\.mesh: cannot read 'bad\.seg': line 2: expected "
                                         r"'v x y z' or 's i j', got 'v 1 0 oops'$"):
        load_scene(scene_with_mesh(tmp_path, "bad.seg", "obstacles"))
    (tmp_path / "range.seg").write_text("v 0 0 0\nv 1 0 0\ns 1 2\ns 2 3\n")
    with pytest.raises(SceneError, match=r"cannot read 'range\.seg': line 4: segment refers to a vertex outside "
                                         r"1\.\.2$"):
        load_scene(scene_with_mesh(tmp_path, "range.seg", "obstacles"))


def test_keyframe_files_must_match_the_obstacle(tmp_path):
    (tmp_path / "a.seg").write_text("v 0 1 0\nv 1 1 0\ns 1 2\n")
    (tmp_path / "b.seg").write_text("v 0 1 0\nv 1 1 0\nv 2 1 0\ns 1 2\n")
    data = base_scene()
    data["obstacles"] = [{"mesh": "a.seg", "keyframes": {"files": ["a.seg", "b.seg", "c.seg"], "dt": 0.1}}]
    with pytest.raises(SceneError, match=r"obstacles\[0\]\.keyframes\.files\[1\]: 'b\.seg' has 3 vertices, the "
                                         r"obstacle mesh 2$"):
        load_scene(write(tmp_path, json.dumps(data)))
    (tmp_path / "b.seg").write_text("v 0 1 0\nv 1 1 0\ns 1 2\n")
    with pytest.raises(SceneError, match=r"obstacles\[0\]\.keyframes\.files\[2\]: cannot read 'c\.seg': no such file$"):
        load_scene(write(tmp_path, json.dumps(data)))
