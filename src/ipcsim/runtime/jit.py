"""Kernels in a serial and a parallel variant, each compiled only when first used; helpers without literal
specialisations. Both exist to make the first run on a fresh machine (a cold Numba cache) compile less.

A ``parallel=True`` kernel costs one to three seconds more to compile than the same loop without it, and small
scenes never run it on more than one thread (``runtime.threads``): they ask for one Numba thread around the
call. ``@twin`` makes two dispatchers from one Python function:

* ``kernel.serial``: ``njit(cache=True)``, ``prange`` runs as ``range``;
* ``kernel.parallel``: ``njit(cache=True, parallel=True)`` when the function has a ``prange`` loop.

Calling ``kernel(...)`` from Python runs ``serial`` while Numba uses one thread (``numba.get_num_threads() == 1``)
and ``parallel`` otherwise; each variant compiles on its first call, so a small scene never compiles the
parallel one. The serial variant runs the loop in index order: where the parallel loop writes disjoint entries or
keeps per-chunk partial results combined in a fixed order (the kernels here), both give the same bits; a
``prange`` reduction (``s += ...``) may differ in round-off.

A jitted function that calls twins is itself made a twin (``@twin`` without a ``prange``): its ``serial`` variant
calls the callees' serial variants, its ``parallel`` variant their parallel ones (the global names bound to twins
are rebound in a copy of the function's globals). A jitted function that calls a twin without being one fails to
type, loudly.

The variants are module attributes reachable by their qualified names (``module.kernel.serial``), as the kernel
manifest of ``ipcsim.app.warmup`` expects; their functions are copies of the original with the qualified names
``kernel.serial`` / ``kernel.parallel``, so each has its own cache index file.

``@generic_njit`` is ``njit(cache=True)`` for small functions called from kernels with constant arguments (block
indices, modes): Numba compiles a separate specialisation of a jitted callee for every distinct literal argument
(``f(h, 0, 1)`` and ``f(h, 1, 2)`` are two compilations, about 0.1 to 1.5 s each); a generic one is compiled once
per argument types. After inlining (LLVM inlines the small helpers into their callers) the constants fold as before.
"""
from __future__ import annotations

import contextlib
import threading
import types as pytypes

import numba
from numba.core import types as nbtypes
from numba.np.ufunc import parallel as _parallel


# ----------------------------------------------------------------------------------------------- helpers
def _unliteral_call_template(dispatcher):
    """A ``get_call_template`` of ``dispatcher`` that types calls from jitted code with the literal argument
    types replaced by their plain types (one compilation per plain signature)."""
    original = dispatcher.get_call_template

    def get_call_template(args, kws):
        args = tuple(nbtypes.unliteral(a) for a in args)
        kws = {k: nbtypes.unliteral(v) for k, v in kws.items()}
        return original(args, kws)

    return get_call_template


def generic_njit(func=None, **options):
    """``njit(cache=True, **options)`` whose calls from jitted code never specialise on literal values."""
    def wrap(f):
        dispatcher = numba.njit(cache=True, **options)(f)
        if hasattr(dispatcher, "get_call_template"):  # not under NUMBA_DISABLE_JIT
            dispatcher.get_call_template = _unliteral_call_template(dispatcher)
        return dispatcher

    return wrap(func) if func is not None else wrap


# ----------------------------------------------------------------------------------------------- twins
def current_threads() -> int:
    """``numba.get_num_threads()`` of this Python thread, in ~0.3 us instead of ~1-3 us (the twins ask on every
    call): Numba's own per-thread reader once its threading layer is up; before that no thread count can have
    been set, so it is ``NUMBA_NUM_THREADS``."""
    read = getattr(_parallel, "_get_num_threads", None)  # set by numba when it launches its threads
    if read is None:
        return numba.config.NUMBA_NUM_THREADS
    n = read()
    return n if n > 0 else numba.get_num_threads()


def set_threads(n: int) -> None:
    """``numba.set_num_threads(n)`` (n in 1..NUMBA_NUM_THREADS) for this Python thread, without the two locks
    and the checks that Numba's own takes on every call once its threading layer is up (~5 us a call, and the
    small-input paths switch to one thread and back several times per Newton iteration)."""
    write = getattr(_parallel, "_set_num_threads", None)  # set by numba when it launches its threads
    if write is None:
        numba.set_num_threads(n)
    else:
        write(int(n))


_NO_CONTEXT = contextlib.nullcontext()  # reusable; entering it takes no lock


def dynamic_schedule(parallel: bool = True):
    """``numba.parallel_chunksize(1)`` (dynamic scheduling of a parallel loop, robust to a core shared with
    another process) when ``parallel``, else a do-nothing context: a loop on one thread has no schedule, and
    Numba's context takes its locks on entry and exit."""
    return numba.parallel_chunksize(1) if parallel else _NO_CONTEXT


def _uses_prange(code) -> bool:
    """Whether the code object (or one nested in it) names ``prange``."""
    if "prange" in code.co_names:
        return True
    return any(isinstance(c, pytypes.CodeType) and _uses_prange(c) for c in code.co_consts)


class Twin:
    """A kernel in a serial and a parallel variant compiled from one Python function (module docstring)."""

    def __init__(self, py_func, options: dict):
        self.py_func = py_func
        self.options = dict(options)
        self.has_prange = _uses_prange(py_func.__code__)
        self._variants: dict = {}
        self._lock = threading.Lock()  # two Python threads may ask for a variant at once (broad phase)
        self.__name__ = py_func.__name__
        self.__qualname__ = py_func.__qualname__
        self.__module__ = py_func.__module__
        self.__doc__ = py_func.__doc__

    def _variant(self, kind: str):
        """The dispatcher of variant ``kind`` ('serial' / 'parallel'), made on first use."""
        found = self._variants.get(kind)
        if found is not None:
            return found
        with self._lock:
            found = self._variants.get(kind)
            if found is None:
                found = self._variants[kind] = self._make(kind)
        return found

    def _make(self, kind: str):
        """A new dispatcher of variant ``kind`` (a copy of the function, twins in its globals rebound)."""
        f = self.py_func
        names = set(f.__code__.co_names)
        bound = {name: getattr(value, kind) for name, value in f.__globals__.items()
                 if name in names and isinstance(value, Twin)}
        scope = dict(f.__globals__, **bound) if bound else f.__globals__
        copy = pytypes.FunctionType(f.__code__, scope, f.__name__, f.__defaults__, f.__closure__)
        copy.__kwdefaults__ = f.__kwdefaults__
        copy.__qualname__ = f"{f.__qualname__}.{kind}"
        copy.__module__ = f.__module__
        copy.__doc__ = f.__doc__
        parallel = kind == "parallel" and self.has_prange
        return numba.njit(cache=True, parallel=parallel, **self.options)(copy)

    @property
    def serial(self):
        """The variant compiled without ``parallel=True`` (``prange`` runs as ``range``)."""
        return self._variant("serial")

    @property
    def parallel(self):
        """The variant compiled with ``parallel=True`` (if the function has a ``prange`` loop)."""
        return self._variant("parallel")

    def variant(self, threads: int | None = None):
        """``serial`` for one thread, else ``parallel``; threads None: ``numba.get_num_threads()`` (the count of
        this Python thread)."""
        if threads is None:
            threads = current_threads()
        return self._variant("serial" if threads <= 1 else "parallel")

    def __call__(self, *args):
        return self.variant()(*args)

    def __repr__(self) -> str:
        return f"<twin kernel {self.__module__}.{self.__qualname__}>"


def twin(func=None, **options):
    """Decorator: the function as a ``Twin`` (module docstring); options go to both ``njit`` calls."""
    def wrap(f):
        return Twin(f, options)

    return wrap(func) if func is not None else wrap
