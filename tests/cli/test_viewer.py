"""`ipcsim view OUT` (ipcsim.app.viewer) without a browser: one offline page, its frames decoded back to the PLY frames
within the quantisation bound, the distance field against brute force, each frame's stats row, the hook in
`ipcsim run --render`, bad input. The page in a real browser: test_viewer_browser.py."""
import csv
import json
import re
import shutil

import numpy as np
import pytest

from ipcsim.app import viewer
from ipcsim.io.frames import read_ply, write_ply

from _cli_helpers import frames_of
from _viewer_helpers import decoded_frames, distance_codes, page_data, run_falling


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    """FALLING run with --render (so the preview hook writes viewer.html too)."""
    return run_falling(tmp_path_factory.mktemp("viewer"), "--render")


def test_run_render_writes_the_viewer_beside_the_preview(run_dir):
    assert (run_dir / "preview.png").is_file() and (run_dir / "viewer.html").is_file()


def test_a_fresh_run_removes_a_stale_viewer(tmp_path):
    out = run_falling(tmp_path, "--render")
    assert (out / "viewer.html").is_file()
    assert run_falling(tmp_path) == out and not (out / "viewer.html").exists()  # no longer this run's


def test_view_writes_one_offline_page(run_dir, cli, tmp_path):
    target = tmp_path / "v.html"
    rc, out, err = cli("view", run_dir, "-o", target, "--no-open")
    assert (rc, err) == (0, "") and out.strip() == f"viewer: {target}"
    html = target.read_text(encoding="utf-8")
    # nothing fetched: no src/href attribute, no URL but data: ones in the import map
    assert not re.search(r"\b(src|href)\s*=", html)
    imports = json.loads(re.search(r'<script type="importmap">(.*?)</script>', html, re.S).group(1))["imports"]
    assert sorted(imports) == ["three", "three/addons/OrbitControls.js"]
    assert all(u.startswith("data:text/javascript;base64,") for u in imports.values())
    assert not re.search(r"https?://(?!www\.w3\.org)", html)  # three.js is base64 in the map: the page's own text
    assert "three.js 0.170.0" in html


def test_frames_decode_to_the_ply_frames_within_the_quantisation_bound(run_dir):
    data = page_data((run_dir / "viewer.html").read_text(encoding="utf-8"))
    paths = frames_of(run_dir)
    assert data["nFrames"] == len(paths) == 7
    x = decoded_frames(data)
    for k, p in enumerate(paths):
        v, f, body = read_ply(p, with_body=True)
        for b in data["bodies"]:
            mine = np.flatnonzero(body == b["id"])  # the body's vertices in the PLY's order = the page's
            err = np.abs(x[k, b["start"]:b["start"] + b["nv"]] - v[mine])
            # at most half a quantisation step per axis (measured: 0.4997 of it, 1.06e-6 m at most)
            assert np.all(err <= 0.5 * np.asarray(b["step"]) * (1 + 1e-9)), (k, b["name"], err.max())
    top = data["bodies"][1]
    assert top["moving"] and max(top["step"]) < 2.2e-6  # 16 bits over the 10 cm cube's box over its 4 cm fall


def test_times_stats_rows_and_forces(run_dir):
    data = page_data((run_dir / "viewer.html").read_text(encoding="utf-8"))
    assert np.allclose(data["times"], np.arange(7) * 0.01)
    with open(run_dir / "stats.csv", newline="") as fh:
        rows = {int(r["step"]): r for r in csv.DictReader(fh)}
    labels = data["stats"]["labels"]
    assert labels[:2] == ["Newton iterations", "line search"] and "contacts" in labels
    assert data["stats"]["rows"][0] is None  # frame 0: the initial state, no step
    for k in range(1, 7):  # every = 1: frame k is step k
        row = data["stats"]["rows"][k]
        assert row[labels.index("contacts")] == int(rows[k]["n_contacts"])
        assert row[labels.index("Newton iterations")] == int(rows[k]["newton_iterations"])
    with open(run_dir / "forces.csv", newline="") as fh:
        fy = [float(r["contact_y"]) for r in csv.DictReader(fh) if r["body"] == "1"]
    assert np.allclose(data["forces"]["1"]["contact_y"], fy, rtol=1e-4, atol=0)  # 5 significant digits
    assert data["halfSpaces"] == [{"origin": [0.0, 0.0, 0.0], "normal": [0.0, 1.0, 0.0]}]


def _brute_distance(x, faces, body):
    """Distance of every vertex to every triangle of the other bodies (all pairs)."""
    out = np.full(len(x), np.inf)
    fb = body[faces[:, 0]]
    for i in range(len(x)):
        t = faces[fb != body[i]]
        p = np.repeat(x[i:i + 1], len(t), axis=0)
        out[i] = viewer.point_triangle_distance(p, x[t[:, 0]], x[t[:, 1]], x[t[:, 2]]).min()
    return out


def test_point_triangle_distance_cases():
    a, b, c = np.array([[0.0, 0, 0]]), np.array([[1.0, 0, 0]]), np.array([[0.0, 1, 0]])
    cases = {(0.2, 0.2, 0.5): 0.5, (2.0, 0.0, 0.0): 1.0, (0.5, -1.0, 0.0): 1.0, (1.0, 1.0, 0.0): np.sqrt(0.5) / 1,
             (-3.0, -4.0, 0.0): 5.0, (0.1, 0.1, 0.0): 0.0}
    for p, want in cases.items():
        got = viewer.point_triangle_distance(np.array([p]), a, b, c)[0]
        assert got == pytest.approx(want, abs=1e-15), p
    # a degenerate (collinear) triangle: the distance to its segments
    got = viewer.point_triangle_distance(np.array([[0.5, 1.0, 0.0]]), a, b, 2 * b)[0]
    assert got == pytest.approx(1.0, abs=1e-15)


def test_distance_field_equals_brute_force_near_contact(run_dir):
    data = page_data((run_dir / "viewer.html").read_text(encoding="utf-8"))
    codes = distance_codes(data)
    lo, hi = data["distance"]["lo"], data["distance"]["hi"]
    x, faces, body = read_ply(frames_of(run_dir)[-1], with_body=True)
    d = viewer.nearest_other_distance(x, faces, body)
    brute = _brute_distance(x, faces, body)
    near = brute < 0.05  # every vertex within twice the longest edge gets the exact distance
    assert near.sum() > 10 and np.max(np.abs(d[near] - brute[near])) < 1e-15
    assert np.all(d >= brute - 1e-15)  # elsewhere an upper bound
    order = np.argsort(body, kind="stable")
    want = viewer.distance_codes(d, lo, hi)[order]
    assert np.array_equal(codes[-1], want)
    dmin = min(viewer.nearest_other_distance(*read_ply(p, with_body=True)).min() for p in frames_of(run_dir))
    assert lo == max(dmin, 1e-4 * hi)  # the colour scale starts at the closest approach of the run


def test_faces_joining_bodies_and_points_without_faces(tmp_path, cli):
    """A triangle whose vertices belong to two bodies (the face run's lip proxy has some) and a body of points
    only; no scene.json, no CSV tables."""
    out = tmp_path / "run"
    (out / "frames").mkdir(parents=True)
    v = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [1, 1, 0], [0, 0, 1.0], [2, 2, 2]])
    body = np.array([0, 0, 1, 1, 2, 0])
    faces = np.array([[0, 1, 2], [3, 1, 2]])
    for k in range(3):
        write_ply(out / "frames" / f"surface_{k:05d}.ply", v + 0.1 * k, faces, body)
    assert cli("view", out, "--no-open")[0] == 0
    data = page_data((out / "viewer.html").read_text(encoding="utf-8"))
    assert [b["nv"] for b in data["bodies"]] == [3, 2, 1] and [b["nf"] for b in data["bodies"]] == [1, 1, 0]
    x = decoded_frames(data)
    assert np.allclose(x[2], (v + 0.2)[np.argsort(body, kind="stable")], atol=1e-4)
    assert data["stats"] == {"labels": [], "rows": [None, None, None]} and data["forces"] == {}


def test_bad_input_is_one_line_exit_2_and_writes_nothing(run_dir, cli, tmp_path):
    rc, out, err = cli("view", tmp_path / "missing", "--no-open")
    assert rc == 2 and err.startswith("error: ") and "missing" in err and err.count("\n") == 1
    empty = tmp_path / "empty"
    empty.mkdir()
    rc, out, err = cli("view", empty, "--no-open")
    assert rc == 2 and "no frames/surface_*.ply" in err and not any(empty.iterdir())
    bad = tmp_path / "bad"
    shutil.copytree(run_dir / "frames", bad / "frames")
    v, f, b = read_ply(bad / "frames" / "surface_00003.ply", with_body=True)
    write_ply(bad / "frames" / "surface_00003.ply", v[:-1], f[:-1], b[:-1])
    rc, out, err = cli("view", bad, "--no-open")
    assert rc == 2 and "surface_00003.ply" in err and not (bad / "viewer.html").exists()
    assert sorted(p.name for p in bad.iterdir()) == ["frames"]  # no temporary file left either


def test_opens_the_browser_unless_no_open(run_dir, cli, monkeypatch, tmp_path):
    opened = []
    monkeypatch.setenv("DISPLAY", ":0")
    monkeypatch.setattr(viewer.webbrowser, "open", lambda url: opened.append(url) or True)
    assert cli("view", run_dir, "-o", tmp_path / "a.html", "--no-open")[0] == 0 and opened == []
    rc, out, err = cli("view", run_dir, "-o", tmp_path / "a.html")
    assert rc == 0 and opened == [(tmp_path / "a.html").resolve().as_uri()]

    def broken(url):
        raise RuntimeError("no browser")

    monkeypatch.setattr(viewer.webbrowser, "open", broken)  # never fails for want of a browser
    rc, out, err = cli("view", run_dir, "-o", tmp_path / "b.html")
    assert rc == 0 and "no browser found" in out and (tmp_path / "b.html").is_file()
