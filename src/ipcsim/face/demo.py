"""The face demo (``ipcsim demo face``): the small ICT face shipped with the package (1,620 vertices, 5,940 tets;
docs/face.md) runs every third frame of its expression sequence from the neutral face on: the lips press on each
other (frames 0-6) and roll in (8-30), held apart by IPC on their collision proxy, solved by Projective Dynamics
with the Woodbury global step (``face.solver``). It is a face scene (``face.scene``): the same run as
``ipcsim run`` of the scene in ``DEMO``.
"""
from __future__ import annotations

from .scene import FACE_FORMAT, SOLVERS, FaceScene
from .sequence import N_FRAMES

EVERY = 3  # sequence frames between two demo frames
DEFAULT_FRAMES = 10  # sequence frames 0, 3, ..., 27
MAX_FRAMES = (N_FRAMES - 1) // EVERY + 1  # 17: up to sequence frame 48

#: the demo as a face scene dict (``frames`` set by ``demo_scene``)
DEMO = {"format": FACE_FORMAT, "name": "face", "face": "small", "every": EVERY, "solver": "woodbury",
        "output": {"render": True}}


def demo_scene(frames: int = DEFAULT_FRAMES, solver: str = "woodbury", render: bool = True,
               device: str = "cpu") -> FaceScene:
    """The demo's ``FaceScene``: ``frames`` frames (1 to ``MAX_FRAMES``; ValueError otherwise) with the global-step
    solver ``solver`` (one of ``SOLVERS``) on ``device`` ('cpu' or 'gpu': the face scene's "device" key); render:
    write the preview."""
    if isinstance(frames, bool) or not isinstance(frames, int) or not 1 <= frames <= MAX_FRAMES:
        raise ValueError(f"--frames must be an integer from 1 to {MAX_FRAMES} (every {EVERY}rd frame of the "
                         f"{N_FRAMES}-frame sequence), got {frames}")
    if solver not in SOLVERS:
        raise ValueError(f"--solver must be one of {', '.join(SOLVERS)}, got {solver!r}")
    data = {**DEMO, "frames": [0, EVERY * (frames - 1)], "solver": solver, "device": device,
            "output": {"render": bool(render)}}
    return FaceScene.from_dict(data, source="demo face")
