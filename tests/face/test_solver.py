"""000 Algorithm 1 on a FaceModel (the synthetic two-flaps model, ``face.flaps``): PD without contact
converges to the minimiser a Newton solve of the same energy finds; with IPC on the proxy every frame is
intersection-free (ipctk, the test oracle), while the run without collision handling intersects; the four
global-step solvers give the same trajectory; x2 is chosen automatically and contacts outside it are still
solved exactly."""
import numpy as np
import pytest
import scipy.sparse.linalg as spla

from ipcsim.energies import shape_targeting as st
from ipcsim.face.flaps import two_flaps
from ipcsim.face.regions import collision_aware_vertices
from ipcsim.face.solver import FaceContact, FacePDSolver, predict_collision_aware_vertices
from _face_check import proxy_intersects

SOLVERS = ["direct", "pcg", "schur", "woodbury"]


@pytest.fixture(scope="module")
def model():
    return two_flaps(resolution=(6, 3, 2), frames=4)




@pytest.fixture(scope="module")
def runs(model):
    """The sequence solved by every solver (tol 1e-6), and once without collision handling."""
    out = {}
    for name in SOLVERS:
        solver = FacePDSolver(model, name, tol=1e-6)
        out[name] = (solver, *solver.run())
    solver = FacePDSolver(model, "direct", FaceContact(enabled=False), tol=1e-6)
    out["none"] = (solver, *solver.run())
    return out


def _newton(model, solver, a, target):
    """Newton on the true energy (``shape_targeting.true_hessian``), backtracking, from the rest shape with the
    bone at its target, to ||grad||_inf < 1e-9 N (2e-12 of the first gradient)."""
    x = model.rest.copy()
    x[model.bone] = target
    free = solver.free
    dofs = (3 * free[:, None] + np.arange(3)).ravel()
    for _ in range(50):
        e, g, _ = st.energy_and_gradient(x, model.tets, solver.dm_inv, a, solver.w)
        gf = g[free].ravel()
        if np.abs(gf).max() < 1e-9:
            return x
        h = st.true_hessian(x, model.tets, solver.dm_inv, a, solver.w)[dofs][:, dofs]
        p = spla.spsolve(h.tocsc(), -gf)
        assert gf @ p < 0.0  # the true Hessian is positive definite on this path (measured)
        alpha = 1.0
        while True:
            xn = x.copy()
            xn[free] += alpha * p.reshape(-1, 3)
            if st.energy(xn, model.tets, solver.dm_inv, a, solver.w) <= e + 1e-13 * e:  # round-off: full steps
                break
            alpha *= 0.5
        x = xn
    raise AssertionError("Newton did not converge")


def test_pd_without_contact_converges_to_the_newton_minimiser(rng):
    """Random symmetric targets (a frustrated state, E = 956 J > 0 at the minimum) and a half-open jaw. Measured
    gap ||x_PD - x_Newton||_inf: 2.7e-5 m at tol 1e-6, 2.9e-7 m at tol 1e-8 (bbox 4.1 m; 55 and 88 PD
    iterations); energies 3.4e-10 and 4.8e-14 apart (relative)."""
    m = two_flaps(resolution=(6, 3, 2), frames=4)
    a = np.eye(3) + 0.15 * rng.standard_normal((len(m.tets), 3, 3))
    m.actuation[1] = 0.5 * (a + a.transpose(0, 2, 1))
    w = np.array([0.5, 1.0])
    a_w, target = m.blend(w)
    gaps = []
    for tol in (1e-6, 1e-8):
        pd = FacePDSolver(m, "direct", FaceContact(enabled=False), tol=tol, max_iterations=1000)
        stats = pd.frame(w)
        assert stats.converged and stats.bone_iterations == 1
        if tol == 1e-6:
            ref = _newton(m, pd, a_w, target)
        gaps.append(np.abs(pd.x - ref).max())
    e_ref = st.energy(ref, m.tets, pd.dm_inv, a_w, pd.w)
    assert e_ref > 1.0
    assert st.energy(pd.x, m.tets, pd.dm_inv, a_w, pd.w) == pytest.approx(e_ref, rel=1e-12)
    assert gaps[1] < 3e-6  # measured 2.9e-7 m (tol 1e-8)
    assert gaps[1] < 0.1 * gaps[0]  # tightening the tolerance closes the gap: PD converges to the minimiser
    np.testing.assert_array_equal(pd.x[m.bone], target)


def test_every_frame_is_intersection_free_with_ipc(model, runs):
    for name in SOLVERS:
        _, xs, stats = runs[name]
        assert all(s.converged for s in stats), name
        for x, s in zip(xs, stats):
            assert not proxy_intersects(model, x), name
        assert stats[-1].n_contacts > 0 and 0.0 < stats[-1].min_distance < runs[name][0].dhat


def test_without_collision_handling_the_proxyproxy_intersects(model, runs):
    """The check above can fail: the same animation without the barrier crosses the sheets (frames 2-4)."""
    _, xs, stats = runs["none"]
    assert [proxy_intersects(model, x) for x in xs] == [False, True, True, True]
    assert all(s.n_contacts == 0 and s.time_ccd == 0.0 for s in stats)


def test_all_solvers_give_the_same_trajectory(runs):
    """Measured: the four trajectories agree to 9e-16 m (bbox 3.4 m), with the same iteration counts."""
    _, ref, ref_stats = runs["direct"]
    for name in SOLVERS[1:]:
        _, xs, stats = runs[name]
        assert max(np.abs(a - b).max() for a, b in zip(xs, ref)) < 1e-12, name
        assert [s.iterations for s in stats] == [s.iterations for s in ref_stats], name
    pcg_stats = runs["pcg"][2]
    assert sum(s.pcg_iterations for s in pcg_stats) > 0


def test_statistics_and_the_automatic_x2(model, runs):
    """x2 = the free vertices of the tets that embed the proxy (the slabs' facing layers): n2 = 84, n1 = 42 of
    the 180 vertices (54 bone); every contact stays inside it (no fallback); n_c <= n2; times add up."""
    solver, _, stats = runs["woodbury"]
    n = len(model.rest)
    assert (solver.n1, solver.n2) == (42, 84)
    assert solver.n1 + solver.n2 + len(model.bone) == n
    x2 = collision_aware_vertices(model)
    assert set(solver.free[solver.x2]) == set(x2) - set(model.bone)
    assert stats[0].nc_max == 0 and stats[-1].nc_mean > 0
    for s in stats:
        assert s.fallbacks == 0 and s.nc_max <= solver.n2 and (s.n1, s.n2) == (42, 84)
        parts = s.time_ipc + s.time_global + s.time_ccd + s.time_line_search + s.time_misc
        assert parts == pytest.approx(s.time_total, rel=1e-9)


def test_predicted_x2_and_a_too_small_one(model, runs):
    """x2 predicted by a contact-free pass (proxy vertices within 10 dhat of the other sheet, or crossing it):
    smaller than the proxy's footprint (measured: 100 of 130 proxy vertices, n2 = 72 of 84), no fallback, the same
    frames. Within 2 dhat (65 proxy vertices, n2 = 62) is too small here, as is half of the 10 dhat set: contacts
    reach outside x2, those global steps are solved directly (counted; 108 of 145 at 2 dhat), the frames do not
    change."""
    dhat = runs["direct"][0].dhat
    x2_pred, near = predict_collision_aware_vertices(model, 10.0 * dhat, rings=0)
    assert 0 < len(near) < len(model.proxy_vertices)
    ref = runs["direct"][1]
    solver = FacePDSolver(model, "woodbury", tol=1e-6, x2=x2_pred)
    xs, stats = solver.run()
    assert solver.n2 < runs["direct"][0].n2 and sum(s.fallbacks for s in stats) == 0
    assert max(np.abs(a - b).max() for a, b in zip(xs, ref)) < 1e-12
    x2 = collision_aware_vertices(model, proxy=near[: len(near) // 2])
    solver = FacePDSolver(model, "woodbury", tol=1e-6, x2=x2)
    xs, stats = solver.run()
    assert sum(s.fallbacks for s in stats) > 0
    assert max(np.abs(a - b).max() for a, b in zip(xs, ref)) < 1e-12


def test_the_bone_moves_along_a_collision_free_path(model):
    """The whole animation in one frame from rest: the bone travels its full path under CCD (several bone
    iterations, the contact blocks the linearised response) and the frame ends intersection-free, bone exact."""
    solver = FacePDSolver(model, "schur", tol=1e-6)
    stats = solver.frame(model.sequence[-1])
    _, target = model.blend(model.sequence[-1])
    assert stats.converged and stats.bone_iterations > 1
    np.testing.assert_array_equal(solver.x[model.bone], target)
    assert not proxy_intersects(model, solver.x)


def test_an_intersecting_proxy_is_refused(model, runs):
    """A proxy that crosses itself at rest (the lower sheet stepped up through the upper one, re-embedded) is
    refused with contact on (accepted without); so is an intersecting state given to the check."""
    from ipcsim.geometry.embedding import embed_points

    m = two_flaps(resolution=(4, 2, 1), frames=2)
    proxy = m.proxy_vertices.copy()
    lower = proxy[:, 1] < 0.0
    proxy[lower & (proxy[:, 0] > 2.0), 1] += 0.5  # -0.15 -> 0.35: a step through the sheet at y = 0.15
    m.proxy_vertices, (m.proxy_map, _) = proxy, embed_points(proxy, m.rest, m.tets)
    with pytest.raises(ValueError, match="intersects itself"):
        FacePDSolver(m, "direct")
    FacePDSolver(m, "direct", FaceContact(enabled=False))
    with pytest.raises(ValueError, match="intersects itself"):
        runs["direct"][0].check_intersection_free(runs["none"][1][-1])


def test_start_from_another_solvers_state(model, runs):
    """start_from: a fresh solver started from the direct run's frame-2 equilibrium solves frame 3 as the direct
    run did (not as from rest); wrong shapes and (with contact) intersecting states are refused."""
    xs = runs["direct"][1]
    solver = FacePDSolver(model, "pcg", tol=1e-6)
    solver.start_from(xs[1])
    solver.frame(model.sequence[2])
    assert np.abs(solver.x - xs[2]).max() < 1e-9
    assert np.abs(xs[2] - xs[1]).max() > 1e-3  # the frame moves: starting elsewhere would show
    with pytest.raises(ValueError, match="shape"):
        solver.start_from(xs[1][:-1])
    with pytest.raises(ValueError, match="intersects itself"):
        solver.start_from(runs["none"][1][-1])
