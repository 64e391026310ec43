"""Thread counts for small parallel calls (``broad_phase.threads``)."""
from __future__ import annotations

import numba as nb
import pytest

from ipcsim.contact.broad_phase import threads


def test_small_work_runs_on_one_thread(monkeypatch):
    monkeypatch.setattr(threads.os, "cpu_count", lambda: 2)
    assert threads.threads_for(0) == 1
    assert threads.threads_for(threads.PARALLEL_MIN_WORK - 1) == 1
    assert threads.threads_for(threads.PARALLEL_MIN_WORK) == nb.get_num_threads()
    monkeypatch.setattr(threads.os, "cpu_count", lambda: 16)
    assert threads.threads_for(threads.PARALLEL_MIN_WORK // 10 - 1) == 1
    assert threads.threads_for(threads.PARALLEL_MIN_WORK // 10) == nb.get_num_threads()


def test_numba_threads_restores_the_count():
    before = nb.get_num_threads()
    with threads.numba_threads(1) as n:
        assert n == 1 and nb.get_num_threads() == 1
    assert nb.get_num_threads() == before
    with pytest.raises(RuntimeError):
        with threads.numba_threads(1):
            raise RuntimeError("inside")
    assert nb.get_num_threads() == before
    with threads.numba_threads(10**6) as n:  # clamped to the pool size
        assert n == nb.config.NUMBA_NUM_THREADS
    assert nb.get_num_threads() == before
