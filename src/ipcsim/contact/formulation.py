"""The barrier formulation as three switches, from the one ``convergent`` flag of the solvers' contact settings
(``solvers.newton.ContactParameters``, ``face.FaceContact``).

convergent = True (002): area-weighted stencils and the improved max approximator in the active set
(``collisions.build_collisions``) and the physical barrier b / dhat^3 in the potential (``barrier_potential``),
so kappa is a pressure [Pa]; convergent = False: IPC 2020's unweighted barrier (kappa in Pa/m^3).
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class BarrierFormulation:
    """area_weighting, improved_max: ``build_collisions``' use_area_weighting, use_improved_max_approximator;
    physical_barrier: the barrier potential's use_physical_barrier."""

    area_weighting: bool
    improved_max: bool
    physical_barrier: bool

    @classmethod
    def of(cls, convergent: bool) -> "BarrierFormulation":
        """The three switches of the convergent formulation (all on) or of IPC 2020's (all off)."""
        c = bool(convergent)
        return cls(area_weighting=c, improved_max=c, physical_barrier=c)

    @property
    def collision_args(self) -> dict:
        """Keyword arguments of ``collisions.build_collisions``."""
        return dict(use_area_weighting=self.area_weighting, use_improved_max_approximator=self.improved_max)

    @property
    def potential_args(self) -> dict:
        """Keyword arguments of ``barrier_potential*`` and ``friction.FrictionCollisions.build``."""
        return dict(use_physical_barrier=self.physical_barrier)


class ConvergentSwitch:
    """Base of the contact settings that carry one ``convergent`` flag (``ContactParameters``, ``FaceContact``):
    ``formulation`` is the three switches it stands for."""

    convergent: bool

    @property
    def formulation(self) -> BarrierFormulation:
        """The three switches ``convergent`` stands for (``BarrierFormulation.of``)."""
        return BarrierFormulation.of(self.convergent)
