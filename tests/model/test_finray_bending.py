"""The fin-ray effect (issue 24): a FinRay finger clamped at its base and pushed at mid-flank bends its tip towards
the pusher, in full space and embedded in a cage that follows its holes; a voxel cage (holes filled) loses it.
Figures: ``python benchmarks/finray_bending.py``."""
import pytest

from ipcsim.scene.finray_push import finray_push


@pytest.fixture(scope="module")
def full():
    return finray_push(None)


def test_full_space_finger_wraps_around_the_pusher(full):
    dx = full.tip[:, 0]
    # measured: tip +0.085, +0.30, +0.67, +1.26 mm over the 4 steps (10 mm push), force 0.81 N
    assert dx[-1] > 0.6e-3
    assert all(b > a for a, b in zip(dx, dx[1:]))  # it keeps wrapping as the push grows
    assert full.force[-1, 0] > 0 and full.n_inverted == 0 and full.converged


def test_conforming_cage_keeps_the_bending_mode(full):
    emb = finray_push(("conforming", dict(resolution=0.0009)))
    assert emb.n_nodes < 0.6 * full.n_nodes  # measured 2224 nodes against 4191
    # measured: tip +1.00 mm (-21 %), force 1.01 N (+25 %) against full space
    assert emb.tip[-1, 0] > 0
    assert abs(emb.tip[-1, 0] / full.tip[-1, 0] - 1) < 0.3
    assert abs(emb.force[-1, 0] / full.force[-1, 0] - 1) < 0.3
    assert emb.n_inverted == 0 and emb.converged


def test_voxel_cage_fills_the_holes_and_bends_away(full):
    # the same check with a cage that fills the hollow cells: the finger acts as a solid plate (measured: tip
    # -7.4 mm, i.e. away from the pusher, force 9.8 N); the direction test above is what tells them apart
    vox = finray_push(("voxel", 0.005))
    assert vox.tip[-1, 0] < 0 < full.tip[-1, 0]
