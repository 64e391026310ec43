"""Import a module of benchmarks/ (not a package) by name, for the tests of the Drake harnesses."""
import importlib.util
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[1] / "benchmarks"


def load_benchmark(name: str):
    """benchmarks/<name>.py as module ``name`` (registered in sys.modules: dataclasses look their module up
    there); benchmarks/ goes on sys.path so it can import its siblings."""
    if str(BENCH) not in sys.path:
        sys.path.insert(0, str(BENCH))
    spec = importlib.util.spec_from_file_location(name, BENCH / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod
