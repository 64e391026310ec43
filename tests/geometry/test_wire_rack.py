"""The wire-rack generator (closed outward tubes that never touch, the asked dimensions), the closed-surface
check and the OBJ surface reader."""
import ipctk
import numpy as np
import pytest

from ipcsim.geometry.mesh_io import MeshError, read_obj_surface
from ipcsim.geometry.surface import closed_surface_problem, face_edges, tet_signed_volumes
from ipcsim.geometry.voxel_cage import enclosed_volume
from ipcsim.geometry.wire_rack import tube_tet_mesh, wire_rack


def _components(faces, n):
    """Connected components of a triangle set: (n,) labels (-1 for vertices in no face)."""
    import scipy.sparse as sp
    from scipy.sparse.csgraph import connected_components
    e, _ = face_edges(faces)
    g = sp.coo_matrix((np.ones(len(e)), (e[:, 0], e[:, 1])), shape=(n, n))
    _, labels = connected_components(g, directed=False)
    used = np.zeros(n, bool)
    used[faces.ravel()] = True
    return np.where(used, labels, -1)


def test_tube_is_a_closed_outward_conforming_tet_mesh_of_the_prism_volume():
    d, length, sides = 0.003, 0.05, 8
    v, t = tube_tet_mesh((0.0, 0.0, 0.0), (0.0, length, 0.0), d, sides, segment_length=0.01)
    vol = tet_signed_volumes(v, t)
    assert np.all(vol > 0) and len(t) == 3 * sides * 5
    prism = 0.5 * sides * (0.5 * d) ** 2 * np.sin(2 * np.pi / sides) * length  # regular octagon area x length
    assert vol.sum() == pytest.approx(prism, rel=1e-12)
    from ipcsim.geometry.surface import boundary_faces
    f = boundary_faces(v, t)
    assert closed_surface_problem(f) is None
    assert enclosed_volume(v, f) == pytest.approx(prism, rel=1e-12)  # > 0: outward
    assert len(f) == 2 * sides * 5 + 2 * sides  # the side quads and two capped ends


def test_rack_tubes_are_closed_outward_separate_and_sized_as_asked():
    rack = wire_rack(n_slots=4, slot_width=0.024, wire_diameter=0.0035, wire_height=0.11)
    v, f = rack.vertices, rack.triangles
    assert closed_surface_problem(f) is None
    assert np.all(tet_signed_volumes(v, rack.tets) > 0)
    labels = _components(f, len(v))
    n_tubes = 5 + 2 + 2 * 5  # rungs, rails, two wires per divider
    assert rack.params["n_tubes"] == n_tubes and len(np.unique(labels[labels >= 0])) == n_tubes
    for c in np.unique(labels[labels >= 0]):  # every tube encloses its own tets' volume: outward
        fc = f[labels[f[:, 0]] == c]
        assert enclosed_volume(v, fc) > 0
    assert enclosed_volume(v, f) == pytest.approx(tet_signed_volumes(v, rack.tets).sum(), rel=1e-12)
    e, _ = face_edges(f)
    assert not ipctk.has_intersections(ipctk.CollisionMesh(v, e.astype(np.int32), f.astype(np.int32)), v)
    lo, hi = v.min(axis=0), v.max(axis=0)
    assert lo[1] == pytest.approx(0.0, abs=1e-15) and hi[1] == pytest.approx(0.11, abs=1e-15)
    # the wires: 3.5 mm across the polygon's corners, 0.024 m clear between neighbouring dividers
    wires = np.flatnonzero(rack.tube >= 7)
    wv = v[np.unique(rack.tets[wires])]
    radial = np.hypot(wv[:, 0] - rack.divider_x[np.argmin(np.abs(wv[:, :1] - rack.divider_x), axis=1)],
                      np.abs(wv[:, 2]) - 0.5 * rack.params["wire_spacing"])
    assert radial.max() == pytest.approx(0.5 * 0.0035, rel=1e-12)
    assert np.diff(rack.divider_x) == pytest.approx(np.full(4, 0.024 + 0.0035), rel=1e-12)
    assert rack.slot_centers.shape == (4, 3) and np.all(rack.slot_centers[:, 1] > 0)
    # the tubes are apart by exactly the clearance (stacked: rung top to rail bottom, rung top to wire cap), and a
    # tube's own non-adjacent elements further (its polygon side, 1.3 mm): ipctk's minimum distance is the gap
    tk = ipctk.CollisionMesh(v, e.astype(np.int32), f.astype(np.int32))
    near = ipctk.NormalCollisions()
    near.build(tk, v, 2e-3)
    assert np.sqrt(near.compute_minimum_distance(tk, v)) == pytest.approx(rack.params["gap"], rel=1e-9)


def test_closed_surface_problem_names_open_and_miswound_edges():
    v, t = tube_tet_mesh((0, 0, 0), (1, 0, 0), 0.1, 6, 0.5)
    from ipcsim.geometry.surface import boundary_faces
    f = boundary_faces(v, t)
    assert "open edges" in closed_surface_problem(f[1:])
    flipped = f.copy()
    flipped[0] = flipped[0, [0, 2, 1]]
    assert "inconsistent winding" in closed_surface_problem(flipped)
    assert "repeats a vertex" in closed_surface_problem(np.vstack([f, [[0, 0, 1]]]))


def test_read_obj_surface_fans_polygons_and_names_the_bad_line(tmp_path):
    p = tmp_path / "quad.obj"
    p.write_text("mtllib x.mtl\nv 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\nvt 0 0\nf 1/1/1 2/1/1 3/1/1 4/1/1\n")
    v, f = read_obj_surface(p)
    assert v.shape == (4, 3) and f.tolist() == [[0, 1, 2], [0, 2, 3]]
    p.write_text("v 0 0 0\nv 1 0 x\nf 1 2 3\n")
    with pytest.raises(MeshError, match="quad.obj: line 2"):
        read_obj_surface(p)
    p.write_text("v 0 0 0\nv 1 0 0\nf 1 2 5\n")
    with pytest.raises(MeshError, match="out of range"):
        read_obj_surface(p)
