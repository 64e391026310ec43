"""The synthetic two-flaps FaceModel (face.flaps): consistent fields, the proxy embedded exactly inside the
simulation tets, symmetric targets, a jaw that rotates the lower bone rigidly, and facing sheets that the jaw
drives through each other (so a run without collision handling can intersect)."""
import numpy as np

from ipcsim.contact.intersection import has_intersections
from ipcsim.energies.shape_targeting import rest_shape
from ipcsim.geometry.collision_mesh import CollisionMesh
from ipcsim.face.flaps import two_flaps


def test_fields_and_embedding():
    m = two_flaps(resolution=(4, 2, 1), frames=3)
    n, n_tets = len(m.rest), len(m.tets)
    assert m.actuation.shape == (2, n_tets, 3, 3) and m.bone_displacements.shape == (2, len(m.bone), 3)
    assert m.sequence.shape == (3, 2) and np.allclose(m.sequence[-1], 1.0)
    np.testing.assert_allclose(m.actuation, m.actuation.transpose(0, 1, 3, 2))
    assert np.all(rest_shape(m.rest, m.tets)[1] > 0.0)
    np.testing.assert_allclose(m.proxy_map.apply(m.rest), m.proxy_vertices, atol=1e-12)
    assert m.proxy_map.weights.min() >= -1e-12  # inside the tets, not extrapolated
    assert len(np.unique(m.bone)) == len(m.bone) and m.bone.max() < n
    mesh = CollisionMesh.from_triangle_mesh(m.proxy_vertices, m.proxy_faces)
    assert not has_intersections(mesh, m.proxy_vertices)


def test_the_jaw_rotates_the_lower_bone_and_crosses_the_sheets():
    m = two_flaps(resolution=(4, 2, 1), frames=3, angle=10.0)
    _, bone = m.blend([1.0, 0.0])
    low = m.bone[m.rest[m.bone, 1] < 0.0]
    up = m.bone[m.rest[m.bone, 1] > 0.0]
    moved = bone[np.isin(m.bone, low)]
    rest = m.rest[low]
    d_rest = np.linalg.norm(rest[:, None] - rest[None], axis=2)
    d_moved = np.linalg.norm(moved[:, None] - moved[None], axis=2)
    np.testing.assert_allclose(d_moved, d_rest, atol=1e-12)  # rigid
    assert moved[:, 1].max() > rest[:, 1].max() + 0.5  # the far end rises
    np.testing.assert_array_equal(bone[np.isin(m.bone, up)], m.rest[up])
    # moving every lower vertex rigidly with its bone puts the lower sheet through the upper one
    c, s = np.cos(np.radians(10.0)), np.sin(np.radians(10.0))
    hinge = np.array([0.0, m.rest[:, 1].min(), 0.0])
    x = m.rest.copy()
    lower = m.rest[:, 1] < 0.0
    x[lower] = (m.rest[lower] - hinge) @ np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]]).T + hinge
    mesh = CollisionMesh.from_triangle_mesh(m.proxy_vertices, m.proxy_faces)
    assert has_intersections(mesh, m.proxy_map.apply(x))


def test_the_skin_drawn_is_the_tets_boundary():
    """No fine skin (``FaceModel.skin`` None): the frames' skin is the simulation mesh's boundary, its vertices
    selected as they are (``face.runner.skin_surface``)."""
    from ipcsim.face.runner import skin_surface
    from ipcsim.geometry.surface import boundary_faces

    m = two_flaps(resolution=(4, 2, 1), frames=3)
    assert m.skin is None
    skin_map, faces = skin_surface(m)
    assert skin_map.is_selection
    assert np.array_equal(skin_map.index[faces], boundary_faces(m.rest, m.tets))
    x = m.rest + 0.01 * np.arange(m.rest.size).reshape(-1, 3)
    assert np.array_equal(skin_map.apply(x), x[skin_map.index])
