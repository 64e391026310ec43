"""The IPC 2020 script importer: every tutorial script runs; exact values derived by hand from IPC's semantics."""
import json
import math
import warnings

import ipctk
import numpy as np
import pytest

from ipcsim.contact.intersection import has_intersections
from _tet_checks import count_inverted_tets
from ipcsim.scene import SceneError, load_scene
from ipcsim.scene.ipc_script import IPCScriptWarning, parse_script

pytestmark = pytest.mark.filterwarnings("ignore::ipcsim.scene.ipc_script.IPCScriptWarning")

SQ11 = math.sqrt(11.0)  # bbox diagonal of two unit cubes at y in [1, 2] and [3, 4]


def _tutorials(shared):
    return sorted((shared / "ipc" / "input" / "tutorialExamples").rglob("*.txt"))


def _script(shared, name):
    return shared / "ipc" / "input" / "tutorialExamples" / name


def _build(path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", IPCScriptWarning)
        return load_scene(path).build()


def _step(sim, n):
    state = sim.state
    for _ in range(n):
        new = state.copy()
        stats = sim.solver.step(state, new, None, sim.dt)
        state = new
    return state, stats


TUTORIALS = [
    "2cubesFall.txt", "2cubesFall_full.txt", "2cubesFall_heavyTop.txt", "2cubesFall_largerDt.txt",
    "2cubesFall_smallerDt.txt", "2cubesFall_stiffer.txt", "BC/2cubesFall_DBC.txt",
    "BC/2cubesFall_DBC_timeRange.txt", "BC/2cubesFall_NBC.txt", "BC/2cubesFall_NBC_timeRange.txt",
    "MCO/2cubesFall_rotateCO.txt", "MCO/2cubesFall_rotateCO_closedSurface.txt", "MCO/2cubesFall_rotateCO_edges.txt",
    "MCO/2cubesFall_rotateCO_points.txt", "MCO/2cubesFall_rotateCO_triangle.txt", "MCO/2cubesFall_translateCO.txt",
    "advanced/2cubesFall_BE.txt", "advanced/2cubesFall_NM.txt", "advanced/2cubesFall_attach.txt",
    "advanced/2cubesFall_rotateCO_meshSeq.txt", "initVel/2cubesFall_initRot.txt", "initVel/2cubesFall_initVel.txt",
]


def test_the_list_covers_every_tutorial_script(shared_data):
    found = {p.relative_to(shared_data / "ipc/input/tutorialExamples").as_posix() for p in _tutorials(shared_data)}
    assert found == set(TUTORIALS)


@pytest.mark.parametrize("name", TUTORIALS)
def test_tutorial_script_builds_and_steps_intersection_free(shared_data, name):
    path = _script(shared_data, name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", IPCScriptWarning)
        data = parse_script(path)
    assert json.loads(json.dumps(data)) == data  # plain JSON
    sim = _build(path)
    state, stats = _step(sim, 2)
    mesh = sim.model.collision_mesh
    assert stats.converged
    xs = mesh.select_positions(state.x)
    assert not has_intersections(mesh, xs)
    tk = ipctk.CollisionMesh(mesh.rest_positions, mesh.edges.astype(np.int32), mesh.faces.astype(np.int32))
    assert not ipctk.has_intersections(tk, xs)
    assert count_inverted_tets(state.x, sim.model.tets) == 0
    assert state.t == pytest.approx(2 * sim.dt)


def test_2cubesfall_defaults(shared_data):
    d = parse_script(_script(shared_data, "2cubesFall.txt"))
    assert d["time"] == {"end": 5.0, "dt": 0.025}
    assert d["gravity"] == [0.0, -9.81, 0.0]
    assert d["integrator"] == {"type": "implicit_euler"}
    assert d["contact"]["dhat"] == pytest.approx(1e-3 * SQ11, rel=1e-12)
    assert d["friction"] == {"mu": 0.1, "eps_v": pytest.approx(1e-3 * SQ11, rel=1e-12), "lagging_iterations": 1}
    assert d["half_spaces"] == [{"origin": [0.0, 0.0, 0.0], "normal": [0.0, 1.0, 0.0], "friction": 0.1}]
    assert [b["transform"]["translation"] for b in d["bodies"]] == [[0.0, 3.0, 0.0], [0.0, 1.0, 0.0]]
    for b in d["bodies"]:
        assert b["material"] == {"model": "NH", "density": 1000.0, "youngs_modulus": 1e5, "poisson_ratio": 0.4}
        assert b["mesh"] == str(shared_data.resolve() / "ipc/input/tetMeshes/cube.msh")
    assert d["obstacles"] == []


def test_material_time_stiffness_and_newmark(shared_data):
    heavy = parse_script(_script(shared_data, "2cubesFall_heavyTop.txt"))
    assert heavy["bodies"][0]["material"]["density"] == 3000.0
    assert heavy["bodies"][0]["material"]["youngs_modulus"] == 1e8
    assert heavy["bodies"][1]["material"]["density"] == 1000.0
    nm = parse_script(_script(shared_data, "advanced/2cubesFall_NM.txt"))
    assert nm["integrator"] == {"type": "newmark", "beta": 0.25, "gamma": 0.5, "damping_ratio": 0.1}
    assert nm["time"] == {"end": 5.0, "dt": 0.005}
    assert nm["bodies"][0]["material"]["youngs_modulus"] == 1e6
    assert nm["half_spaces"][0]["friction"] == 0.0 and nm["friction"]["mu"] == 0.0


def test_dbc_time_ranges_select_the_cube_edges(shared_data):
    path = _script(shared_data, "BC/2cubesFall_DBC_timeRange.txt")
    dbc = parse_script(path)["bodies"][1]["dirichlet"]
    assert [d["velocity"] for d in dbc] == [[-0.2, 0.0, -0.2], [0.0] * 3, [0.0] * 3, [0.2, 0.0, 0.2]]
    assert [d["time_range"] for d in dbc] == [[0.0, 2.5], [2.5, None], [0.0, 2.5], [2.5, None]]
    assert dbc[0]["box"] == {"min": [-0.1, -0.1, -0.1], "max": [0.1, 1.1, 0.1], "relative": True}
    sim = _build(path)
    motions = [m for m in sim.model.control.motions if not m.obstacle]
    x0 = sim.state.x
    # box (-0.1..0.1, *, -0.1..0.1) of the cube at y in [1, 2]: its two vertices with x = z = 0
    np.testing.assert_allclose(np.sort(x0[motions[0].vertices][:, 1]), [1.0, 2.0])
    assert np.all(x0[motions[0].vertices][:, [0, 2]] == 0.0)
    assert np.all(x0[motions[2].vertices][:, [0, 2]] == 1.0)
    assert motions[0].is_active(2.475, 2.5) and not motions[0].is_active(2.5, 2.525)
    assert motions[1].is_active(2.5, 2.525) and not motions[1].is_active(2.475, 2.5)
    m, t = sim.model, 0.0
    for _ in range(200):  # with the solver's accumulated time t += h, the edge is held in every step
        held = m.control.prescribed_mask(m.fixed, t, t + 0.025)
        assert held[motions[0].vertices].all() and held[motions[2].vertices].all()
        t += 0.025


def test_nbc_is_an_acceleration_times_vertex_mass(shared_data):
    path = _script(shared_data, "BC/2cubesFall_NBC.txt")
    nbc = parse_script(path)["bodies"][1]["neumann"]
    assert [n["acceleration"] for n in nbc] == [[-50.0, 0.0, -50.0], [50.0, 0.0, 50.0]]
    assert [n["time_range"] for n in nbc] == [[0.0, None], [0.0, None]]
    sim = _build(path)
    m = sim.model
    f = m.control.external_forces(m.n_vertices, 0.025)
    loaded = np.flatnonzero(np.any(f != 0, axis=1))
    assert len(loaded) == 4
    x0 = sim.state.x
    for i in loaded:
        sign = 1.0 if x0[i, 0] == 1.0 else -1.0
        np.testing.assert_allclose(f[i], sign * m.mass[i] * np.array([50.0, 0.0, 50.0]), rtol=1e-14)
    path = _script(shared_data, "BC/2cubesFall_NBC_timeRange.txt")
    ranges = parse_script(path)["bodies"][1]["neumann"]
    # IPC: active in the steps that START in [t_begin, t_end); ipcsim tests the step END time
    assert [n["time_range"] for n in ranges] == [[0.0, 1.0125], [1.0125, None]]
    assert [n["acceleration"] for n in ranges] == [[-5.0, 0.0, -5.0], [5.0, 0.0, 5.0]]
    m = _build(path).model
    active, t = [], 0.0
    for _ in range(80):  # the solver accumulates t += h, h = 0.025
        t += 0.025
        f = m.control.external_forces(m.n_vertices, t)
        active.append((bool(np.any(f[:, 0] < 0)), bool(np.any(f[:, 0] > 0))))
    assert active == [(True, False)] * 40 + [(False, True)] * 40  # steps starting at 0..0.975 | 1.0..


def test_rotating_and_translating_obstacles(shared_data):
    d = parse_script(_script(shared_data, "MCO/2cubesFall_rotateCO.txt"))
    (obs,) = d["obstacles"]
    assert obs["mesh"].endswith("tetMeshes/cube.msh")
    np.testing.assert_allclose(obs["angular_velocity"], np.radians([10.0, 90.0, 0.0]), rtol=1e-15)
    assert obs["center"] == "bbox"  # IPC: about the bounding-box center at each step start
    assert obs["velocity"] == [0.0] * 3
    tr = parse_script(_script(shared_data, "MCO/2cubesFall_translateCO.txt"))["obstacles"][0]
    assert tr["velocity"] == [1.0, 1.0, 1.0] and tr["angular_velocity"] == [0.0] * 3


def test_codimensional_obstacles_and_their_bbox(shared_data):
    edges = parse_script(_script(shared_data, "MCO/2cubesFall_rotateCO_edges.txt"))
    (obs,) = edges["obstacles"]
    assert obs["mesh"].endswith("triangle.seg") and obs["transform"]["scale"] == 2.0
    # dHat is relative to the tet shapes only (IPC's matSpaceBBoxSize2(3)): the unit cube at y in [3, 4]
    assert edges["contact"]["dhat"] == pytest.approx(1e-3 * math.sqrt(3.0), rel=1e-12)
    sim = _build(_script(shared_data, "MCO/2cubesFall_rotateCO_edges.txt"))
    mesh = sim.model.collision_mesh
    obstacle_edges = mesh.edges[mesh.is_obstacle[mesh.edges].all(axis=1)]
    assert len(obstacle_edges) == 3 and not mesh.is_obstacle[mesh.faces].any()
    pts = _build(_script(shared_data, "MCO/2cubesFall_rotateCO_points.txt")).model.collision_mesh
    assert pts.is_obstacle.sum() == 3 and not pts.is_obstacle[pts.edges].any()


def test_mesh_sequence_file_k_is_reached_at_step_k_plus_one(shared_data):
    path = _script(shared_data, "advanced/2cubesFall_rotateCO_meshSeq.txt")
    (obs,) = parse_script(path)["obstacles"]
    seq = shared_data.resolve() / "ipc/input/segMeshes/sequence"
    files = obs["keyframes"]["files"]
    assert obs["keyframes"]["dt"] == 0.025
    assert files[0] == files[1] == str(seq / "0.seg")
    assert files[2:5] == [str(seq / f"{k}.seg") for k in (1, 2, 3)]
    assert len(files) == 202
    from ipcsim.scene.mesh_files import read_seg

    sim = _build(path)
    obstacle = np.flatnonzero(sim.model.is_obstacle)
    state, _ = _step(sim, 2)
    np.testing.assert_allclose(state.x[obstacle], read_seg(seq / "1.seg")[0], rtol=0, atol=1e-12)


def test_initial_velocity_is_about_the_bounding_box_center(shared_data, tmp_path):
    d = parse_script(_script(shared_data, "initVel/2cubesFall_initRot.txt"))
    assert d["bodies"][0]["initial_velocity"]["angular"] == [0.0, math.pi / 2, 0.0]
    assert d["bodies"][0]["initial_velocity"]["linear"] == [0.0, 0.0, 0.0]  # cube: centroid = bbox center
    tet = shared_data / "ipc/input/tetMeshes/tet.msh"  # centroid (0.25, 0.25, 0.25), bbox center (0.5, 0.5, 0.5)
    script = tmp_path / "tet.txt"
    script.write_text(f"shapes input 1\n{tet} 0 1 0  0 0 0  1 1 1  initVel 1 0 0  0 0 90\n")
    sim = _build(script)
    x, v = sim.state.x, sim.state.v
    w = np.array([0.0, 0.0, math.pi / 2])
    expected = np.array([1.0, 0.0, 0.0]) + np.cross(w, x - np.array([0.5, 1.5, 0.5]))
    np.testing.assert_allclose(v, expected, atol=1e-14)


def _write(tmp_path, text, name="scene.txt"):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_rotation_order_is_x_then_y_then_z_applied_last_first(shared_data, tmp_path):
    cube = shared_data / "ipc/input/tetMeshes/cube.msh"
    path = _write(tmp_path, f"shapes input 1\n{cube} 5 0 0  90 0 90  1 1 1\n")
    rot = parse_script(path)["bodies"][0]["transform"]["rotation"]
    assert isinstance(rot[0], list)  # two angles: IPC's Rx @ Ry @ Rz written as a matrix
    x = _build(path).state.x
    # IPC: x = Rx(90) Ry(0) Rz(90) p + t; p = (1, 0, 0) -> Rz -> (0, 1, 0) -> Rx -> (0, 0, 1)
    assert np.any(np.all(np.abs(x - [5.0, 0.0, 1.0]) < 1e-12, axis=1))
    assert not np.any(np.all(np.abs(x - [5.0, 1.0, 0.0]) < 1e-12, axis=1))


def test_size_and_rotate_model_fold_into_the_transforms(shared_data, tmp_path):
    cube = shared_data / "ipc/input/tetMeshes/cube.msh"
    path = _write(tmp_path, f"shapes input 2\n{cube} 0 3 0 0 0 0 1 1 1\n{cube} 0 1 0 0 0 0 1 1 1\nsize 2\n")
    d = parse_script(path)
    x = _build(path).state.x
    np.testing.assert_allclose(x.min(axis=0), [0.0, 0.0, 0.0], atol=1e-15)
    np.testing.assert_allclose(x.max(axis=0), [2 / 3, 2.0, 2 / 3], rtol=1e-14)
    assert d["contact"]["dhat"] == pytest.approx(1e-3 * SQ11 * 2 / 3, rel=1e-12)
    # rotateModel turns about IPC's center (max - min) / 2 = (0.5, 0.5, 0.5), not the bbox center (2.5, ...)
    path = _write(tmp_path, f"shapes input 1\n{cube} 2 0 0 0 0 0 1 1 1\nrotateModel 0 1 0 90\n", "rot.txt")
    x = _build(path).state.x
    # (2, 0, 0) - c = (1.5, -0.5, -0.5) -> Ry(90) -> (-0.5, -0.5, -1.5) -> + c = (0, 0, -1)
    assert np.any(np.all(np.abs(x - [0.0, 0.0, -1.0]) < 1e-12, axis=1))
    assert parse_script(path)["contact"]["dhat"] == pytest.approx(1e-3 * math.sqrt(3.0), rel=1e-12)


def test_mesh_co_half_space_and_settings(shared_data, tmp_path):
    cube = shared_data / "ipc/input/tetMeshes/cube.msh"
    obj = shared_data / "ipc/input/triMeshes/cube.obj"
    text = (f"shapes input 1\n{cube} 0 3 0 0 0 0 1 1 1\n"
            f"meshCO {obj} 0 -1 0 2 1e10 0.2\nselfFric 0.2\n"
            "halfSpace 0 -5 0  0 2 0  1e10 0.3\n"
            "time 2 0.01\ndHat 2e-3\nepsv 1e-2\nfricIterAmt 3\ntol 1\n1e-3\nturnOffGravity\n"
            "energy FCR\ndensity 500\nstiffness 2e5 0.3\ndampingStiff 3e-7\n")
    path = _write(tmp_path, text)
    d = parse_script(path)
    assert d["time"] == {"end": 2.0, "dt": 0.01}
    assert d["gravity"] == [0.0, 0.0, 0.0]
    assert d["contact"]["dhat"] == pytest.approx(2e-3 * math.sqrt(3.0), rel=1e-12)
    assert d["friction"] == {"mu": 0.2, "eps_v": pytest.approx(1e-2 * math.sqrt(3.0), rel=1e-12),
                             "lagging_iterations": 3}
    assert d["solver"] == {"tol": 1e-3}
    assert d["bodies"][0]["material"] == {"model": "FCR", "density": 500.0, "youngs_modulus": 2e5,
                                          "poisson_ratio": 0.3}
    assert d["integrator"]["damping_ratio"] == pytest.approx(3e-7 / (0.75 * 0.01 ** 3), rel=1e-12)
    assert d["half_spaces"] == [{"origin": [0.0, -5.0, 0.0], "normal": [0.0, 1.0, 0.0], "friction": 0.3}]
    sim = _build(path)
    obstacle = sim.state.x[sim.model.is_obstacle]  # unit cube, centered, scaled to 2, moved to (0, -1, 0)
    np.testing.assert_allclose(obstacle.min(axis=0), [-1.0, -2.0, -1.0], atol=1e-14)
    np.testing.assert_allclose(obstacle.max(axis=0), [1.0, 0.0, 1.0], atol=1e-14)
    absolute = parse_script(_write(tmp_path, text + "useAbsParameters\n", "abs.txt"))
    assert absolute["contact"]["dhat"] == 2e-3 and absolute["friction"]["eps_v"] == 1e-2


def test_comments_continuations_and_sections(shared_data, tmp_path):
    cube = shared_data / "ipc/input/tetMeshes/cube.msh"
    text = (f"# a comment\nshapes input 2\n# skipped inside the block too\n"
            f"{cube} 0 3 0 0 0 0 1 1 1 \\\n  material 2000 1e6 0.3 # trailing comment \\\n"
            "  initVel 0 -1 0 0 0 0\n"
            f"{cube} 0 1 0 0 0 0 1 1 1\n"
            "section QP\ntime 9 9\nbogusCommand 1\nsection end\n"
            "section interiorPoint\ntime 3 0.05\nsection end\n"
            "selfFric 0.3   # friction\n")
    d = parse_script(_write(tmp_path, text))
    assert d["time"] == {"end": 3.0, "dt": 0.05}
    assert d["friction"]["mu"] == 0.3
    assert d["bodies"][0]["material"]["density"] == 2000.0
    assert d["bodies"][0]["initial_velocity"]["linear"] == [0.0, -1.0, 0.0]
    assert len(d["bodies"]) == 2


def test_ipc_selects_boundary_vertices_in_file_coordinates(shared_data, tmp_path):
    import meshio

    from ipcsim.model import box_tet_mesh

    v, t = box_tet_mesh((1.0, 1.0, 1.0), (2, 2, 2))  # 27 vertices, the center one interior
    msh = tmp_path / "box.msh"
    meshio.write(msh, meshio.Mesh(v, [("tetra", t)]), file_format="gmsh22")
    path = _write(tmp_path, f"shapes input 1\n{msh} 0 0 0 0 0 0 1 1 1 DBC -0.1 -0.1 -0.1 1.1 1.1 1.1 0 0 0 0 0 0\n")
    (dbc,) = parse_script(path)["bodies"][0]["dirichlet"]
    center = int(np.flatnonzero(np.all(v == 0.5, axis=1))[0])
    assert sorted(dbc["indices"]) == [i for i in range(27) if i != center]
    # a rotated shape: IPC's box is in file coordinates, so the selection is written as indices
    path = _write(tmp_path, f"shapes input 1\n{msh} 0 0 0 0 45 0 1 1 1 DBC -0.1 -0.1 -0.1 0.1 1.1 0.1 0 0 0 0 0 0\n",
                  "rot.txt")
    (dbc,) = parse_script(path)["bodies"][0]["dirichlet"]
    assert sorted(dbc["indices"]) == sorted(np.flatnonzero((v[:, 0] == 0) & (v[:, 2] == 0)).tolist())


@pytest.mark.parametrize("line, message", [
    ("time 5", "time: expected 'time <duration> <time-step>' (2 arguments), got 1"),
    ("density abc", "density: expected 'density <density>', got non-number 'abc'"),
    ("energy StVK", "energy: expected 'energy NH|FCR', got 'StVK'"),
    ("frobnicate 3", "frobnicate: unknown command"),
    ("constraintSolver LCP", "constraintSolver: expected 'interiorPoint|QP|SQP', got 'LCP'"),
    ("timeStepper ADMM", "timeStepper: not supported ('ADMM'"),
    ("script tear", "script: not supported (IPC's animation script 'tear' has no ipcsim mapping yet"),
    ("script onepoint", "script: not supported (animation script 'onepoint': it starts every vertex at one"),
    ("script wobble", "script: unknown animation script 'wobble' (IPC's types: null, scaleF,"),
    ("script DCOBallHitWall 2 1", "script: expected 'script <type> [<count> <values>...]' with <count> values"),
    ("handleRatio 0.7", "handleRatio: expected 0 < ratio < 0.5, got 0.7"),
    ("restart status10", "restart: not supported"),
])
def test_bad_lines_name_file_and_line(shared_data, tmp_path, line, message):
    cube = shared_data / "ipc/input/tetMeshes/cube.msh"
    path = _write(tmp_path, f"shapes input 1\n{cube} 0 1 0 0 0 0 1 1 1\n{line}\n")
    with pytest.raises(SceneError) as exc:
        parse_script(path)
    text = str(exc.value)
    bad_line = 3 + line.count("\n")
    assert text.startswith(f"{path}:{bad_line}: {message}"), text
    assert "\n" not in text


def test_shape_line_errors_name_the_physical_line(shared_data, tmp_path):
    cube = shared_data / "ipc/input/tetMeshes/cube.msh"
    path = _write(tmp_path, f"shapes input 1\n{cube} 0 1 0 0 0 0 1 1 1 \\\n  DBC 0 0 0 1 1 1 0 0 0 \\\n  wobble 3\n")
    with pytest.raises(SceneError, match=rf"^{path}:4: DBC: expected 'DBC <min x y z>.*non-number 'wobble'"):
        parse_script(path)
    path = _write(tmp_path, f"shapes input 1\n{cube} 0 1 0 0 0 0 1 1\n", "short.txt")
    with pytest.raises(SceneError, match=rf"^{path}:2: shape: expected '<mesh> <x> .*the line ends early"):
        parse_script(path)
    path = _write(tmp_path, f"shapes input 1\n{cube} 0 1 0 0 0 0 1 1 1 \\\n stretchy 1\n", "kw.txt")
    with pytest.raises(SceneError, match=rf"^{path}:3: shape: unknown keyword 'stretchy'"):
        parse_script(path)
    path = _write(tmp_path, "shapes input 1\nnowhere/none.msh 0 1 0 0 0 0 1 1 1\n", "missing.txt")
    with pytest.raises(SceneError, match=rf"^{path}:2: shape: cannot read .*none.msh"):
        parse_script(path)


def test_ignored_commands_warn_with_their_line(shared_data, tmp_path):
    cube = shared_data / "ipc/input/tetMeshes/cube.msh"
    path = _write(tmp_path, f"shapes input 1\n{cube} 0 1 0 0 0 0 1 1 1 DBC 5 5 5 6 6 6 0 0 0 0 0 0\n"
                            "view orthographic\nzoom 0.3\nwarmStart 1\nCCDMethod TightInclusion\n")
    with pytest.warns(IPCScriptWarning) as record:
        d = parse_script(path)
    messages = [str(r.message) for r in record]
    assert f"{path}:2: DBC: the box selects no boundary vertex; ignored (like IPC)" in messages
    for line, cmd in [(3, "view"), (4, "zoom"), (5, "warmStart"), (6, "CCDMethod")]:
        assert any(m.startswith(f"{path}:{line}: {cmd}: ignored") for m in messages)
    assert d["bodies"][0]["dirichlet"] == []


def test_time_ranges_intersect_and_dbc_rotation_is_in_rad_per_s(shared_data, tmp_path):
    cube = shared_data / "ipc/input/tetMeshes/cube.msh"
    path = _write(tmp_path, f"shapes input 1\n{cube} 0 1 0 0 0 0 1 1 1 "
                            "DBC -0.1 0.9 -0.1 1.1 1.1 1.1  0 0 0  0 180 0 \\\n"
                            "  DBC -0.1 -0.1 -0.1 1.1 0.1 1.1  0 1 0  0 0 0  1.0 \\\n"
                            "  NBC -0.1 -0.1 -0.1 1.1 0.1 1.1  0 -3 0  0.5 9\n"
                            "DBCTimeRange 0 4\nNBCTimeRange 1 2\n")
    body = parse_script(path)["bodies"][0]
    top, bottom = body["dirichlet"]
    assert top["angular_velocity"] == [0.0, math.pi, 0.0]
    assert top["center"] == "bbox"  # IPC: the set's bounding-box center at each step start
    assert top["time_range"] == [0.0, 4.0] and bottom["time_range"] == [1.0, 4.0]
    assert bottom["center"] is None and bottom["velocity"] == [0.0, 1.0, 0.0]
    (nbc,) = body["neumann"]
    assert nbc["time_range"] == [1.0125, 2.0125] and nbc["acceleration"] == [0.0, -3.0, 0.0]


def test_tol_tuning_damping_newmark_values(shared_data, tmp_path):
    cube = shared_data / "ipc/input/tetMeshes/cube.msh"
    head = f"shapes input 1\n{cube} 0 1 0 0 0 0 1 1 1\n"
    with pytest.warns(IPCScriptWarning, match=r":3: tol: per-time-step tolerances \[0.1, 0.01, 0.001\]"):
        d = parse_script(_write(tmp_path, head + "tol 3\n0.1 0.01\n0.001\ndampingRatio 2\n"))
    assert d["solver"]["tol"] == 0.001
    assert d["integrator"]["damping_ratio"] == 1.0  # clamped like IPC
    d = parse_script(_write(tmp_path, head + "tuning 6\n0 2e-3 1e-3 1e-9 5e-3 1e-3\ntimeIntegration NM 0.3\n", "t.txt"))
    assert d["contact"]["dhat"] == pytest.approx(2e-3 * math.sqrt(3.0), rel=1e-12)
    assert d["friction"]["eps_v"] == pytest.approx(5e-3 * math.sqrt(3.0), rel=1e-12)
    assert d["integrator"] == {"type": "newmark", "beta": 0.3, "gamma": 0.5}
    with pytest.raises(SceneError, match=r":3: tol: expected 2 values on the following lines, found 1"):
        parse_script(_write(tmp_path, head + "tol 2\n0.1\n", "bad.txt"))
    with pytest.raises(SceneError, match=r":3: timeIntegration: Newmark needs 0 < beta <= 1/2"):
        parse_script(_write(tmp_path, head + "timeIntegration NM 0.7 0.5\n", "nm.txt"))


def test_shape_matrix_and_legacy_shape(shared_data, tmp_path):
    cube = shared_data / "ipc/input/tetMeshes/cube.msh"
    d = parse_script(_write(tmp_path, f"shapeMatrix input 2 1 2 0 5 0\n{cube} 2 0 3 0 0 0 1 1 1 material 900 2e5 0.3\n"
                                      f"shape input {cube}\n"))
    assert [b["transform"]["translation"] for b in d["bodies"]] == [
        [0.0, 5.0, 0.0], [0.0, 5.0, 3.0], [2.0, 5.0, 0.0], [2.0, 5.0, 3.0], [0.0, 0.0, 0.0]]
    assert [b["material"]["density"] for b in d["bodies"]] == [900.0] * 4 + [1000.0]


def test_mesh_co_rotation_and_its_own_friction(shared_data, tmp_path):
    cube = shared_data / "ipc/input/tetMeshes/cube.msh"
    tri = shared_data / "ipc/input/triMeshes/triangle.obj"  # (0,0,0), (1,0,0), (0,0,1): centroid (1/3, 0, 1/3)
    head = f"shapes input 1\n{cube} 0 3 0 0 0 0 1 1 1\n"
    path = _write(tmp_path, head + f"meshCO {tri} 0 1 0 3 1e10 0 rotate 0 0 90\n")
    sim = _build(path)
    x = sim.state.x[sim.model.is_obstacle]
    # IPC's MeshCO: x = scale / max extent * R (p - centroid) + origin, R = Rz(90): (x, y, z) -> (-y, x, z)
    p = np.array([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]]) - [1 / 3, 0.0, 1 / 3]
    expected = 3.0 * np.stack([-p[:, 1], p[:, 0], p[:, 2]], axis=1) + [0.0, 1.0, 0.0]
    np.testing.assert_allclose(x, expected, atol=1e-14)
    # IPC: a meshCO's coefficient governs its contacts; selfFric the contacts between shapes; grounds keep theirs
    d = parse_script(_write(tmp_path, head + f"selfFric 0.2\nmeshCO {tri} 0 1 0 3 1e10 0.5\nground 0.1 0\n"
                                             "ground 0.3 -1\nfricIterAmt 0\n", "mu.txt"))
    assert d["obstacles"][0]["friction"] == 0.5 and d["friction"]["mu"] == 0.2
    assert [h["friction"] for h in d["half_spaces"]] == [0.1, 0.3]
    assert d["friction"]["lagging_iterations"] == 0  # IPC's fricIterAmt <= 0: until converged
    fr = _build(tmp_path / "mu.txt").solver.friction
    assert fr.body_mu == {1: 0.5} and fr.plane_mu == (0.1, 0.3) and fr.max_solves == 20


def test_rotating_segments_follow_ipcs_recorded_trajectory(shared_data):
    """segMeshes/sequence/<n>.seg holds IPC's own run of 2cubesFall_rotateCO_edges: file n = after n steps."""
    from ipcsim.scene.mesh_files import read_seg

    sim = _build(_script(shared_data, "MCO/2cubesFall_rotateCO_edges.txt"))
    obstacle = np.flatnonzero(sim.model.is_obstacle)
    seq = shared_data / "ipc/input/segMeshes/sequence"
    state = sim.state
    for n in range(1, 4):
        new = state.copy()
        sim.solver.step(state, new, None, sim.dt)
        state = new
        np.testing.assert_allclose(state.x[obstacle], read_seg(seq / f"{n}.seg")[0], rtol=0, atol=1e-9)


def test_resolved_scene_round_trips_through_json(shared_data, tmp_path):
    for name in ("BC/2cubesFall_DBC_timeRange.txt", "MCO/2cubesFall_rotateCO_edges.txt",
                 "advanced/2cubesFall_rotateCO_meshSeq.txt", "advanced/2cubesFall_NM.txt"):
        scene = load_scene(_script(shared_data, name))
        path = tmp_path / (name.replace("/", "_") + ".json")
        path.write_text(json.dumps(scene.data))
        assert load_scene(path).data == scene.data


def test_mesh_sequence_errors_name_the_line(shared_data, tmp_path):
    cube = shared_data / "ipc/input/tetMeshes/cube.msh"
    seg = shared_data / "ipc/input/triMeshes/triangle.seg"
    empty = tmp_path / "empty"
    empty.mkdir()
    head = f"shapes input 2\n{cube} 0 3 0 0 0 0 1 1 1\n{seg} 0 1 0 0 0 0 2 2 2 meshSeq "
    with pytest.raises(SceneError, match=r":3: meshSeq: no frame '0.seg' in"):
        parse_script(_write(tmp_path, head + f"{empty}\n"))
    short = tmp_path / "short"
    short.mkdir()
    (short / "0.seg").write_text("v 0 0 0\nv 1 0 0\ns 1 2\n")
    with pytest.raises(SceneError, match=r":3: meshSeq: '.*0.seg' has 2 vertices, the shape 3"):
        parse_script(_write(tmp_path, head + f"{short}\n", "short.txt"))
    (short / "0.seg").write_text("v 0 0 0\nv 1 0 0\nv 0 0 1\ns 1 2\n")
    with pytest.warns(IPCScriptWarning, match=r":3: meshSeq: 1 frames for 200 steps"):
        d = parse_script(_write(tmp_path, head + f"{short}\n", "one.txt"))
    assert d["obstacles"][0]["keyframes"]["files"] == [str(short / "0.seg")] * 2
