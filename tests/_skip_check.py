"""The CI skip check: a pytest plugin that, when the environment variable CI is set, turns every skip whose reason
is not on the allow-list (tests/allowed_skips.txt) into a failed session (exit status 1), with the unlisted skips
named in the summary. Outside CI it only counts.

The allow-list has one entry a line: a piece of text that an allowed skip's reason contains (compared without
regard to case), then `#` and why it is allowed. Blank lines and lines starting with `#` are ignored."""
from __future__ import annotations

import os
from pathlib import Path

import pytest


def ci_is_set() -> bool:
    """True where the environment variable CI is set to anything but '', '0', 'false' or 'no'."""
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


def read_allow_list(path: Path) -> list[str]:
    """The allowed pieces of skip reasons in `path`, lower-cased; a line without its `# why` is an error."""
    entries = []
    for n, line in enumerate(Path(path).read_text().splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        text, sep, why = line.partition("#")
        if not sep or not why.strip() or not text.strip():
            raise ValueError(f"{path}:{n}: an entry is 'text in the skip reason  # why it is allowed'")
        entries.append(text.strip().lower())
    return entries


def skip_reason(report) -> str:
    """The reason of a skipped test or collector report ('Skipped: ' taken off)."""
    longrepr = report.longrepr
    reason = longrepr[2] if isinstance(longrepr, tuple) and len(longrepr) == 3 else str(longrepr)
    return reason.removeprefix("Skipped: ")


class SkipCheck:
    """Collects the skips of a session; under CI, those with a reason off the allow-list fail the session."""

    def __init__(self, allow_list: Path):
        self.allow_list = Path(allow_list)
        self.allowed = read_allow_list(self.allow_list)
        self.skips: list[tuple[str, str]] = []  # (test or collector id, reason)

    def is_allowed(self, reason: str) -> bool:
        low = reason.lower()
        return any(entry in low for entry in self.allowed)

    def _record(self, report) -> None:
        if report.skipped and not hasattr(report, "wasxfail"):
            self.skips.append((report.nodeid, skip_reason(report)))

    def pytest_collectreport(self, report) -> None:
        self._record(report)

    def pytest_runtest_logreport(self, report) -> None:
        self._record(report)

    def unlisted(self) -> list[tuple[str, str]]:
        return [(nodeid, reason) for nodeid, reason in self.skips if not self.is_allowed(reason)]

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session) -> None:
        if ci_is_set() and self.unlisted() and session.exitstatus in (pytest.ExitCode.OK,
                                                                   pytest.ExitCode.NO_TESTS_COLLECTED):
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

    def pytest_terminal_summary(self, terminalreporter) -> None:
        bad = self.unlisted()
        if not ci_is_set() or not self.skips:
            return
        if not bad:
            terminalreporter.write_line(f"skip check: {len(self.skips)} skips, every reason on {self.allow_list.name}")
            return
        terminalreporter.section("skips not on the allow-list (CI is set: the session fails)", red=True)
        for nodeid, reason in bad:
            terminalreporter.write_line(f"{nodeid}: {reason}")
        terminalreporter.write_line(f"skip check: {len(bad)} of {len(self.skips)} skips have a reason not on "
                                    f"{self.allow_list}")
