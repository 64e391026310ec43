"""Imported by a sweep worker's fork server (``task.PRELOAD``): loads the Numba kernels that the demo scenes call
(the ``ipcsim.warmup`` manifest) from the on-disk cache, so that every run forked from the server starts with
them in memory instead of loading them again (about 0.5 s per run).

Only kernels already in the cache are loaded (a cold cache is filled by the runs themselves, as without a
sweep), and only serial ones: nothing here starts Numba's thread pool, which must not exist before a fork.
Best effort: any failure only costs the time saved.
"""
from __future__ import annotations


def load_cached_kernels() -> int:
    """Load every serial kernel of the manifest that is in the cache; returns how many."""
    try:
        from ..warmup import is_cached, load_manifest, resolve
    except Exception:  # noqa: BLE001 - best effort
        return 0
    seen, done = set(), 0
    for entries in load_manifest().values():
        for entry in entries:
            key = tuple(entry[:3])
            if key in seen or "parallel" in str(entry[1]):
                continue
            seen.add(key)
            found = resolve(entry)
            if found is None or not is_cached(*found):
                continue
            try:
                found[0].compile(found[1])
                done += 1
            except Exception:  # noqa: BLE001 - the run loads or compiles it on its first call
                pass
    return done


LOADED = load_cached_kernels()
