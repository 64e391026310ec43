"""Reading meshes from disk (meshio) with one-line errors naming the file."""
from __future__ import annotations

import contextlib
import io
import os
import warnings

import numpy as np


class MeshError(ValueError):
    """A mesh file that cannot be used; the message names the file."""


def _one_line(text: str) -> str:
    return " ".join(text.split())


def read_mesh(path: str | os.PathLike) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """Read a mesh file. Returns (points (n, 3) float64 [file units], cells by type: 'tetra', 'triangle', 'line').

    Supported: anything meshio reads (.msh Gmsh 2/4.1 incl. IPC's extra $Surface section, .obj, .ply,
    .vtk, .vtu, ...). Raises MeshError with the path in the message.
    """
    import meshio

    path = os.fspath(path)
    if os.path.isdir(path):
        raise MeshError(f"{path}: is a directory, not a mesh file")
    if not os.path.isfile(path):
        raise MeshError(f"{path}: no such mesh file")
    chatter = io.StringIO()  # meshio prints its own diagnostics; keep them for the message
    try:
        with warnings.catch_warnings(), contextlib.redirect_stdout(chatter), contextlib.redirect_stderr(chatter):
            warnings.simplefilter("ignore")
            m = meshio.read(path)
    except meshio.ReadError as exc:
        raise MeshError(f"{path}: cannot read mesh ({_one_line(str(exc))})") from None
    except SystemExit:  # meshio exits when no reader for the extension accepts the file
        raise MeshError(f"{path}: cannot read mesh ({_one_line(chatter.getvalue()) or 'unknown format'})") from None
    except Exception as exc:  # malformed content raises assorted errors inside meshio
        raise MeshError(f"{path}: malformed mesh ({type(exc).__name__}: {_one_line(str(exc))})") from None
    points = np.asarray(m.points, dtype=np.float64)
    if points.ndim != 2 or points.shape[1] not in (2, 3):
        raise MeshError(f"{path}: points have shape {points.shape}")
    if points.shape[1] == 2:
        points = np.hstack([points, np.zeros((len(points), 1))])
    cells: dict[str, list[np.ndarray]] = {}
    for block in m.cells:
        cells.setdefault(block.type, []).append(np.asarray(block.data, dtype=np.int64))
    return points, {k: np.vstack(v) for k, v in cells.items()}


def load_tet_mesh(path: str | os.PathLike) -> tuple[np.ndarray, np.ndarray]:
    """Read a whole tetrahedral body from a mesh file.

    Returns (vertices (n, 3) float64 [file units, usually m], tets (m, 4) int64). All points of the
    file are kept (the simulator's full vertex array). Raises MeshError (a ValueError) with a one-line
    message naming the file when the file is missing or unreadable, holds no tetrahedra, has
    non-finite coordinates, or a tet refers to a point that does not exist. Degenerate or inverted
    tets are not checked here (that is the simulator's job).
    """
    points, cells = read_mesh(path)
    path = os.fspath(path)
    tets = cells.get("tetra")
    if tets is None or len(tets) == 0:
        found = ", ".join(f"{len(v)} {k}" for k, v in cells.items()) or "no cells"
        raise MeshError(f"{path}: no tetrahedra in the mesh (found {found})")
    tets = np.ascontiguousarray(tets, dtype=np.int64).reshape(-1, 4)
    bad = np.flatnonzero((tets < 0).any(axis=1) | (tets >= len(points)).any(axis=1))
    if bad.size:
        raise MeshError(
            f"{path}: tet {bad[0]} = {tets[bad[0]].tolist()} refers to a point outside 0..{len(points) - 1}"
        )
    finite = np.all(np.isfinite(points), axis=1)
    if not finite.all():
        raise MeshError(f"{path}: point {int(np.flatnonzero(~finite)[0])} has a non-finite coordinate")
    return np.ascontiguousarray(points, dtype=np.float64), tets


def read_obj_surface(path: str | os.PathLike) -> tuple[np.ndarray, np.ndarray]:
    """The triangles of a Wavefront OBJ file from its ``v`` and ``f`` lines only (texture and normal indices in
    ``f a/b/c`` are dropped; every other line is ignored: meshio rejects some files that carry texture
    coordinates). Returns (vertices (n, 3) float64 [file units], triangles (f, 3) int64, 0-based). Polygons are
    fanned into triangles. Raises MeshError naming the file and line."""
    path = os.fspath(path)
    if not os.path.isfile(path):
        raise MeshError(f"{path}: no such mesh file")
    vertices, faces = [], []
    with open(path, encoding="utf-8", errors="replace") as fh:
        for number, line in enumerate(fh, 1):
            parts = line.split()
            if not parts or parts[0] not in ("v", "f"):
                continue
            try:
                if parts[0] == "v":
                    vertices.append([float(t) for t in parts[1:4]])
                    if len(vertices[-1]) != 3:
                        raise ValueError("a vertex needs 3 coordinates")
                    continue
                ids = [int(t.split("/")[0]) for t in parts[1:]]
                if len(ids) < 3:
                    raise ValueError("a face needs 3 or more vertices")
                ids = [i - 1 if i > 0 else len(vertices) + i for i in ids]  # OBJ: 1-based, negative from the end
                faces += [[ids[0], ids[k], ids[k + 1]] for k in range(1, len(ids) - 1)]
            except ValueError as exc:
                raise MeshError(f"{path}: line {number}: {_one_line(str(exc))}") from None
    v, f = np.asarray(vertices, np.float64).reshape(-1, 3), np.asarray(faces, np.int64).reshape(-1, 3)
    if len(f) == 0:
        raise MeshError(f"{path}: no faces")
    if f.min() < 0 or f.max() >= len(v) or not np.all(np.isfinite(v)):
        raise MeshError(f"{path}: a face names a vertex out of range 1..{len(v)}, or a coordinate is not finite")
    return v, f
