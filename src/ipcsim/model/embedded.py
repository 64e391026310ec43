"""Embedded bodies (Embedded IPC, 004 §III-D): a fine body's surface carried by a coarse tet mesh, x = J q.

The model's nodes of an embedded body are the coarse mesh's vertices q (n_c, 3) [m]; its collision surface is
the fine surface, each fine vertex a barycentric combination of the corners of the coarse tet that holds it
(``geometry.embedding``). Elasticity lives on the coarse tets, inertia and the collision surface come from the
fine body:

- elastic volumes (004 Eq. 15): F is constant on a coarse tet T, so the fine body's elastic energy is
  sum_T Psi(F_T) V_T with V_T = |Omega ∩ T|, the *fine* volume inside T (not T's own rest volume: a cage tet
  sticking out of the body must not add stiffness, and the energy must not depend on how far the cage reaches
  out). Eq. 15 writes V_T as the sum of the per-vertex volumes V_k of the fine vertices in T (a vertex
  quadrature); we integrate the same quantity with the fine body's volume samples (``voxel_cage.volume_samples``:
  8**2 equal sub-tets per fine tet), which is exact when the coarse mesh is the fine tet mesh itself and does not
  leave a coarse tet crossed by fine material without stiffness because no fine vertex happens to lie in it;
- mass: M = J_s^T M_s J_s, with M_s the lumped masses rho V_p of the volume samples (the fine body's lumped mass,
  refined) and J_s their embedding: the fine body's kinetic energy 1/2 v^T M_s v for v = J_s q_dot. By default
  (``mass="lumped"``) its row sums m_a = rho sum_p V_p w_pa = rho * integral of the hat function of node a over
  the fine body are used: the solver's fast diagonal path, total mass, centre of mass and linear momentum kept
  exactly, every node's mass > 0 (each kept coarse tet holds material), and for a body embedded in its own tet
  mesh it equals the full-space lumped mass. ``mass="consistent"`` keeps the whole J_s^T M_s J_s (a general
  ``Mass.from_matrix``: the fine body's exact inertia in the coarse space, no lumping dissipation).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from ..geometry.embedding import EmbeddingReport, TetLocator, embed_points
from ..geometry.surface import tet_signed_volumes
from ..geometry.surface_map import SurfaceMap
from ..geometry.voxel_cage import CageReport, cage_for_vertex_count, fine_surface, voxel_cage, volume_samples


@dataclass
class EmbeddedData:
    """An embedded body, built by ``embed_body``.

    Attributes:
        coarse_vertices: (n_c, 3) [m], the body's nodes at rest (placed).
        coarse_tets: (m, 4) int64, positively oriented.
        volumes: (m,) [m^3], V_T = the fine volume inside each coarse tet (004 Eq. 15).
        surface_vertices: (n_s, 3) [m], the fine collision surface at rest.
        faces: (f, 3) int64 over the surface vertices.
        surface_map: the fine surface from the nodes, 4 weights per surface vertex (n_nodes = n_c).
        node_masses: (n_c,) [kg], the lumped masses (row sums of M).
        mass_matrix: None (lumped) or the (3 n_c, 3 n_c) CSR J_s^T M_s J_s [kg].
        centroid: (3,) [m], the fine vertices' centroid (the centre of the initial angular velocity).
        report: the surface embedding's EmbeddingReport; cage: the CageReport of a generated cage (else None).
    """

    coarse_vertices: np.ndarray
    coarse_tets: np.ndarray
    volumes: np.ndarray
    surface_vertices: np.ndarray
    faces: np.ndarray
    surface_map: SurfaceMap
    node_masses: np.ndarray
    mass_matrix: sp.csr_matrix | None
    centroid: np.ndarray
    report: EmbeddingReport
    cage: CageReport | None = None


def make_coarse(fine_vertices, fine_elements, resolution, samples=None):
    """A voxel cage for ``resolution``: a cell size [m] (float) or {"vertices": target count}.
    Returns (vertices (n_c, 3) [m], tets (m, 4), CageReport)."""
    if isinstance(resolution, dict):
        if set(resolution) != {"vertices"}:
            raise ValueError(f"resolution must be a cell size [m] or {{'vertices': count}}, got {resolution!r}")
        return cage_for_vertex_count(fine_vertices, fine_elements, int(resolution["vertices"]))
    if resolution is None:
        raise ValueError("add_embedded_body: give coarse=(vertices, tets) or a resolution")
    return voxel_cage(fine_vertices, fine_elements, float(resolution), samples=samples)


def enclosing_tet(vertices, margin: float = 0.05) -> tuple[np.ndarray, np.ndarray]:
    """The coarse mesh of an affine body: one regular tet (4, 3) [m] and its tet [[0, 1, 2, 3]], centred on the
    vertices' (n, 3) [m] centroid, whose inscribed sphere holds them all with a relative ``margin`` (every
    barycentric weight in (0, 1): a well-conditioned 12x12 mass)."""
    v = np.asarray(vertices, np.float64)
    c = v.mean(axis=0)
    radius = float(np.linalg.norm(v - c, axis=1).max()) * (1.0 + margin)
    if not radius > 0:
        raise ValueError("add_affine_body: the body's vertices all coincide")
    # a regular tet with inradius 1 has its vertices at distance 3 from the centre
    unit = np.array([[1.0, 1.0, 1.0], [1.0, -1.0, -1.0], [-1.0, 1.0, -1.0], [-1.0, -1.0, 1.0]]) * math.sqrt(3.0)
    tet = c + radius * unit
    tets = np.array([[0, 1, 2, 3]], np.int64)
    if tet_signed_volumes(tet, tets)[0] < 0:
        tets = tets[:, [0, 2, 1, 3]]
    return tet, tets


def embed_body(fine_vertices, fine_elements, coarse=None, resolution=None, density=1000.0,
               mass="lumped") -> EmbeddedData:
    """Embed a placed fine body (vertices (n, 3) [m]; tets (t, 4) or a closed triangle surface (f, 3)) in a
    coarse tet mesh: ``coarse`` = (vertices (n_c, 3) [m], tets (m, 4)) placed like the fine body, or a voxel cage
    made at ``resolution`` (see ``make_coarse``). density [kg/m^3]; mass: "lumped" or "consistent"."""
    if mass not in ("lumped", "consistent"):
        raise ValueError(f"add_embedded_body: mass must be 'lumped' or 'consistent', got {mass!r}")
    v = np.asarray(fine_vertices, np.float64)
    samples = volume_samples(v, fine_elements)
    cage = None
    if coarse is None:
        cv, ct, cage = make_coarse(v, fine_elements, resolution, samples)
    else:
        cv, ct = np.asarray(coarse[0], np.float64), np.asarray(coarse[1], np.int64)
        neg = tet_signed_volumes(cv, ct) < 0
        ct = ct.copy()
        ct[neg] = ct[neg][:, [0, 2, 1, 3]]
    locator = TetLocator(cv, ct)
    sv, faces = fine_surface(v, fine_elements)
    jmap, report = embed_points(v[sv], cv, ct, locator=locator)
    tet, w, outside, _ = locator.locate(samples[0])
    volumes = np.bincount(tet, samples[1], len(ct))
    sample_mass = density * samples[1]
    node_masses = np.bincount(ct[tet].ravel(), (sample_mass[:, None] * w).ravel(), len(cv))
    bad = np.flatnonzero(~(node_masses > 0))
    if bad.size:
        raise ValueError(f"add_embedded_body: coarse node {bad[0]} carries no fine material (mass "
                         f"{node_masses[bad[0]]:.3g} kg; {bad.size} such nodes): remove the coarse tets around it "
                         "that the fine body does not reach")
    matrix = None
    if mass == "consistent":
        js = SurfaceMap(ct[tet], w, len(cv)).matrix
        matrix = (js.T @ sp.diags(np.repeat(sample_mass, 3)) @ js).tocsr()
    return EmbeddedData(cv, ct, volumes, v[sv], faces, jmap, node_masses, matrix, v.mean(axis=0), report, cage)


def compose_surface_map(bodies, meshes, n_nodes: int, offsets) -> SurfaceMap | None:
    """The model's SurfaceMap from the per-mesh maps: a full-space body or obstacle mesh selects its vertices
    (weight 1, its ``full_vertex_index`` + offset), an embedded body adds its offset to its 4-weight map. None when
    no body is embedded (the Model's default selection)."""
    embedded = [getattr(b, "embedded", None) for b in bodies]
    if all(e is None for e in embedded):
        return None
    nodes, weights = [], []
    for i, (mesh, off) in enumerate(zip(meshes, offsets)):
        e = embedded[i] if i < len(embedded) else None
        if e is None:
            n = np.repeat((mesh.full_vertex_index + off)[:, None], 4, axis=1)
            w = np.zeros((mesh.n_vertices, 4))
            w[:, 0] = 1.0
        else:
            n, w = e.surface_map.nodes + off, e.surface_map.weights
        nodes.append(n)
        weights.append(w)
    return SurfaceMap(np.vstack(nodes), np.vstack(weights), n_nodes)


def compose_mass_matrix(bodies, node_masses: np.ndarray, offsets) -> sp.csr_matrix | None:
    """The model's (3n, 3n) mass matrix [kg] when an embedded body keeps a consistent mass (else None): that
    body's block J_s^T M_s J_s, the lumped diagonal elsewhere (node_masses (n,) [kg])."""
    blocks = [(o, b.embedded.mass_matrix) for b, o in zip(bodies, offsets)
              if getattr(b, "embedded", None) is not None and b.embedded.mass_matrix is not None]
    if not blocks:
        return None
    diag = np.repeat(node_masses, 3)
    for o, m in blocks:
        diag[3 * o:3 * o + m.shape[0]] = 0.0
    out = sp.diags(diag).tocsr()
    n3 = len(diag)
    for o, m in blocks:
        coo = m.tocoo()
        out = out + sp.csr_matrix((coo.data, (coo.row + 3 * o, coo.col + 3 * o)), shape=(n3, n3))
    return out.tocsr()
