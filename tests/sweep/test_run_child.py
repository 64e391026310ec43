"""Runs started from several threads at once on one fork server keep their own exit statuses
(``ipcsim.sweep.task.run_child``): a sweep's local workers are threads of one process, and multiprocessing's
forkserver ``Popen.poll`` is not thread-safe (CPython gh-130895). Measured before the fix, with a plain
``Process.start`` / ``join`` per run: 20-37 of 900 instantly-exiting children (3 threads) reported exit status 255
instead of 0, and one interrupted-and-resumed sweep in about 50 recorded a finished run as "failed: exit status
255" (tests/sweep/test_sweep.py::test_interrupted_sweep_resumes_to_the_same_table)."""
from __future__ import annotations

import os
import threading
import time

from ipcsim.sweep import task


def test_concurrent_children_keep_their_exit_statuses():
    ctx = task._forkserver_context()
    wrong = []

    def worker(offset: int) -> None:
        for i in range(150):
            code = (offset + i) % 4  # 0..3: a status read from another child's pipe shows too
            kind, rc = task.run_child(ctx, os._exit, (code,), None)
            if (kind, rc) != ("exit", code):
                wrong.append((code, kind, rc))

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not wrong, f"{len(wrong)} of 450 runs reported the wrong status, e.g. {wrong[:5]}"


def test_a_child_over_its_time_limit_is_killed():
    t0 = time.perf_counter()
    kind, rc = task.run_child(task._forkserver_context(), time.sleep, (30.0,), 0.3)
    assert (kind, rc) == ("timeout", -9)
    assert time.perf_counter() - t0 < 10.0
