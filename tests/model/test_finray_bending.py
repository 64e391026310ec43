"""The fin-ray effect (issue 24): a FinRay finger clamped at its base and pushed at mid-flank bends its tip towards
the pusher, in full space and embedded in a cage that follows its holes; a voxel cage (holes filled) loses it.
Figures: ``python benchmarks/finray_bending.py``."""
import pytest

from ipcsim.scene.finray_push import FINGER, finray_push


@pytest.fixture(scope="module")
def full():
    return finray_push(None)


def test_full_space_finger_wraps_around_the_pusher(full):
    dx = full.tip[:, 0]
    # measured: tip +0.060, +0.293, +0.682, +1.304 mm over the 4 steps (10 mm push), force 0.74 N
    assert dx[-1] > 0.6e-3
    assert all(b > a for a, b in zip(dx, dx[1:]))  # it keeps wrapping as the push grows
    assert full.force[-1, 0] > 0 and full.n_inverted == 0 and full.converged


def test_conforming_cage_keeps_the_bending_mode(full):
    emb = finray_push(("conforming", dict(resolution=0.0009)))
    assert emb.n_nodes < 0.6 * full.n_nodes  # measured 2224 nodes against 4191
    # measured: tip +1.07 mm (-18 %), force 0.91 N (+24 %) against full space
    assert emb.tip[-1, 0] > 0
    assert abs(emb.tip[-1, 0] / full.tip[-1, 0] - 1) < 0.3
    assert abs(emb.force[-1, 0] / full.force[-1, 0] - 1) < 0.3
    assert emb.n_inverted == 0 and emb.converged


def test_voxel_cage_fills_the_holes_and_bends_away(full):
    # the same check with a cage that fills the hollow cells: the finger acts as a solid plate (measured: tip
    # -7.1 mm, i.e. away from the pusher, force 9.9 N); the direction test above is what tells them apart
    vox = finray_push(("voxel", 0.005))
    assert vox.tip[-1, 0] < 0 < full.tip[-1, 0]


def test_thick_finger_push_keeps_its_flank():
    # the default finger's 20 mm thickness, pushed 5 mm in 2 quasi-static steps. With a pusher of two end rings
    # only (40 x 1.3 mm side faces) the improved max approximator's negative terms outweighed the positive ones:
    # the barrier potential went negative (-4.57 J after 2.5 mm), Newton folded the flank onto the pusher
    # (measured: 51 inverted tets, force x -418 N, tip +1.66 mm). With the ringed pusher (measured): no inverted
    # tet, tip +0.034 then +0.287 mm, force 4.18 then 1.83 N (1.83 N with the old pusher and the improved max
    # approximator off, tip +0.297 mm)
    finger = dict(FINGER, thickness=0.02)
    r = finray_push(None, finger=finger, push=0.005, steps=2)
    assert r.n_inverted == 0 and r.converged
    assert 0.0 < r.tip[-1, 0] < 1e-3  # it bends towards the pusher, as the 4 mm and 8 mm fingers do
    assert 0.5 < r.force[-1, 0] < 5.0


def test_pusher_surface_is_closed_and_has_no_sliver_faces():
    import numpy as np

    from ipcsim.geometry.surface import closed_surface_problem
    from ipcsim.scene.finray_push import cylinder_surface

    v, f = cylinder_surface(0.005, 0.04)
    p = v[f]
    volume = np.einsum("ij,ij->i", p[:, 0], np.cross(p[:, 1], p[:, 2])).sum() / 6.0
    assert closed_surface_problem(f) is None
    assert volume == pytest.approx(0.5 * 24 * 0.005 ** 2 * np.sin(2 * np.pi / 24) * 0.04, rel=1e-12)  # the prism
    sides = p[: len(f) - 48]  # the end caps' 2 x 24 fans are last
    edge = np.linalg.norm(sides - np.roll(sides, 1, axis=1), axis=2)
    # side edges at most a ring's side (1.31 mm) apart along z: measured longest edge 1.85 mm (a diagonal); with
    # the two end rings only it was 40 mm
    assert edge.max() < 2.0e-3
