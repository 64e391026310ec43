"""The convergent barrier potential can be negative (docs/contact.md, "A negative barrier potential"): a column
of finely meshed vertices along the long edge of an obstacle with sliver faces (the FinRay pusher with its two
end rings, docs/finray.md). ipctk is the oracle for the value; the guard's message is checked here, its use by
the solver in tests/solvers/test_negative_barrier.py."""
import dataclasses

import ipctk
import numpy as np
import pytest

from ipcsim.contact.barrier_potential import barrier_potential
from ipcsim.contact.barrier_sign import negative_barrier_message
from ipcsim.contact.collisions import build_collisions
from ipcsim.contact.formulation import BarrierFormulation
from ipcsim.geometry.collision_mesh import CollisionMesh
from ipcsim.scene.finray_push import cylinder_surface

from _sliver_pusher import two_ring_cylinder

DHAT = 1e-3
KAPPA = 2.6e6  # the FinRay finger's: 0.1 x TPU's Young's modulus [Pa]
RADIUS, LENGTH = 5e-3, 20e-3


def fine_sheet(gap, dy=0.24e-3, dz=0.8e-3, ny=5, nz=21):
    """A sheet in the plane x = RADIUS + gap [m] (the cylinders' vertex column at angle 0 is the long edge
    x = RADIUS, y = 0), ny x nz vertices dy x dz [m] apart, centred on that edge: ((ny nz, 3), (2 (ny-1)(nz-1), 3))."""
    y = (np.arange(ny) - (ny - 1) / 2) * dy
    z = (np.arange(nz) - (nz - 1) / 2) * dz
    gy, gz = np.meshgrid(y, z, indexing="ij")
    v = np.column_stack([np.full(gy.size, RADIUS + gap), gy.ravel(), gz.ravel()])
    idx = np.arange(gy.size).reshape(ny, nz)
    a, b, c, d = idx[:-1, :-1].ravel(), idx[1:, :-1].ravel(), idx[1:, 1:].ravel(), idx[:-1, 1:].ravel()
    return v, np.concatenate([np.column_stack([a, b, c]), np.column_stack([a, c, d])])


def scene(cylinder, gap):
    """(mesh, x): the sheet (body 0) and the cylinder (body 1), no self contact, at rest."""
    (vs, fs), (vc, fc) = fine_sheet(gap), cylinder
    mesh = CollisionMesh.concatenate([CollisionMesh.from_triangle_mesh(vs, fs, body=0),
                                      CollisionMesh.from_triangle_mesh(vc, fc, body=1)])
    return dataclasses.replace(mesh, self_contact=np.array([False, False])), np.concatenate([vs, vc])


def kappa_b(mesh, x, improved_max=True):
    """kappa B [J] with area weights and the physical barrier (the convergent formulation, improved max on/off)."""
    col = build_collisions(mesh, x, DHAT, use_area_weighting=True, use_improved_max_approximator=improved_max)
    return barrier_potential(col, mesh, x, KAPPA, use_physical_barrier=True)


@pytest.mark.parametrize("gap", [5e-4, 1e-4])
def test_sliver_faces_drive_the_convergent_barrier_negative(gap):
    mesh, x = scene(two_ring_cylinder(RADIUS, LENGTH), gap)
    # measured: -0.235 J at 0.5 mm, -0.992 J at 0.1 mm; without the improved max +1.19 J, +6.52 J
    assert kappa_b(mesh, x) < 0.0 < kappa_b(mesh, x, improved_max=False)


def test_the_same_cylinder_with_rings_stays_positive():
    # the shipped pusher (rings 1.31 mm apart): measured +0.338 J at a 0.1 mm gap
    mesh, x = scene(cylinder_surface(RADIUS, LENGTH), 1e-4)
    assert kappa_b(mesh, x) > 0.0


def test_negative_value_matches_ipctk():
    mesh, x = scene(two_ring_cylinder(RADIUS, LENGTH), 1e-4)
    mesh = dataclasses.replace(mesh, self_contact=None)  # ipctk's default: every pair, the sheet's own included
    cm = ipctk.CollisionMesh(x, mesh.edges.astype(np.int32), mesh.faces.astype(np.int32))
    c = ipctk.NormalCollisions()
    c.use_area_weighting = True
    c.collision_set_type = ipctk.NormalCollisions.IMPROVED_MAX_APPROX
    threads = ipctk.get_num_threads()
    ipctk.set_num_threads(1)
    try:
        c.build(cm, x, DHAT)
    finally:
        ipctk.set_num_threads(threads)
    ref = ipctk.BarrierPotential(DHAT, KAPPA, True)(c, cm, x)
    # measured: ipctk 1.6.1 -0.872738 J, ipcsim the same to 1e-15 (with the sheet's own pairs)
    assert ref < 0.0
    assert kappa_b(mesh, x) == pytest.approx(ref, rel=1e-10)


def test_message_names_the_cause_and_the_switch():
    on, off = BarrierFormulation.of(True), BarrierFormulation.of(False)
    assert negative_barrier_message(0.0, on) is None and negative_barrier_message(1e-3, on) is None
    text = negative_barrier_message(-1.2, on)
    assert "-1.2 J" in text and "sliver faces" in text and '"convergent": false' in text
    assert "unexpected" in negative_barrier_message(-1.2, off)
    assert negative_barrier_message(float("nan"), on) is None
