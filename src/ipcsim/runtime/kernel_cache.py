"""Numba's on-disk cache for the package's kernels, stale when any code compiled into a kernel changes.

Numba stamps a cached kernel with the hash of the one file that defines it. A kernel also carries the code of
every jitted helper it calls (compiled into it) and the values of the global constants it reads (frozen at
compile time), often from other files: ``solvers/elastic.py``'s assembly inlines ``energies/tet_blocks.py``,
``energies/svd_lanes.py`` and ``energies/mat3.py``. Edit only a helper (a ``git pull`` on an editable install, a
``pip install -U`` that leaves the old ``__pycache__`` files in place) and Numba loads the old machine code,
silently.

``install`` puts a cache locator in front of Numba's for functions defined in the package's source files. Its
stamp is Numba's own stamp of the defining file plus the SHA-256 of every other package file the kernel reaches:

* the files of the jitted functions it calls (Numba dispatchers, ``runtime.jit`` twins and their variants), and
  recursively theirs, through global names, module attributes (``mat3.det3``) and closure cells;
* for each constant (or intrinsic) it reads from another file, the file that defines it: the package modules
  that bind the same name to the same object and assign or define it at their top level.

The stamp is computed when Numba first reads or writes the kernel's index (its first call), when every global
the kernel names is bound. Cache files stay where Numba puts them (``__pycache__``, or ``NUMBA_CACHE_DIR``); a
user's ``NUMBA_CACHE_LOCATOR_CLASSES`` replaces this locator, as it replaces Numba's.

This module imports nothing from the package, and Numba only inside ``install``: ``ipcsim/__init__.py`` calls
``install_when_numba_loads``, which installs at once when Numba is already loaded and otherwise when Numba's
caching module is first imported, so ``import ipcsim`` stays cheap.
"""
from __future__ import annotations

import functools
import hashlib
import importlib.abc
import importlib.util
import os
import re
import sys
import types
from pathlib import Path

#: (directory, package name) of the source trees whose kernels get the locator: the package's own, plus any
#: added by ``track_package`` (tests).
_TREES: list[tuple[str, str]] = [(str(Path(__file__).resolve().parents[1]), __name__.split(".")[0])]

_CACHING_MODULE = "numba.core.caching"


def track_package(directory, package: str) -> None:
    """Give the kernels of the package ``package`` whose sources lie in ``directory`` the locator too."""
    _TREES.append((str(Path(directory).resolve()), package))
    global _TRACKED
    _tree_of.cache_clear()
    _HOLDERS.clear()
    _TRACKED = (-1, [])


@functools.lru_cache(maxsize=4096)
def _tree_of(path: str) -> tuple[str, str] | None:
    """(directory, package) of the tracked tree holding the file ``path``, or None."""
    try:
        path = os.path.realpath(path)
    except (TypeError, ValueError):
        return None
    for directory, package in _TREES:
        if path.startswith(directory + os.sep):
            return directory, package
    return None


@functools.lru_cache(maxsize=None)
def _file_digest(path: str, mtime_ns: int, size: int) -> str:
    """SHA-256 (hex) of the file's bytes, memoized per (path, modification time, size)."""
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def _digest(path: str) -> str:
    st = os.stat(path)
    return _file_digest(path, st.st_mtime_ns, st.st_size)


def _holders(module_name: str, name: str, value) -> set[str]:
    """Files of the tracked modules other than ``module_name`` that bind ``name`` to this very object and define
    it at their top level (where an imported constant comes from); all binding modules where none defines it;
    none where ``module_name`` defines it itself. Memoized per (module, name)."""
    key = (module_name, name)
    found = _HOLDERS.get(key)
    if found is None:
        own = getattr(sys.modules.get(module_name), "__file__", None)
        if own and _defines(own, name):  # its own constant: the defining file is in the stamp already
            _HOLDERS[key] = found = set()
            return found
        holders = []
        for other, module in _tracked_modules():
            if other == module_name:
                continue
            if getattr(module, "__dict__", {}).get(name, _MISSING) is value:
                path = getattr(module, "__file__", None)
                if path and _tree_of(path):
                    holders.append(path)
        defining = {p for p in holders if _defines(p, name)}
        found = _HOLDERS[key] = defining or set(holders)
    return found


def _defines(path: str, name: str) -> bool:
    """Whether the file assigns or defines ``name`` at its top level (``NAME = ...``, ``A, NAME = ...``,
    ``NAME: T = ...``, ``def NAME``, ``class NAME``)."""
    n = re.escape(name)
    other = r"[A-Za-z_]\w*"
    pattern = (rf"^(?:(?:{other}\s*,\s*)*{n}\s*(?:,\s*{other}\s*)*(?::[^=\n]*)?=(?!=)"
               rf"|(?:async\s+)?def\s+{n}\b|class\s+{n}\b)")
    return re.search(pattern, _source(path), re.M) is not None


@functools.lru_cache(maxsize=None)
def _source(path: str) -> str:
    try:
        return Path(path).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


_HOLDERS: dict[tuple[str, str], set[str]] = {}
_MISSING = object()


def _tracked_modules() -> list:
    """(name, module) of the loaded modules of the tracked packages, listed again when a module was loaded."""
    global _TRACKED
    if _TRACKED[0] != len(sys.modules):
        prefixes = tuple(p for _, p in _TREES)
        found = [(n, m) for n, m in list(sys.modules.items())
                 if m is not None and (n in prefixes or n.startswith(tuple(p + "." for p in prefixes)))]
        _TRACKED = (len(sys.modules), found)
    return _TRACKED[1]


_TRACKED: tuple[int, list] = (-1, [])


def _codes(code: types.CodeType):
    """The code object and the ones nested in it (inner functions, comprehensions)."""
    yield code
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            yield from _codes(c)


def _jitted_source(value) -> types.FunctionType | None:
    """The Python function behind a dispatcher or twin (anything with a ``py_func``), else None."""
    try:
        f = getattr(value, "py_func", None)
    except Exception:  # noqa: BLE001 - an odd object's property; not a kernel
        return None
    return f if isinstance(f, types.FunctionType) else None


def _direct(func: types.FunctionType) -> tuple[set[str], list[types.FunctionType]]:
    """(files, callees): the tracked files func's global names come from (its own included) and the jitted
    functions it names, through globals, tracked modules' attributes and closure cells."""
    files = {func.__code__.co_filename} if _tree_of(func.__code__.co_filename) else set()
    callees = []
    scope = func.__globals__
    names = {n for code in _codes(func.__code__) for n in code.co_names}
    bound = [(n, scope[n]) for n in names if n in scope]
    values = [v for _, v in bound]
    values += [v for value in values if isinstance(value, (tuple, list)) for v in value]  # tables of kernels
    values += [cell.cell_contents for cell in (func.__closure__ or ()) if _cell_bound(cell)]
    for name, value in bound:  # constants (and intrinsics) imported from other files: frozen into the kernel
        if _constant_like(value):
            files |= _holders(func.__module__, name, value)
    for value in values:
        if isinstance(value, types.ModuleType):
            path = getattr(value, "__file__", None)
            if path and _tree_of(path):
                files.add(path)
                values_of = [getattr(value, n, None) for n in names]
                callees += [f for f in map(_jitted_source, values_of) if f is not None]
            continue
        f = _jitted_source(value)  # a twin's: its Python function, whose globals name the callees' twins
        if f is not None:
            callees.append(f)
    return files, callees


def _constant_like(value) -> bool:
    """A global a kernel freezes or calls as compiled code that is neither a module, a class nor a jitted
    function: a constant, or one of Numba's callables (an intrinsic), not a NumPy or Python function."""
    if isinstance(value, (types.ModuleType, type)) or _jitted_source(value) is not None:
        return False
    return not callable(value) or type(value).__module__.startswith("numba")


def _cell_bound(cell) -> bool:
    try:
        cell.cell_contents
    except ValueError:
        return False
    return True


def kernel_files(func: types.FunctionType) -> set[str]:
    """Every tracked source file whose code or constants the jitted function ``func`` (a ``py_func``) reaches:
    its own, those of the jitted functions it calls (recursively) and those its global names are imported from."""
    files, seen, stack = set(), set(), [func]
    while stack:
        f = stack.pop()
        if id(f) in seen:
            continue
        seen.add(id(f))
        direct_files, callees = _direct(f)
        files |= direct_files
        stack += callees
    return files


class _KernelStamp:
    """The index stamp of one kernel: (Numba's stamp of the defining file, ((path in its tree, SHA-256), ...) of
    the other files of ``kernel_files``), computed on first comparison or pickling, then kept. Pickles as that
    plain tuple, so an index written here compares equal to a fresh stamp of unchanged sources."""

    __hash__ = None

    def __init__(self, inner, func: types.FunctionType):
        self._inner = inner
        self._func = func
        self._value = None

    def value(self) -> tuple:
        if self._value is None:
            own = os.path.realpath(self._func.__code__.co_filename)
            others = []
            for path in kernel_files(self._func):
                real = os.path.realpath(path)
                if real != own:
                    directory, _ = _tree_of(real)
                    others.append((Path(real).relative_to(directory).as_posix(), _digest(real)))
            self._value = (self._inner.get_source_stamp(), tuple(sorted(others)))
        return self._value

    def __eq__(self, other):
        return self.value() == (other.value() if isinstance(other, _KernelStamp) else other)

    def __ne__(self, other):
        return not self.__eq__(other)

    def __reduce__(self):
        return tuple, (self.value(),)


class KernelLocator:
    """A Numba cache locator (duck-typed) for functions in tracked source files: Numba's own locator for the
    function (cache directory, file names), with ``_KernelStamp`` as the source stamp."""

    def __init__(self, inner, py_func):
        self._inner = inner
        self._py_func = py_func

    @classmethod
    def from_function(cls, py_func, py_file):
        if _tree_of(py_file) is None:
            return None
        from numba.core import caching

        for other in _locator_classes(caching):
            if other is not cls:
                inner = other.from_function(py_func, py_file)
                if inner is not None:
                    return cls(inner, py_func)
        return None

    def ensure_cache_path(self):
        return self._inner.ensure_cache_path()

    def get_cache_path(self):
        return self._inner.get_cache_path()

    def get_disambiguator(self):
        return self._inner.get_disambiguator()

    def get_source_stamp(self):
        return _KernelStamp(self._inner, self._py_func)


def install(caching=None) -> None:
    """Put ``KernelLocator`` first in Numba's list of cache locators (once); caching: the loaded
    ``numba.core.caching`` module (imported when None)."""
    if caching is None:
        from numba.core import caching
    classes = _locator_classes(caching)
    if isinstance(classes, list) and KernelLocator not in classes:
        classes.insert(0, KernelLocator)


def _locator_classes(caching) -> list | None:
    """Numba's list of cache locator classes (``CacheImpl._locator_classes``; ``_CacheImpl`` before 0.68)."""
    impl = getattr(caching, "CacheImpl", None) or getattr(caching, "_CacheImpl", None)
    return getattr(impl, "_locator_classes", None)


class _AfterCachingImport(importlib.abc.MetaPathFinder):
    """A one-shot import hook: runs ``install`` right after Numba's caching module has been executed."""

    def find_spec(self, name, path, target=None):
        if name != _CACHING_MODULE:
            return None
        if self in sys.meta_path:
            sys.meta_path.remove(self)
        spec = importlib.util.find_spec(name)
        loader = getattr(spec, "loader", None)
        if loader is None or not hasattr(loader, "exec_module"):
            return spec
        run = loader.exec_module

        def exec_module(module):
            run(module)
            install(module)

        loader.exec_module = exec_module
        return spec


def install_when_numba_loads() -> None:
    """``install`` now if Numba's caching module is loaded, else as soon as it is."""
    if _CACHING_MODULE in sys.modules:
        install(sys.modules[_CACHING_MODULE])
    elif not any(isinstance(f, _AfterCachingImport) for f in sys.meta_path):
        sys.meta_path.insert(0, _AfterCachingImport())
