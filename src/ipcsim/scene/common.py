"""What the scene resolver's modules share: the defaults of the format, the geometry read for a body or obstacle,
and small helpers (filling defaults, absolute paths, time ranges)."""
from __future__ import annotations

import copy
import inspect
import math
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..model.core import DEFAULT_INVERSION

DEFAULTS = {
    "time": {"end": 5.0, "dt": 0.025},
    "gravity": [0.0, -9.81, 0.0],
    "contact": {"kappa": None, "convergent": True},
    "friction": {"mu": 0.0, "lagging_iterations": 1},
    "solver": {"tol": 1e-2, "max_newton_iterations": 1000, "linear_solver": "auto", "warm_start": False},
    "output": {"every": 1, "volume": False, "render": False, "checkpoint_every": 10},
    "transform": {"scale": 1.0, "rotation": [0.0, 0.0, 0.0], "translation": [0.0, 0.0, 0.0]},
    "material": {"model": "NH", "density": 1000.0, "youngs_modulus": 1e5, "poisson_ratio": 0.4},
    "half_space": {"origin": [0.0, 0.0, 0.0], "normal": [0.0, 1.0, 0.0], "friction": 0.0},
    "embedding": {"mass": "lumped"},
    "affine": {"stiffness": 1e7, "fixed": False},
    "inversion": DEFAULT_INVERSION,
}


@dataclass
class Geometry:
    """A mesh read for a body or obstacle.

    Attributes:
        vertices: (n, 3) model-space vertices [file units]; elements: (m, 4) tets, (m, 3) triangles, (m, 2)
            segments, (m, 1) points or None (obstacles only).
        placed: (n, 3) [m], the vertices after the transform.
        keyframes: a keyframed obstacle's (times (K,) [s], positions (K, n, 3) [m]), else None.
        coarse: an embedded body's own coarse mesh, placed: (vertices (n_c, 3) [m], tets (m_c, 4)), else None.
        nodes: (n_nodes, 3) [m], a body's nodes (what Dirichlet/Neumann selections pick): the placed vertices
            of a full-space body, the coarse vertices of an embedded one, the 4 corners of an affine body's
            enclosing tet. None until known (a generated cage is only made when a selection needs it).
    """

    vertices: np.ndarray
    elements: np.ndarray | None
    placed: np.ndarray
    keyframes: tuple | None = None
    coarse: tuple | None = None
    nodes: np.ndarray | None = None


def filled(defaults: dict, given: dict | None) -> dict:
    """A deep copy of defaults updated with a deep copy of given (top-level keys)."""
    out = copy.deepcopy(defaults)
    out.update(copy.deepcopy(given or {}))
    return out


def abs_path(base_dir: Path, path: str) -> str:
    """path (relative to base_dir, or absolute; ``~`` expanded) as a normalised absolute-or-base-joined path."""
    return os.path.normpath(os.path.join(os.fspath(base_dir), os.path.expanduser(path)))


def time_range(value) -> tuple[float, float]:
    """A scene time range [start, end or None] [s] as (start, end) with None -> inf."""
    t0, t1 = value
    return float(t0), math.inf if t1 is None else float(t1)


def accepts(func, name: str) -> bool:
    """True when func takes a parameter called name (features of the builder that a build may lack)."""
    return name in inspect.signature(func).parameters
