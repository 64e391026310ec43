"""Per-body stiffness damping in JSON scenes (``bodies[i].damping.stiffness``, beta [s]): full, embedded and
affine bodies get their own beta on their own tets, the resolved scene keeps it, and a quasi-static scene
with damping is a one-line error naming the integrator."""
from __future__ import annotations

import json

import numpy as np
import pytest

from ipcsim.scene import Scene, SceneError, load_scene

BOX = {"box": {"size": [0.1, 0.1, 0.1], "resolution": [2, 2, 2]}}


def _scene() -> dict:
    return {"time": {"end": 0.02, "dt": 0.01}, "gravity": [0.0, 0.0, 0.0],
            "bodies": [{"name": "full", "mesh": BOX, "damping": {"stiffness": 0.05}},
                       {"name": "plain", "mesh": BOX, "transform": {"translation": [0.3, 0.0, 0.0]}},
                       {"name": "embedded", "mesh": BOX, "transform": {"translation": [0.6, 0.0, 0.0]},
                        "embedding": {"resolution": 0.06}, "damping": {"stiffness": 0.02}},
                       {"name": "affine", "mesh": BOX, "transform": {"translation": [0.9, 0.0, 0.0]},
                        "affine": {}, "damping": {"stiffness": 0.01}}]}


def test_each_body_gets_its_damping_on_its_own_tets(tmp_path):
    path = tmp_path / "damped.json"
    path.write_text(json.dumps(_scene()))
    scene = load_scene(path)
    assert [b.get("damping") for b in scene.data["bodies"]] == [{"stiffness": 0.05}, None, {"stiffness": 0.02},
                                                                 {"stiffness": 0.01}]
    assert Scene.from_dict(json.loads(scene.to_json())).data == scene.data  # reloads identically
    sim = scene.build()
    model = sim.model
    per_tet = model.damping_stiffness
    assert per_tet.shape == (len(model.tets),)
    assert sorted(np.unique(per_tet).tolist()) == [0.0, 0.01, 0.02, 0.05]
    n_box = 6 * 8  # tets of a full-space 2x2x2 box
    np.testing.assert_array_equal(per_tet[:n_box], 0.05)
    np.testing.assert_array_equal(per_tet[n_box:2 * n_box], 0.0)
    assert np.all(per_tet[-1] == 0.01)  # the affine body's one tet
    assert sim.solver.stiffness_damping.enabled
    state = sim.state
    state.v[:] = np.random.default_rng(3).normal(scale=0.05, size=state.v.shape)  # every body deforming
    for _ in range(2):
        out = state.copy()
        stats = sim.solver.step(state, out, dt=0.01)
        assert stats.converged and np.isfinite(stats.energy)
        state = out


def test_damping_with_a_quasi_static_integrator_is_an_error(tmp_path):
    data = _scene()
    data["integrator"] = {"type": "quasi_static"}
    path = tmp_path / "qs.json"
    path.write_text(json.dumps(data))
    with pytest.raises(SceneError, match=r"qs\.json: integrator: .*damping_stiffness needs a dynamic integrator"):
        load_scene(path).build()
