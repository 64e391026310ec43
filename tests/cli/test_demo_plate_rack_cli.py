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
