import os
import uuid
from pathlib import Path

import numpy as np
import pytest

from _skip_check import SkipCheck, ci_is_set

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = Path(os.environ.get("IPCSIM_SHARED_DATA", REPO.parent / "shared" / "data"))
ALLOWED_SKIPS = Path(__file__).with_name("allowed_skips.txt")


def pytest_configure(config):
    """The CI skip check (tests/_skip_check.py): with CI set, a skip whose reason is off the allow-list fails."""
    config.pluginmanager.register(SkipCheck(ALLOWED_SKIPS), "ipcsim-skip-check")


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """../shared/data (the reference meshes, IPC scripts and CCD queries, or $IPCSIM_SHARED_DATA); tests using it
    skip without it, and fail without it where the environment variable CI is set."""
    if not SHARED_DATA.is_dir():
        if ci_is_set():
            pytest.fail(f"shared data not found at {SHARED_DATA} (CI is set; IPCSIM_SHARED_DATA names another place)")
        pytest.skip(f"shared data not found at {SHARED_DATA}")
    return SHARED_DATA


@pytest.fixture
def rng():
    return np.random.default_rng(12345)


@pytest.fixture
def cold_module(tmp_path, monkeypatch):
    """write(source, prefix) -> module name: the source saved as a fresh module in tmp_path, importable here
    (sys.path) and in subprocesses (PYTHONPATH), with Numba's default cache next to it (NUMBA_CACHE_DIR unset),
    so its kernels start on a cold cache of their own."""
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delenv("NUMBA_CACHE_DIR", raising=False)
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))

    def write(source: str, prefix: str) -> str:
        name = f"{prefix}_{uuid.uuid4().hex}"
        (tmp_path / f"{name}.py").write_text(source)
        return name

    return write
