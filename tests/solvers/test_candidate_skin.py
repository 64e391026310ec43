"""The broad phase's skin (``line_search.CandidateSkin``): kept candidates answer the queries inside their boxes, or
inside them after one common translation, with a superset of a fresh broad phase's pairs (the plane pairs found
anew after a translation); the narrow phases find the same stencils and step bounds from it, and a Newton run,
whose solver keeps them from step to step, gives the bits it gives with a broad phase per query."""
import numpy as np
import pytest

from ipcsim.contact.broad_phase import build_candidates
from ipcsim.contact.collisions import build_collisions
from ipcsim.contact.ccd import compute_collision_free_stepsize
from ipcsim.model import ModelBuilder, box_tet_mesh
from ipcsim.contact.broad_phase.boxes import boxes_inside_shifted
from ipcsim.geometry.collision_mesh import Plane
from ipcsim.solvers.line_search import CandidateSkin, collision_free_bound

DHAT = 1e-3
pytestmark = pytest.mark.filterwarnings("ignore::ipcsim.model.sanity.SanityWarning")  # the cubes start within dhat


class FreshSkin(CandidateSkin):
    """A broad phase per query (nothing kept): the reference for the skin's bits."""

    def candidates(self, mesh, s0, s1=None, inflation_radius=0.0):
        self.builds += 1
        return build_candidates(mesh, s0, s1, inflation_radius=inflation_radius)


def _stacked_cubes(ground=None, velocity=(0.0, 0.0, 0.0)):
    """Two 2 cm cubes 0.4 mm apart (one on the other), both moving at velocity [m/s], over a ground plane at
    height ``ground`` [m] (None: no plane)."""
    v, t = box_tet_mesh((0.02, 0.02, 0.02), (3, 3, 3))
    b = ModelBuilder(gravity=(0.0, -9.81, 0.0))
    b.add_body(v, t, youngs_modulus=1e5, velocity=velocity)
    b.add_body(v, t, translation=(0.003, 0.0204, 0.002), youngs_modulus=1e5, velocity=velocity)
    if ground is not None:
        b.add_ground(ground)
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


def test_a_translated_query_gets_the_kept_pairs_and_fresh_plane_pairs(rng):
    """A query whose boxes fit the kept ones after one translation (the stack moved as one, further than the skin)
    is answered from them: the vertex-face and edge-edge pairs a superset of a fresh broad phase's, the plane pairs
    exactly a fresh one's (the ground does not move), and the same active set and step bound."""
    model, state = _stacked_cubes(ground=-0.0005)
    mesh = model.collision_mesh
    s0 = model.surface_positions(state.x)
    skin = CandidateSkin(0.5 * DHAT)
    first = skin.candidates(mesh, s0, s0 + [0.0, -1e-4, 0.0], 0.5 * DHAT)
    assert len(first.pv) and len(first.vf)  # the stack's bottom rests on the plane, its cubes touch
    for shift in ([3e-3, 0.0, 0.0], [0.0, 2e-3, 1e-3]):  # away from the plane, beyond the skin (0.5 mm)
        a = s0 + shift + rng.normal(scale=1e-5, size=s0.shape)
        b = a + [0.0, -1e-4, 0.0]
        kept, bound = collision_free_bound(mesh, a, b, DHAT, skin)
        fresh = build_candidates(mesh, a, b, inflation_radius=0.5 * DHAT)
        got, want = _pairs(kept), _pairs(fresh)
        assert all(want[k] <= got[k] for k in ("vf", "ee", "ev", "vv")) and want["vf"] and want["ee"]
        assert np.array_equal(kept.pv, fresh.pv)
        assert len(kept.pv) == (0 if shift[1] > 0.0 else len(first.pv))  # lifted 2 mm: none near the ground
        assert np.array_equal(kept.vf, first.vf) and np.array_equal(kept.ee, first.ee)
        assert bound == compute_collision_free_stepsize(mesh, a, b, candidates=fresh)
        c_kept, c_fresh = (build_collisions(mesh, b, DHAT, candidates=c) for c in (kept, fresh))
        assert len(c_fresh) > 0
        assert np.array_equal(c_kept.vertices, c_fresh.vertices) and np.array_equal(c_kept.kind, c_fresh.kind)
    assert (skin.builds, skin.reuses, skin.shifted) == (1, 2, 2)
    # one cube moved, the other not: no common translation, a new broad phase
    moved = s0.copy()
    moved[mesh.body == 1] += [3e-3, 0.0, 0.0]
    assert skin.candidates(mesh, moved, None, 0.5 * DHAT) is not first
    assert (skin.builds, skin.shifted) == (2, 2)
    # new Plane objects (here equal ones) are a new broad phase: the kept plane pairs may be stale
    kept = skin.candidates(mesh, moved, None, 0.5 * DHAT)
    assert skin.builds == 2
    mesh.planes = [Plane(p.origin.copy(), p.normal.copy()) for p in mesh.planes]
    assert skin.candidates(mesh, moved, None, 0.5 * DHAT) is not kept
    assert skin.builds == 3


def test_boxes_inside_shifted_finds_a_common_translation(rng):
    lo = rng.normal(size=(40, 3))
    outer = np.hstack([lo, lo + rng.uniform(0.5, 1.0, size=(40, 3))])
    margin = rng.uniform(0.0, 0.1, size=(40, 6)) * np.r_[1, 1, 1, -1, -1, -1]
    for d in ([0.0, 0.0, 0.0], [5.0, -3.0, 0.25]):
        inner = outer + margin + np.r_[d, d]
        assert boxes_inside_shifted(inner, outer)
        # the midpoint of the feasible intervals moves every box inside
        low, high = (inner[:, 3:] - outer[:, 3:]).max(axis=0), (inner[:, :3] - outer[:, :3]).min(axis=0)
        mid = 0.5 * (low + high)
        assert np.all(inner[:, :3] - mid >= outer[:, :3]) and np.all(inner[:, 3:] - mid <= outer[:, 3:])
    inner = outer + margin
    inner[3, 1] -= 0.2  # one box taller than its outer box: no translation fits it
    inner[3, 4] += 0.2
    assert not boxes_inside_shifted(inner, outer)
    inner = outer + margin
    inner[5] += [0.3, 0, 0, 0.3, 0, 0]  # two rows need x shifts that differ by more than their slack
    inner[6] -= [0.3, 0, 0, 0.3, 0, 0]
    assert not boxes_inside_shifted(inner, outer)
    inner[5, 0] = np.nan
    assert not boxes_inside_shifted(inner, outer)


def test_kept_candidates_across_steps_give_the_bits_of_a_broad_phase_per_query():
    """Two stacked cubes thrown down onto the ground (0.5 m/s, 25 steps of 4 ms): in flight they move as one, so
    the candidates kept from earlier steps answer queries after a translation; then the ground's pairs come and
    the impact moves them apart. Every step's positions and velocities are those of a broad phase per query."""
    from ipcsim.solvers.integrator_solvers import ContactParameters, ImplicitEulerSolver

    model, state0 = _stacked_cubes(ground=-0.02, velocity=(0.0, -0.5, 0.0))
    runs = []
    for skin in (FreshSkin(0.0), None):
        solver = ImplicitEulerSolver(model, ContactParameters(dhat=DHAT, kappa=1e5), tol=1e-4)
        if skin is not None:
            solver.candidate_skin = skin
        state, pv = state0, 0
        for _ in range(25):
            new = state.copy()
            pv += solver.step(state, new, None, 4e-3).n_contacts
            state = new
        runs.append((state, solver.candidate_skin))
    (fresh, per_query), (kept, skin) = runs
    assert -0.02 < fresh.x[:, 1].min() < -0.02 + DHAT  # it reached the ground (measured: 0.985 mm above it)
    # measured: 17 broad phases and 98 kept answers, 27 of them after a translation; 115 without the skin
    assert skin.shifted > 5 and skin.builds < 0.3 * per_query.builds
    assert np.array_equal(kept.x, fresh.x) and np.array_equal(kept.v, fresh.v)


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
