"""``ipcsim info SCENE``: describe a scene and check it (exit status 1 when the check finds errors)."""
from __future__ import annotations

from .common import build_scene


def add_parser(sub, debug) -> None:
    info = sub.add_parser("info", parents=[debug], help="describe a scene and check it",
                          description="Print a scene's bodies, sizes and parameters and its sanity check "
                                      "(exit status 1 when the check finds errors).")
    info.add_argument("scene", metavar="SCENE", help="scene file (.json or .txt)")
    info.set_defaults(func=command)


def command(args) -> int:
    from ..face.scene import FaceScene
    from ..scene import load_scene

    scene = load_scene(args.scene)
    if isinstance(scene, FaceScene):
        from ..face.runner import describe_face

        print(describe_face(scene.build(), scene.data))
        return 0
    from ..app.info import describe

    sim, data = build_scene(scene, args.scene)
    text, ok = describe(sim, data)
    print(text)
    return 0 if ok else 1
