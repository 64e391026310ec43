"""The broad phase's skin within a step (``line_search.CandidateSkin``): kept candidates answer the queries inside
their boxes with a superset of a fresh broad phase's pairs, the narrow phases find the same stencils and step
bounds from it, and a Newton run gives the bits it gives with a broad phase per query."""
import numpy as np
import pytest

from ipcsim.contact.broad_phase import build_candidates
from ipcsim.contact.collisions import build_collisions
from ipcsim.contact.ccd import compute_collision_free_stepsize
from ipcsim.model import ModelBuilder, box_tet_mesh
from ipcsim.solvers.line_search import CandidateSkin, collision_free_bound

DHAT = 1e-3


def _stacked_cubes():
    """Two 2 cm cubes 0.4 mm apart (one on the other) and their collision mesh."""
    v, t = box_tet_mesh((0.02, 0.02, 0.02), (3, 3, 3))
    b = ModelBuilder(gravity=(0.0, -9.81, 0.0))
    b.add_body(v, t, youngs_modulus=1e5)
    b.add_body(v, t, translation=(0.003, 0.0204, 0.002), youngs_modulus=1e5)
    return b.finalize()


def _pairs(c):
    return {k: set(map(tuple, getattr(c, k).tolist())) for k in ("vf", "ee", "ev", "vv", "pv")}


def test_queries_inside_the_kept_boxes_get_a_superset_and_the_same_narrow_phase(rng):
    model, state = _stacked_cubes()
    mesh = model.collision_mesh
    s0 = model.surface_positions(state.x)
    skin = CandidateSkin(0.5 * DHAT)
    s1 = s0 + rng.normal(scale=2e-4, size=s0.shape)
    first, alpha = collision_free_bound(mesh, s0, s1, DHAT, skin)
    assert (skin.builds, skin.reuses) == (1, 0)
    for scale in (1e-5, 5e-5, 1e-4):  # small corrections along the first segment: inside the skin
        a = s0 + 0.5 * (s1 - s0)
        b = a + rng.normal(scale=scale, size=s0.shape)
        kept, bound = collision_free_bound(mesh, a, b, DHAT, skin)
        fresh = build_candidates(mesh, a, b, inflation_radius=0.5 * DHAT)
        assert kept is first
        got, want = _pairs(kept), _pairs(fresh)
        assert all(want[k] <= got[k] for k in want)
        assert sum(len(got[k]) for k in got) > sum(len(want[k]) for k in want)  # a strict superset here
        assert bound == compute_collision_free_stepsize(mesh, a, b, candidates=fresh)
        c_kept = build_collisions(mesh, b, DHAT, candidates=kept)
        c_fresh = build_collisions(mesh, b, DHAT, candidates=fresh)
        assert len(c_fresh) > 0
        assert np.array_equal(c_kept.vertices, c_fresh.vertices) and np.array_equal(c_kept.kind, c_fresh.kind)
    assert (skin.builds, skin.reuses) == (1, 3)
    # static queries too, and a query leaving the boxes is a new broad phase
    assert skin.candidates(mesh, s0, None, 0.5 * DHAT) is first
    far = s0 + np.array([0.0, 2 * DHAT, 0.0])
    assert skin.candidates(mesh, s0, far, 0.5 * DHAT) is not first
    assert (skin.builds, skin.reuses) == (2, 4)
    # another inflation is another query
    assert skin.candidates(mesh, s0, None, 0.25 * DHAT) is not first
    skin.clear()
    assert skin.candidates(mesh, s0, None, 0.5 * DHAT) is not first
    with pytest.raises(ValueError, match="skin"):
        CandidateSkin(-1.0)


def test_a_newton_run_gives_the_same_bits_with_and_without_the_skin():
    """Teddy grasp, low embedding, 15 steps of the squeeze (contact, friction, warm start): the kept candidates
    answer most queries and every step's positions and velocities are those of a broad phase per query."""
    from ipcsim.demos.teddy_grasp import GraspParameters, teddy_grasp

    runs = []
    for width in (0.0, None):
        sim, _ = teddy_grasp(GraspParameters(mode="low", dt=0.02, end_time=0.3))
        if width is not None:
            sim.solver.candidate_skin = CandidateSkin(width)
        state, contacts = sim.state, 0
        for _ in range(15):
            new = state.copy()
            contacts += sim.solver.step(state, new, None, 0.02).n_contacts
            state = new
        runs.append((state, sim.solver.candidate_skin, contacts))
    (without, none, _), (with_skin, skin, contacts) = runs
    assert contacts > 0
    # measured: 34 broad phases and 49 kept answers with the skin, 82 and 1 (an identical query) without
    assert skin.reuses > skin.builds and skin.builds < 0.5 * none.builds
    assert np.array_equal(with_skin.x, without.x) and np.array_equal(with_skin.v, without.v)


def test_boxes_inside_is_the_numpy_containment(rng):
    from ipcsim.contact.broad_phase.boxes import boxes_inside

    outer = np.hstack([rng.normal(size=(50, 3)) - 1.0, rng.normal(size=(50, 3)) + 1.0])
    numpy_inside = lambda a, b: bool(np.all(a[:, :3] >= b[:, :3]) and np.all(a[:, 3:] <= b[:, 3:]))
    for _ in range(20):
        inner = outer + rng.uniform(-0.05, 0.2, size=outer.shape) * np.r_[1, 1, 1, -1, -1, -1]
        assert boxes_inside(inner, outer) == numpy_inside(inner, outer)
    assert boxes_inside(outer, outer)  # equal bounds are inside
    for row, col, shift in ((7, 1, -1e-12), (49, 5, 1e-12), (0, 2, np.nan)):
        inner = outer.copy()
        inner[row, col] += shift
        assert not boxes_inside(inner, outer) and not numpy_inside(inner, outer)
