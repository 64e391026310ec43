"""Where the dense steps of the 'schur' and 'woodbury' global solves run (``global_step``): on the CPU (NumPy and
SciPy's LAPACK, the default) or on an NVIDIA GPU (CuPy, ``device="gpu"``).

The dense algebra is written once, in ``SchurDense`` and ``WoodburyDense``, against a ``DenseBackend``: an array
module ``xp`` (numpy or cupy) and four primitives, a Cholesky factorisation, its solve, a general solve and the
copy back to the host. Three backends:

* ``"cpu"``: numpy with SciPy's ``cho_factor`` / ``cho_solve`` / ``solve`` (LAPACK potrf, potrs, gesv): the
  steps the CPU solvers always took, to the bit;
* ``"gpu"``: cupy with ``cupy.linalg.cholesky`` (cuSOLVER potrf, lower factor L) and two triangular solves
  ``cupyx.scipy.linalg.solve_triangular`` (L y = b, L^T x = y; cuBLAS trsm), ``cupy.linalg.solve`` (getrf/getrs);
* ``numpy_gpu_twin()``: the GPU backend's primitives on numpy (``numpy.linalg.cholesky``,
  ``scipy.linalg.solve_triangular``, ``numpy.linalg.solve``): the GPU code path, run and tested on the CPU.

What lives where: S (n2, n2) ('schur') or S^-1 (n2, n2) ('woodbury', inverted on the backend) is moved to the
backend once, when the solver is prepared, and stays there. Per solve only the touched vertices' rows in x2
(n_c ints), their block B_c (3 n_c, 3 n_c) and the right-hand side r2 (n2, 3) go to the backend, and p2 (n2, 3)
comes back. Everything sparse (the K11 factor and its two solves per step, the condensation, the fallback to a
direct solve) stays on the CPU.

CuPy is imported only when ``dense_backend("gpu")`` is called; a missing CuPy or GPU is a ``DeviceError`` (a
ValueError, so the command line reports it as one ``error:`` line) saying what is missing.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np
import scipy.linalg as sla

__all__ = ["DeviceError", "DenseBackend", "DEVICES", "dense_backend", "numpy_gpu_twin", "SchurDense",
           "WoodburyDense", "vertex_dofs"]

#: The devices a solver accepts by name.
DEVICES = ("cpu", "gpu")


class DeviceError(ValueError):
    """The requested device cannot be used here (no CuPy, no CUDA GPU); the message says what is missing."""


@dataclass(frozen=True)
class DenseBackend:
    """An array module and the dense primitives the Schur/Woodbury steps need.

    name: 'cpu', 'gpu' or 'gpu-twin'; xp: numpy or cupy; cho_factor(a) -> factor of an SPD (m, m) array (may
    overwrite a); cho_solve(factor, b) -> x with a x = b, b (m,) or (m, k); solve(a, b) -> x for a general
    (m, m) a; to_host(a) -> numpy array."""

    name: str
    xp: object
    cho_factor: Callable
    cho_solve: Callable
    solve: Callable
    to_host: Callable

    def to_device(self, a):
        """a (any shape, host or device) as an array of this backend (no copy where it already is one)."""
        return self.xp.asarray(a)


def vertex_dofs(vertices) -> np.ndarray:
    """(3k,) vertex-major dofs 3 v + r of vertices (k,)."""
    return (3 * np.asarray(vertices, np.int64)[:, None] + np.arange(3)).ravel()


def _cpu() -> DenseBackend:
    return DenseBackend(
        "cpu", np,
        cho_factor=lambda a: sla.cho_factor(a, lower=False, overwrite_a=True, check_finite=False),
        cho_solve=lambda c, b: sla.cho_solve(c, b, check_finite=False),
        solve=lambda a, b: sla.solve(a, b, check_finite=False),
        to_host=np.asarray)


def _triangular(name, xp, cholesky, solve_triangular, solve, to_host) -> DenseBackend:
    """A backend whose SPD solves are a lower Cholesky factor L and the triangular solves L y = b, L^T x = y."""

    def cho_solve(low, b):
        y = solve_triangular(low, b, lower=True)
        return solve_triangular(low, y, lower=True, trans="T")

    return DenseBackend(name, xp, cho_factor=cholesky, cho_solve=cho_solve, solve=solve, to_host=to_host)


def numpy_gpu_twin() -> DenseBackend:
    """The GPU backend's algebra (lower Cholesky, two triangular solves) on numpy: the GPU code path on the CPU."""
    return _triangular("gpu-twin", np, np.linalg.cholesky,
                       lambda a, b, **kw: sla.solve_triangular(a, b, check_finite=False, **kw),
                       np.linalg.solve, np.asarray)


_HINT = ("pip install 'ipcsim[gpu]' (CuPy for CUDA 12; another CUDA version needs its own cupy-cudaXXx wheel), "
         "or use device 'cpu'")


def _gpu() -> DenseBackend:
    """The CuPy backend; DeviceError when CuPy does not import or sees no CUDA GPU."""
    try:
        import cupy
    except Exception as exc:  # ImportError, or CuPy failing to load its CUDA libraries
        raise DeviceError(f"device 'gpu' needs CuPy, which cannot be imported ({exc}): {_HINT}") from None
    try:
        count = int(cupy.cuda.runtime.getDeviceCount())
    except Exception as exc:  # CUDARuntimeError: no driver, no device
        raise DeviceError(f"device 'gpu': CuPy finds no usable CUDA GPU ({exc}); use device 'cpu'") from None
    if count < 1:
        raise DeviceError("device 'gpu': CuPy finds no CUDA GPU on this machine; use device 'cpu'")
    import cupyx
    import cupyx.scipy.linalg as csla

    def cholesky(a):
        with cupyx.errstate(linalg="raise"):  # a failed factorisation raises instead of giving NaNs
            return cupy.linalg.cholesky(a)

    return _triangular("gpu", cupy, cholesky, csla.solve_triangular, cupy.linalg.solve, cupy.asnumpy)


def dense_backend(device) -> DenseBackend:
    """The backend of ``device``: 'cpu', 'gpu' (imports CuPy now; DeviceError without CuPy or a GPU) or a
    ``DenseBackend`` (returned as it is, e.g. ``numpy_gpu_twin()``); ValueError for anything else."""
    if isinstance(device, DenseBackend):
        return device
    if device == "cpu":
        return _cpu()
    if device == "gpu":
        return _gpu()
    raise ValueError(f"device must be one of {', '.join(map(repr, DEVICES))}, got {device!r}")


class SchurDense:
    """The dense part of a 'schur' step: S (n2, n2) [N/m] resident on the backend; per solve the Cholesky factor
    of Sigma_hat = S (x) I_3 + U B_c U^T (3 n2, 3 n2) and its two back-substitutions, on the backend."""

    def __init__(self, backend: DenseBackend, s: np.ndarray):
        self.backend = backend
        self.s = backend.to_device(s)

    def solve(self, loc: np.ndarray, b_c: np.ndarray, r2: np.ndarray) -> np.ndarray:
        """p2 (n2, 3) [m] (numpy) with Sigma_hat p2 = r2: loc (n_c,) rows in x2 of the touched vertices, b_c
        (3 n_c, 3 n_c) [N/m] their block of B (vertex-major), r2 (n2, 3) [N]."""
        be, xp = self.backend, self.backend.xp
        sig = xp.kron(self.s, xp.eye(3))  # Sigma (3 n2, 3 n2)
        dof = be.to_device(vertex_dofs(loc))
        sig[xp.ix_(dof, dof)] += be.to_device(b_c)  # + B22, non-zero on the touched vertices only
        c = be.cho_factor(sig)
        p2 = be.cho_solve(c, be.to_device(r2).reshape(-1))
        return be.to_host(p2).reshape(-1, 3)


class WoodburyDense:
    """The dense part of a 'woodbury' step: S^-1 (n2, n2) [m/N] computed on the backend from S and resident there;
    per solve the low-rank update on the n_c touched vertices (``global_step`` module doc), on the backend."""

    def __init__(self, backend: DenseBackend, s: np.ndarray):
        self.backend = backend
        xp = backend.xp
        c = backend.cho_factor(xp.array(s, dtype=np.float64))  # a copy: the factorisation may overwrite it
        sinv = backend.cho_solve(c, xp.eye(s.shape[0]))
        self.sinv = 0.5 * (sinv + sinv.T)

    def solve(self, loc: np.ndarray, b_c: np.ndarray, r2: np.ndarray) -> np.ndarray:
        """p2 (n2, 3) [m] (numpy) = Sigma_hat^-1 r2 by the Woodbury identity; arguments as ``SchurDense.solve``."""
        be, xp = self.backend, self.backend.xp
        sinv = self.sinv
        loc = be.to_device(loc)
        bc = be.to_device(b_c)  # B_c (3 n_c, 3 n_c)
        z = sinv @ be.to_device(r2)  # Sigma^-1 r2 (Sigma^-1 = S^-1 (x) I_3)
        cc = xp.kron(sinv[xp.ix_(loc, loc)], xp.eye(3))  # U^T Sigma^-1 U
        cap = xp.eye(bc.shape[0]) + bc @ cc
        y = be.solve(cap, bc @ z[loc].reshape(-1))
        return be.to_host(z - sinv[:, loc] @ y.reshape(-1, 3))
