"""The README's JSON scene and ten-line Python example work as printed."""
import json
import re
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()


def _blocks(lang):
    return re.findall(rf"```{lang}\n(.*?)```", README, flags=re.S)


def test_readme_json_scene_builds_and_steps():
    from ipcsim.scene import Scene

    (text,) = _blocks("json")
    scene = Scene.from_dict(json.loads(text), base_dir=ROOT / "examples" / "scenes", source="README.md")
    sim = scene.build()
    assert len(sim.model.tets) > 6 and scene.data["friction"]["mu"] == 0.1
    new = sim.state.copy()
    sim.solver.step(sim.state, new, None, sim.dt)
    assert np.all(np.isfinite(new.x)) and new.t == sim.dt


def test_readme_python_example_runs():
    (code,) = [b for b in _blocks("python") if "ModelBuilder" in b]
    namespace = {}
    exec(compile(code.replace("range(50)", "range(5)"), "README.md", "exec"), namespace)
    state = namespace["state"]
    assert state.t > 0 and state.x[:, 1].min() > 0.0  # above the ground, fell toward it
    assert state.x[:, 1].min() < 0.01
