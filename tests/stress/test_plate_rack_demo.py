"""The plate-rack demo (issue 24, item 5; ``ipcsim demo plate-rack``): shipped trajectories, scene geometry, and
the simulated placement with every check of the stress suite on (each Newton update through ipctk's CCD,
``stress_oracle.UpdateChecker`` via ``validate_updates``; every frame intersection-free by ipctk; no finger tet
inverted), ending with the plate standing in its slot (clean) or saying where it went (offset)."""
from __future__ import annotations

import numpy as np
import pytest
from stress_oracle import UpdateChecker, check_frame, ipctk_mesh

from ipcsim.demos.plate_rack import PlateRackParameters, build_plate_rack, in_slot, plate_pose, plate_rack
from ipcsim.geometry.trajectory import read_trajectory_csv
from ipcsim.demos.plate_rack_scene import (DHAT, OFFSET, SAMPLE_RATE, SLOT, TRAJECTORIES, format_csv, plate_section,
                                           scene_geometry, trajectory_path, trajectory_rows, waypoints)
from ipcsim.solvers.validation import validate_updates


@pytest.mark.parametrize("kind", TRAJECTORIES)
def test_shipped_trajectory_is_the_generators(kind):
    """The shipped CSV is what ``benchmarks/make_plate_rack_trajectories.py`` writes, and reads back."""
    assert trajectory_path(kind).read_text() == format_csv(trajectory_rows(kind))
    traj = read_trajectory_csv(trajectory_path(kind))
    assert traj.time_range == (0.0, waypoints(kind)[-1][0])


def test_offset_trajectory_differs_by_the_offset_once_over_the_rack():
    clean, offset = trajectory_rows("clean"), trajectory_rows("offset")
    diff = offset[:, 1:] - clean[:, 1:]
    t_carry = waypoints()[4][0]  # the lift's end: the carry starts
    before = clean[:, 0] <= t_carry
    assert np.all(diff[before] == 0.0)
    assert np.allclose(diff[clean[:, 0] >= waypoints()[5][0], 0], OFFSET, atol=1e-7)  # over the slot, then on
    assert np.all(diff[:, 1:] == 0.0)


def test_place_pose_is_in_the_slot_for_clean_and_on_a_wire_for_offset():
    """Where the trajectories put the plate if it followed the gripper rigidly: clean, the plate's foot-to-rim
    extent inside the slot's clear gap; offset, its rim over a divider's wire."""
    geo = scene_geometry()
    lo, hi = geo.slot_box
    for kind, inside in (("clean", True), ("offset", False)):
        wp = waypoints(kind)
        shift = wp[7][1] - wp[1][1]  # the gripper's place pose minus its pinch pose (the plate still)
        foot = geo.plate_translation[0] + shift[0]
        extent = (foot, foot + geo.plate_height)
        assert (lo[0] < extent[0] and extent[1] < hi[0]) == inside
        bottom = geo.plate_translation[1] - geo.plate_radius + shift[1]
        assert 0.0 < bottom - geo.slot_center[1] < 0.01  # lowered to a few mm over the rails


def test_plate_section_is_the_rim_lip():
    back, front = plate_section(0.01)
    assert 0.003 < front - back < 0.006  # the lip: about 4 mm across at 10 mm below the top


def test_fingers_start_clear_of_everything():
    b, ids, geo = build_plate_rack(PlateRackParameters())
    model, state = b.finalize()
    xs = model.surface_positions(state.x)
    body = model.collision_mesh.body
    for finger in (ids["left_finger"], ids["right_finger"]):
        f = xs[body == finger]
        others = xs[(body != finger)]
        d = np.min(np.linalg.norm(f[:, None, :] - others[None, ::7, :], axis=2))
        assert d > 10 * DHAT


#: [s] the two trajectories are the same until the carry starts (2.0 s, ``waypoints()[4]``; checked above): the
#: runs share their steps up to here (a step is a function of its input state alone: a run continued from a
#: state equals an uninterrupted one), computed once with every check on
BRANCH_TIME = 1.95


def _advance(sim, tk, state, steps, checker=None):
    """Step sim from state through the step numbers steps (k: the step ending at k dt) with the checks on: each
    frame written by the demo (every 0.02 s) through ipctk (``check_frame``: intersections, half spaces, NaN),
    each Newton update through checker (an ``UpdateChecker``) unless None. Returns (state, frame problems, most
    tets with det F <= 0 after any step, unconverged steps)."""
    model = sim.model
    problems, inverted, unconverged = [], 0, 0
    with validate_updates(checker if checker is not None else (lambda mesh, xs0, xs1: None)):
        for k in steps:
            new = state.copy()
            st = sim.solver.step(state, new, None, sim.dt)
            state = new
            if k % sim.output["every"] == 0:
                problems += [f"step {k}: {p}" for p in check_frame(model, tk, state.x)]
            j = sim.solver.elastic.volume_ratios(state.x)
            inverted = max(inverted, int(np.count_nonzero(j <= 0.0)))
            unconverged += not st.converged
    return state, problems, inverted, unconverged


@pytest.fixture(scope="module")
def shared_start():
    """The steps both trajectories share (to ``BRANCH_TIME``: descend, close on the rim, start the lift), run once
    on the clean scene with every check on, Newton updates CCD-checked included. Returns (clean simulation, state,
    branch step, checker, frame problems, inverted, unconverged)."""
    clean, offset = trajectory_rows("clean"), trajectory_rows("offset")
    shared = clean[:, 0] <= BRANCH_TIME + 2.0 / SAMPLE_RATE  # the samples the shared steps interpolate
    assert np.array_equal(clean[shared], offset[shared]) and BRANCH_TIME < waypoints()[4][0]
    params = PlateRackParameters(trajectory="clean")
    sim, _ = plate_rack(params)
    tk = ipctk_mesh(sim.model.collision_mesh)
    checker = UpdateChecker()
    branch = int(round(BRANCH_TIME / params.dt))
    state, problems, inverted, unconverged = _advance(sim, tk, sim.state, range(1, branch + 1), checker)
    return sim, state, branch, checker, problems, inverted, unconverged


def _run(kind: str, start, check_updates: bool = True):
    """Run the demo's scene (the whole trajectory) with the checks on (``_advance``), from the shared start (its
    checks counted in; the clean run goes on with the shared start's simulation, the offset one with its own,
    whose first step warns that the held plate starts within dhat of the fingers): each Newton update through the
    shared start's ``UpdateChecker`` when check_updates. Returns (model, final x, geometry, checker, frame
    problems, most tets with det F <= 0 after any step, unconverged steps)."""
    sim, state, branch, checker, problems, inverted, unconverged = start
    params = PlateRackParameters(trajectory=kind)
    if kind != "clean":
        sim, _ = plate_rack(params)
    _, _, geo = build_plate_rack(params)
    tk = ipctk_mesh(sim.model.collision_mesh)
    n = int(round(params.end_time / params.dt))
    state, more, inv, unc = _advance(sim, tk, state, range(branch + 1, n + 1), checker if check_updates else None)
    return (sim.model, state.x, geo, checker, problems + more, max(inverted, inv), unconverged + unc)


@pytest.fixture(scope="module")
def clean_run(shared_start):
    return _run("clean", shared_start)


def test_clean_placement_is_intersection_free_and_ends_in_the_slot(clean_run):
    """The whole clean trajectory (600 steps, the first 195 shared with the offset run: minutes): every update and
    frame intersection-free, no finger tet inverted, the plate standing in its slot at the end."""
    model, x, geo, checker, problems, inverted, unconverged = clean_run
    assert checker.updates > 0 and checker.failures == []
    assert problems == []
    assert inverted == 0
    centre, tilt = plate_pose(model, x)
    assert in_slot(geo, centre, tilt), f"plate centre {centre} m, tilt {tilt:.1f} deg; slot box {geo.slot_box}"


def test_offset_placement_ends_in_the_rack(shared_start):
    """The offset trajectory (rim onto the +x divider's wires): frames intersection-free, and the plate ends in
    the rack (its centre over the rack's footprint, below the wires' top plus a plate radius); the message says
    where it went otherwise. Newton updates are not CCD-checked after the shared start (the clean run does that)."""
    model, x, geo, _, problems, inverted, _ = _run("offset", shared_start, check_updates=False)
    assert problems == [] and inverted == 0
    centre, tilt = plate_pose(model, x)
    rack = geo.rack.vertices + geo.rack_translation
    lo, hi = rack.min(axis=0), rack.max(axis=0)
    inside = lo[0] < centre[0] < hi[0] and lo[2] < centre[2] < hi[2] and centre[1] < hi[1] + geo.plate_radius
    assert inside, f"the plate left the rack: centre {centre} m, tilt {tilt:.1f} deg (rack box {lo}, {hi})"
    dividers = geo.rack.divider_x + geo.rack_translation[0]
    slot = int(np.searchsorted(dividers, centre[0])) - 1  # measured: slot 2 (the +x neighbour), centre x 22.7 mm,
    print(f"offset: the plate ends in slot {slot} (aimed at {SLOT}), centre {np.round(centre, 4)} m, "  # tilt 3.7
          f"tilt {tilt:.1f} deg")


def test_json_example_builds_the_demos_scene():
    """examples/scenes/plate_rack_clean.json (written by benchmarks/make_plate_rack_trajectories.py) is the demo's
    scene: same nodes, same collision surface, same gripper motion."""
    from pathlib import Path

    from ipcsim.scene import load_scene

    path = Path(__file__).parents[2] / "examples" / "scenes" / "plate_rack_clean.json"
    sim = load_scene(path).build()
    ref, _ = plate_rack(PlateRackParameters())
    assert sim.model.n_vertices == ref.model.n_vertices
    assert np.abs(sim.state.x - ref.state.x).max() < 1e-9  # measured 6e-11 (file decimals)
    assert np.array_equal(sim.model.collision_mesh.faces, ref.model.collision_mesh.faces)
    assert sim.solver.warm_start and ref.solver.warm_start and sim.solver.tol == ref.solver.tol
    for t in (0.5, 1.2, 3.0):  # the gripper carries the same nodes to the same places
        a = sim.model.control.targets(sim.state.x, 0.0, t)
        b = ref.model.control.targets(ref.state.x, 0.0, t)
        assert np.abs(a - b).max() < 1e-9
