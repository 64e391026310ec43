"""The validation hook (``ipcsim.solvers.validation``) with ipctk's CCD as the judge (``stress_oracle``): every
accepted Newton update of a run is checked and none intersects; a solver whose CCD bound is broken is caught; the
checker tells a conservative flag from a true crossing, codimensional ones included; the face solver calls it."""
import numpy as np
import pytest
from stress_oracle import UpdateChecker, ipctk_mesh

import ipcsim.solvers.line_search as line_search
from ipcsim.geometry.collision_mesh import CollisionMesh
from ipcsim.model import ModelBuilder, box_tet_mesh
from ipcsim.solvers import validation
from ipcsim.solvers.integrator_solvers import ContactParameters, make_solver
from ipcsim.solvers.validation import validate_updates


def _thrown_through_a_sheet(steps=3):
    """A 5 cm cube thrown down at 20 m/s at a static square sheet (two triangles) 2 cm below it, h = 0.01 s: a
    full Newton step would carry it 20 cm, through the sheet. Returns (model, states after each step)."""
    b = ModelBuilder()
    v, t = box_tet_mesh((0.05, 0.05, 0.05), (1, 1, 1))
    b.add_body(v, t, translation=(-0.025, 0.02, -0.025), velocity=(0.0, -20.0, 0.0), youngs_modulus=1e6)
    sheet = np.array([[-0.2, 0.0, -0.2], [0.2, 0.0, -0.2], [0.2, 0.0, 0.2], [-0.2, 0.0, 0.2]])
    b.add_obstacle(sheet, [[0, 2, 1], [0, 3, 2]])
    model, state = b.finalize()
    solver = make_solver(model, ContactParameters(dhat=1e-3))
    out = []
    for _ in range(steps):
        new = state.copy()
        stats = solver.step(state, new, None, 0.01)
        state = new
        out.append((state, stats))
    return model, out


def test_the_hook_is_off_by_default_and_restored():
    assert validation.hook is None

    def check(mesh, xs0, xs1):
        pass

    with validate_updates(check) as c:
        assert c is check and validation.hook is check
        with validate_updates(None):
            assert validation.hook is None
        assert validation.hook is check
    assert validation.hook is None


def test_every_accepted_update_of_a_run_is_collision_free():
    checker = UpdateChecker()
    with validate_updates(checker):
        model, steps = _thrown_through_a_sheet()
    iterations = sum(len(stats.history) for _, stats in steps)  # one history entry per accepted update
    assert checker.updates == iterations > 3
    assert checker.failures == []
    assert steps[-1][0].x[:8, 1].min() > 0.0  # the sheet holds the cube
    # (measured: 3 steps, 14 updates, none flagged by Tight Inclusion)


def test_a_broken_ccd_bound_is_caught(monkeypatch):
    """With the CCD step bound forced to 1 the cube goes through the sheet in the first update, and the hook
    names it (so the check can fail)."""
    monkeypatch.setattr(line_search, "compute_collision_free_stepsize", lambda *a, **k: 1.0)
    checker = UpdateChecker()
    with validate_updates(checker):
        _thrown_through_a_sheet(steps=1)
    assert checker.failures, f"{checker.updates} updates, {checker.flagged} flagged, none confirmed"
    assert checker.failures[0].update == 0


def _point_and_triangle(y1: float, x1: float = 0.2):
    """A static triangle in the plane y = 0 and a point (another body) moving from (0.2, 1, 0.2) to
    (x1, y1, 0.2): (mesh, xs0, xs1)."""
    tri = CollisionMesh.from_triangle_mesh(np.array([[0.0, 0, 0], [1, 0, 0], [0, 0, 1]]), [[0, 2, 1]], body=0,
                                           is_obstacle=True)
    pt = CollisionMesh.from_points(np.array([[0.2, 1.0, 0.2]]), body=1)
    mesh = CollisionMesh.concatenate([tri, pt])
    xs0 = mesh.rest_positions.copy()
    xs1 = xs0.copy()
    xs1[3] = [x1, y1, 0.2]
    return mesh, xs0, xs1


def test_a_codimensional_point_through_a_face_is_confirmed_between_samples():
    """The point crosses the face at t = 1/3, between two of the 64 samples, and no sampled configuration shows
    an edge through a face (a point has no edge): only the exact crossing test confirms it."""
    mesh, xs0, xs1 = _point_and_triangle(-2.0)
    checker = UpdateChecker()
    checker(mesh, xs0, xs1)
    assert checker.flagged == 1 and len(checker.failures) == 1
    f = checker.failures[0]
    assert "crosses face" in f.what and f.t == pytest.approx(1 / 3, abs=1e-12)


def test_a_conservative_flag_is_not_a_failure():
    """The point ends on the face without passing it (distance 0 at t = 1: Tight Inclusion flags it, measured;
    1e-15 m above is not flagged): flagged, not confirmed; and the same point passing just beside the triangle's
    edge is no crossing."""
    checker = UpdateChecker()
    checker(*_point_and_triangle(0.0))
    assert checker.flagged == 1 and checker.failures == []
    checker(*_point_and_triangle(-1.0, x1=-0.2 - 1e-9))  # crosses the plane at x = -1e-9 / 2: outside
    assert checker.failures == []


def test_an_update_starting_in_touch_is_judged_by_the_exact_test():
    """A point starting 1e-10 m above the face (closer than TOUCH: Tight Inclusion is skipped) and moving through it
    is a failure; moving away from it is none."""
    mesh, xs0, xs1 = _point_and_triangle(-1.0)
    xs0[3, 1] = 1e-10
    checker = UpdateChecker()
    checker(mesh, xs0, xs1)
    assert checker.near == 1 and checker.flagged == 0 and len(checker.failures) == 1
    assert "crosses face" in checker.failures[0].what
    xs1[3, 1] = 1.0
    checker(mesh, xs0, xs1)
    assert checker.near == 2 and len(checker.failures) == 1


def test_codimensional_edges_crossing_are_confirmed():
    """A segment moving down through another one (no face anywhere): an edge-edge crossing."""
    a = CollisionMesh.from_edges(np.array([[-1.0, 0, 0], [1, 0, 0]]), [[0, 1]], body=0, is_obstacle=True)
    b = CollisionMesh.from_edges(np.array([[0.0, 1, -1], [0, 1, 1]]), [[0, 1]], body=1)
    mesh = CollisionMesh.concatenate([a, b])
    xs0 = mesh.rest_positions.copy()
    xs1 = xs0.copy()
    xs1[2:, 1] = -2.0
    checker = UpdateChecker()
    checker(mesh, xs0, xs1)
    assert len(checker.failures) == 1 and "crosses edge" in checker.failures[0].what
    assert checker.failures[0].t == pytest.approx(1 / 3, abs=1e-12)
    xs1[2:, 0] = 6.0  # slides sideways as it goes down: at y = 0 (t = 1/3) it is at x = 2, past edge A's end
    checker(mesh, xs0, xs1)
    assert len(checker.failures) == 1


def test_the_ipctk_twin_keeps_obstacle_pairs_and_no_self_contact_apart():
    mesh, xs0, _ = _point_and_triangle(0.0)
    tk = ipctk_mesh(mesh)
    assert tk.num_vertices == 4 and tk.num_faces == 1
    assert not tk.can_collide(0, 1) and tk.can_collide(0, 3)  # two obstacle vertices never collide


def test_the_face_solver_calls_the_hook():
    from ipcsim.face.flaps import two_flaps
    from ipcsim.face.solver import FacePDSolver

    model = two_flaps(resolution=(6, 3, 2), frames=2)
    solver = FacePDSolver(model, "direct", tol=1e-6)
    checker = UpdateChecker()
    with validate_updates(checker):
        stats = [solver.frame(w) for w in model.sequence]
    assert checker.updates == sum(len(s.history) for s in stats) > 0
    assert checker.failures == []
