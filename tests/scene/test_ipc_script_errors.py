"""Every error message of the IPC 2020 script importer (``ipc_script``, ``ipc_scene``, ``ipc_animation``) through
``ipcsim run``: one line ``error: SCRIPT:LINE: <command>: ...`` on stderr naming the script, its line and the
command (or the mesh file), exit status 2, no traceback, and no output directory.

The scripts use small meshes written here (no shared data needed); none of them triggers an importer warning, so
the error is the only line on stderr. The table lists each ``raise`` of the importer once (the cases of
``test_ipc_script.py`` and ``test_ipc_animation.py`` check the same messages on IPC's own scripts)."""
import pytest

from ipcsim.cli import main

HEAD = "shapes input 1\n{tet} 0 0 0  0 0 0  1 1 1\n"  # a unit cube at the origin; the next line is line 3
TWO = "shapes input 2\n{tet} 0 0 0  0 0 0  1 1 1\n"  # ... and one more shape on line 3
FORM_SHAPE = "shape: expected '<mesh> <x> <y> <z> <rot-x> <rot-y> <rot-z> <scale-x> <scale-y> <scale-z> [extras]'"

# (script text, line named, message after "SCRIPT:LINE: "); {tet}, {tri_msh}, {obj}, {seg}, {vtu}, {seq}, {bad_seq}
# and {empty_dir} are files and folders written by the fixture
CASES = {
    # ---- ipc_script: words and arguments
    "number: not a number": (HEAD + "density abc\n", 3, "density: expected 'density <density>', got non-number 'abc'"),
    "number: NaN": (HEAD + "density nan\n", 3, "density: expected 'density <density>', got NaN"),
    "number: line ends early": ("shapes input 1\n{tet} 0 0 0 0 0 0 1 1\n", 2, FORM_SHAPE + ", the line ends early"),
    "arguments: count": (HEAD + "time 5\n", 3, "time: expected 'time <duration> <time-step>' (2 arguments), got 1"),
    "unsupported command": (HEAD + "restart status10\n", 3, "restart: not supported (restarting from an IPC status"),
    "batch list": ("a.txt\nb.txt\n", 1, "a.txt: this file is a batch list of IPC scripts (2 listed, one a line)"),
    "unknown command": (HEAD + "frobnicate 3\n", 3, "frobnicate: unknown command"),
    "values: missing": (HEAD + "tol 2\n0.1\n", 3, "tol: expected 2 values on the following lines, found 1"),
    "values: too many": (HEAD + "tol 2\n0.1 0.2 0.3\n", 4, "tol: expected 2 values in all, this line has too many"),
    # ---- ipc_script: settings
    "energy": (HEAD + "energy StVK\n", 3, "energy: expected 'energy NH|FCR', got 'StVK'"),
    "timeIntegration: form": (HEAD + "timeIntegration RK4\n", 3,
                              "timeIntegration: expected 'timeIntegration BE | timeIntegration NM [beta gamma]'"),
    "timeIntegration: Newmark": (HEAD + "timeIntegration NM 0.7 0.5\n", 3,
                                 "timeIntegration: Newmark needs 0 < beta <= 1/2 and 0 < gamma <= 1, got 0.7 0.5"),
    "time": (HEAD + "time 0 0.01\n", 3, "time: duration and time step must be positive and finite, got 0.0 0.01"),
    "density": (HEAD + "density -5\n", 3, "density: must be positive [kg/m^3], got -5.0"),
    "stiffness": (HEAD + "stiffness 1e5 0.5\n", 3, "stiffness: needs Young's modulus > 0 and 0 <= Poisson's ratio "
                                                   "< 0.5, got 100000 0.5"),
    "shape material": ("shapes input 1\n{tet} 0 0 0 0 0 0 1 1 1 material 1000 1e5 0.7\n", 2,
                       "material: needs density > 0, Young's modulus > 0 and 0 <= Poisson's ratio < 0.5, got 1000 "
                       "100000 0.7"),
    "script: form": (HEAD + "script\n", 3, "script: expected 'script <type> [<count> <values>...]'"),
    "script: refused type": (HEAD + "script onepoint\n", 3, "script: not supported (animation script 'onepoint':"),
    "script: unmapped type": (HEAD + "script tear\n", 3, "script: not supported (IPC's animation script 'tear' has no"),
    "script: unknown type": (HEAD + "script wobble\n", 3, "script: unknown animation script 'wobble' (IPC's types:"),
    "script: count": (HEAD + "script DCOBallHitWall 2 1\n", 3,
                      "script: expected 'script <type> [<count> <values>...]' with <count> values after the count"),
    "handleRatio": (HEAD + "handleRatio 0.7\n", 3, "handleRatio: expected 0 < ratio < 0.5, got 0.7"),
    "timeStepper": (HEAD + "timeStepper ADMM\n", 3, "timeStepper: not supported ('ADMM'; ipcsim steps with Newton's"),
    "tol: count": (HEAD + "tol 1.5\n", 3, "tol: expected a count >= 0, got '1.5'"),
    "tol: values": (HEAD + "tol 1\n-1\n", 3, "tol: values must be positive, got [-1.0]"),
    "tuning: count": (HEAD + "tuning -1\n", 3, "tuning: expected a count >= 0, got '-1'"),
    "halfSpace: normal": (HEAD + "halfSpace 0 -1 0  0 0 0  1e10 0.1\n", 3, "halfSpace: the normal must be non-zero"),
    "ground: friction": (HEAD + "ground -0.1 -1\n", 3, "ground: friction must be >= 0, got -0.1"),
    "meshCO: form": (HEAD + "meshCO {obj} 0 -2 0 1\n", 3, "meshCO: expected 'meshCO <mesh> <x> <y> <z> <scale>"),
    "meshCO: scale": (HEAD + "meshCO {obj} 0 -2 0 0 1e10 0.1\n", 3,
                      "meshCO: scale must be positive and friction >= 0, got 0 0.1"),
    "constraintSolver": (HEAD + "constraintSolver LCP\n", 3, "constraintSolver: expected 'interiorPoint|QP|SQP', "
                                                             "got 'LCP'"),
    "rotateModel": (HEAD + "rotateModel 0 0 0 90\n", 3, "rotateModel: the axis must be non-zero"),
    "dHat": (HEAD + "dHat 0\n", 3, "dHat: must be positive, got 0"),
    "epsv": (HEAD + "epsv -1\n", 3, "epsv: must be positive, got -1"),
    "fricIterAmt": (HEAD + "fricIterAmt 2.5\n", 3, "fricIterAmt: expected an integer, got '2.5'"),
    "section": (HEAD + "section\n", 3, "section: expected 'section <solver>...' or 'section end'"),
    # ---- ipc_script: shapes
    "shapes: count": ("shapes input 0\n", 1, "shapes: expected a count >= 1, got '0'"),
    "shapes: lines": ("shapes input 2\n{tet} 0 0 0 0 0 0 1 1 1\n", 1, "shapes: expected 2 shape lines, found 1"),
    "shape: extras": ("shapes input 1\n{tet} 0 0 0 0 0 0 1 1 1 \\\n  stretchy 1\n", 3,
                      "shape: unknown keyword 'stretchy' (expected material, initVel, DBC, NBC,"),
    "meshSeq: folder": (TWO + "{seg} 0 3 0 0 0 0 1 1 1 meshSeq\n", 3, "meshSeq: expected 'meshSeq <folder>'"),
    "shapeMatrix: form": ("shapeMatrix input 1 1\n", 1, "shapeMatrix: expected 'shapeMatrix input <nx> <ny> <nz>"),
    "shapeMatrix: counts": ("shapeMatrix input 1 0 1\n{tet} 2 0 0 0 0 0 1 1 1\n", 1,
                            "shapeMatrix: counts must be integers >= 1, got [1.0, 0.0, 1.0]"),
    "shapeMatrix: no shape line": ("shapeMatrix input 1 1 1\n", 1, "shapeMatrix: expected a shape line after it"),
    "shapeMatrix: shape line": ("shapeMatrix input 1 1 1\n{tet} 2 0 0\n", 2, "shapeMatrix: expected '<mesh> <dx>"),
    # ---- ipc_scene: meshes, shapes, obstacles
    "mesh format": ("shapes input 1\n{vtu} 0 0 0 0 0 0 1 1 1\n", 2,
                    "shape: not supported (mesh format '.vtu'; IPC scripts use .msh, .obj, .seg or .pt)"),
    "mesh missing": ("shapes input 1\n{tmp}/none.msh 0 0 0 0 0 0 1 1 1\n", 2,
                     "shape: cannot read '{tmp}/none.msh': no such file"),
    "mesh kind": ("shapes input 1\n{tri_msh} 0 0 0 0 0 0 1 1 1\n", 2,
                  "shape: '{tri_msh}' holds triangle elements, expected tets"),
    "no tet shape": ("shapes input 1\n{obj} 0 0 0 0 0 0 1 1 1\n", 2,
                     "shapes: no tet-mesh (.msh) shape, nothing to simulate"),
    "DBC on a kinematic shape": (TWO + "{seg} 0 3 0 0 0 0 1 1 1 DBC 0 0 0 1 1 1 0 0 0 0 0 0\n", 3,
                                 "DBC: not supported on a kinematic shape"),
    "meshSeq with a velocity": (TWO + "{seg} 0 3 0 0 0 0 1 1 1 linearVelocity 0 1 0 \\\n meshSeq {seq}\n", 4,
                                "meshSeq: not supported together with linearVelocity/angularVelocity"),
    "meshSeq: no frame": (TWO + "{seg} 0 3 0 0 0 0 1 1 1 meshSeq {empty_dir}\n", 3,
                          "meshSeq: no frame '0.seg' in '{empty_dir}'"),
    "meshSeq: unreadable frame": (TWO + "{seg} 0 3 0 0 0 0 1 1 1 meshSeq {bad_seq}\n", 3,
                                  "meshSeq: cannot read '{bad_seq}/0.seg': line 1: expected 'v x y z' or 's i j'"),
    "meshSeq: vertex count": (TWO + "{seg} 0 3 0 0 0 0 1 1 1 meshSeq {short_seq}\n", 3,
                              "meshSeq: '{short_seq}/0.seg' has 1 vertices, the shape 2"),
    "meshCO: not triangles": (HEAD + "meshCO {tet} 0 -2 0 1 1e10 0.1\n", 3, "meshCO: expected a triangle mesh (.obj)"),
    "meshCO: format": (HEAD + "meshCO {vtu} 0 -2 0 1 1e10 0.1\n", 3, "meshCO: not supported (mesh format '.vtu';"),
    "no simulated body": ("shapes input 1\n{tet} 0 0 0 0 0 0 1 1 1 linearVelocity 0 1 0\n", 2,
                          "shapes: no simulated body (every shape is kinematic)"),
    # ---- ipc_animation: scripts that cannot be set up for these shapes
    "script: empty handle": (HEAD + "script dragdown\n", 3,
                             "script dragdown: selects no vertex (IPC would index an empty handle)"),
    "script: handle on a kinematic shape": (TWO + "{obj} -5 0 0 0 0 0 1 1 1\nscript stamp\n", 4,
                                            "script stamp: not supported here: its handle takes vertices of the "
                                            "kinematic shape #2"),
    "script: collision objects first": (TWO + "{seg} 0 3 0 0 0 0 1 1 1\nscript DCORotCylinders\n", 4,
                                        "script DCORotCylinders: needs its first 4 shapes to be .obj/.seg/.pt "
                                        "collision objects and a body after them"),
    "script: both halves": (TWO + "{seg} 0 3 0 0 0 0 1 1 1\nscript DCOSegBedSquash\n", 4,
                            "script DCOSegBedSquash: needs kinematic (.obj/.seg/.pt) shapes in both halves"),
    "script: first two": (TWO + "{seg} 0 3 0 0 0 0 1 1 1\nscript DCOSqueezeOut\n", 4,
                          "script DCOSqueezeOut: needs its first two shapes to be .obj/.seg/.pt collision objects"),
    "script: free codimensional shape": (TWO + "{seg} 0 3 0 0 0 0 1 1 1\nscript fallNoShift\n", 4,
                                         "script fallNoShift: not supported with the .obj/.seg/.pt shape #2"),
}


@pytest.fixture
def files(tmp_path):
    """The meshes and folders the scripts name: {placeholder: path}."""
    import meshio

    from ipcsim.geometry.voxel_cage import box_tet_mesh

    v, t = box_tet_mesh((1.0, 1.0, 1.0), (1, 1, 1))
    meshio.write(tmp_path / "cube.msh", meshio.Mesh(v, [("tetra", t)]), file_format="gmsh22")
    meshio.write(tmp_path / "cube.vtu", meshio.Mesh(v, [("tetra", t)]))
    tri = [[0, 1, 2], [0, 2, 3]]
    square = [[0, 0, 0], [1, 0, 0], [1, 0, 1], [0, 0, 1]]
    meshio.write(tmp_path / "square.msh", meshio.Mesh(square, [("triangle", tri)]), file_format="gmsh22")
    (tmp_path / "square.obj").write_text("v 0 0 0\nv 1 0 0\nv 1 0 1\nv 0 0 1\nf 1 2 3\nf 1 3 4\n")
    (tmp_path / "segment.seg").write_text("v 0 0 0\nv 1 0 0\ns 1 2\n")
    folders = {}
    for name, frame in (("seq", "v 0 3 0\nv 1 3 0\ns 1 2\n"), ("empty_dir", None), ("bad_seq", "v 0 0\n"),
                        ("short_seq", "v 0 0 0\n")):
        folders[name] = tmp_path / name
        folders[name].mkdir()
        if frame is not None:
            (folders[name] / "0.seg").write_text(frame)
    return {"tmp": tmp_path, "tet": tmp_path / "cube.msh", "vtu": tmp_path / "cube.vtu",
            "tri_msh": tmp_path / "square.msh", "obj": tmp_path / "square.obj", "seg": tmp_path / "segment.seg",
            **folders}


@pytest.mark.parametrize("case", list(CASES))
def test_importer_error_is_one_line_naming_script_and_line(tmp_path, files, capsys, case):
    text, line, message = CASES[case]
    script = tmp_path / "scene.txt"
    script.write_text(text.format(**files))
    out = tmp_path / "out"
    try:
        code = main(["run", str(script), "-o", str(out)])
    except SystemExit as exc:  # pragma: no cover - an argparse exit would be a test bug
        code = exc.code
    captured = capsys.readouterr()
    lines = captured.err.splitlines()
    assert code == 2 and len(lines) == 1, captured.err
    assert lines[0].startswith(f"error: {script}:{line}: {message.format(**files)}"), lines[0]
    assert "Traceback" not in captured.err and captured.out == ""
    assert not out.exists()


def test_unreadable_scripts(tmp_path, capsys):
    """A missing script, a folder, a script that is not UTF-8 text, and one without shapes: one line naming the
    file, exit 2."""
    binary = tmp_path / "binary.txt"
    binary.write_bytes(b"shapes input 1\n\xff\xfe\n")
    empty = tmp_path / "noshapes.txt"
    empty.write_text("time 1 0.01\n")
    (tmp_path / "folder.txt").mkdir()
    for path, message in ((tmp_path / "absent.txt", "cannot read script: No such file or directory"),
                          (tmp_path / "folder.txt", "cannot read script: Is a directory"),
                          (binary, "not UTF-8 text (invalid start byte at byte 15)"),
                          (empty, "no shapes (the script needs a 'shapes input <count>' block)")):
        code = main(["run", str(path), "-o", str(tmp_path / "out")])
        err = capsys.readouterr().err
        assert code == 2 and err == f"error: {path}: {message}\n", err
        assert not (tmp_path / "out").exists()
