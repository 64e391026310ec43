"""The first run on a fresh machine: compile the Numba kernels a scene needs up front, in parallel, and say so.

Numba compiles a kernel on its first call and caches the machine code next to the sources (``__pycache__``,
``*.nbi`` index + ``*.nbc`` data); a later run loads it in milliseconds. On a cold cache the demo spends
most of its first run compiling, one kernel after the other, because Numba's compiler holds the GIL. Here:

* ``data/kernels.json`` (the manifest, written by ``benchmarks/record_kernels.py``) lists, for each demo
  scene, the kernels its run calls from Python (module, name, argument types), how long each takes to compile
  alone, its callees included, and the slow callees it shares with other kernels (with their own seconds).
* ``prepare_kernels(scene)`` checks the cache index of each of those kernels. When any is missing (cold
  cache) it prints one line on stderr, compiles the missing ones split into balanced shares (the kernels
  that share a slow callee preferably in one share: it compiles once there), one share in this process and
  the others in worker processes (``python -m ipcsim.app.warmup compile``, which only fill the
  on-disk cache; the run then loads their kernels from it), and prints how long it took.

Everything here is best effort: a stale manifest, an unknown kernel, a failing worker or an unreadable cache
only cost time; the run then compiles what it still needs on the first call, as without warming.
"""
from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
import time
from importlib import resources

#: key of the manifest's kernels common to every demo, used for scenes that are not demos
COMMON = "*"
#: demos of another kind of simulation (the face: ``face.scene``), left out of the kernels that time-stepped
#: scenes which are no demo get; a face scene gets the face demo's
OTHER_KINDS = ("face",)


# ----------------------------------------------------------------------------------------------- manifest
def _manifest_part(part: str) -> dict:
    try:
        text = (resources.files("ipcsim") / "data" / "kernels.json").read_text()
        return json.loads(text).get(part, {})
    except (OSError, ValueError, AttributeError):
        return {}


def load_manifest() -> dict:
    """The manifest {scene name: [[module, qualname, argument types, seconds, shared callees], ...]} ({} if
    unreadable; entries may lack the shared callees)."""
    return _manifest_part("scenes")


def load_callees() -> dict:
    """{shared callee: its own compile seconds} of the manifest ({} if unreadable)."""
    return _manifest_part("callees")


def scene_entries(manifest: dict, scene: str | None) -> list:
    """The manifest's entries of ``scene``; for a scene it does not know, the entries every demo shares (the
    demos of ``OTHER_KINDS`` left out)."""
    if scene in manifest:
        return list(manifest[scene])
    lists = [entries for name, entries in manifest.items() if name not in OTHER_KINDS]
    if not lists:
        return []
    common = set.intersection(*({tuple(e[:3]) for e in entries} for entries in lists))
    return [e for e in lists[0] if tuple(e[:3]) in common]


def parse_types(text: str) -> tuple:
    """Numba argument types from their ``str`` (e.g. ``(Array(float64, 2, 'C', False, aligned=True), int64)``)."""
    from numba.core import types

    value = eval(text, {"__builtins__": {}}, dict(vars(types)))  # noqa: S307 - our own manifest's text
    return tuple(value) if isinstance(value, tuple) else (value,)


def resolve(entry):
    """(dispatcher, argument types) of a manifest entry, or None when it no longer matches the code."""
    try:
        module, qualname, text = entry[:3]
        obj = importlib.import_module(module)
        for part in qualname.split("."):
            obj = getattr(obj, part)
        if not hasattr(obj, "compile") or not hasattr(obj, "_cache"):
            return None  # NUMBA_DISABLE_JIT, or not a Numba dispatcher any more
        return obj, parse_types(text)
    except Exception:  # noqa: BLE001 - a stale entry only costs its warming
        return None


# ----------------------------------------------------------------------------------------------- cache state
def is_cached(dispatcher, args: tuple) -> bool:
    """Whether the on-disk cache holds ``dispatcher`` compiled for ``args`` for this Numba, Python, CPU and
    source (True when the cache cannot be inspected: then nothing is announced or warmed)."""
    try:
        if tuple(args) in dispatcher.overloads:
            return True
        cache = dispatcher._cache
        if not getattr(cache, "_enabled", True):
            return True  # cache=False: nothing to warm
        key = cache._index_key(tuple(args), dispatcher.targetctx.codegen())
        return key in cache._cache_file._load_index()
    except Exception:  # noqa: BLE001 - private Numba API: if it moved, behave as before (no warming)
        return True


def cold_kernels(entries) -> list:
    """The entries whose kernel is not in the cache yet, as (entry, dispatcher, argument types)."""
    cold = []
    for entry in entries:
        found = resolve(entry)
        if found is not None and not is_cached(*found):
            cold.append((entry, *found))
    return cold


# ----------------------------------------------------------------------------------------------- compiling
def _shared(entry) -> list:
    """The shared callees of a manifest entry ([] for entries without them)."""
    return list(entry[4]) if len(entry) > 4 and isinstance(entry[4], list) else []


def share_loads(entries, n: int, callees: dict | None = None) -> tuple[list[list], list[float]]:
    """``entries`` ([module, qualname, types, seconds alone, shared callees]) in n shares of about equal compile
    seconds, and those seconds. Longest first, each kernel goes to the share whose seconds then are least, a
    shared callee (seconds in ``callees``) costing once per share, and a share that would compile a callee again
    that another share compiles counted with that work twice (it is wasted on a machine with few cores). The
    signatures of one kernel stay in one share (one index file writer)."""
    callees = callees or {}
    groups: dict = {}
    for e in entries:
        groups.setdefault((e[0], e[1]), []).append(e)
    n = max(1, n)
    shares = [[] for _ in range(n)]
    loads = [0.0] * n
    held = [set() for _ in shares]  # the shared callees each share compiles
    for group in sorted(groups.values(), key=lambda g: -sum(float(e[3]) for e in g)):
        need = {c for e in group for c in _shared(e) if c in callees}
        own = sum(float(e[3]) - sum(float(callees.get(c, 0.0)) for c in _shared(e)) for e in group)
        added = [own + sum(float(callees[c]) for c in need - h) for h in held]
        again = [sum(float(callees[c]) for c in need - held[k] if any(c in h for h in held)) for k in range(n)]
        i = min(range(len(shares)), key=lambda k: (loads[k] + added[k] + again[k], k))
        shares[i] += group
        loads[i] += added[i]
        held[i] |= need
    kept = [k for k in range(len(shares)) if shares[k]]
    return [shares[k] for k in kept], [loads[k] for k in kept]


def split_shares(entries, n: int, callees: dict | None = None) -> list[list]:
    """The shares of ``share_loads``."""
    return share_loads(entries, n, callees)[0]


def compile_entries(entries) -> int:
    """Compile each entry (a failure skips it); returns how many compiled."""
    done = 0
    for entry in entries:
        found = resolve(entry)
        if found is None:
            continue
        try:
            found[0].compile(found[1])
            done += 1
        except Exception:  # noqa: BLE001 - the run compiles it again on its first call and reports errors then
            pass
    return done


def _start_worker(entries):
    """A worker process compiling ``entries`` into the on-disk cache, or None if it cannot start."""
    try:
        proc = subprocess.Popen([sys.executable, "-m", "ipcsim.app.warmup", "compile"], stdin=subprocess.PIPE,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        proc.stdin.write(json.dumps(entries).encode())
        proc.stdin.close()
        return proc
    except (OSError, ValueError):
        return None


def warm(entries, processes: int, callees: dict | None = None) -> None:
    """Compile ``entries`` in ``processes`` shares: the first here, the others in worker processes."""
    shares = split_shares(entries, processes, callees)
    workers = [w for w in (_start_worker(s) for s in shares[1:]) if w is not None]
    try:
        compile_entries(shares[0])
        for w in workers:
            w.wait()
    finally:
        for w in workers:
            if w.poll() is None:
                w.kill()
                w.wait()


def other_load() -> float:
    """How many cores other processes keep busy: the 1-minute load average, or fewer when fewer other tasks are
    runnable right now (/proc/loadavg; the average still counts e.g. the ``pip install`` that just ended)."""
    try:
        load = os.getloadavg()[0]
    except (OSError, AttributeError):  # no load average on this system
        return 0.0
    try:
        with open("/proc/loadavg") as f:
            running = int(f.read().split()[3].split("/")[0]) - 1  # less this process
        load = min(load, max(running, 0))
    except (OSError, ValueError, IndexError):
        pass
    return load


def estimate_seconds(loads: list[float], cores: int | None = None, load: float | None = None) -> float:
    """Wall seconds of compiling shares of ``loads`` CPU seconds at once, one process each, on ``cores`` cores
    (``os.cpu_count()``) that other processes keep ``load`` busy (``other_load()``): the longest share when every
    process has a core of its own, else the total over the processes' fair part of the cores."""
    cores = cores or os.cpu_count() or 1
    load = other_load() if load is None else load
    n = len(loads)
    ours = min(float(n), cores * n / max(n + load, 1e-9))
    return max(max(loads, default=0.0), sum(loads) / max(ours, 1e-9))


def prepare_kernels(scene: str | None = None, quiet: bool = False, processes: int | None = None) -> float:
    """Compile the kernels ``scene`` (a demo name; None or another name: the kernels all demos share) needs
    when the cache lacks any, saying so on stderr unless quiet. Returns the seconds spent (0.0 when warm)."""
    if os.environ.get("NUMBA_DISABLE_JIT", "0") not in ("", "0"):
        return 0.0
    cold = cold_kernels(scene_entries(load_manifest(), scene))
    if not cold:
        return 0.0
    entries = [entry for entry, _, _ in cold]
    if processes is None:  # IPCSIM_COMPILE_PROCESSES=1: no worker (e.g. on a machine busy with other work)
        try:
            processes = int(os.environ.get("IPCSIM_COMPILE_PROCESSES", "0")) or min(2, os.cpu_count() or 1)
        except ValueError:
            processes = min(2, os.cpu_count() or 1)
        processes = max(1, processes)
    callees = load_callees()
    estimate = estimate_seconds(share_loads(entries, processes, callees)[1])
    if not quiet:
        print(f"compiling numerical kernels (first run only, about {estimate:.0f} s)...", file=sys.stderr,
              flush=True)
    start = time.perf_counter()
    warm(entries, processes, callees)
    seconds = time.perf_counter() - start
    if not quiet:
        print(f"compiled numerical kernels in {seconds:.0f} s", file=sys.stderr, flush=True)
    return seconds


# ----------------------------------------------------------------------------------------------- worker
def _main(argv) -> int:
    """``python -m ipcsim.app.warmup compile``: compile the entries given as JSON on stdin into the cache."""
    if argv[:1] == ["compile"]:
        compile_entries(json.loads(sys.stdin.read()))
    else:
        print(_main.__doc__, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
