"""The cold-cache warm-up of the first run (ipcsim.app.warmup): detection, message, workers, manifest."""
from __future__ import annotations

import io
import json
import subprocess
import sys

import pytest

from ipcsim.app import warmup

KERNELS = '''
from numba import njit


@njit(cache=True)
def add(a, b):
    return a + b


@njit(cache=True)
def twice(a):
    return add(a, a)
'''


@pytest.fixture
def kernel_module(tmp_path, cold_module):
    """A fresh module of two cached kernels in a temporary directory (its cache is cold); its entries."""
    name = cold_module(KERNELS, "_warmup_kernels")
    entries = [[name, "add", "(int64, int64)", 1.0], [name, "twice", "(float64,)", 2.0]]
    yield tmp_path, entries
    sys.modules.pop(name, None)


def test_cold_cache_is_detected_and_a_worker_fills_it(kernel_module):
    tmp_path, entries = kernel_module
    assert [e for e, _, _ in warmup.cold_kernels(entries)] == entries
    assert not list(tmp_path.rglob("*.nbi"))
    # a worker process compiles into the on-disk cache; this process then finds both kernels there
    subprocess.run([sys.executable, "-m", "ipcsim.app.warmup", "compile"], input=json.dumps(entries), text=True,
                   check=True)
    assert list(tmp_path.rglob("*.nbi"))
    assert warmup.cold_kernels(entries) == []


def test_message_and_parallel_warming(kernel_module, monkeypatch, capsys):
    _, entries = kernel_module
    monkeypatch.setattr(warmup, "load_manifest", lambda: {"demo": entries})
    monkeypatch.setattr(warmup, "other_load", lambda: 0.0)  # an idle machine: the longest share
    assert warmup.prepare_kernels("demo", processes=2) > 0.0
    err = capsys.readouterr().err.splitlines()
    assert err[0] == "compiling numerical kernels (first run only, about 2 s)..."
    assert err[1].startswith("compiled numerical kernels in ")
    assert warmup.cold_kernels(entries) == []  # the worker's share (add) is in the cache
    assert warmup.prepare_kernels("demo") == 0.0
    assert capsys.readouterr().err == ""


def test_quiet_cold_run_prints_nothing(kernel_module, monkeypatch, capsys):
    _, entries = kernel_module
    monkeypatch.setattr(warmup, "load_manifest", lambda: {"demo": entries})
    monkeypatch.setattr(warmup, "_start_worker", lambda entries: pytest.fail("no worker with one process"))
    monkeypatch.setenv("IPCSIM_COMPILE_PROCESSES", "1")
    assert warmup.prepare_kernels("demo", quiet=True) > 0.0
    assert capsys.readouterr().err == ""


def test_stale_entries_and_disabled_jit_are_skipped(kernel_module, monkeypatch):
    _, entries = kernel_module
    stale = [[entries[0][0], "gone", "(int64,)", 1.0], ["no_such_module_x", "f", "(int64,)", 1.0],
             [entries[0][0], "add", "(not_a_type,)", 1.0]]
    assert warmup.cold_kernels(stale) == []
    assert warmup.compile_entries(stale) == 0
    monkeypatch.setattr(warmup, "load_manifest", lambda: {"demo": entries})
    monkeypatch.setenv("NUMBA_DISABLE_JIT", "1")
    assert warmup.prepare_kernels("demo") == 0.0


def test_shares_and_scene_entries():
    entries = [["m", "a", "(int64,)", 5.0], ["m", "a", "(float64,)", 1.0], ["m", "b", "()", 4.0],
               ["m", "c", "()", 2.0]]
    shares = warmup.split_shares(entries, 2)
    assert shares == [entries[:2], [entries[2], entries[3]]]  # a's signatures together: 6 s vs 6 s
    assert warmup.split_shares(entries, 1) == [entries]
    manifest = {"x": entries, "y": [entries[2], ["m", "d", "()", 1.0]]}
    assert warmup.scene_entries(manifest, "y") == manifest["y"]
    assert warmup.scene_entries(manifest, None) == [entries[2]]  # what every demo uses
    assert warmup.scene_entries({}, "x") == []


def test_kernels_sharing_a_slow_callee_go_to_one_share():
    # a and b share callee s (4 s of their 6 s alone each); c and d are independent
    entries = [["m", "a", "()", 6.0, ["s"]], ["m", "b", "()", 6.0, ["s"]], ["m", "c", "()", 3.0, []],
               ["m", "d", "()", 3.0]]
    shares, loads = warmup.share_loads(entries, 2, {"s": 4.0})
    assert shares == [[entries[0], entries[1]], [entries[2], entries[3]]]
    assert loads == [8.0, 6.0]  # s compiles once: 2 + 2 + 4
    # without the callee seconds the shared work is not known: a and b are split as before
    assert warmup.split_shares(entries, 2) == [[entries[0], entries[2]], [entries[1], entries[3]]]


def test_the_estimate_counts_the_cores_other_processes_keep_busy():
    assert warmup.estimate_seconds([30.0, 20.0], cores=2, load=0.0) == 30.0  # a core per share
    assert warmup.estimate_seconds([30.0, 20.0], cores=2, load=2.0) == 50.0  # half the cores: 50 s of work on 1
    assert warmup.estimate_seconds([30.0, 20.0], cores=4, load=1.0) == 30.0
    assert warmup.estimate_seconds([40.0], cores=1, load=1.0) == 80.0


@pytest.mark.parametrize("loadavg, proc, expected", [
    ((3.0, 2.0, 1.0), "3.00 2.00 1.00 3/345 12345\n", 2.0),  # 3 runnable, less this process: 2 (< 3.0)
    ((3.0, 2.0, 1.0), "3.00 2.00 1.00 1/345 12345\n", 0.0),  # only this process runs now
    ((0.5, 2.0, 1.0), "0.50 2.00 1.00 4/345 12345\n", 0.5),  # the average when fewer than the runnable
    ((1.5, 1.0, 1.0), None, 1.5),  # no /proc/loadavg: the average
    ((1.5, 1.0, 1.0), "garbled\n", 1.5),
    (None, "3.00 2.00 1.00 3/345 12345\n", 0.0),  # no load average on this system
])
def test_other_load_is_the_average_capped_by_the_runnable_tasks(monkeypatch, loadavg, proc, expected):
    def getloadavg():
        if loadavg is None:
            raise OSError("no load average")
        return loadavg

    def fake_open(path, *args, **kwargs):
        assert path == "/proc/loadavg"
        if proc is None:
            raise FileNotFoundError(path)
        return io.StringIO(proc)

    monkeypatch.setattr(warmup.os, "getloadavg", getloadavg)
    monkeypatch.setattr(warmup, "open", fake_open, raising=False)  # shadows the builtin inside ipcsim.app.warmup
    assert warmup.other_load() == expected


def test_the_shipped_manifest_resolves():
    manifest = warmup.load_manifest()
    assert "two-cubes" in manifest
    found = [warmup.resolve(e) for e in manifest["two-cubes"]]
    assert all(f is not None for f in found), [e for e, f in zip(manifest["two-cubes"], found) if f is None]
