"""ipcsim.runtime.jit: twin kernels (a serial and a parallel variant, each compiled on first use) and generic helpers."""
from __future__ import annotations

import importlib
import sys

import numba
import numpy as np
import pytest

from ipcsim.app import warmup
from ipcsim.runtime.threads import numba_threads

KERNELS = '''
import numpy as np
from numba import prange

from ipcsim.runtime.jit import generic_njit, twin


@twin
def doubled_sum(a):
    out = np.zeros(len(a))
    for i in prange(len(a)):
        out[i] = 2.0 * a[i]
    s = 0.0
    for i in range(len(a)):
        s += out[i]
    return s


@twin
def caller(a):
    return doubled_sum(a) + 1.0


@generic_njit
def bump(h, b):
    h[b] += 1.0


@generic_njit
def bump_three(h):
    bump(h, 0)
    bump(h, 1)
    bump(h, 2)
'''


@pytest.fixture
def kernels(cold_module):
    """A fresh module of the kernels above in a temporary directory (a cold cache of its own)."""
    name = cold_module(KERNELS, "_jit_kernels")
    yield importlib.import_module(name)
    sys.modules.pop(name, None)


def test_one_thread_runs_the_serial_variant_only(kernels):
    a = np.arange(10.0)
    with numba_threads(1):
        assert kernels.doubled_sum(a) == 90.0
    assert set(kernels.doubled_sum._variants) == {"serial"}  # the parallel variant was never made nor compiled
    assert not kernels.doubled_sum.serial.targetoptions.get("parallel")


@pytest.mark.skipif(numba.config.NUMBA_NUM_THREADS < 2, reason="needs two Numba threads")
def test_more_threads_run_the_parallel_variant_with_the_same_result(kernels):
    a = np.linspace(0.0, 1.0, 1001)
    with numba_threads(1):
        serial = kernels.doubled_sum(a)
    with numba_threads(2):
        parallel = kernels.doubled_sum(a)
    assert parallel == serial  # disjoint writes, then a sum in index order: the same bits
    assert kernels.doubled_sum.parallel.targetoptions.get("parallel")


def test_a_twin_caller_calls_the_matching_variants(kernels):
    a = np.arange(4.0)
    with numba_threads(1):
        assert kernels.caller(a) == 13.0
    assert set(kernels.caller._variants) == {"serial"}
    assert set(kernels.doubled_sum._variants) == {"serial"}  # through caller.serial: only the serial callee
    assert kernels.caller.serial.py_func.__globals__["doubled_sum"] is kernels.doubled_sum.serial
    assert kernels.caller.py_func.__globals__["doubled_sum"] is kernels.doubled_sum  # the module is unchanged
    assert not kernels.caller.has_prange and kernels.doubled_sum.has_prange


def test_variants_are_reachable_by_their_qualified_names(kernels):
    d = kernels.doubled_sum.serial
    assert d.py_func.__qualname__ == "doubled_sum.serial"
    entry = [kernels.__name__, "doubled_sum.serial", "(Array(float64, 1, 'C', False, aligned=True),)", 1.0]
    found = warmup.resolve(entry)
    assert found is not None and found[0] is d
    assert warmup.cold_kernels([entry]) == [(entry, *found)]
    warmup.compile_entries([entry])
    assert warmup.cold_kernels([entry]) == []  # the variant has its own cache index, now filled


def test_a_generic_helper_compiles_once_for_all_constant_arguments(kernels):
    h = np.zeros(3)
    kernels.bump_three(h)
    assert list(h) == [1.0, 1.0, 1.0]
    assert len(kernels.bump.signatures) == 1  # not one specialisation per literal block index


def test_current_threads_is_numbas_count():
    from ipcsim.runtime.jit import current_threads

    assert current_threads() == numba.get_num_threads()
    with numba_threads(1):
        assert current_threads() == numba.get_num_threads() == 1
