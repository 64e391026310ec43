"""Thread count for small parallel Numba calls (broad phase, CCD narrow phase, active-set classification).

Starting a Numba parallel region costs ~30 us on an idle machine, but on the shared 2-core development
machine the median start was ~6 ms whenever the other core was busy (the OpenMP workers had gone to
sleep and the second core was taken): a 6k-vertex scene's CCD narrow phase took 5.9 ms on 2 threads and
1.6 ms on one. Calls with little work therefore run on one thread.
"""
from __future__ import annotations

import os
from contextlib import contextmanager

import numba as nb

PARALLEL_MIN_WORK = 20_000
"""Work items (candidates, boxes) below which a call runs on one thread on machines with < 4 cores;
a tenth of it on larger machines, where starting the threads is cheap."""


def threads_for(work: int) -> int:
    """Numba threads for a call over ``work`` items: 1 when the work is small (see ``PARALLEL_MIN_WORK``),
    else the current ``numba.get_num_threads()``."""
    cores = os.cpu_count() or 1
    min_work = PARALLEL_MIN_WORK if cores < 4 else PARALLEL_MIN_WORK // 10
    return 1 if work < min_work else nb.get_num_threads()


@contextmanager
def numba_threads(n: int):
    """Run the block with ``n`` Numba threads (this Python thread only), restoring the count afterwards."""
    previous = nb.get_num_threads()
    n = max(1, min(int(n), nb.config.NUMBA_NUM_THREADS))
    if n == previous:
        yield n
        return
    nb.set_num_threads(n)
    try:
        yield n
    finally:
        nb.set_num_threads(previous)
