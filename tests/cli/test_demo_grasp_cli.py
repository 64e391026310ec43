"""``ipcsim demo teddy-grasp``: its options and their errors."""


def test_teddy_grasp_command(tmp_path, cli):
    out = tmp_path / "grasp"
    rc, stdout, err = cli("demo", "teddy-grasp", "--mode", "medium", "--dt", "0.01", "--end-time", "0.02", "-o", out,
                          "--no-render", "--quiet")
    assert rc == 0, err
    assert len(list((out / "frames").glob("surface_*.ply"))) == 2  # t = 0 and t = 0.02 s (frames every 0.02 s)
    rc, _, err = cli("demo", "two-cubes", "--mode", "low")
    assert rc == 2 and err.strip() == "error: demo two-cubes: --mode, --mu and --bubble-material are options of the teddy-grasp demo"
    rc, _, err = cli("demo", "teddy-grasp", "--mu", "-1", "--end-time", "0.02")
    assert rc == 2 and err.startswith("error: --mu must be >= 0")
