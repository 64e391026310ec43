"""Built-in demo scenes."""
from __future__ import annotations

import numpy as np

from .model import ModelBuilder, box_tet_mesh


def two_cubes_on_ground(resolution: int = 4):
    """Two soft 10 cm cubes (E = 1e5 Pa, nu = 0.4, 1000 kg/m^3): one falls onto the other, both onto the ground.

    Returns (model, state).
    """
    v, t = box_tet_mesh((0.1, 0.1, 0.1), (resolution,) * 3)
    b = ModelBuilder()
    b.add_ground(0.0)
    b.add_body(v, t, translation=(0.0, 0.002, 0.0))
    theta = np.deg2rad(30.0)
    rot = np.array([[np.cos(theta), 0, np.sin(theta)], [0, 1, 0], [-np.sin(theta), 0, np.cos(theta)]])
    b.add_body(v, t, translation=(0.03, 0.16, 0.02), rotation=rot, velocity=(0.0, -1.0, 0.0))
    return b.finalize()


SCENES = {"two-cubes": two_cubes_on_ground}
DEFAULT_SCENE = "two-cubes"
