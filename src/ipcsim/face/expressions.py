"""The three expression sequences of the face experiment (000 §4: "three facial animation sequences, with each
containing 50 frames"), built from the ICT-FaceKit blendshapes as per-frame weights.

000 does not publish its sequences; these three are written here so that each one drives the lips into each
other in its own way (every one interpenetrates without collision handling, ``sequence.
count_interpenetrations``):

* ``press_roll`` (lips pressed and rolled in): mouthPress_L/R press the closed lips on each other (left side
  first, then both), mouthRollLower then mouthRollUpper curl each lip inwards over the other while they are
  pressed, then both roll together and release. The lips' contact is a sliding, rolling contact along the
  whole mouth line.
* ``pucker_funnel`` (lips pushed forward): mouthPucker pushes the lips forward and together into a kiss (the lip
  corners drawn in, the lips squeezed against each other at the centre), mouthFunnel flares them into an open
  "O", then pucker and funnel together with mouthPress (a tight, forward-pushed pout) and a sideways pucker
  (mouthLeft). The contact moves from the centre of the lips out to the corners and back.
* ``jaw`` (jaw open and close with mouthClose): jawOpen rotates the jaw open (about 25 degrees at weight 1) and
  mouthClose, its ARKit corrective, closes the lips over the open jaw; mouthClose running ahead of jawOpen pushes
  the lips into each other (closed over a jaw that is opening less than mouthClose compensates), then the jaw
  opens fully with the lips parted (contact lost), closes again with the lips meeting (contact re-made at
  speed), and a last chewing-like open/close with mouthClose held.

``expressions(name, names)`` gives the weights (frames, K) over a model's blendshape names (``FaceModel.names``);
``SEQUENCES`` lists the names. Weights change smoothly (smoothstep ramps); frame 0 is the neutral face.
"""
from __future__ import annotations

import numpy as np

from .sequence import N_FRAMES, _bump

#: The sequences' names, in the order of the experiment (000 Table 1's three cases).
SEQUENCES = ("press_roll", "pucker_funnel", "jaw")


def _ramp(f, start, end) -> np.ndarray:
    """0 before start, 1 after end, a smoothstep in between (frames f (N,) [1])."""
    s = np.clip((np.asarray(f, np.float64) - start) / max(end - start, 1e-12), 0.0, 1.0)
    return s * s * (3.0 - 2.0 * s)


def _press_roll(f) -> dict:
    press_l = 1.0 * _bump(f, 0, 48, 5)
    press_r = 1.0 * _bump(f, 5, 48, 5)
    return {"mouthPress_L": press_l, "mouthPress_R": press_r,
            "mouthRollLower": 0.9 * _bump(f, 8, 24, 5) + 0.7 * _bump(f, 32, 47, 4),
            "mouthRollUpper": 0.8 * _bump(f, 18, 32, 5) + 0.7 * _bump(f, 33, 47, 4),
            "mouthClose": 0.2 * _bump(f, 24, 40, 4), "jawOpen": 0.1 * _bump(f, 24, 40, 4)}


def _pucker_funnel(f) -> dict:
    return {"mouthPucker": 0.9 * _bump(f, 2, 20, 6) + 0.9 * _bump(f, 26, 48, 5),
            "mouthFunnel": 0.8 * _bump(f, 12, 30, 5) + 0.25 * _bump(f, 32, 48, 5),
            "mouthPress_L": 0.8 * _bump(f, 26, 48, 5), "mouthPress_R": 0.8 * _bump(f, 26, 48, 5),
            "mouthLeft": 0.6 * _bump(f, 36, 48, 4), "mouthClose": 0.15 * _bump(f, 10, 30, 5),
            "jawOpen": 0.08 * _bump(f, 10, 30, 5)}


def _jaw(f) -> dict:
    jaw = 0.25 * _bump(f, 2, 16, 5) + 0.6 * _bump(f, 17, 31, 5) + 0.3 * _bump(f, 33, 50, 4)
    close = 0.45 * _bump(f, 1, 17, 4) + 0.35 * _bump(f, 34, 52, 3)
    return {"jawOpen": jaw, "mouthClose": close, "mouthPress_L": 0.3 * _bump(f, 34, 52, 3),
            "mouthPress_R": 0.3 * _bump(f, 34, 52, 3)}


_BUILDERS = {"press_roll": _press_roll, "pucker_funnel": _pucker_funnel, "jaw": _jaw}


def expressions(name: str, names, n_frames: int = N_FRAMES) -> np.ndarray:
    """Weights (n_frames, K) [1] of the sequence ``name`` (one of ``SEQUENCES``; module doc) over the blendshape
    names ``names`` (K,) (names a sequence does not use get 0; a used name missing from ``names`` is refused,
    ValueError). The phases are given on a 50-frame clock, resampled to n_frames."""
    if name not in _BUILDERS:
        raise ValueError(f"unknown expression sequence {name!r}; expected one of {', '.join(SEQUENCES)}")
    f = np.arange(n_frames) * (N_FRAMES / n_frames)
    w = _BUILDERS[name](f)
    missing = sorted(set(w) - set(names))
    if missing:
        raise ValueError(f"expression sequence {name!r} uses blendshapes the face lacks: {', '.join(missing)}")
    return np.stack([w.get(n, np.zeros(n_frames)) for n in names], axis=1)


def sequence_for(model, name: str | None) -> np.ndarray:
    """The weights (frames, K) of a run: the model's shipped sequence for None or "shipped", else
    ``expressions(name, model.names)``."""
    if name is None or name == "shipped":
        return np.asarray(model.sequence, np.float64)
    return expressions(name, model.names)
