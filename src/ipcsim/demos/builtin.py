"""Built-in demo scenes: JSON scenes shipped as package data (``ipcsim/data/demos/<name>.json``, scene format
v1, see docs/scenes.md), run by ``ipcsim demo [NAME]``; and the Python builder of the default scene (used by
the solver tests)."""
from __future__ import annotations

from importlib import resources
from pathlib import Path

import numpy as np

from ..model import ModelBuilder, box_tet_mesh

#: name -> one-line description (the JSON file is data/demos/<name>.json)
DEMOS = {
    "two-cubes": "two soft 10 cm cubes fall onto each other and the ground (0.5 s simulated, 50 steps)",
    "cube-slide": "a cube slides down a 25 degree slope with friction 0.2 (0.6 s, 30 steps)",
    "pinned-mat": "a heavy cube drops onto a soft mat pinned at two edges (Dirichlet boxes; 0.4 s, 40 steps)",
    "cubes-in-bowl": "two cubes tumble into a static triangle-mesh bowl, friction 0.1 (0.5 s, 50 steps)",
}
#: demos built in Python (name -> description): ``ipcsim.demos.teddy_grasp``, ``ipcsim.face.demo``,
#: ``ipcsim.demos.plate_rack``
BUILT_DEMOS = {
    "teddy-grasp": "two soft bubbles grasp, lift and hold a soft teddy bear (Embedded IPC and Drake's bubble "
                   "gripper; 4 s, 200 steps; --setup paper|legacy, --mode full|medium|low, --dt, --mu)",
    "face": "the small ICT face's lips press and roll on each other (Projective Dynamics + IPC on the lips' "
            "collision proxy; 10 of the 50 expression frames; --frames, --solver)",
    "plate-rack": "two FinRay fingers replay a gripper trajectory: pick a plate from its stand, place it in a "
                  "wire dish rack (Embedded IPC 004 IV-B; 6 s, 600 steps; --trajectory clean|offset, --mu)",
}
#: the module of each demo built in Python: it declares its options (``add_arguments(parser)``)
BUILT_DEMO_MODULES = {"teddy-grasp": "ipcsim.demos.teddy_grasp", "face": "ipcsim.face.demo",
                      "plate-rack": "ipcsim.demos.plate_rack"}
DEFAULT_SCENE = "two-cubes"


def demo_path(name: str) -> Path:
    """Path of the demo scene file ``name`` (ValueError naming the choices when there is no such demo)."""
    if name not in DEMOS:
        raise ValueError(f"unknown demo {name!r}; choose from {', '.join(sorted({**DEMOS, **BUILT_DEMOS}))} "
                         "(ipcsim demo --list)")
    return Path(str(resources.files("ipcsim") / "data" / "demos" / f"{name}.json"))


def two_cubes_on_ground(resolution: int = 4):
    """Two soft 10 cm cubes (E = 1e5 Pa, nu = 0.4, 1000 kg/m^3): one falls onto the other, both onto the ground.

    The same scene as data/demos/two-cubes.json. Returns (model, state).
    """
    v, t = box_tet_mesh((0.1, 0.1, 0.1), (resolution,) * 3)
    b = ModelBuilder()
    b.add_ground(0.0)
    b.add_body(v, t, translation=(0.0, 0.002, 0.0))
    theta = np.deg2rad(30.0)
    rot = np.array([[np.cos(theta), 0, np.sin(theta)], [0, 1, 0], [-np.sin(theta), 0, np.cos(theta)]])
    b.add_body(v, t, translation=(0.03, 0.16, 0.02), rotation=rot, velocity=(0.0, -1.0, 0.0))
    return b.finalize()
