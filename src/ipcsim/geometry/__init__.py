"""Meshes, surface extraction, adjacency, the unknowns-to-surface map, embeddings and voxel cages."""
from .adjacency import Adjacency
from .collision_mesh import CollisionMesh, Plane
from .embedding import EmbeddingReport, TetLocator, embed_points
from .mesh_io import MeshError, load_tet_mesh, read_mesh
from .surface import boundary_faces, face_edges, tet_signed_volumes
from .voxel_cage import CageReport, box_tet_mesh, cage_for_vertex_count, voxel_cage

__all__ = [
    "Adjacency",
    "CageReport",
    "EmbeddingReport",
    "TetLocator",
    "box_tet_mesh",
    "cage_for_vertex_count",
    "embed_points",
    "voxel_cage",
    "CollisionMesh",
    "MeshError",
    "Plane",
    "boundary_faces",
    "face_edges",
    "load_tet_mesh",
    "read_mesh",
    "tet_signed_volumes",
]
