"""Scenes: the JSON scene format v1 (docs/scenes.md), the IPC 2020 script importer, and building simulations.

    from ipcsim.scene import load_scene
    scene = load_scene("examples/scenes/two_cubes.json")   # validated, every default resolved (scene.data)
    sim = scene.build()                                     # model, state, solver, dt, end_time, output, ...

Errors in a scene are ``SceneError`` (a ValueError) with one line naming the file and the key path.
"""
from ..errors import SceneError
from .loader import Scene, load_scene
from .schema import SCENE_FORMAT, SCHEMA, validate

__all__ = ["SceneError", "Scene", "load_scene", "SCHEMA", "SCENE_FORMAT", "validate"]
