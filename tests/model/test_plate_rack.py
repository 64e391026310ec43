"""004 §IV-B's plate and wire rack as affine bodies: Drake's 8-inch plate (closed, metres, y up, 0.375 kg), the
rack generated for it, and the thin-wire test: a plate dropped edge-first at 2 m/s onto a single 3 mm wire with
h = 0.02 s (4 cm per step, 13 wire diameters) never passes through it."""
import ipctk
import numpy as np
import pytest

from ipcsim.demos import plate_rack_parts as pr
from ipcsim.geometry.surface import closed_surface_problem, face_edges
from ipcsim.geometry.voxel_cage import enclosed_volume
from ipcsim.geometry.wire_rack import tube_tet_mesh
from ipcsim.model import ModelBuilder
from ipcsim.solvers.integrator_solvers import ContactParameters, FrictionParameters, ImplicitEulerSolver


def _ipctk_mesh(v, f):
    e, _ = face_edges(f)
    return ipctk.CollisionMesh(np.asarray(v, np.float64), e.astype(np.int32), np.asarray(f, np.int32))


def test_plate_mesh_is_a_closed_outward_surface_in_metres_y_up():
    v, f = pr.plate_mesh()
    assert v.shape == (450, 3) and f.shape == (896, 3)
    assert closed_surface_problem(f) is None
    assert len(v) - len(face_edges(f)[0]) + len(f) == 2  # genus 0: one solid, no handle
    volume = enclosed_volume(v, f)
    assert volume == pytest.approx(pr.PLATE_VOLUME, rel=1e-9) and volume > 0  # outward: 171.14 cm^3
    assert not ipctk.has_intersections(_ipctk_mesh(v, f), v)
    # metres: 8 inches across (0.196 m measured); y up: the rim stands above the well, the foot on y = 0
    assert np.ptp(v[:, 0]) == pytest.approx(8 * 0.0254, rel=0.05) and np.ptp(v[:, 2]) == pytest.approx(np.ptp(v[:, 0]))
    assert v[:, 1].min() == 0.0 and pr.plate_height() == pytest.approx(0.01776, abs=1e-5)
    r = np.hypot(v[:, 0], v[:, 2])
    assert v[r > 0.09, 1].mean() > v[r < 0.05, 1].mean() + 0.01


def test_plate_affine_body_has_drakes_mass():
    b = ModelBuilder()
    body = pr.add_plate(b, rotation=pr.upright_plate_rotation(0.3), translation=(0.1, 0.2, 0.0))
    model, state = b.finalize()
    assert model.material_groups[0][0] == "ABD" and model.mu[body] == 1e7
    # measured: 0.375 kg to 1e-15 relative (density = mass / enclosed volume)
    assert model.mass.sum() == pytest.approx(pr.PLATE_MASS, rel=1e-12)
    v = np.ones((4, 3)) * (0.0, -1.0, 0.0)  # a translation: kinetic energy 1/2 m |v|^2 through the full 12x12 mass
    ke = 0.5 * v.ravel() @ (model.mass_matrix.matrix @ v.ravel())
    assert ke == pytest.approx(0.5 * pr.PLATE_MASS, rel=1e-12)


def test_rack_for_plate_slot_fits_the_plate():
    rack = pr.rack_for_plate(n_slots=2)
    assert rack.params["slot_width"] == pytest.approx(pr.plate_height() + pr.SLOT_CLEARANCE)
    b = ModelBuilder()
    pr.add_rack(b, rack)
    model, _ = b.finalize()
    volume = 0.5 * 8 * np.sin(np.pi / 4) * (0.5 * np.array([0.004] * 5 + [0.0035] * 6)) ** 2  # octagon areas
    assert model.mass.sum() == pytest.approx(pr.RACK_DENSITY * float(
        np.sum(volume * np.array([0.1] * 3 + [np.ptp(rack.vertices[:, 0])] * 2 + [0.1 - 0.0045] * 6))), rel=1e-9)


def _drop_on_wire(steps=15, h=0.02, speed=2.0, wire_diameter=0.003, kappa=None):
    """Run the drop; returns (frames of surface positions (n, 3) [m], ipctk mesh, per-step min distances [m],
    the plate's surface vertices (n,) bool)."""
    b = ModelBuilder()
    v, _ = pr.plate_mesh()
    radius = np.abs(v[:, 0]).max()
    plate = pr.add_plate(b, rotation=pr.upright_plate_rotation(), velocity=(0.0, -speed, 0.0),
                         translation=(0.0, radius + 0.5 * wire_diameter + 0.005, 0.0))  # rim 5 mm above the wire
    b.set_self_contact(plate, False)  # rigid: the plate's own close features (0.75 mm apart) never meet
    b.add_obstacle(*tube_tet_mesh((-0.5, 0.0, 0.0), (0.5, 0.0, 0.0), wire_diameter, 8, 0.02))
    model, state = b.finalize()
    solver = ImplicitEulerSolver(model, ContactParameters(dhat=1e-3, kappa=kappa), friction=FrictionParameters(mu=0.5),
                                 tol=1e-2)
    mesh = model.collision_mesh
    frames, dist = [model.surface_positions(state.x)], []
    for _ in range(steps):
        new = state.copy()
        stats = solver.step(state, new, None, h)
        state = new
        assert stats.converged
        frames.append(model.surface_positions(state.x))
        dist.append(stats.min_distance)
    return frames, ipctk.CollisionMesh(mesh.rest_positions, mesh.edges.astype(np.int32),
                                       mesh.faces.astype(np.int32)), np.array(dist), mesh.body == 0


def test_plate_dropped_edge_first_on_a_3mm_wire_never_passes_through():
    frames, tk, dist, plate = _drop_on_wire()
    # the plate hits the wire in the first step (5 mm away, 40 mm of travel per step) and stays in contact
    assert dist[0] < 1e-3
    for k, (x0, x1) in enumerate(zip(frames[:-1], frames[1:])):
        assert not ipctk.has_intersections(tk, x1), f"frame {k + 1} intersects"
        # ipctk's CCD on the straight motion between frames: no crossing between them either
        assert ipctk.is_step_collision_free(tk, np.asfortranarray(x0), np.asfortranarray(x1)), f"step {k} tunnels"
    # measured outcome: the plate lands on its rim, topples over the wire (tilt 90 degrees at 0.16 s: its top at
    # 0.0243 m, lying on the wire, 0.0015 m + its 0.0178 m height) and then slides off beside it. Its top stays
    # above 0.015 m for the first 10 frames; a plate going through falls 4-6 cm a step (with the CCD off and
    # kappa 1e-2 Pa its top is below 0 by frame 5 and 4 of 8 frames intersect)
    top = np.array([f[plate, 1].max() for f in frames])
    assert np.all(top[:10] > 0.015)


def _run_slot_scene(offset):
    """Run 0.5 s at h = 0.01 checking every frame with ipctk; returns (info, frames, body selections). (The
    straight motion between two frames is not the solver's path: ipctk's CCD on it flags step 6 of the 6 mm run,
    where 401 samples along it show no intersection, so only frames are checked here.)"""
    model, state, solver, info = pr.plate_in_slot_scene(offset=offset)
    frames = [model.surface_positions(state.x)]
    for k in range(50):
        new = state.copy()
        stats = solver.step(state, new, None, 0.01)
        state = new
        assert stats.converged, f"step {k}"
        frames.append(model.surface_positions(state.x))
    mesh = model.collision_mesh
    tk = ipctk.CollisionMesh(mesh.rest_positions, mesh.edges.astype(np.int32), mesh.faces.astype(np.int32))
    for k, x in enumerate(frames[1:]):
        assert not ipctk.has_intersections(tk, x), f"frame {k + 1} intersects"
    return info, frames, {"plate": mesh.body == info["plate"], "rack": mesh.body == info["rack"]}


def _tilt_degrees(points):
    """Angle [deg] of the plate's axis (its points' least-spread direction) from the horizontal."""
    axis = np.linalg.svd(points - points.mean(axis=0))[2][2]
    return float(np.degrees(np.arcsin(abs(axis[1]))))


def test_plate_dropped_into_a_slot_stands_in_it_intersection_free():
    info, frames, sel = _run_slot_scene(0.0)
    plate, rack = frames[-1][sel["plate"]], frames[-1][sel["rack"]]
    rack_shift = rack.mean(axis=0) - frames[0][sel["rack"]].mean(axis=0)
    centre = info["slot_center"] + rack_shift
    width = info["rack_geometry"].params["slot_width"]
    # measured: the middle of the plate's x extent 2.7 mm off the slot's centre (the rack slid 2.6 mm along x under
    # the landing on its round rails; the slot is 23.8 mm wide), tilt 2.7 degrees, lowest point 6.75 mm up (on the
    # two rails 0.05 m apart: 3.2 mm below their top at 10 mm)
    mid = 0.5 * (plate[:, 0].min() + plate[:, 0].max())
    assert abs(mid - centre[0]) < 0.5 * width and abs(plate[:, 2].mean()) < 0.01
    assert _tilt_degrees(plate) < 10.0
    assert 0.004 < plate[:, 1].min() < centre[1]
    assert rack[:, 1].min() > 0.0


def test_plate_landing_on_a_wire_top_stays_in_the_rack_intersection_free():
    info, frames, sel = _run_slot_scene(0.006)  # 6 mm off: its rim lands on a 3.5 mm wire's top
    plate, rack = frames[-1][sel["plate"]], frames[-1][sel["rack"]]
    # measured: the rim hits the wire, the plate tips over it into the next slot (+x) and stands there: the middle
    # of its x extent 2.6 mm off that slot's centre, tilt 3.3 degrees, lowest point 6.8 mm up on the rails
    lowest = np.array([f[sel["plate"], 1].min() for f in frames])
    # held up by the wire: at 0.16 s, when the centred plate already rests on the rails (6.7 mm), this one's lowest
    # point is still 54 mm up (measured 0.0545 m at frame 15)
    assert lowest[15] > 0.03
    assert rack[:, 0].min() < plate[:, 0].mean() < rack[:, 0].max()
    centres = info["rack_geometry"].slot_centers[:, 0] + rack.mean(axis=0)[0] - frames[0][sel["rack"]].mean(axis=0)[0]
    mid = 0.5 * (plate[:, 0].min() + plate[:, 0].max())
    assert np.argmin(np.abs(centres - mid)) == 2 and abs(centres[2] - mid) < 0.5 * info["rack_geometry"].params[
        "slot_width"] and _tilt_degrees(plate) < 10.0
    assert 0.004 < plate[:, 1].min() < 0.012 and abs(plate[:, 2].mean()) < 0.01
