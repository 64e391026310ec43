"""The actuated ICT face (face.ict, face.data, face.sequence): the small face built from
../shared/data/face/ict, and the copy shipped in the package."""
import ipctk
import numpy as np
import pytest

from ipcsim.geometry.collision_mesh import CollisionMesh
from ipcsim.geometry.embedding import TetLocator
from ipcsim.geometry.shape_targets import HarmonicExtension, actuation_targets
from ipcsim.geometry.surface import boundary_faces, tet_signed_volumes
from ipcsim.contact.intersection import find_intersections
from ipcsim.face.data import load_face
from ipcsim.face.ict import build_face, jaw_motions, load_ict
from ipcsim.face.sequence import count_interpenetrations, kinematic_proxy


@pytest.fixture(scope="module")
def face(shared_data):
    return build_face("small", data_dir=shared_data / "face" / "ict")


def _ipctk_mesh(vertices, faces):
    faces = np.asarray(faces, np.int32)
    edges = ipctk.edges(faces)
    return ipctk.CollisionMesh(np.asarray(vertices, np.float64), edges, faces)


def test_mesh_valid(face):
    """Positively oriented tets; closed edge-manifold boundary without self-intersections (ipcsim and ipctk)."""
    vol = tet_signed_volumes(face.rest, face.tets)
    assert vol.min() > 0
    faces = boundary_faces(face.rest, face.tets)
    edges = np.sort(np.r_[faces[:, [0, 1]], faces[:, [1, 2]], faces[:, [2, 0]]], axis=1)
    assert np.all(np.unique(edges, axis=0, return_counts=True)[1] == 2)
    cm = CollisionMesh.from_tet_mesh(face.rest, face.tets)
    assert len(find_intersections(cm, cm.select_positions(face.rest))) == 0
    used = np.unique(faces)
    remap = np.searchsorted(used, faces)
    assert not ipctk.has_intersections(_ipctk_mesh(face.rest[used], remap), face.rest[used])
    assert 1000 <= len(face.rest) <= 3000


def test_lips_are_separate_flaps(face):
    """No tet holds vertices of both sides of the mouth opening (upper and lower lip, corners left out), and
    the two sides do not touch at rest."""
    up, lo = face.info["lip_upper"], face.info["lip_lower"]
    assert len(up) > 20 and len(lo) > 20
    both = np.isin(face.tets, up).any(axis=1) & np.isin(face.tets, lo).any(axis=1)
    assert not both.any()
    gap = np.linalg.norm(face.rest[up][:, None] - face.rest[lo][None], axis=2).min()
    assert gap > 2e-4  # measured about 0.5 mm at the small size


def test_proxy_embedding(face):
    """s = W x_rest reproduces the proxy; nearly every proxy vertex is inside a tet, the rest just outside."""
    s = face.proxy_map.apply(face.rest)
    assert np.abs(s - face.proxy_vertices).max() < 1e-12
    _, w, dist, _ = TetLocator(face.rest, face.tets).locate(face.proxy_vertices)
    inside = dist == 0
    assert inside.mean() > 0.9  # measured 775 of 804
    assert dist.max() < 1e-3  # measured 0.31 mm (chords of the coarse outer layer under the curved lips)
    assert w[inside].min() >= -1e-10 and w[inside].max() <= 1 + 1e-10
    assert len(face.proxy_vertices) > 500


def test_skin_embedding(face):
    """The visible skin: the fine patch from the proxy's inner edge out (1,150 vertices, 2,112 triangles),
    W_skin x_rest reproduces it, the proxy is part of it with the proxy's own rows of W, its vertices outside
    every tet lie at most a few mm out (at the crop's outline), and it is intersection-free at rest (ipctk)."""
    skin = face.skin
    assert (len(skin.vertices), len(skin.faces)) == (1150, 2112)
    assert np.abs(skin.map.apply(face.rest) - skin.vertices).max() < 1e-12  # measured 2.8e-17 m
    i = skin.proxy_index
    assert np.array_equal(skin.vertices[i], face.proxy_vertices)
    assert np.array_equal(skin.map.nodes[i], face.proxy_map.nodes)
    assert np.array_equal(skin.map.weights[i], face.proxy_map.weights)
    edges = lambda f: {tuple(e) for e in np.sort(np.r_[f[:, [0, 1]], f[:, [1, 2]], f[:, [2, 0]]], axis=1)}
    assert edges(i[face.proxy_faces]) <= edges(skin.faces)  # the proxy's triangles are the skin's
    _, w, dist, _ = TetLocator(face.rest, face.tets).locate(skin.vertices)
    outside = dist > 0
    assert 0 < outside.sum() < 0.3 * len(dist)  # measured 258 of 1,150 (29 of them in the proxy)
    assert dist.max() < 5e-3  # measured 4.2 mm at the outline, 0.56 mm elsewhere
    assert np.abs(w.sum(axis=1) - 1).max() < 1e-12
    assert not ipctk.has_intersections(_ipctk_mesh(skin.vertices, skin.faces), skin.vertices)


def test_rest_proxy_intersection_free(face):
    mesh = _ipctk_mesh(face.proxy_vertices, face.proxy_faces)
    assert not ipctk.has_intersections(mesh, face.proxy_vertices)
    assert count_interpenetrations(face, np.zeros((1, len(face.names))))[0] == 0


def test_actuation_targets(face):
    """A symmetric, and not the identity: the blendshapes deform the tissue."""
    A = face.actuation
    assert A.shape == (len(face.names), len(face.tets), 3, 3)
    assert np.abs(A - A.transpose(0, 1, 3, 2)).max() < 1e-12
    assert np.abs(A - np.eye(3)).max() > 0.1
    lam = np.linalg.eigvalsh(A)
    assert lam.min() >= face.info["params"]["min_stretch"] - 1e-12
    assert lam.max() <= face.info["params"]["max_stretch"] + 1e-12


def test_neutral_blendshape_gives_identity(shared_data):
    """Feature off: the neutral mesh used as a blendshape gives A = I in every tet and no bone motion."""
    f = build_face("small", data_dir=shared_data / "face" / "ict", names=("generic_neutral_mesh",))
    assert np.abs(f.actuation - np.eye(3)).max() < 1e-12
    assert np.abs(f.bone_displacements).max() == 0


def test_translation_extends_to_identity(face):
    """The harmonic extension of a translation of the bone is that translation: A = I."""
    ext = HarmonicExtension(face.rest, face.tets, face.bone)
    u = ext(np.tile([0.003, 0.001, -0.002], (len(ext.fixed), 1)))
    A0, n_inv = actuation_targets(face.rest, face.tets, u)
    assert n_inv == 0 and np.abs(A0 - np.eye(3)).max() < 1e-9


def test_jaw_follows_lower_teeth(shared_data, face):
    """jawOpen moves the jaw bone by a rigid rotation (about 25 degrees) fitted to the lower teeth; the skull
    and every other blendshape's bone stay put."""
    k = face.names.index("jawOpen")
    d = face.bone_displacements
    moving = np.linalg.norm(d[k], axis=1) > 0
    assert 20 < moving.sum() < len(face.bone)
    others = [i for i in range(len(face.names)) if i != k]
    assert np.abs(d[others]).max() == 0
    p, q = face.rest[face.bone[moving]], face.rest[face.bone[moving]] + d[k][moving]
    pc, qc = p.mean(axis=0), q.mean(axis=0)
    u, _, vt = np.linalg.svd((p - pc).T @ (q - qc))
    r = vt.T @ u.T
    assert np.abs((p - pc) @ r.T + qc - q).max() < 1e-12
    assert 20 < np.degrees(np.arccos((np.trace(r) - 1) / 2)) < 30
    assert face.info["jaw_fit_residual"] < 1e-3  # measured 0.23 mm over the ICT lower teeth


def test_sequence_interpenetrates_without_collisions(face):
    """The uncollided sequence (harmonic target field through W) intersects itself in most frames (ipctk)."""
    seq = face.sequence
    assert seq.shape == (50, len(face.names)) and seq.min() >= 0 and seq.max() <= 1
    n, counts = count_interpenetrations(face)
    assert n >= 40  # measured 47 of 50
    mesh = _ipctk_mesh(face.proxy_vertices, face.proxy_faces)
    for f in (0, 10, 30, 45):
        assert ipctk.has_intersections(mesh, kinematic_proxy(face, seq[f])) == (counts[f] > 0)
    assert face.info["interpenetrating_frames_blendshapes"] >= 40


def test_shipped_small_face_matches_build(face):
    """The packaged face_small.npz is this build (float32 targets: A within 1e-3)."""
    z = load_face("small")
    assert np.array_equal(z.tets, face.tets) and np.array_equal(z.bone, face.bone)
    assert np.abs(z.rest - face.rest).max() < 1e-12
    assert np.abs(z.proxy_map.apply(z.rest) - z.proxy_vertices).max() < 1e-12
    assert np.abs(z.actuation - face.actuation).max() < 1e-3
    assert z.names == face.names and np.abs(z.sequence - face.sequence).max() < 1e-6
    assert np.array_equal(z.skin.faces, face.skin.faces) and np.array_equal(z.skin.map.nodes, face.skin.map.nodes)
    assert np.array_equal(z.skin.vertices, face.skin.vertices)
    assert np.abs(z.skin.map.weights - face.skin.map.weights).max() < 1e-12
    assert np.array_equal(z.skin.proxy_index, face.skin.proxy_index)
    A, bone = z.blend(z.sequence[20])
    assert A.shape == (len(z.tets), 3, 3) and bone.shape == (len(z.bone), 3)


def test_add_skin_keeps_every_other_array(shared_data, tmp_path):
    """``add_skin`` gives a skinless .npz the shipped skin and leaves every other array as it was."""
    import dataclasses

    from ipcsim.face.data import add_skin, read_face, save_face

    shipped = load_face("small")
    path = tmp_path / "face.npz"
    save_face(dataclasses.replace(shipped, skin=None), path)
    before = dict(np.load(path))
    assert "skin_vertices" not in before and read_face(path).skin is None
    add_skin(path, shared_data / "face" / "ict")
    after = dict(np.load(path))
    assert all(np.array_equal(after[k], v) for k, v in before.items() if k != "info")
    skin = read_face(path).skin
    for a, b in ((skin.vertices, shipped.skin.vertices), (skin.faces, shipped.skin.faces),
                 (skin.map.nodes, shipped.skin.map.nodes), (skin.map.weights, shipped.skin.map.weights),
                 (skin.proxy_index, shipped.skin.proxy_index)):
        assert np.array_equal(a, b)


def test_load_ict_units(shared_data):
    ict = load_ict(shared_data / "face" / "ict", names=("jawOpen",))
    assert 0.1 < np.ptp(ict["neutral"][:, 1]) < 0.5  # metres: a head about 34 cm tall
    motions, res = jaw_motions(ict)
    assert res[0] < 1e-3
