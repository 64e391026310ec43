"""``ipcsim render OUT``: (re)render a finished run's preview (OUT/preview.png and preview.mp4 or .gif)."""
from __future__ import annotations

from pathlib import Path

from .common import UserError


def add_parser(sub, debug) -> None:
    render = sub.add_parser("render", parents=[debug], help="(re)render a finished run's preview",
                            description="Render OUT/frames into OUT/preview.png and preview.mp4 (or .gif).")
    render.add_argument("out", metavar="OUT", help="output directory of a run")
    render.add_argument("--max-frames", type=int, default=80, help="movie frames at most (default 80)")
    render.add_argument("--view", metavar="V", help="camera: auto (default: across the moving bodies), front, back, "
                        "left, right, side, top, or x,y,z (direction from the scene to the eye)")
    render.set_defaults(func=command)


def command(args) -> int:
    from ..app.render import render_run

    out = Path(args.out)
    if args.max_frames < 1:
        raise UserError(f"--max-frames must be at least 1, got {args.max_frames}")
    if not out.is_dir():
        raise UserError(f"{str(out)!r} is not a directory (give a run's output directory)")
    written = render_run(out, max_frames=args.max_frames, view=view_argument(args.view))
    print("preview: " + ", ".join(str(p) for p in written))
    return 0


def view_argument(text: str | None):
    """--view: None, a name ("auto", "front", "side", ...) or "x,y,z" (a direction from the scene to the eye)."""
    if text is None or "," not in text:
        return text
    try:
        return [float(x) for x in text.split(",")]
    except ValueError:
        raise UserError(f"--view: {text!r} is not x,y,z (three numbers)") from None
