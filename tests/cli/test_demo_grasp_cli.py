"""``ipcsim demo teddy-grasp``: its options and their errors."""


def test_teddy_grasp_command(tmp_path, cli):
    out = tmp_path / "grasp"
    rc, stdout, err = cli("demo", "teddy-grasp", "--mode", "medium", "--dt", "0.01", "--end-time", "0.02", "-o", out,
                          "--no-render", "--quiet")
    assert rc == 0, err
    assert len(list((out / "frames").glob("surface_*.ply"))) == 2  # t = 0 and t = 0.02 s (frames every 0.02 s)
    rc, _, err = cli("demo", "two-cubes", "--mode", "low")
    assert rc == 2 and err.strip() == ("error: demo two-cubes: --setup, --mode, --mu and --bubble-material are options "
                                       "of the teddy-grasp demo")
    rc, _, err = cli("demo", "two-cubes", "--setup", "legacy")
    assert rc == 2 and err.strip().startswith("error: demo two-cubes: --setup")
    rc, _, err = cli("demo", "teddy-grasp", "--mu", "-1", "--end-time", "0.02")
    assert rc == 2 and err.startswith("error: --mu must be >= 0")


def test_teddy_grasp_scene_json_resumes_and_reruns(tmp_path, cli):
    """A demo run's OUT/scene.json keeps its time where scene files do: --resume may extend the end time, and
    ``ipcsim run OUT/scene.json`` rebuilds the same grasp (same frames)."""
    import json

    out, again = tmp_path / "grasp", tmp_path / "again"
    rc, _, err = cli("demo", "teddy-grasp", "--bubble-material", "SNH", "--end-time", "0.04", "-o", out, "--no-render",
                     "--quiet")
    assert rc == 0, err
    data = json.loads((out / "scene.json").read_text())
    assert data["demo"] == "teddy-grasp" and data["time"] == {"end": 0.04, "dt": 0.02}
    assert data["bubble_material"] == "SNH" and data["setup"] == "paper" and data["damping_stiffness"] == 0.05
    rc, _, err = cli("demo", "teddy-grasp", "--bubble-material", "SNH", "--end-time", "0.08", "-o", out,
                     "--no-render", "--quiet", "--resume")
    assert rc == 0, err
    assert len(list((out / "frames").glob("surface_*.ply"))) == 5  # t = 0 .. 0.08 s
    rc, _, err = cli("run", out / "scene.json", "--end-time", "0.08", "-o", again, "--quiet")
    assert rc == 0, err
    for k in range(5):
        name = f"frames/surface_{k:05d}.ply"
        assert (out / name).read_bytes() == (again / name).read_bytes(), name
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({**data, "stiffness": 1}))
    rc, _, err = cli("run", bad, "-o", tmp_path / "bad-out", "--quiet")
    assert rc == 2 and err.strip().startswith(f"error: {bad}: teddy-grasp scene: unknown key 'stiffness'")
    assert not (tmp_path / "bad-out").exists()


def test_teddy_grasp_legacy_setup(tmp_path, cli):
    """``--setup legacy`` runs issue #12's scene and its scene.json says so; a scene.json without a setup (written
    before the paper set-up existed) reruns as legacy."""
    import json

    out = tmp_path / "legacy"
    rc, _, err = cli("demo", "teddy-grasp", "--setup", "legacy", "--end-time", "0.02", "-o", out, "--no-render",
                     "--quiet")
    assert rc == 0, err
    data = json.loads((out / "scene.json").read_text())
    assert (data["setup"], data["bubble_material"], data["name"]) == ("legacy", "NH", "teddy-grasp-legacy-low")
    old = tmp_path / "old.json"
    old.write_text(json.dumps({k: v for k, v in data.items() if k not in ("setup", "damping_stiffness")}))
    rc, _, err = cli("run", old, "-o", tmp_path / "again", "--quiet")
    assert rc == 0, err
    assert (out / "frames/surface_00001.ply").read_bytes() == (tmp_path / "again/frames/surface_00001.ply").read_bytes()
    rc, _, err = cli("demo", "face", "--setup", "paper")
    assert rc == 2 and "--setup" in err
