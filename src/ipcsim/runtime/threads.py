"""Thread count for small parallel Numba calls (broad phase, CCD narrow phase, active-set classification),
and the helper Python thread that runs a second serial kernel beside the calling thread on small machines.

Starting a Numba parallel region costs ~30 us on an idle machine, but on the shared 2-core development
machine the median start was ~6 ms whenever the other core was busy (the OpenMP workers had gone to
sleep and the second core was taken): a 6k-vertex scene's CCD narrow phase took 5.9 ms on 2 threads and
1.6 ms on one. Calls with little work therefore run on one thread.
"""
from __future__ import annotations

import functools
import os
from concurrent.futures import ThreadPoolExecutor

import numba as nb

from .jit import current_threads, set_threads

PARALLEL_MIN_WORK = 20_000
"""Work items (candidates, boxes) below which a call runs on one thread on machines with < 4 cores;
a tenth of it on larger machines, where starting the threads is cheap."""


@functools.lru_cache(maxsize=1)
def cpu_cores() -> int:
    """``os.cpu_count()`` (1 if unknown), read once: the call costs ~25 us on the development machine, and the
    small-input decisions ask for it several times per Newton iteration."""
    return os.cpu_count() or 1


def threads_for(work: int) -> int:
    """Numba threads for a call over ``work`` items: 1 when the work is small (see ``PARALLEL_MIN_WORK``),
    else the current ``numba.get_num_threads()``."""
    cores = cpu_cores()
    min_work = PARALLEL_MIN_WORK if cores < 4 else PARALLEL_MIN_WORK // 10
    return 1 if work < min_work else current_threads()


class numba_threads:  # noqa: N801 - used as a function: ``with numba_threads(n) as threads:``
    """Run the block with ``n`` Numba threads (this Python thread only), restoring the count afterwards; the
    block gets n (clamped to 1..NUMBA_NUM_THREADS). A class rather than a generator context: the small-input
    paths enter one about 25 times per step of the teddy grasp, and a generator context costs ~1.5 us more."""

    __slots__ = ("n", "previous")

    def __init__(self, n: int):
        self.n = max(1, min(int(n), nb.config.NUMBA_NUM_THREADS))
        self.previous = self.n

    def __enter__(self) -> int:
        self.previous = current_threads()
        if self.n != self.previous:
            set_threads(self.n)
        return self.n

    def __exit__(self, *exc) -> bool:
        if self.n != self.previous:
            set_threads(self.previous)
        return False


SPLIT_MIN_WORK = 2_000
"""Fewest work items for which ``split_in_two`` holds (the hand-over to the helper thread costs ~0.1 ms)."""

_POOL: tuple[int, ThreadPoolExecutor] | None = None


def helper_thread() -> ThreadPoolExecutor:
    """A one-thread executor for a second serial kernel (released GIL), made anew in a forked child (whose copy
    has no thread)."""
    global _POOL
    if _POOL is None or _POOL[0] != os.getpid():
        _POOL = (os.getpid(), ThreadPoolExecutor(max_workers=1, thread_name_prefix="ipcsim-helper"))
    return _POOL[1]


def beside(here, there):
    """Run the calls ``here()`` on this thread and ``there()`` on ``helper_thread`` at the same time; returns
    (here's result, there's result). When the helper has not started ``there`` by the time ``here`` is done
    (its core is taken, e.g. by another process), this thread cancels it and runs it itself, so a busy second
    core never makes the pair slower than running the two calls one after the other here. ``there`` must
    release the GIL (a ``nogil`` kernel) for the two to overlap."""
    job = helper_thread().submit(there)
    first = here()
    if job.cancel():
        return first, there()
    return first, job.result()


def split_in_two(work: int) -> bool:
    """Run a call over ``work`` items as two serial halves, one on the calling thread and one on
    ``helper_thread``, instead of on one thread: on machines with fewer than 4 cores, for the work that
    ``threads_for`` keeps on one thread there (Numba's parallel regions start slowly and their workers keep
    spinning afterwards, slowing whatever runs next), when Numba may use 2+ threads and the work pays for the
    hand-over. Larger work runs in a Numba parallel region, whose dynamic scheduling balances better (CCD
    narrow phase on 156k candidates: 25 ms against 33 ms in two halves)."""
    return (cpu_cores() < 4 and current_threads() >= 2
            and SPLIT_MIN_WORK <= work < PARALLEL_MIN_WORK)
