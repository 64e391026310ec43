"""Test helper: checks on deformed tet meshes (imported by tests as ``from _tet_checks import ...``)."""
from __future__ import annotations

import numpy as np

from ipcsim.geometry.surface import tet_signed_volumes


def count_inverted_tets(x: np.ndarray, tets: np.ndarray) -> int:
    """Number of tets with non-positive signed volume at positions x (n, 3) [m]."""
    return int(np.count_nonzero(tet_signed_volumes(x, tets) <= 0.0))
