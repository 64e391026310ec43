"""ipcsim.runtime.kernel_cache: a cached kernel goes stale when a file compiled into it changes, not only its own."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

from numba import njit
from numba.core import caching

import ipcsim  # noqa: F401  (installs the locator)
from ipcsim.runtime import kernel_cache
from ipcsim.runtime.kernel_cache import KernelLocator, kernel_files

SRC = Path(ipcsim.__file__).resolve().parent


def _relative(files) -> set[str]:
    return {Path(f).resolve().relative_to(SRC).as_posix() for f in files}


def test_the_locator_comes_first_and_serves_package_kernels_only():
    assert kernel_cache._locator_classes(caching)[0] is KernelLocator
    from ipcsim.energies import mat3

    assert isinstance(mat3.det3._cache._impl.locator, KernelLocator)

    @njit(cache=True)
    def outside(x):  # defined in this test file: Numba's own locator
        return x

    assert not isinstance(outside._cache._impl.locator, KernelLocator)


def test_the_elastic_assembly_reaches_the_files_it_inlines():
    from ipcsim.solvers import elastic

    files = _relative(kernel_files(elastic._assemble.py_func))
    assert {"solvers/elastic.py", "energies/tet_blocks.py", "energies/svd_lanes.py", "energies/mat3.py",
            "energies/materials.py"} <= files
    assert "solvers/newton.py" not in files and "model/core.py" not in files


def test_imported_constants_and_reexports_are_followed(tmp_path):
    """A constant imported through a package's __init__ brings the file that defines it (not the __init__ that
    passes it on); a module attribute's jitted function brings its file."""
    pkg = _write_package(tmp_path, "kc_reexport", {
        "__init__.py": "from .values import SCALE\nfrom . import other\n",
        "values.py": "SCALE = 2.0\n",
        "other.py": "from .values import SCALE\n",  # binds the same object, defines nothing
        "tools.py": "from numba import njit\n\n@njit(cache=True)\ndef one():\n    return 1.0\n",
        "kern.py": textwrap.dedent("""
            from numba import njit
            from . import SCALE, tools

            @njit(cache=True)
            def kernel(x):
                return SCALE * x + tools.one()
            """),
    })
    kernel_cache.track_package(pkg, "kc_reexport")
    sys.path.insert(0, str(tmp_path))
    try:
        from kc_reexport import kern
        names = {Path(f).name for f in kernel_files(kern.kernel.py_func)}
    finally:
        sys.path.remove(str(tmp_path))
        for name in [m for m in sys.modules if m.startswith("kc_reexport")]:
            del sys.modules[name]
    assert names == {"kern.py", "values.py", "tools.py"}


def _write_package(root: Path, name: str, files: dict[str, str]) -> Path:
    pkg = root / name
    pkg.mkdir()
    for file, text in files.items():
        (pkg / file).write_text(text)
    return pkg


CHILD = """
import json, sys
import ipcsim
from ipcsim.runtime.kernel_cache import track_package
track_package(sys.argv[1] + "/kc_stale", "kc_stale")
sys.path.insert(0, sys.argv[1])
from kc_stale import kern
value = kern.kernel(1.0)
print(json.dumps({"value": value, "hits": sum(kern.kernel.stats.cache_hits.values())}))
"""


def _run_child(root: Path) -> dict:
    env = dict(os.environ)
    env.pop("NUMBA_CACHE_DIR", None)
    env.pop("NUMBA_CACHE_LOCATOR_CLASSES", None)
    out = subprocess.run([sys.executable, "-B", "-c", CHILD, str(root)], capture_output=True, text=True, env=env,
                         check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_editing_only_an_inlined_helper_recompiles_the_kernel(tmp_path):
    """The kernel's own file never changes; its helper's constant does (same file size). Numba's stamp alone
    would load the first run's machine code and return 3.0 again."""
    helper = "from numba import njit\n\nSCALE = {}\n\n@njit(cache=True)\ndef scaled(x):\n    return SCALE * x\n"
    _write_package(tmp_path, "kc_stale", {
        "__init__.py": "",
        "helpers.py": helper.format("2.0"),
        "kern.py": "from numba import njit\nfrom .helpers import scaled\n\n@njit(cache=True)\n"
                   "def kernel(x):\n    return scaled(x) + 1.0\n",
    })
    first = _run_child(tmp_path)
    again = _run_child(tmp_path)
    (tmp_path / "kc_stale" / "helpers.py").write_text(helper.format("5.0"))
    edited = _run_child(tmp_path)
    assert (first, again) == ({"value": 3.0, "hits": 0}, {"value": 3.0, "hits": 1})  # the cache does serve
    assert edited == {"value": 6.0, "hits": 0}


def test_numba_loaded_first_still_gets_the_locator():
    code = ("import sys\nimport numba\nimport ipcsim\nfrom numba.core import caching\n"
            "impl = getattr(caching, 'CacheImpl', None) or caching._CacheImpl\n"
            "print(impl._locator_classes[0].__name__)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "KernelLocator"


def test_import_ipcsim_does_not_load_numba():
    code = "import sys\nimport ipcsim\nprint('numba' in sys.modules)\n"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
