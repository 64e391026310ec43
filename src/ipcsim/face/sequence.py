"""The face's expression sequence and its interpenetration count without collision handling (000 Fig. 1, 3).

``expression_sequence`` gives 50 frames of blendshape weights in which the lips press on each other
(mouthPress, mouthClose with jawOpen), roll in (mouthRollLower/Upper), pucker and slide sideways
(mouthLeft/Right); ``count_interpenetrations`` counts the frames whose uncollided (kinematic) proxy surface
intersects itself.
"""
from __future__ import annotations

import numpy as np

from ..contact.intersection import find_intersections
from ..geometry.collision_mesh import CollisionMesh

N_FRAMES = 50


def _bump(frames, start, end, ramp=4.0) -> np.ndarray:
    """A smooth 0 -> 1 -> 0 profile (N,) [1]: 1 on [start + ramp, end - ramp], smoothstep ramps."""
    f = np.asarray(frames, np.float64)
    up = np.clip((f - start) / ramp, 0.0, 1.0)
    down = np.clip((end - f) / ramp, 0.0, 1.0)
    s = np.minimum(up, down)
    return s * s * (3.0 - 2.0 * s)


def expression_sequence(names, n_frames: int = N_FRAMES) -> np.ndarray:
    """Weights (n_frames, K) [1] over ``names`` (unknown names stay 0). Phases (frames of 50): frame 0 neutral,
    press (ramped in over frames 0-6, then held: the lips pressed together throughout), roll lower/upper
    (8-30), pucker (18-34), jaw open with the lips closed
    (26-44), slide left then right (32-49)."""
    f = np.arange(n_frames) * (50.0 / n_frames)
    w = {
        "mouthPress_L": 0.9 * _bump(f, 0, 56, 6),
        "mouthPress_R": 0.9 * _bump(f, 0, 56, 6),
        "mouthRollLower": 0.8 * _bump(f, 8, 30),
        "mouthRollUpper": 0.6 * _bump(f, 12, 30),
        "mouthPucker": 0.6 * _bump(f, 18, 34),
        "jawOpen": 0.15 * _bump(f, 26, 44),
        "mouthClose": 0.45 * _bump(f, 26, 44),
        "mouthLeft": 0.8 * _bump(f, 32, 42, 3),
        "mouthRight": 0.8 * _bump(f, 41, 54, 3),
    }
    return np.stack([w.get(n, np.zeros(n_frames)) for n in names], axis=1)


def kinematic_proxy(model, weights) -> np.ndarray:
    """The uncollided proxy (p, 3) [m] of one frame: W (rest + sum_k w_k u_k), u_k = the model's target
    displacement fields (info['target_displacements'], (K, n, 3) [m])."""
    u = np.einsum("k,knj->nj", np.asarray(weights, np.float64), model.info["target_displacements"])
    return model.proxy_map.apply(model.rest + u)


def count_interpenetrations(model, sequence=None, positions=None) -> tuple[int, np.ndarray]:
    """Frames whose proxy intersects itself (exact edge-triangle test, ``contact.intersection``).

    positions: optional callable weights -> proxy positions (p, 3) [m] (default ``kinematic_proxy``).
    Returns (number of intersecting frames, per-frame count of intersecting edge-triangle pairs (frames,)).
    """
    seq = model.sequence if sequence is None else np.asarray(sequence)
    mesh = CollisionMesh.from_triangle_mesh(model.proxy_vertices, model.proxy_faces)
    pos = positions if positions is not None else (lambda w: kinematic_proxy(model, w))
    counts = np.array([len(find_intersections(mesh, pos(w))) for w in seq], np.int64)
    return int(np.count_nonzero(counts)), counts
