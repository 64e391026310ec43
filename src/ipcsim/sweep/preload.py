"""Imported by a sweep worker's fork server (``task.PRELOAD``): loads the Numba kernels that the demo scenes call
(the ``ipcsim.app.warmup`` manifest) from the on-disk cache, so that every run forked from the server starts with
them in memory instead of loading them again (about 0.5 s per run).

Only kernels already in the cache are loaded (a cold cache is filled by the runs themselves, as without a
sweep), and only serial ones: nothing here starts Numba's thread pool, which must not exist before a fork.
Best effort: any failure only costs the time saved. It also ties the server's life to its starter's
(``exit_with_parent``).
"""
from __future__ import annotations

import os
import signal


def exit_with_parent(interval: float = 0.5) -> None:
    """Make this fork server exit when the process that started it (the sweep, or a cluster's worker process) is
    gone, checked every ``interval`` [s] by SIGALRM (no thread: the server forks; interval timers are not
    inherited by its children). The runs forked from it die with it (``task._die_with_parent``), so a sweep killed
    outright (SIGKILL) leaves no simulation running; without this, the server, which each of its children keeps
    alive, went on with its runs to their end."""
    if not hasattr(signal, "setitimer"):  # no fork server there either (Windows)
        return
    parent = os.getppid()

    def check(signum, frame):
        if os.getppid() != parent:  # reparented: the starter died without closing the server
            os._exit(1)

    signal.signal(signal.SIGALRM, check)
    signal.setitimer(signal.ITIMER_REAL, interval, interval)


def load_cached_kernels() -> int:
    """Load every serial kernel of the manifest that is in the cache; returns how many."""
    try:
        from ..app.warmup import is_cached, load_manifest, resolve
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


exit_with_parent()
LOADED = load_cached_kernels()
