"""Output files of a run, every one written atomically (a temporary file in the same directory, then
``os.replace``): a reader sees a file complete or not at all, even if the run is killed mid-write.

- ``write_ply`` / ``read_ply``: binary little-endian PLY of a triangle surface (double x, y, z and an int ``body`` id
  per vertex; per face the vertex index list); optionally the bodies' names as header comments
  (``read_ply_names``).
- ``write_volume_vtu``: tet meshes with per-element fields (meshio's VTU writer).
- ``write_text``, ``write_json``, ``write_csv``, ``save_npz``: the small files of the output directory.
- ``atomic_path``: the context manager all of them use; a library that only writes to a path (meshio, ffmpeg)
  writes to the temporary path it yields.
"""
from __future__ import annotations

import contextlib
import csv
import io
import json
import os
import tempfile
from collections.abc import Iterator, Sequence

import numpy as np


def _file_mode() -> int:
    """Permissions of a new ordinary file under the current umask (mkstemp's files are private)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return 0o666 & ~mask


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike) -> Iterator[str]:
    """Yield a temporary path next to ``path`` (same suffix); on success it replaces ``path`` atomically
    (with the usual permissions of a new file), on any exception it is removed and ``path`` is left
    untouched."""
    path = os.fspath(path)
    directory = os.path.dirname(path) or "."
    suffix = os.path.splitext(path)[1]
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=".tmp-", suffix=suffix)
    os.close(fd)
    try:
        yield tmp
        os.chmod(tmp, _file_mode())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def write_bytes(path: str | os.PathLike, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically."""
    with atomic_path(path) as tmp:
        with open(tmp, "wb") as fh:
            fh.write(data)


def write_text(path: str | os.PathLike, text: str) -> None:
    """Write UTF-8 ``text`` to ``path`` atomically."""
    write_bytes(path, text.encode("utf-8"))


def write_json(path: str | os.PathLike, data) -> None:
    """Write a JSON document (indented, keys in insertion order, trailing newline) atomically."""
    write_text(path, json.dumps(data, indent=2, allow_nan=False) + "\n")


def write_csv(path: str | os.PathLike, header: Sequence[str], rows: Sequence[Sequence]) -> None:
    """Write a CSV file (one header line, then ``rows``) atomically."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(rows)
    write_text(path, buf.getvalue())


def save_npz(path: str | os.PathLike, **arrays) -> None:
    """``numpy.savez`` (uncompressed, no pickled objects) to ``path`` atomically."""
    with atomic_path(path) as tmp:
        with open(tmp, "wb") as fh:
            np.savez(fh, **arrays)


_FACE_DTYPE = np.dtype([("n", "u1"), ("i", "<i4", (3,))])
_VERTEX_BODY_DTYPE = np.dtype([("x", "<f8", (3,)), ("body", "<i4")])


def write_ply(path: str | os.PathLike, vertices: np.ndarray, faces: np.ndarray,
              body: np.ndarray | None = None, names: Sequence[str] | None = None) -> None:
    """Write a triangle surface to a binary little-endian PLY, atomically.

    Args:
        vertices: (n, 3) [m] positions (stored as doubles).
        faces: (m, 3) int vertex indices.
        body: optional (n,) int body id per vertex (a vertex property ``int body``; meshio reads it as
            point data, viewers ignore it).
        names: optional name of each body id (``names[i]`` for id i), one header line ``comment body i NAME``
            each (``read_ply_names``); a name is one line of printable ASCII. None: no such lines.
    """
    v = np.ascontiguousarray(vertices, dtype="<f8")
    f = np.asarray(faces, dtype=np.int64).reshape(-1, 3)
    if v.ndim != 2 or v.shape[1] != 3:
        raise ValueError(f"write_ply: vertices must be (n, 3), got shape {v.shape}")
    header = (
        "ply\nformat binary_little_endian 1.0\ncomment written by ipcsim\n"
        + "".join(f"comment body {i} {_body_name(n)}\n" for i, n in enumerate(names or ()))
        + f"element vertex {len(v)}\nproperty double x\nproperty double y\nproperty double z\n"
        + ("property int body\n" if body is not None else "")
        + f"element face {len(f)}\nproperty list uchar int vertex_indices\nend_header\n"
    ).encode("ascii")
    if body is not None:
        rec = np.zeros(len(v), dtype=_VERTEX_BODY_DTYPE)
        rec["x"] = v
        rec["body"] = np.asarray(body, dtype=np.int64).reshape(len(v))
        vertex_bytes = rec.tobytes()
    else:
        vertex_bytes = v.tobytes()
    face = np.zeros(len(f), dtype=_FACE_DTYPE)
    face["n"] = 3
    face["i"] = f
    write_bytes(path, header + vertex_bytes + face.tobytes())


def read_ply(path: str | os.PathLike, with_body: bool = False):
    """Read a PLY written by ``write_ply``.

    Returns (vertices (n, 3) float64 [m], faces (m, 3) int64), plus body (n,) int64 per vertex when
    ``with_body`` (-1 everywhere if the file has no body property). Raises ValueError for a PLY of another
    layout.
    """
    with open(path, "rb") as fh:
        data = fh.read()
    marker = b"end_header\n"
    if not data.startswith(b"ply\n") or marker not in data:
        raise ValueError(f"{os.fspath(path)}: not a PLY file")
    end = data.index(marker) + len(marker)
    lines = data[:end].decode("ascii").splitlines()
    if "format binary_little_endian 1.0" not in lines:
        raise ValueError(f"{os.fspath(path)}: only binary little-endian PLY written by ipcsim is supported")
    nv = int(next(s for s in lines if s.startswith("element vertex")).split()[-1])
    nf = int(next(s for s in lines if s.startswith("element face")).split()[-1])
    has_body = "property int body" in lines
    if has_body:
        rec = np.frombuffer(data, dtype=_VERTEX_BODY_DTYPE, count=nv, offset=end)
        v, body = rec["x"].copy(), rec["body"].astype(np.int64)
    else:
        v, body = np.frombuffer(data, dtype="<f8", count=3 * nv, offset=end).reshape(nv, 3).copy(), None
    offset = end + (_VERTEX_BODY_DTYPE.itemsize if has_body else 24) * nv
    faces = np.frombuffer(data, dtype=_FACE_DTYPE, count=nf, offset=offset)["i"].astype(np.int64)
    if not with_body:
        return v, faces
    return v, faces, body if body is not None else np.full(nv, -1, np.int64)


def _body_name(name: str) -> str:
    """A body name fit for a PLY header line (ValueError otherwise)."""
    text = str(name)
    if not text.strip() or not text.isascii() or not text.isprintable():
        raise ValueError(f"write_ply: a body name must be one line of printable ASCII, got {text!r}")
    return text.strip()


def read_ply_names(path: str | os.PathLike) -> list[str] | None:
    """The body names of a PLY written by ``write_ply`` with ``names`` (``comment body i NAME`` lines), in id
    order ("body<i>" for an id without a line); None when the header names none."""
    with open(path, "rb") as fh:
        head = fh.read(65536)
    marker = b"end_header\n"
    if not head.startswith(b"ply\n") or marker not in head:
        raise ValueError(f"{os.fspath(path)}: not a PLY file")
    found = {}
    for line in head[:head.index(marker)].decode("ascii", "replace").splitlines():
        parts = line.split(maxsplit=3)
        if len(parts) == 4 and parts[:2] == ["comment", "body"] and parts[2].isdigit():
            found[int(parts[2])] = parts[3]
    return [found.get(i, f"body{i}") for i in range(max(found) + 1)] if found else None


def tet_jacobians(x: np.ndarray, tets: np.ndarray, dm_inv: np.ndarray) -> np.ndarray:
    """J = det F per tet (m,) [1] for positions x (n, 3) [m], tets (m, 4) and inverse rest edge matrices
    dm_inv (m, 3, 3) [1/m]; F = Ds Dm^-1 with Ds the current edge matrix [x1-x0, x2-x0, x3-x0]."""
    p = x[tets]
    ds = np.stack([p[:, 1] - p[:, 0], p[:, 2] - p[:, 0], p[:, 3] - p[:, 0]], axis=2)
    return np.linalg.det(ds) * np.linalg.det(dm_inv)


def write_volume_vtu(path: str | os.PathLike, points: np.ndarray, tets: np.ndarray,
                     cell_data: dict[str, np.ndarray]) -> None:
    """Write a tet mesh to VTU (meshio, binary) atomically.

    Args:
        points: (n, 3) [m]; tets: (m, 4) int; cell_data: name -> (m,) per-tet values (e.g. "J", "body").
    """
    import meshio

    mesh = meshio.Mesh(np.asarray(points, np.float64), [("tetra", np.asarray(tets, np.int64))],
                       cell_data={k: [np.asarray(a)] for k, a in cell_data.items()})
    with atomic_path(path) as tmp:
        meshio.write(tmp, mesh, file_format="vtu")
