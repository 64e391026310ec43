"""Atomic output files: PLY, VTU, JSON, CSV, NPZ."""
import json
import os

import numpy as np
import pytest

from ipcsim.io import frames as io_frames
from ipcsim.model import box_tet_mesh


def test_ply_round_trip_with_and_without_body(tmp_path, rng):
    v = rng.standard_normal((7, 3))
    f = rng.integers(0, 7, (5, 3))
    body = rng.integers(0, 3, 7)
    io_frames.write_ply(tmp_path / "a.ply", v, f, body)
    v2, f2, b2 = io_frames.read_ply(tmp_path / "a.ply", with_body=True)
    assert np.array_equal(v2, v) and np.array_equal(f2, f) and np.array_equal(b2, body)
    io_frames.write_ply(tmp_path / "b.ply", v, f)
    v3, f3, b3 = io_frames.read_ply(tmp_path / "b.ply", with_body=True)
    assert np.array_equal(v3, v) and np.array_equal(f3, f) and np.all(b3 == -1)
    import meshio  # an independent reader agrees

    m = meshio.read(tmp_path / "a.ply")
    assert np.allclose(m.points, v) and np.array_equal(m.cells_dict["triangle"], f)
    assert np.array_equal(m.point_data["body"], body)


def test_ply_body_names_in_the_header(tmp_path, rng):
    v, f, body = rng.standard_normal((6, 3)), rng.integers(0, 6, (4, 3)), np.array([0, 0, 1, 1, 2, 2])
    io_frames.write_ply(tmp_path / "named.ply", v, f, body, ["upper lip", "lower lip", "skin"])
    assert io_frames.read_ply_names(tmp_path / "named.ply") == ["upper lip", "lower lip", "skin"]
    v2, f2, b2 = io_frames.read_ply(tmp_path / "named.ply", with_body=True)
    assert np.array_equal(v2, v) and np.array_equal(f2, f) and np.array_equal(b2, body)
    io_frames.write_ply(tmp_path / "plain.ply", v, f, body)  # without names: no comment lines, None back
    assert io_frames.read_ply_names(tmp_path / "plain.ply") is None
    assert b"comment body" not in (tmp_path / "plain.ply").read_bytes()
    import meshio  # an independent reader still reads the named file

    assert np.array_equal(meshio.read(tmp_path / "named.ply").point_data["body"], body)
    with pytest.raises(ValueError, match="one line of printable ASCII"):
        io_frames.write_ply(tmp_path / "bad.ply", v, f, body, ["a", "two\nlines"])
    assert not (tmp_path / "bad.ply").exists()


def test_failed_write_leaves_the_old_file(tmp_path):
    path = tmp_path / "x.json"
    io_frames.write_json(path, {"a": 1})
    with pytest.raises(ValueError):
        io_frames.write_json(path, {"a": float("nan")})  # JSON has no NaN: fails while writing
    assert json.loads(path.read_text()) == {"a": 1}
    assert os.listdir(tmp_path) == ["x.json"]
    assert (path.stat().st_mode & 0o777) == 0o666 & ~_umask()


def _umask():
    mask = os.umask(0)
    os.umask(mask)
    return mask


def test_volume_vtu_jacobians(tmp_path):
    import meshio

    v, t = box_tet_mesh((1.0, 1.0, 1.0), (2, 2, 2))
    a, b, c, d = (v[t[:, k]] for k in range(4))
    dm = np.stack([b - a, c - a, d - a], axis=2)
    dm_inv = np.linalg.inv(dm)
    assert np.allclose(io_frames.tet_jacobians(v, t, dm_inv), 1.0)
    x = v * np.array([2.0, 1.0, 0.5]) + 3.0  # J = 2 * 1 * 0.5
    j = io_frames.tet_jacobians(x, t, dm_inv)
    assert np.allclose(j, 1.0)
    x = v * 2.0
    io_frames.write_volume_vtu(tmp_path / "v.vtu", x, t, {"J": io_frames.tet_jacobians(x, t, dm_inv),
                                                          "body": np.zeros(len(t), np.int64)})
    m = meshio.read(tmp_path / "v.vtu")
    assert np.allclose(m.points, x) and np.array_equal(m.cells_dict["tetra"], t)
    assert np.allclose(m.cell_data["J"][0], 8.0)


def test_csv_and_npz(tmp_path):
    io_frames.write_csv(tmp_path / "s.csv", ["a", "b"], [[1, "x"], [2, "y"]])
    assert (tmp_path / "s.csv").read_text() == "a,b\n1,x\n2,y\n"
    io_frames.save_npz(tmp_path / "c.npz", x=np.arange(3.0), s=np.str_("abc"))
    with np.load(tmp_path / "c.npz", allow_pickle=False) as z:
        assert np.array_equal(z["x"], np.arange(3.0)) and str(z["s"]) == "abc"
