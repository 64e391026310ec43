"""A built scene ready to run: what ``ipcsim.scene.Scene.build()`` and the demos return, what the run loop
(``ipcsim.app.runner.run``) steps.
"""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Simulation:
    """A built scene ready to run (what ``ipcsim.scene.Scene.build()`` returns; build one by hand for a scene
    assembled in Python).

    Attributes:
        model: ``ipcsim.model.Model``; state: initial ``State``; solver: has
            ``step(state_in, state_out, control, dt)`` (control None: the model's own)
            returning ``StepStats``; dt, end_time [s]; output: the scene's "output" dict (every, volume,
            render, checkpoint_every); name: scene name; body_names, obstacle_names: lists of str.
    """

    model: object
    state: object
    solver: object
    dt: float
    end_time: float
    output: dict = field(default_factory=dict)
    name: str = "scene"
    body_names: list = field(default_factory=list)
    obstacle_names: list = field(default_factory=list)
