"""Record ``src/ipcsim/data/kernels.json``, the manifest of the kernels each demo compiles (see ipcsim.warmup).

    python benchmarks/record_kernels.py [DEMO ...]      # default: every demo; takes minutes per demo

Each demo runs in a fresh process on an empty Numba cache (NUMBA_CACHE_DIR in a temporary directory) and
the kernels it calls from Python are recorded with their argument types and compile seconds (CPU time of
the compiling process, callees included: about the wall time on an idle machine). Re-record after changing a kernel's arguments; a stale manifest only makes the first run slower.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

MANIFEST = Path(__file__).resolve().parents[1] / "src" / "ipcsim" / "data" / "kernels.json"


def record_one(name: str) -> list:
    """Run demo ``name`` here and return its Python-called kernels [module, qualname, types, seconds]."""
    from numba.core import event

    from ipcsim.cli import main

    found, stack = {}, []

    class Listener(event.Listener):
        def on_start(self, ev):
            stack.append(time.process_time())

        def on_end(self, ev):
            seconds = time.process_time() - stack.pop()
            d, args = ev.data["dispatcher"], ev.data["args"]
            if not stack and d.py_func.__module__.startswith("ipcsim."):
                key = (d.py_func.__module__, d.py_func.__qualname__, str(tuple(args)))
                found[key] = found.get(key, 0.0) + seconds

    event.register("numba:compile", Listener())
    with tempfile.TemporaryDirectory() as out:
        main(["demo", name, "--no-render", "--quiet", "-o", out])
    return [[*key, round(seconds, 2)] for key, seconds in found.items()]


def record(names, path=MANIFEST) -> None:
    """Record demos ``names``, each in a fresh process on an empty cache, and write the manifest."""
    import numba

    scenes = {}
    for name in names:
        with tempfile.TemporaryDirectory() as cache:
            env = dict(os.environ, NUMBA_CACHE_DIR=cache)
            out = subprocess.run([sys.executable, __file__, "--one", name], env=env, check=True,
                                 capture_output=True, text=True).stdout
        scenes[name] = json.loads(out.strip().splitlines()[-1])
        print(f"{name}: {len(scenes[name])} kernels, {sum(e[3] for e in scenes[name]):.0f} s", file=sys.stderr)
    write_manifest(path, numba.__version__, scenes)


def write_manifest(path, numba_version: str, scenes: dict) -> None:
    """The manifest as JSON, one kernel a line (reviewable diffs)."""
    lines = [f'{{"numba": {json.dumps(numba_version)}, "scenes": {{']
    for i, (name, entries) in enumerate(scenes.items()):
        rows = ",\n".join("  " + json.dumps(e) for e in sorted(entries, key=lambda e: -e[3]))
        lines.append(f" {json.dumps(name)}: [\n{rows}\n ]" + ("," if i < len(scenes) - 1 else ""))
    Path(path).write_text("\n".join(lines) + "\n}}\n")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--one"]:
        print(json.dumps(record_one(sys.argv[2])))
    else:
        from ipcsim.demo import DEMOS

        record(sys.argv[1:] or list(DEMOS))
