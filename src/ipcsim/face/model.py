"""An actuated quasi-static soft-tissue model (000_face_pd_ipc_paper.txt): the data the face solver consumes.

The simulation mesh carries elasticity and shape-targeting actuation (000 Eq. 1); a finer collision proxy is
embedded in it, s = W x (000 §3.1), each proxy vertex a barycentric combination of the four corners of the
simulation tet that holds it (the same per-vertex weights as ``geometry.surface_map.SurfaceMap``).

Actuation: blendshape k gives every tet a symmetric 3x3 target A_k,i (the symmetric factor of the tet's target
deformation gradient). A frame with expression weights w (K,) blends them,

    A_i(w) = I + sum_k w_k (A_k,i - I),

and prescribes the attached (bone) vertices at rest + sum_k w_k bone_displacements[k].
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..geometry.surface_map import SurfaceMap


@dataclass
class FaceSkin:
    """The visible skin of a face, embedded in the simulation tets as the collision proxy is: skin = W_skin x.

    Attributes:
        vertices: (s, 3) float64 [m], rest positions (W_skin x_rest).
        faces: (t, 3) int64, triangles (indices into vertices).
        map: ``SurfaceMap`` (s, 4) into the n simulation vertices: barycentric weights in the tet holding each
            vertex (extrapolated from the nearest tet for a vertex outside every tet).
        proxy_index: (p,) int64, the skin vertex of each proxy vertex: its row of ``map`` is the proxy's row of
            W, so the skin is the proxy there, bit for bit.
    """

    vertices: np.ndarray
    faces: np.ndarray
    map: SurfaceMap
    proxy_index: np.ndarray


@dataclass
class FaceModel:
    """A shape-targeting soft body with bone attachments and an embedded collision proxy.

    Attributes:
        rest: (n, 3) float64 [m], rest positions of the simulation vertices.
        tets: (m, 4) int64, simulation tets, positively oriented.
        bone: (nb,) int64, vertices attached to bone (skull and jaw): Dirichlet, prescribed every frame.
        names: the K blendshape names.
        actuation: (K, m, 3, 3) float64 [1], symmetric target A_k,i of each blendshape k and tet i.
        bone_displacements: (K, nb, 3) float64 [m], displacement of the bone vertices under blendshape k fully on
            (zero on the skull; the jaw rotation for jawOpen).
        proxy_vertices: (p, 3) float64 [m], rest positions of the collision proxy (s = W x at rest).
        proxy_faces: (f, 3) int64, proxy triangles (indices into proxy_vertices).
        proxy_map: the map W: ``SurfaceMap`` with nodes (p, 4) into the n simulation vertices, weights (p, 4).
        sequence: (frames, K) float64 [1], the expression weights of the shipped animation.
        stiffness: (m,) float64 [Pa] shape-targeting weight per unit rest volume (w_i = stiffness_i V_i).
        skin: the visible skin embedded in the simulation mesh (``FaceSkin``: the ICT face's fine skin), or None
            (a model without one, the two flaps: the skin drawn is the simulation mesh's surface).
        info: free-form provenance (source files, sizes, counts).
    """

    rest: np.ndarray
    tets: np.ndarray
    bone: np.ndarray
    names: list
    actuation: np.ndarray
    bone_displacements: np.ndarray
    proxy_vertices: np.ndarray
    proxy_faces: np.ndarray
    proxy_map: SurfaceMap
    sequence: np.ndarray
    stiffness: np.ndarray
    skin: FaceSkin | None = None
    info: dict = field(default_factory=dict)

    def blend(self, weights) -> tuple[np.ndarray, np.ndarray]:
        """Targets and bone positions of one frame.

        Args:
            weights: (K,) float64 [1], expression weights.
        Returns:
            A: (m, 3, 3) float64 [1], blended symmetric targets I + sum_k w_k (A_k - I).
            bone_positions: (nb, 3) float64 [m], rest + sum_k w_k bone_displacements[k].
        """
        w = np.asarray(weights, np.float64)
        eye = np.eye(3)
        # the blendshapes with a non-zero weight, summed in order (a zero weight adds nothing): no (K, m, 3, 3)
        # temporary, ~20x faster than a dense contraction on the large face's 12 x 279,180 targets
        A = np.broadcast_to(eye, self.actuation.shape[1:]).copy()
        for k in np.flatnonzero(w):
            A += w[k] * (self.actuation[k] - eye)
        bone = self.rest[self.bone] + np.einsum("k,kbj->bj", w, self.bone_displacements)
        return A, bone
