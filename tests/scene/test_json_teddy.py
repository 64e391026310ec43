"""examples/scenes/teddy_grasp_paper.json is ``ipcsim demo teddy-grasp`` (the paper set-up, mode low) written as a
scene, examples/scenes/teddy_grasp.json the same for ``--setup legacy``: the same models as ``demo_grasp.build_grasp``
and the same first steps."""
from pathlib import Path

import numpy as np
import pytest

from ipcsim.demos.teddy_grasp import GraspParameters, teddy_grasp
from ipcsim.scene import load_scene

SCENES = Path(__file__).resolve().parents[2] / "examples" / "scenes"
# the legacy scene writes the demo's computed placements rounded to 10 significant digits (e.g. 0.000723576 for
# 0.0007235760000000001), the paper scene its rotation matrices and translations in full (applied in one step
# instead of Drake's pose then the frame change: measured 1.4e-17 m): positions agree to a few ulps [m]
ATOL = 1e-15
#: scene file -> (setup, nodes (teddy cage + 2 bubbles), fixed vertices per bubble)
CASES = {"teddy_grasp_paper.json": ("paper", 31 + 2 * 67, 17), "teddy_grasp.json": ("legacy", 37 + 2 * 68, 28)}


@pytest.fixture(scope="module", params=list(CASES))
def pair(request):
    sim = load_scene(SCENES / request.param).build()
    ref, _ = teddy_grasp(GraspParameters(mode="low", setup=CASES[request.param][0]))
    return sim, ref, CASES[request.param]


def test_the_scene_builds_the_demo_model(pair):
    sim, ref, (_, nodes, fixed) = pair
    a, b = sim.model, ref.model
    assert a.n_vertices == b.n_vertices == nodes
    for attr in ("tets", "fixed", "is_obstacle", "mu", "lam", "youngs_modulus", "damping_stiffness", "prevent_inversion"):
        assert np.array_equal(getattr(a, attr), getattr(b, attr)), attr
    for attr, atol in (("rest_positions", ATOL), ("mass", ATOL), ("volume", 1e-19), ("gravity", 0.0)):
        assert np.allclose(getattr(a, attr), getattr(b, attr), rtol=0, atol=atol), attr
    assert [(n, i.tolist()) for n, i in a.material_groups] == [(n, i.tolist()) for n, i in b.material_groups]
    sa, sb = a.surface_map, b.surface_map
    assert np.array_equal(sa.nodes, sb.nodes) and sa.n_nodes == sb.n_nodes
    assert np.allclose(sa.weights, sb.weights, rtol=0, atol=1e-12)
    ma, mb = a.collision_mesh, b.collision_mesh
    assert np.array_equal(ma.faces, mb.faces) and np.array_equal(ma.edges, mb.edges)
    assert np.array_equal(ma.body, mb.body)
    assert len(a.control.motions) == len(b.control.motions) == 2 and not a.control.loads
    for m1, m2 in zip(a.control.motions, b.control.motions):
        assert type(m1) is type(m2) and type(m1).__name__ == "KeyframedMotion"
        assert np.array_equal(m1.vertices, m2.vertices) and len(m1.vertices) == fixed  # the back face
        assert np.array_equal(m1.times, m2.times)
        assert np.allclose(m1.positions, m2.positions, rtol=0, atol=ATOL)
    assert [(p.origin.tolist(), p.normal.tolist()) for p in ma.planes] == \
           [(p.origin.tolist(), p.normal.tolist()) for p in mb.planes]
    assert np.allclose(sim.state.x, ref.state.x, rtol=0, atol=ATOL) and np.array_equal(sim.state.v, ref.state.v)


def test_the_scene_configures_the_demo_solver(pair):
    sim, ref, _ = pair
    s, r = sim.solver, ref.solver
    assert type(s) is type(r)
    assert s.contact == r.contact and s.kappa == r.kappa == 1e4
    assert (s.friction.mu, s.friction.eps_v, s.friction.lagging_iterations) == (1.0, 1e-3, 1)
    assert s.friction.plane_table(1) == r.friction.plane_table(1) == 1.0  # the demo: ground_mu None means mu
    assert (s.tol, s.max_newton_iterations) == (r.tol, r.max_newton_iterations)
    assert (sim.dt, sim.end_time, sim.name, sim.body_names) == (ref.dt, ref.end_time, ref.name, ref.body_names)
    assert sim.output["every"] == ref.output["every"] and sim.output["render"] == ref.output["render"]


def test_the_first_steps_match_the_demo(pair):
    sim, ref, _ = pair
    a, b = sim.state, ref.state
    for _ in range(3):
        na, nb = a.copy(), b.copy()
        sa = sim.solver.step(a, na, None, sim.dt)
        sb = ref.solver.step(b, nb, None, ref.dt)
        a, b = na, nb
        assert sa.converged and sb.converged
        assert np.allclose(a.x, b.x, rtol=0, atol=1e-9)
    moved = sim.model.surface_positions(a.x) - sim.model.surface_positions(sim.state.x)
    assert np.abs(moved).max() > 1e-4  # the bubbles are closing in
