"""The model layer: Model (static), State (x, v, t, a), Control (prescribed motions, loads), ModelBuilder and its
placement and material values (Transform, Material).

    from ipcsim.model import Material, ModelBuilder, Transform, box_tet_mesh
"""
from .builder import ModelBuilder, box_tet_mesh
from .control import (BoundingBoxStepMotion, Control, KeyframedMotion, NeumannLoad, PrescribedMotion,
                      rotation_matrix, rotation_xyz)
from .core import Model, State
from .values import Material, Transform

__all__ = ["Model", "State", "Control", "ModelBuilder", "box_tet_mesh", "PrescribedMotion", "BoundingBoxStepMotion",
           "KeyframedMotion", "NeumannLoad", "rotation_matrix", "rotation_xyz", "Material", "Transform"]
