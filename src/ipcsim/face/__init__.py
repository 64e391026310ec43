"""The actuated face of 000 (Li, Yang, Solenthaler 2023: a quasi-static face by Projective Dynamics with IPC on an
embedded collision proxy): one package for the face model, its data and scenes, and its solver (docs/face.md,
docs/face_solver.md).

    from ipcsim.face import FaceContact, FacePDSolver, load_face
    model = load_face("small")                         # FaceModel: rest (n, 3) [m], tets, bone, proxy, sequence
    solver = FacePDSolver(model, "woodbury")           # or "direct", "pcg", "schur"; FaceContact(...) to tune IPC
    for weights in model.sequence[:5]:
        stats = solver.frame(weights)                  # the equilibrium of one frame; solver.x (n, 3) [m]

    from ipcsim.face import FaceScene, run_face
    sim = FaceScene.from_dict({"format": "ipcsim-face/1", "frames": [0, 9]}).build()
    run_face(sim, "OUT")                               # OUT/frames/surface_*.ply, OUT/stats.csv (docs/face.md)

Modules: ``model`` (FaceModel, FaceSkin: the visible skin), ``ict`` (the ICT face built from ICT-FaceKit:
``build_face``), ``data`` (the shipped small face: ``load_face``, ``read_face``, ``save_face``), ``flaps`` (the
synthetic two-flaps model), ``sequence`` (the 50-frame expression sequence), ``scene`` (face scene files, format
ipcsim-face/1),
``solver`` (000 Algorithm 1: ``FacePDSolver``), ``global_step`` (the four global-step solvers),
``regions`` (the collision-aware region x2), ``dense_device`` (the global step's dense algebra on CPU or GPU),
``runner`` (a face scene into an output directory), ``demo`` (``ipcsim demo face``). The generic pieces it is
built on stay in their layers: ``geometry.shell_mesh`` (the shell from a surface patch), ``geometry.shape_targets``
and ``energies.shape_targeting`` (000 Eq. 1 actuation).

Names load on first use, so importing the package (as ``ipcsim.scene``'s loader does) stays cheap.
"""
from __future__ import annotations

import importlib

#: public name -> module of this package that defines it
_EXPORTS = {
    "FaceModel": "model", "FaceSkin": "model",
    "build_face": "ict",
    "load_face": "data", "read_face": "data", "save_face": "data",
    "two_flaps": "flaps",
    "expression_sequence": "sequence", "count_interpenetrations": "sequence", "N_FRAMES": "sequence",
    "FACE_FORMAT": "scene", "FaceScene": "scene", "FaceSimulation": "scene",
    "FacePDSolver": "solver", "FaceContact": "solver", "FrameStats": "solver",
    "predict_collision_aware_vertices": "solver",
    "make_global_solver": "global_step",
    "collision_aware_vertices": "regions",
    "run_face": "runner", "FaceRunResult": "runner",
    "demo_scene": "demo",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'ipcsim.face' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_EXPORTS))
