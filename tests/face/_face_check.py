"""ipctk's verdict on a face state's collision proxy, shared by the face tests."""
import ipctk


def proxy_intersects(model, x) -> bool:
    """ipctk's verdict on the proxy s = W x of a face model at node positions x (n, 3) [m]."""
    faces = model.proxy_faces
    mesh = ipctk.CollisionMesh(model.proxy_vertices, ipctk.edges(faces), faces)
    return bool(ipctk.has_intersections(mesh, model.proxy_map.apply(x)))
