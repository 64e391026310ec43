import ipctk
import numpy as np
import pytest

from ipcsim.contact.stiffness import (initial_barrier_stiffness, minimum_distance_squared,
                                      physical_barrier_stiffness, update_barrier_stiffness)


@pytest.mark.parametrize("diag,dhat,mass,dmin", [(2.0, 1e-3, 0.5, 0.0), (1.0, 1e-2, 3.0, 0.0), (5.0, 0.1, 1e-3, 1e-3)])
def test_initial_stiffness_matches_ipctk(rng, diag, dhat, mass, dmin):
    for scale in (1.0, -1.0, 1e-12, 1e12):  # kappa inside, below and above the admissible range
        ge = scale * rng.standard_normal(30)
        gb = rng.standard_normal(30)
        got = initial_barrier_stiffness(diag, dhat, mass, ge, gb, dmin=dmin)
        ref = ipctk.initial_barrier_stiffness(diag, ipctk.ClampedLogBarrier(), dhat, mass, ge, gb, dmin=dmin)
        np.testing.assert_allclose(got, ref, rtol=1e-12)
    got = initial_barrier_stiffness(diag, dhat, mass, np.ones(6), np.zeros(6))
    ref = ipctk.initial_barrier_stiffness(diag, ipctk.ClampedLogBarrier(), dhat, mass, np.ones(6), np.zeros(6))
    np.testing.assert_allclose(got, ref, rtol=1e-12)


@pytest.mark.parametrize("prev,cur", [(1e-20, 1e-21), (1e-21, 1e-20), (1e-10, 1e-21), (1e-20, 1e-20)])
def test_update_stiffness_matches_ipctk(prev, cur):
    for kappa in (2.0, 9.0):
        assert update_barrier_stiffness(prev, cur, 10.0, kappa, 1.0) == ipctk.update_barrier_stiffness(
            prev, cur, 10.0, kappa, 1.0)


def test_physical_stiffness():
    assert physical_barrier_stiffness(1e6) == pytest.approx(1e5)
    assert physical_barrier_stiffness(2e5, 0.5) == pytest.approx(1e5)
    with pytest.raises(ValueError, match="young_modulus"):
        physical_barrier_stiffness(-1.0)
    with pytest.raises(ValueError, match="dhat"):
        initial_barrier_stiffness(1.0, 0.0, 1.0, np.zeros(3), np.zeros(3))


def test_minimum_distance_matches_ipctk():
    from ipcsim.contact.collisions import build_collisions
    from ipcsim.geometry.collision_mesh import CollisionMesh

    from _barrier_scenes import two_sheets

    x, f = two_sheets(6, 1e-2, jitter=0.2, seed=3)
    mesh = CollisionMesh.from_triangle_mesh(x, f)
    col = build_collisions(mesh, x, 1e-2)
    cm = ipctk.CollisionMesh(x, mesh.edges.astype(np.int32), mesh.faces.astype(np.int32))
    c = ipctk.NormalCollisions()
    c.build(cm, x, 1e-2)
    assert minimum_distance_squared(col, mesh, x) == pytest.approx(c.compute_minimum_distance(cm, x), rel=1e-12)
