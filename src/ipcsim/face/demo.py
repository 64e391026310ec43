"""The face demo (``ipcsim demo face``): the small ICT face shipped with the package (1,620 vertices, 5,940 tets;
docs/face.md) runs every third frame of its expression sequence from the neutral face on: the lips press on each
other (frames 0-6) and roll in (8-30), held apart by IPC on their collision proxy, solved by Projective Dynamics
with the Woodbury global step (``face.solver``). It is a face scene (``face.scene``): the same run as
``ipcsim run`` of the scene in ``DEMO``.
"""
from __future__ import annotations

from .scene import DEVICES, FACE_FORMAT, SOLVERS, FaceScene
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


# ----------------------------------------------------------------------------------------------- command line
#: the simulate options of ``ipcsim demo`` this demo has no use for (frames, not time steps)
REFUSES = ("--dt", "--end-time", "--resume")


def add_arguments(parser) -> None:
    """This demo's options of ``ipcsim demo face`` (the command line collects every demo's)."""
    parser.add_argument("--frames", type=int, metavar="N", help="frames to run (every third of the sequence from "
                                                                "the neutral face; default 10, at most 17)")
    parser.add_argument("--solver", choices=SOLVERS, default=None, help="the global-step solver (default woodbury)")
    parser.add_argument("--device", choices=DEVICES, default=None,
                        help="where schur/woodbury run their dense algebra (default cpu; gpu needs CuPy and an "
                             "NVIDIA GPU: pip install 'ipcsim[gpu]')")


def scene_from_arguments(args) -> FaceScene:
    """The demo's ``FaceScene`` from parsed command-line options (frames, solver, device, no_render, volume)."""
    frames = DEFAULT_FRAMES if args.frames is None else args.frames
    scene = demo_scene(frames, args.solver or "woodbury", render=not args.no_render, device=args.device or "cpu")
    if args.volume:
        scene.data["output"]["volume"] = True
    return scene
