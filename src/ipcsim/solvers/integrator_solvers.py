"""The solvers by integrator: implicit Euler, Newmark and quasi-static, each the shared Newton loop of
``ipcsim.solvers.newton`` with its integrator strategy (``ipcsim.solvers.integrators``), and ``make_solver``
to pick one by name (scene files do).

    E(x) = 1/2 (x - x_hat)^T M (x - x_hat) + h^2 (Psi(x) + kappa B(x) + D(x) - f_ext . x) [+ E_d(x)]
    x_hat = x^t + h v^t,    f_ext = M g + Neumann loads

Newmark replaces x_hat by x^t + h v^t + h^2 (1/2 - beta) a^t and h^2 by beta h^2; E_d is IPC's lagged Rayleigh
damping term; the quasi-static mode drops the inertia term and the h^2 factor (equilibrium Psi + kappa B -
f_ext . x).
"""
from __future__ import annotations

from ..model import Model
from .integrators import INTEGRATORS, ImplicitEuler, Newmark, QuasiStatic
from .newton import ContactParameters, FrictionParameters, NewtonSolver, StepStats

__all__ = ["ImplicitEulerSolver", "NewmarkSolver", "QuasiStaticSolver", "make_solver", "ContactParameters",
           "FrictionParameters", "StepStats", "NewtonSolver"]


class ImplicitEulerSolver(NewtonSolver):
    """Backward Euler steps (x_hat = x^t + h v^t, weights (1, h^2)); arguments as ``NewtonSolver`` without the
    integrator."""

    def __init__(self, model: Model, contact: ContactParameters | None = None, **kwargs):
        super().__init__(model, ImplicitEuler(), contact, **kwargs)


class NewmarkSolver(NewtonSolver):
    """Newmark-beta steps (IPC 2020's ``timeIntegration NM``); beta in (0, 1/2], gamma in [1/2, 1] (defaults
    1/4, 1/2: average acceleration). The State's ``a`` carries Newmark's history."""

    def __init__(self, model: Model, contact: ContactParameters | None = None, *, beta: float = 0.25,
                 gamma: float = 0.5, **kwargs):
        super().__init__(model, Newmark(beta, gamma), contact, **kwargs)


class QuasiStaticSolver(NewtonSolver):
    """Quasi-static load steps: each step solves the equilibrium at its end time (no inertia, no damping)."""

    def __init__(self, model: Model, contact: ContactParameters | None = None, **kwargs):
        if kwargs.get("damping_ratio", 0.0):
            raise ValueError("damping_ratio needs a dynamic integrator (quasi_static=True has no time scale)")
        super().__init__(model, QuasiStatic(), contact, **kwargs)


def make_solver(model: Model, contact: ContactParameters | None = None, *, integrator: str = "implicit_euler",
                quasi_static: bool = False, newmark_beta: float = 0.25, newmark_gamma: float = 0.5,
                **kwargs) -> NewtonSolver:
    """The solver for an integrator given by name: "implicit_euler", "newmark" (with newmark_beta/gamma), or
    quasi_static=True; other keyword arguments as ``NewtonSolver`` (ValueError naming a bad parameter)."""
    if integrator not in INTEGRATORS:
        raise ValueError(f"integrator must be one of {', '.join(INTEGRATORS)}; got {integrator!r}")
    Newmark(newmark_beta, newmark_gamma)  # validates the parameters whichever scheme runs
    if quasi_static:
        if integrator != "implicit_euler":
            raise ValueError(f"quasi_static=True has no inertia: it cannot run with integrator={integrator!r}")
        return QuasiStaticSolver(model, contact, **kwargs)
    if integrator == "newmark":
        return NewmarkSolver(model, contact, beta=newmark_beta, gamma=newmark_gamma, **kwargs)
    return ImplicitEulerSolver(model, contact, **kwargs)
