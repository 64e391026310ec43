"""Every shipped example scene loads, builds and takes a few valid steps; docs/scenes.md shows each of them."""
import json
import re
import warnings
from pathlib import Path

import numpy as np
import pytest

from ipcsim.contact.intersection import has_intersections
from _tet_checks import count_inverted_tets
from ipcsim.model.sanity import SanityWarning
from ipcsim.scene import load_scene

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((REPO / "examples" / "scenes").glob("*.json"))
DOCS = REPO / "docs" / "scenes.md"
FEATURES = {  # example file -> keys it must exercise (so every documented feature has an example)
    "two_cubes.json": ["bodies.mesh(file)", "transform.scale", "transform.rotation", "material", "half_spaces",
                       "output"],
    "initial_velocity.json": ["initial_velocity", "friction.mu"],
    "dirichlet_neumann.json": ["dirichlet", "neumann.force", "neumann.acceleration", "time_range"],
    "kinematic_obstacle.json": ["obstacles.velocity", "obstacles.angular_velocity"],
    "keyframed_obstacle.json": ["obstacles.keyframes"],
    "half_spaces.json": ["half_spaces"],
    "friction_per_object.json": ["obstacles.friction", "friction.pairs", "bodies.self_contact"],
    "contact_friction.json": ["contact.dhat", "contact.kappa", "friction.eps_v"],
    "newmark.json": ["integrator", "solver"],
    "quasi_static.json": ["integrator"],
    "embedded_affine.json": ["embedding.mesh", "embedding.vertices", "embedding.mass",
                             "bodies.mesh(closed triangle surface)", "affine.stiffness"],
    "teddy_grasp.json": ["embedding.resolution", "dirichlet.keyframes", "keyframes.translations",
                         "mesh.half_ellipsoid"],
    "teddy_grasp_paper.json": ["embedding.vertices", "dirichlet.indices", "dirichlet.keyframes",
                               "transform.rotation"],
    "gripper.json": ["grippers", "trajectory", "attachments", "side"],
    "plate_rack_clean.json": ["grippers", "embedding.mesh", "affine.stiffness", "damping", "friction.pairs"],
    "plate_rack_offset.json": ["grippers", "embedding.mesh", "affine.stiffness", "damping", "friction.pairs"],
}


def test_every_feature_has_its_example():
    assert sorted(p.name for p in EXAMPLES) == sorted(FEATURES)
    for p in EXAMPLES:
        raw = json.loads(p.read_text())
        text = json.dumps(raw)
        for feature in FEATURES[p.name]:
            key = feature.split(".")[-1].split("(")[0]
            assert f'"{key}"' in text, (p.name, feature)


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_example_loads_builds_and_steps(path):
    scene = load_scene(path)
    sim = scene.build()
    model, state = sim.model, sim.state
    assert sim.name == json.loads(path.read_text())["name"]
    mesh = model.collision_mesh
    with warnings.catch_warnings():
        warnings.simplefilter("error", SanityWarning)  # no body starts closer than dhat to another
        for _ in range(2):
            new = state.copy()
            stats = sim.solver.step(state, new, None, sim.dt)
            state = new
            assert stats.converged, path.name
            assert not has_intersections(mesh, model.surface_positions(state.x)), path.name
            assert count_inverted_tets(state.x, model.tets) == 0, path.name
    for plane in mesh.planes:
        xs = model.surface_positions(state.x)[~mesh.is_obstacle]
        assert np.min((xs - plane.origin) @ plane.normal) > 0.0, path.name


def _doc_blocks() -> list:
    text = DOCS.read_text()
    return re.findall(r"<!-- example: (\S+) -->\s*```json\n(.*?)```", text, flags=re.S)


def test_docs_show_every_example_verbatim():
    blocks = dict(_doc_blocks())
    assert sorted(blocks) == sorted(p.name for p in EXAMPLES)
    for p in EXAMPLES:
        assert json.loads(blocks[p.name]) == json.loads(p.read_text()), p.name
