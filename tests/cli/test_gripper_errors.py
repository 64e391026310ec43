"""A gripper's bad trajectory file through ``ipcsim run`` of a JSON scene: one line ``error: ...`` naming the scene,
the trajectory file, its row and column; exit status 2; no output directory. And a good one runs."""
import copy

from _cli_helpers import TINY, write_scene
from test_errors import _assert_one_line_error

HEADER = "time,x,y,z,qw,qx,qy,qz,width"
ROW0 = "0.0,0.0,0.2,0.0,1,0,0,0,0.05"

BAD_FILES = {
    "missing column": ("time,x,y,z,qw,qx,qz,width\n0,0,0.2,0,1,0,0,0.05\n", ["row 1", "column 'qy'", "missing"]),
    "non-monotone time": (f"{HEADER}\n{ROW0}\n0.5,0,0.2,0,1,0,0,0,0.05\n0.4,0,0.2,0,1,0,0,0,0.05\n",
                          ["row 4", "column 'time'"]),
    "repeated time": (f"{HEADER}\n{ROW0}\n0.0,0,0.2,0,1,0,0,0,0.05\n", ["row 3", "column 'time'"]),
    "non-unit quaternion": (f"{HEADER}\n{ROW0}\n0.5,0,0.2,0,0.99,0.1,0,0,0.05\n", ["row 3", "column 'qw'", "norm"]),
    "NaN": (f"{HEADER}\n{ROW0}\n0.5,0,0.2,NaN,1,0,0,0,0.05\n", ["row 3", "column 'z'", "finite"]),
    "unparsable value": (f"{HEADER}\n{ROW0}\n0.5,0,0.2,0,1,0,0,0,abc\n", ["row 3", "column 'width'", "'abc'"]),
    "short row": (f"{HEADER}\n{ROW0}\n0.5;0;0.2;0;1;0;0;0;0.05\n", ["row 3", "does not parse"]),
}


def _gripper_scene(tmp_path, csv_text, name="bad.json"):
    (tmp_path / "pick_place.csv").write_text(csv_text)
    data = copy.deepcopy(TINY)
    data["grippers"] = [{"trajectory": "pick_place.csv", "attachments": [{"body": "top", "side": 0}]}]
    return write_scene(tmp_path, data, name)


def test_bad_trajectory_files(tmp_path, cli):
    for case, (text, needles) in BAD_FILES.items():
        scene = _gripper_scene(tmp_path, text)
        out = tmp_path / "out"
        rc, stdout, err = cli("run", scene, "-o", out)
        _assert_one_line_error(rc, stdout, err, "bad.json", "grippers[0].trajectory", "pick_place.csv", *needles)
        assert not out.exists(), case


def test_missing_trajectory_file_and_unknown_body(tmp_path, cli):
    scene = _gripper_scene(tmp_path, f"{HEADER}\n{ROW0}\n")
    (tmp_path / "pick_place.csv").unlink()
    _assert_one_line_error(*cli("run", scene, "-o", tmp_path / "out"), "grippers[0].trajectory", "pick_place.csv")
    scene = _gripper_scene(tmp_path, f"{HEADER}\n{ROW0}\n")
    text = scene.read_text().replace('"body": "top"', '"body": "nobody"')
    scene.write_text(text)
    _assert_one_line_error(*cli("run", scene, "-o", tmp_path / "out"), "grippers[0].attachments[0].body", "nobody")
    assert not (tmp_path / "out").exists()


def test_a_good_trajectory_runs(tmp_path, cli):
    # the top cube is carried up by 5 mm in the 40 ms run: it never reaches the bottom one
    scene = _gripper_scene(tmp_path, f"{HEADER}\n0.0,0,0,0,1,0,0,0,0\n0.04,0,0.005,0,1,0,0,0,0\n", "good.json")
    out = tmp_path / "out"
    rc, _, err = cli("run", scene, "-o", out, "--quiet")
    assert rc == 0, err
    assert '"grippers"' in (out / "scene.json").read_text()


def test_info_lists_the_gripper(tmp_path, cli):
    scene = _gripper_scene(tmp_path, f"{HEADER}\n{ROW0}\n", "good.json")
    rc, stdout, _ = cli("info", scene)
    assert rc == 0
    assert "gripper [0] gripper0: trajectory pick_place.csv, axis [1.0, 0.0, 0.0], carries top (side 0)" in stdout
