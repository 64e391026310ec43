"""``ipcsim run SCENE``: simulate a scene file: an ipcsim JSON scene, an IPC .txt script, a face scene
(ipcsim-face/1), or the OUT/scene.json an ``ipcsim demo teddy-grasp`` or ``plate-rack`` run wrote (``scene_input``
tells which)."""
from __future__ import annotations

import json
from pathlib import Path

from .common import execute, execute_face, positive, refuse_options, simulate_arguments


def add_parser(sub, debug) -> None:
    run = sub.add_parser("run", parents=[debug], help="simulate a scene file (.json or IPC .txt script)",
                         description="Simulate a scene file (ipcsim JSON scene or IPC .txt script).")
    run.add_argument("scene", metavar="SCENE", help="scene file (.json or .txt)")
    simulate_arguments(run, "./ipcsim-out/<scene name>")
    run.add_argument("--render", action="store_true", help="write preview.png and preview.mp4/.gif at the end")
    run.set_defaults(func=command)


def scene_input(path) -> tuple[str, object]:
    """What ``ipcsim run`` runs from ``path``, decided here only: ("teddy-grasp" or "plate-rack", parsed data) for
    the OUT/scene.json of an ``ipcsim demo teddy-grasp`` or ``plate-rack`` run (a JSON dict whose "demo" names the
    demo: it holds the demo's parameters), ("face", FaceScene) for a face scene (ipcsim-face/1), ("scene", Scene) for any other
    scene file (the scene loader reports its problems)."""
    from ..face.scene import FaceScene
    from ..scene import load_scene

    p = Path(path)
    if p.suffix.lower() == ".json" and p.is_file():
        try:
            data = json.loads(p.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            data = None
        if isinstance(data, dict) and data.get("demo") in ("teddy-grasp", "plate-rack"):
            return data["demo"], data
    scene = load_scene(path)
    return ("face" if isinstance(scene, FaceScene) else "scene"), scene


def command(args) -> int:
    from .common import build_scene
    from .demo import plate_rack, teddy_grasp

    positive("--dt", args.dt)
    positive("--end-time", args.end_time)
    kind, scene = scene_input(args.scene)
    if kind == "teddy-grasp":
        return teddy_grasp(args, (args.scene, scene))
    if kind == "plate-rack":
        return plate_rack(args, (args.scene, scene))
    if kind == "face":
        refuse_options(args, f"{args.scene}: a face scene", ("--dt", "--end-time", "--resume"))
        for key, flag in (("volume", args.volume), ("render", args.render)):
            scene.data["output"][key] = scene.data["output"][key] or flag
        return execute_face(scene, args)
    sim, data = build_scene(scene, args.scene, args.end_time, args.dt, args.volume or None, args.render or None)
    return execute(sim, data, args, str(args.scene))
