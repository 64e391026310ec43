"""Thread count of the OpenBLAS libraries NumPy and SciPy load, for a block of dense linear algebra.

On the shared 2-core development machine (load ~4 from other jobs) OpenBLAS's threaded Cholesky of a 252 x 252
SPD matrix took 260-390 ms against 0.35 ms on one thread (scipy 1.17, scipy_openblas; from n ~ 128 up, where
OpenBLAS starts its threads): its workers spin-wait for a core that another process holds. The dense Schur and
Woodbury global steps (``face.global_step``) therefore run their LAPACK calls inside ``blas_threads(1)`` on machines
with fewer than 4 cores (``dense_threads``).

The libraries are found in /proc/self/maps (Linux) by name ("openblas") and driven through their exported
``*openblas_set_num_threads*`` / ``*openblas_get_num_threads*`` entry points (ctypes); where none is found
(another BLAS, another OS) the context manager does nothing.
"""
from __future__ import annotations

import ctypes
import functools
from contextlib import contextmanager

from .threads import cpu_cores

_SET = ("scipy_openblas_set_num_threads64_", "scipy_openblas_set_num_threads", "openblas_set_num_threads64_",
        "openblas_set_num_threads")
_GET = ("scipy_openblas_get_num_threads64_", "scipy_openblas_get_num_threads", "openblas_get_num_threads64_",
        "openblas_get_num_threads")


@functools.lru_cache(maxsize=1)
def _controls() -> tuple:
    """((set, get), ...) of every loaded OpenBLAS (read once, after NumPy and SciPy's LAPACK are imported)."""
    import scipy.linalg  # noqa: F401  (loads SciPy's OpenBLAS)

    try:
        with open("/proc/self/maps") as f:
            paths = sorted({line.split()[-1] for line in f if "openblas" in line.lower() and "/" in line})
    except OSError:
        return ()
    out = []
    for path in paths:
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        setter = next((getattr(lib, s) for s in _SET if hasattr(lib, s)), None)
        getter = next((getattr(lib, s) for s in _GET if hasattr(lib, s)), None)
        if setter is not None and getter is not None:
            getter.restype = ctypes.c_int
            out.append((setter, getter))
    return tuple(out)


def dense_threads() -> int | None:
    """BLAS threads for the dense global steps: 1 on machines with fewer than 4 cores, else None (unchanged)."""
    return 1 if cpu_cores() < 4 else None


@contextmanager
def blas_threads(n: int | None):
    """Run the block with n OpenBLAS threads (None: unchanged), restoring the previous counts afterwards."""
    if n is None:
        yield
        return
    controls = _controls()
    previous = [get() for _, get in controls]
    for setter, _ in controls:
        setter(int(n))
    try:
        yield
    finally:
        for (setter, _), p in zip(controls, previous):
            setter(int(p))
