"""The builder's placement and material values (``ipcsim.model.values``): Transform and Material give the same Model,
bit for bit, as the old keywords (every add_* method), a value given together with an old keyword is refused
naming both, and Material / Transform refuse bad fields with the builder's messages."""
import numpy as np
import pytest

import ipcsim
from ipcsim.energies.neohookean import lame_parameters
from ipcsim.model import Material, ModelBuilder, Transform, box_tet_mesh


def _rotation(axis, angle):
    """(3, 3) rotation by angle [rad] about a unit axis (3,) (Rodrigues)."""
    k = np.array([[0.0, -axis[2], axis[1]], [axis[2], 0.0, -axis[0]], [-axis[1], axis[0], 0.0]])
    return np.eye(3) + np.sin(angle) * k + (1.0 - np.cos(angle)) * k @ k


ROT = _rotation(np.array([1.0, 2.0, 2.0]) / 3.0, 0.7)
PLACE = dict(translation=(0.1, 0.2, -0.3), rotation=ROT, scale=0.5)
SOFT = dict(density=800.0, youngs_modulus=3e5, poisson_ratio=0.3, inversion="prevent", damping_stiffness=0.05)
ARRAYS = ("rest_positions", "tets", "mu", "lam", "mass", "volume", "youngs_modulus", "damping_stiffness",
          "prevent_inversion", "fixed")


def _cube(n=2, size=0.1):
    return box_tet_mesh((size, size, size), (n, n, n))


def _same_model(a, b):
    for name in ARRAYS:
        x, y = getattr(a[0], name), getattr(b[0], name)
        assert x.dtype == y.dtype and x.shape == y.shape and x.tobytes() == y.tobytes(), name
    assert [(n, i.tolist()) for n, i in a[0].material_groups] == [(n, i.tolist()) for n, i in b[0].material_groups]
    assert a[1].v.tobytes() == b[1].v.tobytes()
    ma, mb = a[0].mass_matrix, b[0].mass_matrix
    assert ma.node_masses.tobytes() == mb.node_masses.tobytes() and (ma.matrix is None) == (mb.matrix is None)
    if ma.matrix is not None:
        assert ma.matrix.toarray().tobytes() == mb.matrix.toarray().tobytes()


def _build(add):
    b = ModelBuilder()
    add(b)
    return b.finalize()


def test_transform_places_like_scale_rotate_translate():
    v, _ = _cube()
    got = Transform(**PLACE).apply(v)
    assert got.tobytes() == ((v * 0.5) @ ROT.T + np.array(PLACE["translation"])).tobytes()
    assert Transform().apply(v).tobytes() == v.tobytes()  # identity: scale 1, no rotation, zero translation


def test_add_body_value_path_is_bit_identical_to_keywords():
    v, t = _cube()
    kw = dict(velocity=(0.0, -1.0, 0.0), angular_velocity=(0.0, 0.0, 2.0))
    old = _build(lambda b: b.add_body(v, t, material="LCR", **PLACE, **SOFT, **kw))
    new = _build(lambda b: b.add_body(v, t, transform=Transform(**PLACE), material=Material(name="LCR", **SOFT),
                                      **kw))
    _same_model(old, new)
    assert not np.allclose(old[0].rest_positions, v)  # the placement is not the identity: ignoring it would show
    mu, lam = lame_parameters(3e5, 0.3)
    assert set(new[0].mu) == {mu} and set(new[0].lam) == {lam} and set(new[0].damping_stiffness) == {0.05}
    assert new[0].prevent_inversion.all() and new[0].material_groups[0][0] == "LCR"


@pytest.mark.parametrize("cage", ["voxel", "given"])
def test_add_embedded_body_value_path_is_bit_identical_to_keywords(cage):
    v, t = _cube(3)
    where = dict(resolution=0.06) if cage == "voxel" else dict(coarse=_cube(1))
    old = _build(lambda b: b.add_embedded_body(v, t, material="FCR", **where, **PLACE, **SOFT))
    new = _build(lambda b: b.add_embedded_body(v, t, transform=Transform(**PLACE),
                                               material=Material(name="FCR", **SOFT), **where))
    _same_model(old, new)
    assert old[0].surface_map.width == 4


def test_add_affine_body_value_path_is_bit_identical_to_keywords():
    v, t = _cube()
    affine = dict(density=500.0, inversion="prevent", damping_stiffness=0.05)
    old = _build(lambda b: b.add_affine_body(v, t, stiffness=2e6, **PLACE, **affine))
    new = _build(lambda b: b.add_affine_body(v, t, transform=Transform(**PLACE),
                                             material=Material.affine(stiffness=2e6, **affine)))
    _same_model(old, new)
    assert old[0].mu.tolist() == [2e6] and old[0].lam.tolist() == [0.0]


def test_add_obstacle_value_path_is_bit_identical_to_keywords():
    v, t = _cube()
    ov, of = _cube(1, 0.3)

    def scene(obstacle):
        def add(b):
            b.add_body(v, t)
            obstacle(b)
        return _build(add)

    old = scene(lambda b: b.add_obstacle(ov, of, velocity=(0.0, 0.1, 0.0), **PLACE))
    new = scene(lambda b: b.add_obstacle(ov, of, velocity=(0.0, 0.1, 0.0), transform=Transform(**PLACE)))
    _same_model(old, new)
    motion_old, motion_new = old[0].control.motions[0], new[0].control.motions[0]
    assert motion_old.center.tobytes() == motion_new.center.tobytes()


def test_the_defaults_are_the_old_ones():
    v, t = _cube()
    _same_model(_build(lambda b: b.add_body(v, t, density=1000.0, youngs_modulus=1e5, poisson_ratio=0.4,
                                            material="NH", translation=(0.0, 0.0, 0.0), scale=1.0)),
                _build(lambda b: b.add_body(v, t, transform=Transform(), material=Material())))
    _same_model(_build(lambda b: b.add_affine_body(v, t, density=1000.0, stiffness=1e7)),
                _build(lambda b: b.add_affine_body(v, t, material=Material.affine())))


@pytest.mark.parametrize("method", ["add_body", "add_embedded_body", "add_affine_body", "add_obstacle"])
@pytest.mark.parametrize("old", ["translation", "rotation", "scale"])
def test_a_transform_and_a_placement_keyword_conflict(method, old):
    v, t = _cube()
    extra = {"add_embedded_body": dict(coarse=(v, t))}.get(method, {})
    with pytest.raises(ValueError, match=rf"transform= conflicts with {old}="):
        getattr(ModelBuilder(), method)(v, t, transform=Transform(), **{old: PLACE[old]}, **extra)


@pytest.mark.parametrize("method", ["add_body", "add_embedded_body"])
@pytest.mark.parametrize("old", sorted(SOFT))
def test_a_material_and_a_material_keyword_conflict(method, old):
    v, t = _cube()
    extra = {"add_embedded_body": dict(coarse=(v, t))}.get(method, {})
    with pytest.raises(ValueError, match=rf"^body 0: material= conflicts with {old}= \(give one or the other\)$"):
        getattr(ModelBuilder(), method)(v, t, material=Material(), **{old: SOFT[old]}, **extra)


def test_affine_material_conflicts_and_kind():
    v, t = _cube()
    b = ModelBuilder()
    with pytest.raises(ValueError, match="material= conflicts with stiffness="):
        b.add_affine_body(v, t, material=Material.affine(), stiffness=1e6)
    with pytest.raises(ValueError, match="material= conflicts with density="):
        b.add_affine_body(v, t, material=Material.affine(), density=10.0)
    for bad in (Material(name="LCR"), "ABD"):
        with pytest.raises(ValueError, match="an affine body's material must be a Material named 'ABD'"):
            b.add_affine_body(v, t, material=bad)


@pytest.mark.parametrize("fields, message", [
    (dict(name="XX"), r"unknown material name='XX'; expected one of \['ABD', "),
    (dict(density=-1.0), r"^density must be positive, got -1.0$"),
    (dict(density=float("nan")), r"^density must be positive, got nan$"),
    (dict(density="heavy"), r"^density must be a number \[kg/m\^3\], got 'heavy'$"),
    (dict(damping_stiffness=-0.1), r"^damping_stiffness must be finite and >= 0 \[s\], got -0.1$"),
    (dict(inversion="no"), r"^inversion must be one of 'prevent', 'allow', got 'no'$"),
    (dict(youngs_modulus=0.0), r"^youngs_modulus must be finite and > 0 \[Pa\], got 0.0$"),
    (dict(poisson_ratio=0.5), r"^poisson_ratio must be finite and in \(-1, 0.5\), got 0.5$"),
    (dict(name="ABD", youngs_modulus=-1.0), r"^affine stiffness must be positive \[Pa\], got -1.0$"),
])
def test_material_refuses_bad_fields(fields, message):
    with pytest.raises(ValueError, match=message):
        Material(**fields)


def test_builder_keywords_keep_their_messages():
    v, t = _cube()
    b = ModelBuilder()
    with pytest.raises(ValueError, match=r"^body 0: density must be positive, got -2$"):
        b.add_body(v, t, density=-2)
    with pytest.raises(ValueError, match=r"^body 0: damping_stiffness must be finite and >= 0 \[s\], got -1.0$"):
        b.add_embedded_body(v, t, coarse=(v, t), damping_stiffness=-1.0)
    with pytest.raises(ValueError, match=r"^body 0: affine stiffness must be positive \[Pa\], got 0$"):
        b.add_affine_body(v, t, stiffness=0)
    with pytest.raises(ValueError, match=r"^obstacle 0: scale must be finite and > 0, got -1.0$"):
        b.add_obstacle(v, t, scale=-1.0)


@pytest.mark.parametrize("fields, message", [
    (dict(translation=(1.0, 2.0)), r"^translation must be a finite \(3,\) array"),
    (dict(translation=(0.0, np.inf, 0.0)), r"^translation must be a finite \(3,\) array"),
    (dict(rotation=np.eye(2)), r"^rotation must be a finite \(3, 3\) array"),
    (dict(scale=0.0), r"^scale must be finite and > 0, got 0.0$"),
])
def test_transform_refuses_bad_fields(fields, message):
    with pytest.raises(ValueError, match=message):
        Transform(**fields)


def test_values_are_frozen_comparable_and_exported():
    a, b = Material(name="LCR", density=10), Material(name="LCR", density=10.0)
    assert a == b and hash(a) == hash(b) and isinstance(a.density, float)
    assert Transform(rotation=np.eye(3)) == Transform(rotation=[[1, 0, 0], [0, 1, 0], [0, 0, 1]])
    with pytest.raises(AttributeError):
        a.density = 1.0
    assert ipcsim.Material is Material and ipcsim.Transform is Transform
