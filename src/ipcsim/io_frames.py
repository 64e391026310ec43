"""Frame output: binary little-endian PLY of the collision surface, written atomically (temp file + rename)."""
from __future__ import annotations

import os
import tempfile

import numpy as np


def write_ply(path: str | os.PathLike, vertices: np.ndarray, faces: np.ndarray) -> None:
    """Write vertices (n, 3) [m] and triangles (m, 3) to a binary PLY; the file appears complete or not at all."""
    path = os.fspath(path)
    v = np.ascontiguousarray(vertices, dtype="<f8")
    f = np.asarray(faces, dtype=np.int64)
    header = (
        "ply\nformat binary_little_endian 1.0\n"
        f"element vertex {len(v)}\nproperty double x\nproperty double y\nproperty double z\n"
        f"element face {len(f)}\nproperty list uchar int vertex_indices\nend_header\n"
    ).encode("ascii")
    face_rec = np.zeros(len(f), dtype=[("n", "u1"), ("i", "<i4", (3,))])
    face_rec["n"] = 3
    face_rec["i"] = f
    directory = os.path.dirname(path) or "."
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=".tmp-", suffix=".ply")
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(header)
            out.write(v.tobytes())
            out.write(face_rec.tobytes())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def read_ply(path: str | os.PathLike) -> tuple[np.ndarray, np.ndarray]:
    """Read a PLY written by write_ply: (vertices (n, 3), faces (m, 3))."""
    with open(path, "rb") as fh:
        data = fh.read()
    end = data.index(b"end_header\n") + len(b"end_header\n")
    lines = data[:end].decode("ascii").splitlines()
    nv = int(next(s for s in lines if s.startswith("element vertex")).split()[-1])
    nf = int(next(s for s in lines if s.startswith("element face")).split()[-1])
    v = np.frombuffer(data, dtype="<f8", count=3 * nv, offset=end).reshape(nv, 3)
    rec = np.frombuffer(data, dtype=[("n", "u1"), ("i", "<i4", (3,))], count=nf, offset=end + 24 * nv)
    return v.copy(), rec["i"].astype(np.int64)
