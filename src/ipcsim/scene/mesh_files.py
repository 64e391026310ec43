"""Mesh files of scenes: tet meshes for bodies; triangle, tet, edge (.seg) or point (.pt) meshes for obstacles.

The .seg/.pt format of the IPC code is read here: one entry per line, ``v x y z`` (a vertex) and ``s i j`` (a
segment between vertices i and j, 1-based); blank lines and lines starting with ``#`` are skipped. Everything
else goes through meshio (``ipcsim.geometry.mesh_io``). Errors are ``MeshFileError`` (a ValueError) whose message
does NOT repeat the path (the scene loader adds the scene file and key path in front).
"""
from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np

CODIM_EXTENSIONS = (".seg", ".pt")


class MeshFileError(ValueError):
    """A mesh file that cannot be used (missing, unreadable, unknown format, wrong element type)."""


@dataclass
class MeshData:
    """Vertices (n, 3) float64 [file units] and elements: (m, 4) tets, (m, 3) triangles, (m, 2) segments, or
    None for a point set; kind is "tet", "triangle", "edge" or "point"."""

    vertices: np.ndarray
    elements: np.ndarray | None
    kind: str


def mesh_format_known(path: str | os.PathLike) -> bool:
    """True when the file extension is .seg/.pt or one meshio can read."""
    import meshio

    name = os.fspath(path).lower()
    return name.endswith(CODIM_EXTENSIONS) or any(name.endswith(ext) for ext in meshio.extension_to_filetypes)


def read_seg(path: str | os.PathLike) -> tuple[np.ndarray, np.ndarray]:
    """Read an IPC .seg/.pt file: (vertices (n, 3) float64, segments (m, 2) int64, 0-based; (0, 2) for .pt).

    Raises MeshFileError naming the line (``line 3: ...``) on a malformed entry or an index out of range.
    """
    try:
        with open(path, encoding="utf-8") as fh:
            lines = fh.read().splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise MeshFileError(f"{type(exc).__name__}: {exc.strerror if isinstance(exc, OSError) else exc}") from None
    vertices, vertex_lines, segments, seg_lines = [], [], [], []
    for number, line in enumerate(lines, start=1):
        words = line.split()
        if not words or words[0].startswith("#"):
            continue
        try:
            if words[0] == "v" and len(words) == 4:
                vertices.append([float(w) for w in words[1:]])
                vertex_lines.append(number)
                continue
            if words[0] == "s" and len(words) == 3:
                segments.append([int(w) - 1 for w in words[1:]])
                seg_lines.append(number)
                continue
        except ValueError:
            pass
        raise MeshFileError(f"line {number}: expected 'v x y z' or 's i j', got {line.strip()[:40]!r}")
    v = np.asarray(vertices, dtype=np.float64).reshape(-1, 3)
    s = np.asarray(segments, dtype=np.int64).reshape(-1, 2)
    finite = np.all(np.isfinite(v), axis=1)
    if not finite.all():
        raise MeshFileError(f"line {vertex_lines[int(np.flatnonzero(~finite)[0])]}: vertex has a non-finite "
                            "coordinate")
    bad = np.flatnonzero((s < 0).any(axis=1) | (s >= len(v)).any(axis=1))
    if bad.size:
        raise MeshFileError(f"line {seg_lines[bad[0]]}: segment refers to a vertex outside 1..{len(v)}")
    if len(v) == 0:
        raise MeshFileError("no vertex ('v x y z' lines)")
    return v, s


def _read_meshio(path) -> tuple[np.ndarray, dict]:
    from ..geometry.mesh_io import read_mesh

    try:
        points, cells = read_mesh(path)
    except ValueError as exc:  # MeshError: its message starts with the path; keep the reason only
        text = str(exc)
        prefix = os.fspath(path) + ": "
        raise MeshFileError(text[len(prefix):] if text.startswith(prefix) else text) from None
    finite = np.all(np.isfinite(points), axis=1)
    if not finite.all():
        raise MeshFileError(f"vertex {int(np.flatnonzero(~finite)[0])} has a non-finite coordinate")
    return points, cells


def _check_indices(elements: np.ndarray, n: int, what: str) -> np.ndarray:
    bad = np.flatnonzero((elements < 0).any(axis=1) | (elements >= n).any(axis=1))
    if bad.size:
        raise MeshFileError(f"{what} {bad[0]} refers to a vertex outside 0..{n - 1}")
    return elements


def _found(cells: dict) -> str:
    return ", ".join(f"{len(v)} {k}" for k, v in cells.items()) or "no cells"


def read_mesh_data(path: str | os.PathLike) -> MeshData:
    """Read any scene mesh file, keeping its highest-dimensional elements: tets, else triangles (quads split in
    two), else segments, else points. Raises MeshFileError (no such file, unknown format, unreadable)."""
    path = os.fspath(path)
    if not os.path.exists(path):
        raise MeshFileError("no such file")
    if os.path.isdir(path):
        raise MeshFileError("is a directory, not a mesh file")
    if not mesh_format_known(path):
        ext = os.path.splitext(path)[1] or "(no extension)"
        raise MeshFileError(f"unknown mesh format {ext!r} (use .msh, .vtk, .vtu, .obj, .ply, .stl, .off, .seg, .pt, "
                            "or another format meshio reads)")
    if path.lower().endswith(CODIM_EXTENSIONS):
        v, s = read_seg(path)
        return MeshData(v, s, "edge") if len(s) else MeshData(v, None, "point")
    points, cells = _read_meshio(path)
    n = len(points)
    if len(cells.get("tetra", ())):
        return MeshData(points, _check_indices(cells["tetra"].reshape(-1, 4), n, "tet"), "tet")
    tris = [cells[k].reshape(-1, 3) for k in ("triangle",) if len(cells.get(k, ()))]
    if len(cells.get("quad", ())):
        q = cells["quad"].reshape(-1, 4)
        tris.append(np.vstack([q[:, [0, 1, 2]], q[:, [0, 2, 3]]]))
    if tris:
        return MeshData(points, _check_indices(np.vstack(tris), n, "triangle"), "triangle")
    if len(cells.get("line", ())):
        return MeshData(points, _check_indices(cells["line"].reshape(-1, 2), n, "segment"), "edge")
    if n and (not cells or set(cells) <= {"vertex"}):
        return MeshData(points, None, "point")
    raise MeshFileError(f"no usable elements (found {_found(cells)})")


def _read_tets(path, why: str) -> tuple[np.ndarray, np.ndarray]:
    data = read_mesh_data(path)
    if data.kind != "tet":
        count = 0 if data.elements is None else len(data.elements)
        raise MeshFileError(f"holds no tetrahedra (found {count} {data.kind}s); {why}")
    return data.vertices, np.ascontiguousarray(data.elements, dtype=np.int64)


def read_body_mesh(path: str | os.PathLike) -> tuple[np.ndarray, np.ndarray]:
    """A full-space body's tet mesh: (vertices (n, 3) float64 [file units], tets (m, 4) int64). Raises
    MeshFileError when the file holds no tetrahedra (a body needs a volume mesh)."""
    return _read_tets(path, "a full-space body needs a tet mesh (embedded and affine bodies may be closed "
                            "triangle surfaces)")


def read_coarse_mesh(path: str | os.PathLike) -> tuple[np.ndarray, np.ndarray]:
    """An embedded body's coarse tet mesh: (vertices (n_c, 3) float64 [file units], tets (m, 4) int64). Raises
    MeshFileError when the file holds no tetrahedra."""
    return _read_tets(path, "a coarse mesh needs tets")


def read_solid_mesh(path: str | os.PathLike) -> tuple[np.ndarray, np.ndarray]:
    """The fine mesh of an embedded or affine body: (vertices (n, 3) float64 [file units], tets (m, 4) or
    triangles (m, 3) int64). Raises MeshFileError when the file holds neither (``closed_surface`` checks the
    triangles)."""
    data = read_mesh_data(path)
    if data.kind not in ("tet", "triangle"):
        count = 0 if data.elements is None else len(data.elements)
        raise MeshFileError(f"holds no tetrahedra or triangles (found {count} {data.kind}s); an embedded or affine "
                            "body needs a tet mesh or a closed triangle surface")
    return data.vertices, np.ascontiguousarray(data.elements, dtype=np.int64)


def closed_surface(vertices: np.ndarray, faces: np.ndarray) -> np.ndarray:
    """The faces (f, 3) of a closed, consistently oriented triangle surface (vertices (n, 3)), turned outward
    (reversed when they enclose a negative volume). Raises MeshFileError naming an edge that is not shared by
    exactly two faces, or shared by two faces running it the same way (inconsistent orientation)."""
    f = np.asarray(faces, np.int64)
    directed = np.concatenate([f[:, [0, 1]], f[:, [1, 2]], f[:, [2, 0]]])
    undirected, counts = np.unique(np.sort(directed, axis=1), axis=0, return_counts=True)
    if np.any(counts != 2):
        k = int(np.flatnonzero(counts != 2)[0])
        raise MeshFileError(f"not a closed surface: edge {undirected[k].tolist()} belongs to {counts[k]} "
                            "triangle(s), not 2")
    pairs, counts = np.unique(directed, axis=0, return_counts=True)
    if np.any(counts != 1):
        k = int(np.flatnonzero(counts != 1)[0])
        raise MeshFileError(f"inconsistently oriented triangles: two of them run along edge {pairs[k].tolist()} "
                            "the same way")
    v = np.asarray(vertices, np.float64)
    volume = np.einsum("ij,ij->i", v[f[:, 0]], np.cross(v[f[:, 1]], v[f[:, 2]])).sum() / 6.0
    if not abs(volume) > 0:
        raise MeshFileError("the triangle surface encloses no volume")
    return f if volume > 0 else f[:, ::-1].copy()


def read_keyframe(path: str | os.PathLike) -> np.ndarray:
    """Vertex positions (n, 3) float64 of one keyframe file (any format of ``read_mesh_data``)."""
    return read_mesh_data(path).vertices
