"""OUT/forces.csv: per step and collision body, the contact and friction forces; written and cut back on resume
exactly like stats.csv (a resume after a crash: ``test_run.test_resume_after_crash_equals_uninterrupted``)."""
import numpy as np

from ipcsim.app.runner import FORCES_COLUMNS
from ipcsim.scene import load_scene

from _cli_helpers import stats_rows, write_scene


def forces_rows(out_dir):
    """forces.csv as (header, rows of str)."""
    lines = (out_dir / "forces.csv").read_text().splitlines()
    return lines[0].split(","), [line.split(",") for line in lines[1:]]


def test_forces_csv_rows_are_the_solvers_body_forces(tmp_path, cli):
    scene = write_scene(tmp_path, friction={"mu": 0.3}, time={"end": 0.03, "dt": 0.01})
    out = tmp_path / "out"
    rc, _, err = cli("run", scene, "-o", out, "--quiet")
    assert rc == 0, err
    header, rows = forces_rows(out)
    assert tuple(header) == FORCES_COLUMNS
    _, stats = stats_rows(out)
    assert [r[:4] for r in rows] == [[s[0], s[1], str(b), name] for s in stats for b, name in
                                     enumerate(("bottom", "top"))]
    # the same steps by hand: the file holds StepStats.body_forces, bit for bit
    sim = load_scene(scene).build()
    state = sim.state
    expected = []
    for _ in range(3):
        new = state.copy()
        st = sim.solver.step(state, new, None, sim.dt)
        state = new
        expected.append(st.body_forces.reshape(2, 6))
    written = np.array([[float(v) for v in r[4:]] for r in rows]).reshape(3, 2, 6)
    assert np.array_equal(written, np.array(expected))
    # the top cube lands on the bottom one: pushed up, and rubs (friction) once lagged contacts exist
    assert written[:, 1, 1].max() > 0.0 and np.any(written[:, :, 3:])


def test_resume_refuses_without_the_forces_rows(tmp_path, cli):
    scene = write_scene(tmp_path)
    out = tmp_path / "out"
    assert cli("run", scene, "-o", out, "--quiet", "--end-time", "0.02")[0] == 0
    (out / "forces.csv").write_text(",".join(FORCES_COLUMNS) + "\n")
    rc, _, err = cli("run", scene, "-o", out, "--quiet", "--resume")
    assert rc == 2 and len(err.splitlines()) == 1
    assert err.startswith("error: cannot resume: forces.csv") and "0 of the 2 steps" in err


def test_fresh_run_replaces_forces_csv(tmp_path, cli):
    scene = write_scene(tmp_path)
    out = tmp_path / "out"
    assert cli("run", scene, "-o", out, "--quiet", "--end-time", "0.02")[0] == 0
    assert cli("run", scene, "-o", out, "--quiet", "--end-time", "0.01")[0] == 0
    assert [r[0] for r in forces_rows(out)[1]] == ["1", "1"]
