"""The active set: contact stencils whose distance is below dhat.

Kinds and their stencil vertex order (the argument order of the distance function used):

=====  =========================  ==========================================  ======================
kind   name                       ``vertices`` row                            distance (squared)
=====  =========================  ==========================================  ======================
0      vertex-vertex  (VV)        (v0, v1, -1, -1)                            point_point
1      edge-vertex    (EV)        (v, e0, e1, -1)                             point_line
2      edge-edge      (EE)        (ea0, ea1, eb0, eb1)                        line_line, or the typed
                                                                               edge_edge distance times
                                                                               the mollifier
3      face-vertex    (FV)        (v, f0, f1, f2)                             point_plane
4      plane-vertex   (PV)        (v, -1, -1, -1)                             point to half-space plane
=====  =========================  ==========================================  ======================
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

VV, EV, EE, FV, PV = 0, 1, 2, 3, 4
KIND_NAMES = ("vertex-vertex", "edge-vertex", "edge-edge", "face-vertex", "plane-vertex")
STENCIL_SIZE = np.array([2, 3, 4, 4, 1], dtype=np.int64)


@dataclass
class Collisions:
    """Active contact stencils (structure of arrays, one row per stencil).

    Attributes:
        kind: (n,) int64, one of VV, EV, EE, FV, PV.
        vertices: (n, 4) int64, collision-vertex ids in the order above, -1 padded.
        primitives: (n, 2) int64, ids of the two primitives (vertex/edge/face/plane ids, in the
            order of the kind's name reversed: VV (v0, v1), EV (e, v), EE (ea, eb), FV (f, v), PV (plane, v)).
        dtype: (n,) int64, for EE stencils the edge-edge distance type its squared distance uses
            (the ids of ``ipcsim.contact.distance.types``; EA_EB = line-line for a non-mollified
            pair; a mollified pair keeps the type found at build time, as ipc-toolkit does),
            -1 for the other kinds.
        eps_x: (n,) float64 [m^4], edge-edge mollifier threshold, 0 for other kinds. Every EE
            stencil is evaluated as m(|ea x eb|^2, eps_x) * b (m = 1 above the threshold).
        weight: (n,) float64, multiplicity of the stencil in the potential (1 by default; area
            weights [m^2] and the negative terms of the improved max approximator in the
            convergent formulation).
        dhat: activation distance [m] the set was built for.
        use_area_weighting, use_improved_max_approximator: the convergent-formulation flags (002).
    """

    kind: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    vertices: np.ndarray = field(default_factory=lambda: np.zeros((0, 4), np.int64))
    primitives: np.ndarray = field(default_factory=lambda: np.zeros((0, 2), np.int64))
    dtype: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    eps_x: np.ndarray = field(default_factory=lambda: np.zeros(0, np.float64))
    weight: np.ndarray = field(default_factory=lambda: np.zeros(0, np.float64))
    dhat: float = 0.0
    use_area_weighting: bool = False
    use_improved_max_approximator: bool = False

    def __len__(self) -> int:
        return len(self.kind)

    def count(self, kind: int) -> int:
        """Number of stencils of one kind."""
        return int(np.count_nonzero(self.kind == kind))
