"""Scratch arrays reused between calls, for the large temporaries of the contact kernels.

On the development VM a page fault costs ~3 us: a fresh 10 MB temporary is ~2,500 faults, ~8 ms, as much
as the work done in it (``build_collisions`` on the overlapping bunnies: 4,761 faults per call). glibc hands
freed blocks of that size back to the system, so every call faults its temporaries in again. A scratch
array is allocated once per Python thread and name, grows as needed and is kept (its memory is held until
the thread ends). Never return one to a caller: the next call overwrites it.
"""
from __future__ import annotations

import math
import threading

import numpy as np

_scratch = threading.local()


def scratch_array(name: str, shape: tuple | int, dtype=np.float64) -> np.ndarray:
    """An uninitialised array of ``shape`` and ``dtype``, the same memory on every call with this ``name`` from
    this Python thread (grown when too small). A few microseconds a call: the contact kernels ask for several per
    Newton iteration."""
    if isinstance(shape, (int, np.integer)):
        shape = (int(shape),)
        size = shape[0]
    else:
        shape = tuple(shape)
        size = math.prod(shape)
    buffers = getattr(_scratch, "buffers", None)
    if buffers is None:
        buffers = _scratch.buffers = {}
    key = (name, dtype)
    buf = buffers.get(key)
    if buf is None or buf.size < size:
        buf = np.empty(size + size // 4, dtype)
        buffers[key] = buf
    return buf[:size].reshape(shape)
