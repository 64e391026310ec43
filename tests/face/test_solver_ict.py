"""The face solver on the shipped small ICT face (``ipcsim.face.data.load_face``): the first five frames of
its animation, where the lips meet from frame 3 on.

Measured (merged with the face-data branch at 0f0d95d: 1620 vertices, 5940 tets, 164 bone, proxy 804 vertices,
n1 = 691, n2 = 765): every solver takes 1, 6, 12, 16, 15 iterations (and 14 in frame 5); the trajectories
agree to 3e-17 m; the run without collision handling intersects from frame 3 on."""
import numpy as np
import pytest

from ipcsim.face.solver import FaceContact, FacePDSolver
from _face_check import proxy_intersects

FRAMES = 5


@pytest.fixture(scope="module")
def face(small_face):
    return small_face




def test_face_frames_are_intersection_free_and_every_solver_agrees(face):
    seq = face.sequence[:FRAMES]
    runs = {}
    for name in ("direct", "pcg", "schur", "woodbury"):
        solver = FacePDSolver(face, name)
        xs, stats = solver.run(seq)
        assert all(s.converged and s.fallbacks == 0 for s in stats), name
        assert not any(proxy_intersects(face, x) for x in xs), name
        runs[name] = xs
    assert max(s.n_contacts for s in stats) > 0
    for name, xs in runs.items():
        assert max(np.abs(a - b).max() for a, b in zip(xs, runs["direct"])) < 1e-12, name
    free = FacePDSolver(face, "direct", FaceContact(enabled=False))
    xs, _ = free.run(seq)
    assert any(proxy_intersects(face, x) for x in xs)


def test_the_line_search_bisects_after_a_rejection(face, monkeypatch):
    """The face's line search is the Newton loop's (``solvers.line_search.backtrack``) with its bisections of
    [accepted, rejected]: on the small face's first 13 frames a rejected trial is followed by bisections that
    keep a point no halving alpha_max / 2^k reaches, at a lower energy than halving alone. Measured: one search
    with a rejection (frame 12), which kept a bisection point; with the refinement off
    (LINE_SEARCH_REFINEMENTS = 0) this test fails."""
    import ipcsim.face.solver as face_solver
    from ipcsim.solvers import line_search

    seen = []

    def spy(evaluate, energy, alpha, refinements=None, slope=None):
        found = line_search.backtrack(evaluate, energy, alpha, refinements, slope=slope)
        if found.trials > 1:
            seen.append((alpha, found, line_search.backtrack(evaluate, energy, alpha, 0, slope=slope)))
        return found
    monkeypatch.setattr(face_solver, "backtrack", spy)
    _, stats = FacePDSolver(face, "woodbury").run(face.sequence[:13])
    assert all(s.converged for s in stats)
    refined = [(f, plain) for a, f, plain in seen if f.alpha not in [a * 0.5 ** k for k in range(64)]]
    print(f"{len(seen)} line searches with a rejection, {len(refined)} kept a bisection point")
    assert refined and all(f.energy < plain.energy for f, plain in refined)


def test_the_line_search_slope_is_the_energy_derivative_along_the_step(face):
    """The slope the face solver hands its line search (``_direction``: grad E . p with the barrier's gradient)
    against a central difference of the true energy along p, at a pressed state (frame 3, lips in contact) and
    one frame further on, so that the shape-targeting and the barrier parts both enter."""
    from ipcsim.face.solver import FrameStats

    solver = FacePDSolver(face, "woodbury")
    solver.run(face.sequence[:4])
    a, _target = face.blend(face.sequence[4])
    pt = solver._evaluate(solver.x, a, None)
    assert pt.coll is not None and len(pt.coll) > 0
    p, slope = solver._direction(pt, np.zeros((len(solver.bone), 3)), True, FrameStats())
    assert slope < 0.0
    eps = 1e-4  # of the step; E is smooth here (no contact (de)activates within +-eps p)
    e_plus = solver._evaluate(pt.x + eps * p, a, None).energy
    e_minus = solver._evaluate(pt.x - eps * p, a, None).energy
    fd = (e_plus - e_minus) / (2 * eps)
    # measured: relative difference 2.1e-11 (22 contacts); leaving the barrier's gradient out of the slope: 1.3e-5
    assert fd == pytest.approx(slope, rel=2e-9)
