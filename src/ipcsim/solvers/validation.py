"""An optional check of every accepted solver update, for tests: IPC promises that each accepted Newton update
moves the collision surface along a collision-free straight path (001 §3), and a hook set here sees each one.

    with validate_updates(check):          # check(mesh, xs0, xs1), e.g. an independent CCD (tests/stress)
        solver.step(state, new, None, h)

The Newton solvers (``newton.NewtonSolver``) and the face solver (``face.solver.FacePDSolver``) call ``hook`` after
every accepted update with the collision mesh (``geometry.collision_mesh.CollisionMesh``) and the surface positions
before and after it, xs0 and xs1 (n_surface, 3) [m]: the straight path xs0 + t (xs1 - xs0), t in [0, 1], is the
one the step's CCD bounded. The chord between two time steps is not what IPC guarantees (a spinning body's chord
may cross where its iterates did not): only these updates are. Off (``hook is None``, the default) it costs one
attribute test per update. The hook is process-wide (every solver of every thread calls it); it must not modify
its arguments.
"""
from __future__ import annotations

from contextlib import contextmanager

#: None, or check(mesh, xs0, xs1) called after every accepted solver update (see the module docstring)
hook = None


@contextmanager
def validate_updates(check):
    """Within the block, call check(mesh, xs0 (n_surface, 3) [m], xs1 (n_surface, 3) [m]) after every accepted
    solver update; the previous hook (None by default) comes back on exit. Yields check."""
    global hook
    previous, hook = hook, check
    try:
        yield check
    finally:
        hook = previous
