"""Fixtures of the CLI tests."""
import pytest

from ipcsim.cli import main


@pytest.fixture
def cli(capsys):
    """call(*argv) -> (exit status, stdout, stderr) of ipcsim.cli.main in this process (argparse's exits,
    e.g. usage errors and --help, return their status too)."""

    def call(*argv):
        try:
            rc = main([str(a) for a in argv])
        except SystemExit as exc:
            rc = exc.code
        out = capsys.readouterr()
        return rc, out.out, out.err

    return call
