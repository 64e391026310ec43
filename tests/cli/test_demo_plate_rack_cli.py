"""``ipcsim demo plate-rack``: a short run writes frames, forces and the preview; option errors."""
import json


def test_plate_rack_command_writes_frames_forces_and_preview(tmp_path, cli):
    out = tmp_path / "pr"
    rc, stdout, err = cli("demo", "plate-rack", "--trajectory", "offset", "--end-time", "0.04", "-o", out)
    assert rc == 0, err
    assert "plate-rack-offset: 4 steps of 0.01 s" in stdout
    assert len(list((out / "frames").glob("surface_*.ply"))) == 3  # t = 0, 0.02, 0.04
    assert (out / "forces.csv").is_file() and (out / "preview.png").is_file()
    data = json.loads((out / "scene.json").read_text())
    assert data["demo"] == "plate-rack" and data["trajectory"] == "offset"


def test_plate_rack_option_errors(cli):
    rc, _, err = cli("demo", "two-cubes", "--trajectory", "clean")
    assert rc == 2 and err.strip() == "error: demo two-cubes: --trajectory is an option of the plate-rack demo"
    rc, _, err = cli("demo", "plate-rack", "--mode", "low")
    assert rc == 2 and "options of the teddy-grasp demo" in err


def test_plate_rack_scene_json_reruns(tmp_path, cli):
    """``ipcsim run OUT/scene.json`` of a plate-rack run rebuilds the same placement (byte-identical frames), takes
    --end-time, and a bad key is one error line naming it, with nothing written."""
    out, again = tmp_path / "pr", tmp_path / "again"
    rc, _, err = cli("demo", "plate-rack", "--trajectory", "offset", "--end-time", "0.02", "-o", out, "--no-render",
                     "--quiet")
    assert rc == 0, err
    rc, _, err = cli("run", out / "scene.json", "--end-time", "0.04", "-o", again, "--quiet")
    assert rc == 0, err
    data = json.loads((again / "scene.json").read_text())
    assert data["trajectory"] == "offset" and data["time"]["end"] == 0.04
    assert len(list((again / "frames").glob("surface_*.ply"))) == 3  # t = 0, 0.02, 0.04
    for k in range(2):
        name = f"frames/surface_{k:05d}.ply"
        assert (out / name).read_bytes() == (again / name).read_bytes(), name
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({**data, "stiffness": 1}))
    rc, _, err = cli("run", bad, "-o", tmp_path / "bad-out", "--quiet")
    assert rc == 2 and err.strip().startswith(f"error: {bad}: plate-rack scene: unknown key 'stiffness'")
    assert not (tmp_path / "bad-out").exists()
