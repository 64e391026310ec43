"""The CI skip check (tests/_skip_check.py, tests/allowed_skips.txt): a skip whose reason is off the allow-list fails
the session where CI is set, and only there; allowed skips, module-level skips included, pass."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

from _skip_check import read_allow_list

TESTS = Path(__file__).resolve().parent

CONFTEST = """
from pathlib import Path
from _skip_check import SkipCheck

def pytest_configure(config):
    config.pluginmanager.register(SkipCheck(Path(__file__).with_name("allowed.txt")), "skip-check")
"""

SKIPPING = """
import pytest

def test_passes():
    pass

def test_allowed_skip():
    pytest.skip("needs the Frobnicator GPU")

def test_unlisted_skip():
    pytest.skip("the project's own module did not import")
"""

MODULE_SKIP = """
import pytest
pytest.importorskip("a_module_nobody_has")

def test_never_runs():
    pass
"""


def _run(tmp_path, ci, *args):
    (tmp_path / "conftest.py").write_text(CONFTEST)
    (tmp_path / "allowed.txt").write_text("# comment\nFrobnicator GPU  # an optional device\n\n"
                                          "a_module_nobody_has  # an optional extra\n")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(TESTS), os.environ.get("PYTHONPATH", "")]))
    env.pop("CI", None)
    if ci is not None:
        env["CI"] = ci
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--rootdir", str(tmp_path),
                        *args], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    return r.returncode, r.stdout


@pytest.mark.parametrize("ci, code", [("true", 1), ("1", 1), (None, 0), ("false", 0), ("0", 0)])
def test_an_unlisted_skip_fails_the_session_under_ci_only(tmp_path, ci, code):
    (tmp_path / "test_a.py").write_text(SKIPPING)
    rc, out = _run(tmp_path, ci)
    assert rc == code, out
    assert "1 passed, 2 skipped" in out
    if code:
        assert "test_a.py::test_unlisted_skip: the project's own module did not import" in out
        assert "test_allowed_skip:" not in out.split("short test summary")[0]
        assert "skip check: 1 of 2 skips have a reason not on" in out


def test_allowed_skips_pass_under_ci(tmp_path):
    (tmp_path / "test_a.py").write_text(SKIPPING)
    (tmp_path / "test_b.py").write_text(MODULE_SKIP)
    rc, out = _run(tmp_path, "true", "-k", "not unlisted")
    assert rc == 0, out
    assert "skip check: 2 skips, every reason on allowed.txt" in out


def test_a_module_level_skip_off_the_list_fails(tmp_path):
    (tmp_path / "test_b.py").write_text(MODULE_SKIP.replace("a_module_nobody_has", "another_missing_module"))
    rc, out = _run(tmp_path, "true")
    assert rc == 1, out
    assert "test_b.py: could not import 'another_missing_module'" in out


def test_the_repository_allow_list_is_short_and_every_entry_says_why():
    entries = read_allow_list(TESTS / "allowed_skips.txt")
    assert 0 < len(entries) <= 12
    for text in ("ipctk", "distributed", "shared data", "ipcsim"):  # never a reason to skip in CI
        assert not any(text in e for e in entries), text


def test_an_entry_without_why_is_an_error(tmp_path):
    p = tmp_path / "allowed.txt"
    p.write_text("some reason\n")
    with pytest.raises(ValueError, match=r"allowed.txt:1: an entry is"):
        read_allow_list(p)
