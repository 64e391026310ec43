"""FinRay finger generator: positive, good tets, a closed manifold surface with one tunnel per hollow cell, the
dimensions asked for, the base (mounting) face selection."""
import numpy as np
import pytest

from ipcsim.geometry.finray import finray_base_vertices, finray_finger, finray_profile, triangulate_profile
from ipcsim.geometry.surface import boundary_faces, face_edges, tet_signed_volumes
from ipcsim.geometry.voxel_cage import radius_ratio

MIN_QUALITY = 0.2  # radius ratio; measured 0.25 (default finger), 0.26-0.28 for the variants below


@pytest.mark.parametrize("kw", [{}, dict(n_ribs=4, rib_angle=np.radians(-20), resolution=0.002),
                                dict(resolution=0.0015, thickness=0.006, rib_angle=np.radians(15), n_ribs=6)])
def test_finray_mesh_is_valid_closed_and_has_a_hole_per_cell(kw):
    v, t = finray_finger(**kw)
    assert tet_signed_volumes(v, t).min() > 0
    assert radius_ratio(v, t).min() > MIN_QUALITY
    f = boundary_faces(v, t)
    edges, f2e = face_edges(f)
    assert np.all(np.bincount(f2e.ravel(), minlength=len(edges)) == 2)  # closed, every edge in two faces
    n_ribs = kw.get("n_ribs", 5)
    genus = n_ribs + 1  # one tunnel through the extrusion per hollow cell
    assert len(np.unique(f)) - len(edges) + len(f) == 2 - 2 * genus
    # the bottom (z = 0) profile: Euler characteristic 1 - holes
    bottom = f[np.all(v[f][:, :, 2] == 0.0, axis=1)]
    e_b, _ = face_edges(bottom)
    assert len(np.unique(bottom)) - len(e_b) + len(bottom) == 1 - genus
    # dimensions: length, base width, thickness
    np.testing.assert_allclose(v.max(axis=0) - v.min(axis=0),
                               [kw.get("base_width", 0.045), kw.get("length", 0.1), kw.get("thickness", 0.02)],
                               rtol=0, atol=1e-12)
    # the mesh's volume is the exact profile area times the thickness (nothing left out, nothing added)
    outer, holes = finray_profile(n_ribs=n_ribs, rib_angle=kw.get("rib_angle", 0.0))
    area = lambda p: 0.5 * np.sum(p[:, 0] * np.roll(p[:, 1], -1) - np.roll(p[:, 0], -1) * p[:, 1])  # noqa: E731
    exact = (area(outer) - sum(area(h) for h in holes)) * kw.get("thickness", 0.02)
    assert tet_signed_volumes(v, t).sum() == pytest.approx(exact, rel=1e-9)


def test_finray_walls_have_the_asked_thickness():
    outer, holes = finray_profile(flank_thickness=0.002, rib_thickness=0.001, n_ribs=3, rib_angle=0.0)
    # rib gaps: the next cell starts rib_thickness above the previous one (ribs parallel to the base)
    tops = [h[:, 1].max() for h in holes[:-1]]
    bottoms = [h[:, 1].min() for h in holes[1:]]
    np.testing.assert_allclose(np.subtract(bottoms, tops), 0.001, rtol=0, atol=1e-15)
    assert holes[0][:, 1].min() == pytest.approx(0.004)  # base bar: 2 * flank thickness by default
    # flank: distance from a hole's corner on the flank to the outer edge b -> tip
    b, tip = outer[1], outer[2]
    n = np.array([tip[1] - b[1], b[0] - tip[0]]) / np.hypot(*(tip - b))
    corner = holes[1][np.argmax(holes[1][:, 0])]
    assert n @ (b - corner) == pytest.approx(0.002, abs=1e-15)


def test_finray_base_vertices_are_the_mounting_face():
    v, t = finray_finger(resolution=0.002)
    base = finray_base_vertices(v)
    assert np.all(v[base, 1] == 0.0) and np.sum(v[:, 1] == 0.0) == len(base)
    f = boundary_faces(v, t)
    on_base = np.all(np.isin(f, base), axis=1)
    a = v[f[on_base]]
    area = 0.5 * np.linalg.norm(np.cross(a[:, 1] - a[:, 0], a[:, 2] - a[:, 0]), axis=1).sum()
    assert area == pytest.approx(0.045 * 0.02, rel=1e-12)  # the whole base face, base_width x thickness


def test_finray_rejects_impossible_fingers():
    with pytest.raises(ValueError, match="cell vanishes"):
        finray_profile(n_ribs=40, rib_thickness=0.003)
    with pytest.raises(ValueError, match="no hollow"):
        finray_profile(flank_thickness=0.03)
    with pytest.raises(ValueError, match="misses the profile"):
        triangulate_profile(*finray_profile(), 0.02)


@pytest.mark.parametrize("margin", [0.0, 0.0003])
def test_finray_cage_keeps_the_holes_and_holds_the_finger(margin):
    from ipcsim.geometry.embedding import embed_points
    from ipcsim.geometry.finray import finray_cage

    shape = dict(thickness=0.004, n_ribs=5, rib_angle=np.radians(-15))
    v, t = finray_finger(resolution=0.0008, **shape)
    cv, ct = finray_cage(margin=margin, resolution=0.0009, **shape)
    assert tet_signed_volumes(cv, ct).min() > 0
    assert radius_ratio(cv, ct).min() > 0.05  # one layer 4 mm over 0.9 mm triangles; measured 0.14 (margin 0), 0.12
    f = boundary_faces(cv, ct)
    edges, _ = face_edges(f)
    assert len(np.unique(f)) - len(edges) + len(f) == 2 - 2 * 6  # still 6 tunnels: the holes are kept
    _, report = embed_points(v, cv, ct)
    assert report.n_outside == 0  # every finger vertex is inside the cage (on its boundary for margin 0)
    assert len(cv) < 0.7 * len(v)  # measured 2224 (margin 0) and 2798 nodes against 4191 finger vertices
