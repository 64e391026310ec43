"""The scene's sanity check runs once: ``ipcsim run`` checks it (naming bodies) and tells the run so
(``RunOptions.scene_checked``), which then skips the solver's own check before its first step."""
import ipcsim.model.sanity
from ipcsim.app.runner import RunOptions, run
from ipcsim.scene import load_scene

from _cli_helpers import write_scene


def _counting(monkeypatch):
    calls = []
    original = ipcsim.model.sanity.check_scene

    def counted(*args, **kwargs):
        calls.append(1)
        return original(*args, **kwargs)
    monkeypatch.setattr(ipcsim.model.sanity, "check_scene", counted)
    return calls


def test_a_checked_scene_is_not_checked_again_by_the_solver(tmp_path, monkeypatch):
    calls = _counting(monkeypatch)
    scene = write_scene(tmp_path, time={"end": 0.01, "dt": 0.01})
    run(load_scene(scene).build(), RunOptions(tmp_path / "a", progress=False))
    assert len(calls) == 1  # the solver's own check before its first step
    run(load_scene(scene).build(), RunOptions(tmp_path / "b", progress=False, scene_checked=True))
    assert len(calls) == 1  # told the caller checked it: no second check


def test_the_cli_checks_once(tmp_path, monkeypatch, cli):
    calls = _counting(monkeypatch)
    rc, _, err = cli("run", write_scene(tmp_path, time={"end": 0.01, "dt": 0.01}), "-o", tmp_path / "o", "--quiet")
    assert rc == 0, err
    assert len(calls) == 1
