"""Record ``src/ipcsim/data/kernels.json``, the manifest of the kernels each demo compiles (see ipcsim.app.warmup).

    python benchmarks/record_kernels.py [DEMO ...]      # default: every demo afresh; named ones are merged into
                                                        # the existing manifest; takes minutes per demo

Each demo runs in a fresh process on an empty Numba cache (NUMBA_CACHE_DIR in a temporary directory) with the
up-front compilation switched off, and the kernels it calls from Python are recorded with their argument types
and compile seconds as if each were compiled alone (CPU time of the compiling process, every jitted callee
included: about the wall time on an idle machine). The callees that several kernels share and that take a while
(``SHARED_MIN_SECONDS``) are recorded by name, with their own seconds, so that ``ipcsim.app.warmup`` compiles the
kernels sharing one in the same process. Re-record after changing a kernel's arguments or its callees; a stale
manifest only makes the first run slower.
"""
from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

MANIFEST = Path(__file__).resolve().parents[1] / "src" / "ipcsim" / "data" / "kernels.json"

#: Shared callees compiling faster than this [s] count as part of each kernel that calls them.
SHARED_MIN_SECONDS = 0.1


def _callee_name(dispatcher, args) -> str:
    """A short name of one compiled function: module.qualname#hash of its argument types."""
    f = dispatcher.py_func
    digest = hashlib.sha1(str(tuple(args)).encode()).hexdigest()[:8]
    return f"{f.__module__}.{f.__qualname__}#{digest}"


def _closure(library, names: dict) -> set:
    """Names of the functions whose code ``library`` links in, directly or through other libraries."""
    found, todo, seen = set(), list(getattr(library, "_linking_libraries", ())), set()
    while todo:
        lib = todo.pop()
        if id(lib) in seen:
            continue
        seen.add(id(lib))
        if id(lib) in names:
            found.add(names[id(lib)])
        todo.extend(getattr(lib, "_linking_libraries", ()))
    return found


def record_one(name: str) -> dict:
    """Run demo ``name`` here (no up-front compilation) and return {"kernels": [[module, qualname, types, seconds,
    shared callees], ...], "callees": {callee: seconds}} (see the module docstring)."""
    from numba.core import event

    from ipcsim.app import warmup
    from ipcsim.cli import main

    top, own, names, stack = [], {}, {}, []  # own: callee -> exclusive seconds; names: id(library) -> callee

    class Listener(event.Listener):
        def on_start(self, ev):
            stack.append([time.process_time(), 0.0])

        def on_end(self, ev):
            start, children = stack.pop()
            seconds = time.process_time() - start
            if stack:
                stack[-1][1] += seconds
            d, args = ev.data["dispatcher"], tuple(ev.data["args"])
            key = _callee_name(d, args)
            own[key] = own.get(key, 0.0) + seconds - children
            overload = d.overloads.get(args)
            if overload is not None:
                names[id(overload.library)] = key
            if not stack and d.py_func.__module__.startswith("ipcsim."):
                top.append((d, args, key))

    warmup.load_manifest = lambda: {}  # record what the run itself compiles
    event.register("numba:compile", Listener())
    with tempfile.TemporaryDirectory() as out:
        main(["demo", name, "--no-render", "--quiet", "-o", out])
    callees = {}
    for d, args, key in top:
        callees[key] = _closure(d.overloads[args].library, names) - {key}
    users: dict = {}
    for found in callees.values():
        for c in found:
            users[c] = users.get(c, 0) + 1
    shared = {c for c, n in users.items() if n > 1 and own.get(c, 0.0) >= SHARED_MIN_SECONDS}
    kernels = {}
    for d, args, key in top:
        f = d.py_func
        seconds = own[key] + sum(own.get(c, 0.0) for c in callees[key])
        kernels[key] = [f.__module__, f.__qualname__, str(args), round(seconds, 2), sorted(callees[key] & shared)]
    return {"kernels": list(kernels.values()), "callees": {c: round(own[c], 2) for c in sorted(shared)}}


def record(names, path=MANIFEST, merge: bool = False) -> None:
    """Record demos ``names``, each in a fresh process on an empty cache, and write the manifest (``merge``: keep
    the other demos' entries of the existing manifest)."""
    import numba

    scenes, callees = {}, {}
    if merge and Path(path).exists():
        old = json.loads(Path(path).read_text())
        scenes, callees = dict(old["scenes"]), dict(old.get("callees", {}))
    for name in names:
        with tempfile.TemporaryDirectory() as cache:
            env = dict(os.environ, NUMBA_CACHE_DIR=cache)
            out = subprocess.run([sys.executable, __file__, "--one", name], env=env, check=True,
                                 capture_output=True, text=True).stdout
        found = json.loads(out.strip().splitlines()[-1])
        scenes[name] = found["kernels"]
        callees.update(found["callees"])
        print(f"{name}: {len(scenes[name])} kernels, {sum(e[3] for e in scenes[name]):.0f} s alone, "
              f"{len(found['callees'])} shared callees", file=sys.stderr)
    write_manifest(path, numba.__version__, scenes, callees)


def write_manifest(path, numba_version: str, scenes: dict, callees: dict | None = None) -> None:
    """The manifest as JSON, one kernel (one shared callee) a line (reviewable diffs)."""
    lines = [f'{{"numba": {json.dumps(numba_version)}, "scenes": {{']
    for i, (name, entries) in enumerate(scenes.items()):
        rows = ",\n".join("  " + json.dumps(e) for e in sorted(entries, key=lambda e: -e[3]))
        lines.append(f" {json.dumps(name)}: [\n{rows}\n ]" + ("," if i < len(scenes) - 1 else ""))
    rows = ",\n".join(f" {json.dumps(c)}: {s}" for c, s in sorted((callees or {}).items()))
    lines.append("}, \"callees\": {")
    lines.append(rows)
    Path(path).write_text("\n".join(lines) + "\n}}\n")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--one"]:
        print(json.dumps(record_one(sys.argv[2])))
    else:
        from ipcsim.demos.builtin import BUILT_DEMOS, DEMOS

        # named demos are recorded into the existing manifest; without names every demo is recorded afresh
        record(sys.argv[1:] or [*DEMOS, *BUILT_DEMOS], merge=bool(sys.argv[1:]))
