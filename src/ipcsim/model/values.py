"""Two small values for ``ModelBuilder``'s placement and material arguments: ``Transform`` and ``Material``.

    from ipcsim.model import Material, ModelBuilder, Transform
    rubber = Material(name="LCR", youngs_modulus=5e4, poisson_ratio=0.45, density=1000.0, damping_stiffness=0.05)
    b = ModelBuilder()
    b.add_body(v, t, transform=Transform(translation=(0.0, 0.1, 0.0)), material=rubber)
    b.add_body(v, t, transform=Transform(translation=(0.2, 0.1, 0.0), scale=0.5), material=rubber)

Both are frozen (hashable, comparable) and validated on construction; the builder's old keywords (translation,
rotation, scale; material name, density, youngs_modulus, poisson_ratio, damping_stiffness, inversion) build the
same values (``placement``, ``body_material``). Units: SI (m, kg, s, Pa).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..energies.materials import material_info
from .core import DEFAULT_INVERSION, check_inversion

#: kappa_a [Pa], an affine body's default orthogonality stiffness (004's stiff parts)
AFFINE_STIFFNESS = 1e7


def _floats(value, shape: tuple, name: str) -> tuple:
    """value as a (nested) tuple of finite Python floats of the given shape (float64 round trip: exact)."""
    try:
        a = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a finite {shape} array, got {value!r}") from None
    if a.shape != shape or not np.all(np.isfinite(a)):
        raise ValueError(f"{name} must be a finite {shape} array, got {value!r}")
    return tuple(a.tolist()) if a.ndim == 1 else tuple(tuple(row) for row in a.tolist())


def _number(value, name: str, unit: str) -> float:
    """value as a Python float, or ValueError naming it (unit e.g. "[Pa]")."""
    try:
        return float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number {unit}, got {value!r}") from None


@dataclass(frozen=True)
class Transform:
    """Placement of a body's rest vertices: scale, then rotate, then translate, x = R (s X) + t.

    Attributes:
        translation: (3,) [m] t (stored as a tuple of floats).
        rotation: (3, 3) [1] matrix R (normally a rotation; stored as a tuple of rows), or None for the identity.
        scale: s [1], finite and > 0 (uniform).
    """

    translation: tuple = (0.0, 0.0, 0.0)
    rotation: tuple | None = None
    scale: float = 1.0

    def __post_init__(self):
        object.__setattr__(self, "translation", _floats(self.translation, (3,), "translation"))
        if self.rotation is not None:
            object.__setattr__(self, "rotation", _floats(self.rotation, (3, 3), "rotation"))
        s = _number(self.scale, "scale", "[1]")
        if not (math.isfinite(s) and s > 0.0):
            raise ValueError(f"scale must be finite and > 0, got {self.scale!r}")
        object.__setattr__(self, "scale", s)

    def apply(self, vertices) -> np.ndarray:
        """The placed vertices (k, 3) float64 [m] of vertices (k, 3) [m]: ``(X * s) @ R.T + t``, in that order."""
        v = np.asarray(vertices, dtype=np.float64)
        if v.ndim != 2 or v.shape[1] != 3 or not np.all(np.isfinite(v)):
            raise ValueError(f"vertices must be a finite (k, 3) array, got shape {v.shape}")
        v = v * self.scale
        if self.rotation is not None:
            v = v @ np.asarray(self.rotation, dtype=np.float64).T
        return v + np.asarray(self.translation, dtype=np.float64)


@dataclass(frozen=True)
class Material:
    """A body's material, validated on construction.

    Attributes:
        name: the elastic model, one of ``ipcsim.energies.materials.MATERIALS`` (NH, SNH, FCR, LCR, LCR_LAGGED,
            LE; ABD for ``add_affine_body``, see ``Material.affine``).
        youngs_modulus: E [Pa], finite and > 0 (for ABD: the orthogonality stiffness kappa_a [Pa]).
        poisson_ratio: nu [1], finite, -1 < nu < 0.5 (unused by ABD).
        density: rho [kg/m^3], finite and > 0.
        damping_stiffness: beta [s] >= 0 of stiffness-proportional (Rayleigh) damping (0: none).
        inversion: "prevent" or "allow" (``model.core.INVERSION_MODES``; default ``DEFAULT_INVERSION``).
    """

    name: str = "NH"
    youngs_modulus: float = 1e5
    poisson_ratio: float = 0.4
    density: float = 1000.0
    damping_stiffness: float = 0.0
    inversion: str = DEFAULT_INVERSION

    def __post_init__(self):
        material_info(self.name)
        check_inversion(self.inversion, "")
        density = _number(self.density, "density", "[kg/m^3]")
        if not (math.isfinite(density) and density > 0.0):
            raise ValueError(f"density must be positive, got {self.density}")
        beta = _number(self.damping_stiffness, "damping_stiffness", "[s]")
        if not (math.isfinite(beta) and beta >= 0.0):
            raise ValueError(f"damping_stiffness must be finite and >= 0 [s], got {self.damping_stiffness!r}")
        young = _number(self.youngs_modulus, "youngs_modulus", "[Pa]")
        if not (math.isfinite(young) and young > 0.0):
            raise ValueError(f"affine stiffness must be positive [Pa], got {self.youngs_modulus}"
                             if self.name == "ABD" else
                             f"youngs_modulus must be finite and > 0 [Pa], got {self.youngs_modulus!r}")
        nu = _number(self.poisson_ratio, "poisson_ratio", "[1]")
        if not (math.isfinite(nu) and -1.0 < nu < 0.5):
            raise ValueError(f"poisson_ratio must be finite and in (-1, 0.5), got {self.poisson_ratio!r}")
        for key, value in (("density", density), ("damping_stiffness", beta), ("youngs_modulus", young),
                           ("poisson_ratio", nu)):
            object.__setattr__(self, key, value)

    @classmethod
    def affine(cls, stiffness: float = AFFINE_STIFFNESS, density: float = 1000.0, damping_stiffness: float = 0.0,
               inversion: str = DEFAULT_INVERSION) -> Material:
        """An affine body's material (``ModelBuilder.add_affine_body``): name "ABD", stiffness kappa_a [Pa] of
        kappa_a ||F F^T - I||^2 (the paper's stiff parts: 1e7 Pa), density [kg/m^3], damping_stiffness [s]."""
        return cls(name="ABD", youngs_modulus=stiffness, poisson_ratio=0.0, density=density,
                   damping_stiffness=damping_stiffness, inversion=inversion)


def _given(keywords: dict) -> dict:
    return {k: v for k, v in keywords.items() if v is not None}


def _conflict(what: str, value: str, given: dict) -> ValueError:
    names = ", ".join(f"{k}=" for k in given)
    return ValueError(f"{what}: {value}= conflicts with {names} (give one or the other)")


def placement(transform, what: str, **keywords) -> Transform:
    """The Transform of a builder call: ``transform`` if given (then none of the old keywords translation,
    rotation, scale may be, i.e. not None), else one built from the given keywords, its ValueError prefixed with
    what (e.g. "body 2")."""
    given = _given(keywords)
    if transform is None:
        try:
            return Transform(**given)
        except ValueError as exc:
            raise ValueError(f"{what}: {exc}") from None
    if not isinstance(transform, Transform):
        raise ValueError(f"{what}: transform must be a Transform, got {type(transform).__name__}")
    if given:
        raise _conflict(what, "transform", given)
    return transform


def body_material(material, what: str, **keywords) -> Material:
    """The Material of a builder call: ``material`` if it is a Material (then none of the old keywords density,
    youngs_modulus, poisson_ratio, damping_stiffness, inversion may be given, i.e. not None), else one built from
    the material name (None: "NH") and the given keywords, its ValueError prefixed with what (e.g. "body 2")."""
    given = _given(keywords)
    if isinstance(material, Material):
        if given:
            raise _conflict(what, "material", given)
        return material
    try:
        return Material(**({} if material is None else {"name": material}), **given)
    except ValueError as exc:
        raise ValueError(f"{what}: {exc}") from None
