"""load_tet_mesh / read_mesh: the reference meshes load; bad files give one-line errors naming the file."""
from __future__ import annotations

import numpy as np
import pytest

from ipcsim.geometry import MeshError, load_tet_mesh, read_mesh


def test_loads_reference_tet_meshes(shared_data):
    for path in sorted((shared_data / "ipc/input/tetMeshes").glob("*.msh")):
        V, T = load_tet_mesh(path)
        assert V.dtype == np.float64 and V.ndim == 2 and V.shape[1] == 3
        assert T.dtype == np.int64 and T.shape[1] == 4 and len(T) > 0
        assert T.min() >= 0 and T.max() < len(V)
    V, T = load_tet_mesh(shared_data / "ipc/input/tetMeshes/bunny.msh")
    assert V.shape == (4670, 3) and T.shape == (19379, 4)


def write_msh(path, nodes, tets):
    """A minimal Gmsh 2.2 ASCII file (tets: element type 4, 1-based)."""
    lines = ["$MeshFormat", "2.2 0 8", "$EndMeshFormat", "$Nodes", str(len(nodes))]
    lines += [f"{i + 1} {x} {y} {z}" for i, (x, y, z) in enumerate(nodes)]
    lines += ["$EndNodes", "$Elements", str(len(tets))]
    lines += [f"{i + 1} 4 2 0 1 " + " ".join(str(v + 1) for v in t) for i, t in enumerate(tets)]
    lines += ["$EndElements"]
    path.write_text("\n".join(lines) + "\n")


def test_error_messages_name_the_file(tmp_path):
    missing = tmp_path / "nothere.msh"
    with pytest.raises(MeshError, match=f"^{missing}: no such mesh file$"):
        load_tet_mesh(missing)

    tri = tmp_path / "tri.obj"
    tri.write_text("v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n")
    with pytest.raises(MeshError, match=rf"^{tri}: no tetrahedra in the mesh \(found 1 triangle\)$"):
        load_tet_mesh(tri)

    garbage = tmp_path / "garbage.msh"
    garbage.write_text("this is not a mesh\n")
    with pytest.raises(MeshError, match=f"^{garbage}: "):
        load_tet_mesh(garbage)

    ok = tmp_path / "ok.msh"
    write_msh(ok, [(0, 0, 0), (1, 0, 0), (0, 1, 0), (0, 0, 1)], [(0, 1, 2, 3)])
    V, T = load_tet_mesh(ok)
    assert V.shape == (4, 3) and T.tolist() == [[0, 1, 2, 3]]
    points, cells = read_mesh(ok)
    np.testing.assert_array_equal(points, V)


def test_messages_are_one_line_and_value_errors(tmp_path):
    missing = tmp_path / "a.msh"
    with pytest.raises(ValueError) as info:
        load_tet_mesh(missing)
    assert "\n" not in str(info.value)


def test_tet_index_out_of_range(tmp_path):
    import meshio

    bad = tmp_path / "bad.vtu"
    meshio.Mesh(np.eye(4, 3), [("tetra", np.array([[0, 1, 2, 3], [0, 1, 2, 9]]))]).write(bad)
    with pytest.raises(MeshError, match=rf"^{bad}: tet 1 = \[0, 1, 2, 9\] refers to a point outside 0..3$"):
        load_tet_mesh(bad)
    bad_msh = tmp_path / "bad.msh"
    write_msh(bad_msh, [(0, 0, 0), (1, 0, 0), (0, 1, 0), (0, 0, 1)], [(0, 1, 2, 3), (0, 1, 2, 8)])
    with pytest.raises(MeshError, match=f"^{bad_msh}: malformed mesh"):
        load_tet_mesh(bad_msh)


def test_non_finite_point_directory_and_empty_file(tmp_path):
    import meshio

    pts = np.eye(4, 3)
    pts[3, 2] = np.inf
    bad = tmp_path / "inf.vtu"
    meshio.Mesh(pts, [("tetra", np.array([[0, 1, 2, 3]]))]).write(bad)
    with pytest.raises(MeshError, match=rf"^{bad}: point 3 has a non-finite coordinate$"):
        load_tet_mesh(bad)
    folder = tmp_path / "folder.msh"
    folder.mkdir()
    with pytest.raises(MeshError, match=rf"^{folder}: is a directory, not a mesh file$"):
        load_tet_mesh(folder)
    empty = tmp_path / "empty.msh"
    empty.write_text("")
    with pytest.raises(MeshError, match=rf"^{empty}: ") as info:
        load_tet_mesh(empty)
    assert "\n" not in str(info.value)
