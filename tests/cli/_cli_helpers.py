"""Helpers for the CLI tests: a tiny JSON scene and readers of a run directory."""
import copy
import json

import numpy as np

from ipcsim.io.frames import read_ply

CUBE = {"box": {"size": [0.1, 0.1, 0.1], "resolution": [2, 2, 2]}}

#: two coarse cubes, the top one 2 mm above the bottom one and falling at 1 m/s: contact in the first step
TINY = {
    "name": "tiny",
    "time": {"end": 0.04, "dt": 0.01},
    "contact": {"dhat": 1e-3},
    "bodies": [
        {"name": "bottom", "mesh": CUBE, "transform": {"translation": [0.0, 0.002, 0.0]}},
        {"name": "top", "mesh": CUBE, "transform": {"translation": [0.02, 0.104, 0.01]},
         "initial_velocity": {"linear": [0.0, -1.0, 0.0]}},
    ],
    "half_spaces": [{"origin": [0, 0, 0], "normal": [0, 1, 0]}],
    "output": {"every": 2, "checkpoint_every": 1},
}


#: an embedded body (consistent mass) under an affine one falling at 1 m/s, and a half-ellipsoid finger whose
#: back face is keyframed
MIXED = {
    "name": "mixed",
    "time": {"end": 0.04, "dt": 0.01},
    "contact": {"dhat": 1e-3},
    "bodies": [
        {"name": "bottom", "mesh": CUBE, "transform": {"translation": [0.0, 0.002, 0.0]},
         "embedding": {"resolution": 0.06, "mass": "consistent"}},
        {"name": "top", "mesh": CUBE, "transform": {"translation": [0.02, 0.104, 0.01]},
         "material": {"density": 500}, "affine": {"stiffness": 1e6}, "initial_velocity": {"linear": [0.0, -1.0, 0.0]}},
        {"name": "finger", "mesh": {"half_ellipsoid": {"semi_axes": [0.03, 0.03], "depth": 0.02}},
         "transform": {"translation": [0.05, 0.05, -0.03]},
         "dirichlet": [{"box": {"min": [-0.01, -0.01, -0.01], "max": [1.01, 1.01, 0.01]},
                        "keyframes": {"times": [0.0, 0.04], "translations": [[0, 0, 0], [0, 0, 0.005]]}}]},
    ],
    "half_spaces": [{"origin": [0, 0, 0], "normal": [0, 1, 0]}],
    "output": {"every": 1, "checkpoint_every": 1},
}


def write_scene(directory, data=None, name="tiny.json", **changes):
    """Write TINY (or ``data``) with top-level ``changes`` merged into directory/name; returns the path."""
    scene = copy.deepcopy(TINY if data is None else data)
    scene.update(copy.deepcopy(changes))
    path = directory / name
    path.write_text(json.dumps(scene))
    return path


def frames_of(out_dir, kind="surface"):
    """Sorted frame paths of a run directory."""
    return sorted((out_dir / "frames").glob(f"{kind}_*.{'ply' if kind == 'surface' else 'vtu'}"))


def frame_bytes(out_dir):
    """Contents of every surface frame, in order."""
    return [p.read_bytes() for p in frames_of(out_dir)]


def read_frames(out_dir):
    """[(vertices, faces)] of every surface frame."""
    return [read_ply(p) for p in frames_of(out_dir)]


def stats_rows(out_dir):
    """stats.csv as (header, rows of str)."""
    lines = (out_dir / "stats.csv").read_text().splitlines()
    return lines[0].split(","), [line.split(",") for line in lines[1:]]


def assert_same_floats(a, b):
    """Bitwise-equal arrays."""
    assert a.shape == b.shape and np.array_equal(a.view(np.uint8), b.view(np.uint8))
