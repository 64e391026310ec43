"""ipcsim: Incremental Potential Contact simulation of soft and stiff bodies.

The public API in one import (names load on first use, so ``import ipcsim`` stays cheap):

    import ipcsim
    b = ipcsim.ModelBuilder(); ...; model, state = b.finalize()
    solver = ipcsim.ImplicitEulerSolver(model, ipcsim.ContactParameters(dhat=1e-3))
    solver.step(state, new_state, None, 0.01)          # step(state_in, state_out, control, dt)
    sim = ipcsim.load_scene("scene.json").build()
"""
from __future__ import annotations

import importlib

from .runtime.kernel_cache import install_when_numba_loads

# cached kernels go stale when any file compiled into them changes, not only the defining one
install_when_numba_loads()

__version__ = "0.1.0"

#: public name -> module that defines it
_EXPORTS = {
    "Model": "ipcsim.model", "State": "ipcsim.model", "Control": "ipcsim.model", "ModelBuilder": "ipcsim.model",
    "box_tet_mesh": "ipcsim.model", "Transform": "ipcsim.model", "Material": "ipcsim.model",
    "NewtonSolver": "ipcsim.solvers.newton", "ContactParameters": "ipcsim.solvers.newton",
    "FrictionParameters": "ipcsim.solvers.newton", "StepStats": "ipcsim.solvers.newton",
    "ImplicitEulerSolver": "ipcsim.solvers.integrator_solvers", "NewmarkSolver": "ipcsim.solvers.integrator_solvers",
    "QuasiStaticSolver": "ipcsim.solvers.integrator_solvers", "make_solver": "ipcsim.solvers.integrator_solvers",
    "SurfaceMap": "ipcsim.geometry.surface_map", "CollisionMesh": "ipcsim.geometry.collision_mesh",
    "Mass": "ipcsim.energies.mass",
    "load_scene": "ipcsim.scene", "Scene": "ipcsim.scene", "SceneError": "ipcsim.scene",
    "Simulation": "ipcsim.scene.simulation",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'ipcsim' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_EXPORTS))
