"""`ipcsim plot OUT [OUT...]`: forces and contact pairs of finished runs into a PNG; bad input -> one line, exit 2,
no file written."""
import numpy as np
import pytest
from PIL import Image

from ipcsim.app import plots
from ipcsim.io.frames import write_csv
from ipcsim.app.runner import FORCES_COLUMNS, STATS_COLUMNS

from _cli_helpers import write_scene

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def fake_run(out, steps=5, names=("left", "right", "teddy"), dt=0.01, scale=1.0):
    """A run directory with stats.csv and forces.csv only (no simulation): body b's contact force at step k is
    scale * (b, k, -k) [N], its friction (0, 0, scale * b k / 10)."""
    out.mkdir(parents=True)
    stats = [[k if c == "step" else repr(k * dt) if c == "time" else (10 + k if c == "n_contacts" else 0)
              for c in STATS_COLUMNS] for k in range(1, steps + 1)]
    write_csv(out / "stats.csv", STATS_COLUMNS, stats)
    forces = [[k, repr(k * dt), b, name, scale * b, scale * k, -scale * k, 0.0, 0.0, scale * b * k / 10]
              for k in range(1, steps + 1) for b, name in enumerate(names)]
    write_csv(out / "forces.csv", FORCES_COLUMNS, forces)
    return out


def no_temporaries(directory):
    return not any(p.name.startswith(".tmp") for p in directory.rglob("*"))


def test_two_runs_overlaid_into_one_png(tmp_path, cli, monkeypatch):
    full = fake_run(tmp_path / "full")
    low = fake_run(tmp_path / "low", steps=3, dt=0.02, scale=2.0)
    monkeypatch.chdir(tmp_path)
    rc, stdout, err = cli("plot", full, low, "--body", "teddy")
    assert rc == 0, err
    png = tmp_path / "forces.png"  # several runs: ./forces.png
    assert stdout.strip() == "plot: forces.png" and err == ""
    assert png.read_bytes().startswith(PNG_SIGNATURE)
    with Image.open(png) as im:
        assert im.size[0] > 400 and im.size[1] > 400
        assert len(np.unique(np.asarray(im.convert("RGB")).reshape(-1, 3), axis=0)) > 10  # something is drawn
    assert no_temporaries(tmp_path)


def test_one_run_default_output_and_labels(tmp_path, cli):
    run = fake_run(tmp_path / "run")
    rc, stdout, err = cli("plot", run, "--labels", "fine")
    assert rc == 0, err
    assert (run / "forces.png").read_bytes().startswith(PNG_SIGNATURE)
    other = tmp_path / "named.png"
    assert cli("plot", run, fake_run(tmp_path / "b"), "-o", other, "--labels", "a,b", "--body", "1")[0] == 0
    assert other.read_bytes().startswith(PNG_SIGNATURE)


def test_load_run_picks_the_body_by_name_or_index(tmp_path):
    run = fake_run(tmp_path / "run", steps=4)
    by_name, by_index = plots.load_run(run, "right"), plots.load_run(run, 1)
    for curves in (by_name, by_index):
        assert curves.body == "1 right" and curves.label == "run"
        assert np.allclose(curves.time, 0.01 * np.arange(1, 5))
        k = np.arange(1, 5)
        assert np.array_equal(curves.contact, np.stack([np.ones(4), k, -k], axis=1))
        assert np.array_equal(curves.friction[:, 2], k / 10)
        assert np.array_equal(curves.n_contacts, 10 + k)
    assert plots.load_run(run).body == "0 left"


def test_plot_of_a_real_run(tmp_path, cli):
    scene = write_scene(tmp_path, friction={"mu": 0.3})
    out = tmp_path / "out"
    assert cli("run", scene, "-o", out, "--quiet", "--end-time", "0.02")[0] == 0
    rc, _, err = cli("plot", out, "--body", "top")
    assert rc == 0, err
    assert (out / "forces.png").read_bytes().startswith(PNG_SIGNATURE)
    curves = plots.load_run(out, "top")
    assert curves.contact.shape == (2, 3) and curves.contact[:, 1].max() > 0.0  # pushed up by the bottom cube


def _drop_column(path, column):
    lines = path.read_text().splitlines()
    i = lines[0].split(",").index(column)
    path.write_text("\n".join(",".join(f for j, f in enumerate(line.split(",")) if j != i) for line in lines))


@pytest.mark.parametrize("case, message", [
    ("missing directory", "'{d}/nothing' is not a directory"),
    ("no forces.csv", "{d}/a/forces.csv: no such file"),
    ("no n_contacts", "{d}/a/stats.csv: no column 'n_contacts'"),
    ("bad number", "{d}/a/forces.csv: column 'contact_y' line 5: 'abc' is not a number"),
    ("unknown body", "{d}/a/forces.csv: no body 'bubble' (bodies: 0 left, 1 right, 2 teddy)"),
    ("index out of range", "{d}/a/forces.csv: no body '3' (bodies: 0 left, 1 right, 2 teddy)"),
    ("labels count", "--labels has 3 names for 2 runs"),
    ("not png", "--output '{d}/f.pdf': the plot is a PNG"),
    ("no output directory", "--output '{d}/no/f.png': no directory"),
    ("no steps", "{d}/a/stats.csv: no steps yet"),
])
def test_bad_input_is_one_line_exit_2_and_writes_nothing(tmp_path, cli, case, message):
    a, b = fake_run(tmp_path / "a"), fake_run(tmp_path / "b")
    args = [a, b]
    if case == "missing directory":
        args = [a, tmp_path / "nothing"]
    elif case == "no forces.csv":
        (a / "forces.csv").unlink()
    elif case == "no n_contacts":
        _drop_column(a / "stats.csv", "n_contacts")
    elif case == "bad number":
        text = (a / "forces.csv").read_text().splitlines()
        text[4] = text[4].replace(",0.0,2.0,-2.0,", ",0.0,abc,-2.0,")  # body 0 (plotted) at step 2
        (a / "forces.csv").write_text("\n".join(text) + "\n")
    elif case == "unknown body":
        args += ["--body", "bubble"]
    elif case == "index out of range":
        args += ["--body", "3"]
    elif case == "labels count":
        args += ["--labels", "x,y,z"]
    elif case == "not png":
        args += ["-o", tmp_path / "f.pdf"]
    elif case == "no output directory":
        args += ["-o", tmp_path / "no" / "f.png"]
    elif case == "no steps":
        write_csv(a / "stats.csv", STATS_COLUMNS, [])
    before = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*"))
    rc, stdout, err = cli("plot", *args, "-o", tmp_path / "out.png") if "-o" not in args else cli("plot", *args)
    assert rc == 2 and stdout == ""
    assert len(err.splitlines()) == 1 and err.startswith("error: ") and "Traceback" not in err
    assert message.format(d=tmp_path) in err
    assert sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*")) == before  # nothing written


def test_failed_write_leaves_no_partial_png(tmp_path, cli, monkeypatch):
    from matplotlib.figure import Figure

    run = fake_run(tmp_path / "run")
    (run / "forces.png").write_bytes(b"old")

    def broken_savefig(self, fname, **kw):
        with open(fname, "wb") as fh:
            fh.write(PNG_SIGNATURE)  # half a file, then the disk fills up
        raise OSError("No space left on device")

    monkeypatch.setattr(Figure, "savefig", broken_savefig)
    rc, _, err = cli("plot", run)
    assert rc == 2 and err.strip() == "error: No space left on device"
    assert (run / "forces.png").read_bytes() == b"old" and no_temporaries(tmp_path)
