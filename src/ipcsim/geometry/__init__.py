"""Meshes, surface extraction, adjacency and the unknowns-to-surface map."""
from .adjacency import Adjacency
from .collision_mesh import CollisionMesh, Plane
from .mesh_io import MeshError, load_tet_mesh, read_mesh
from .surface import boundary_faces, face_edges, tet_signed_volumes

__all__ = [
    "Adjacency",
    "CollisionMesh",
    "MeshError",
    "Plane",
    "boundary_faces",
    "face_edges",
    "load_tet_mesh",
    "read_mesh",
    "tet_signed_volumes",
]
