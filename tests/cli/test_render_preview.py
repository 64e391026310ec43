"""The preview shows what matters (issue #26 item 3): the camera frames the moving bodies, not the static obstacles;
it looks across bodies pressed together; a legend names the bodies; a grid (and the bodies' shadows) where there
is a ground; distinct colours per body. Run directories are written by hand (PLY frames, scene.json, forces.csv)
so each case is small and exact."""
from __future__ import annotations


import numpy as np
import pytest
from PIL import Image

from ipcsim.io import frames as io_frames
from ipcsim.app.render import Layout, make_renderer, render_run, scene_layout
from ipcsim.app.render_view import auto_toward, body_colors, view_toward
from ipcsim.io.output import frame_path

_BOX_FACES = np.array([[0, 2, 1], [0, 3, 2], [4, 5, 6], [4, 6, 7], [0, 1, 5], [0, 5, 4], [2, 3, 7], [2, 7, 6],
                       [1, 2, 6], [1, 6, 5], [0, 4, 7], [0, 7, 3]])


def box(lo, hi):
    """(vertices (8, 3) [m], faces (12, 3)) of the axis-aligned box [lo, hi]."""
    (x0, y0, z0), (x1, y1, z1) = lo, hi
    v = np.array([[x0, y0, z0], [x1, y0, z0], [x1, y0, z1], [x0, y0, z1],
                  [x0, y1, z0], [x1, y1, z0], [x1, y1, z1], [x0, y1, z1]], float)
    return v, _BOX_FACES.copy()


def write_run(out, parts, frames=3, shift=(0.02, 0.0, 0.0), moving=(0,), names=(), n_bodies=None, ground=False,
              output=None):
    """A run directory: parts: [(vertices, faces)] (body id = index); the bodies in ``moving`` translate by
    ``shift`` [m] per frame; names -> forces.csv; n_bodies -> scene.json "bodies"; ground: a half space y >= 0;
    output: scene.json's "output"."""
    v = np.concatenate([p[0] for p in parts])
    offsets = np.cumsum([0] + [len(p[0]) for p in parts])
    f = np.concatenate([p[1] + o for p, o in zip(parts, offsets)])
    body = np.concatenate([np.full(len(p[0]), i) for i, p in enumerate(parts)])
    (out / "frames").mkdir(parents=True)
    for k in range(frames):
        x = v + np.isin(body, moving)[:, None] * k * np.asarray(shift)
        io_frames.write_ply(frame_path(out, "surface", k), x, f, body)
    scene = {"time": {"dt": 0.1}, "bodies": [{"name": n} for n in names[:n_bodies or len(parts)]]}
    if output is not None:
        scene["output"] = output
    if ground:
        scene["half_spaces"] = [{"origin": [0.0, 0.0, 0.0], "normal": [0.0, 1.0, 0.0]}]
    io_frames.write_json(out / "scene.json", scene)
    rows = [[1, 0.1, i, n, 0, 0, 0, 0, 0, 0] for i, n in enumerate(names)]
    io_frames.write_csv(out / "forces.csv", ("step", "time", "body", "name", "contact_x", "contact_y", "contact_z",
                                             "friction_x", "friction_y", "friction_z"), rows)
    return out


def bluish(image) -> np.ndarray:
    """(h, w) bool: pixels of the first palette colour (blue) under any shading."""
    rgb = np.asarray(image).astype(int)
    return (rgb[..., 2] - rgb[..., 0] > 40) & (rgb[..., 2] > 60)


def test_framing_fills_the_image_with_the_moving_body(tmp_path):
    # a 5 cm cube sliding 4 cm on a 2 m x 0.2 m x 2 m static slab (an obstacle: scene.json has one body)
    cube, slab = box((0.0, 0.0, 0.0), (0.05, 0.05, 0.05)), box((-1.0, -0.2, -1.0), (1.0, 0.0, 1.0))
    out = write_run(tmp_path / "out", [cube, slab], names=("cube", "slab"), n_bodies=1)
    render_run(out)
    png = Image.open(out / "preview.png").convert("RGB")
    cover = bluish(png).mean()
    # measured 0.23 of the image; framed on everything (the slab drives the box) it is 0.0009
    assert cover > 0.10, cover
    slab_grey = np.asarray(png).astype(int)
    grey = (np.abs(slab_grey[..., 0] - slab_grey[..., 2]) < 12) & (slab_grey[..., 0] < 200)
    assert grey.mean() > 0.2  # the slab is drawn all around (measured 0.63)


def test_legend_names_and_swatches(tmp_path):
    cube, slab = box((0.0, 0.0, 0.0), (0.05, 0.05, 0.05)), box((-1.0, -0.2, -1.0), (1.0, 0.0, 1.0))
    out = write_run(tmp_path / "out", [cube, slab], names=("cube", "slab"), n_bodies=1)
    layout = scene_layout(out)
    assert layout.names == {0: "cube", 1: "slab"} and layout.n_bodies == 1
    frames = [io_frames.read_ply(p) for p in sorted((out / "frames").glob("*.ply"))]
    _, faces, vb = io_frames.read_ply(out / "frames" / "surface_00000.ply", with_body=True)
    for legend in (True, False):
        r = make_renderer([v for v, _ in frames], faces, vb, layout, legend=legend)
        image = r.draw(frames[-1][0], faces).astype(int)
        corner = image[: image.shape[0] // 4, -image.shape[1] // 3:]  # the legend's place, upper right
        for name, color in (r.legend_entries if legend else layout.legend([0, 1], 2)):
            swatch = np.all(np.abs(corner - np.round(255 * color)) <= 2, axis=2).sum()
            # a 12 x 7 px swatch per body: measured 84 px each; without the legend 0
            assert (swatch > 40) == legend, (name, swatch)
    assert [n for n, _ in make_renderer([v for v, _ in frames], faces, vb, layout).legend_entries] == ["cube", "slab"]


def test_legend_names_from_the_simulation(tmp_path):
    from ipcsim.demos.builtin import demo_path
    from ipcsim.scene import load_scene

    sim = load_scene(demo_path("cubes-in-bowl")).build()
    layout = scene_layout(tmp_path, sim)  # an empty directory: everything from the simulation
    assert list(layout.names.values()) == [*sim.body_names, *sim.obstacle_names] and layout.n_bodies == 2
    assert len(layout.planes) == 0 or all(np.linalg.norm(n) > 0 for _, n in layout.planes)


@pytest.mark.parametrize("ground", [True, False])
def test_ground_grid_only_where_there_is_a_ground(tmp_path, ground):
    cube = box((0.0, 0.04, 0.0), (0.05, 0.09, 0.05))  # 4 cm above the ground: its shadow lies apart
    out = write_run(tmp_path / "out", [cube], names=("cube",), ground=ground)
    render_run(out)
    rgb = np.asarray(Image.open(out / "preview.png").convert("RGB")).astype(int)
    neutral = np.ptp(rgb, axis=2) <= 1
    tiles = neutral & ((np.abs(rgb[..., 0] - 230) <= 1) | (np.abs(rgb[..., 0] - 209) <= 1))
    shadow = neutral & (rgb[..., 0] >= 150) & (rgb[..., 0] <= 200)
    # measured with a ground: 0.71 of the image in the two tile tones, 0.08 shadow; without: both 0
    assert (tiles.mean() > 0.3) == ground, tiles.mean()
    assert (shadow.mean() > 0.02) == ground, shadow.mean()


def test_no_shadow_without_shadow_bodies(tmp_path):
    cube = box((0.0, 0.04, 0.0), (0.05, 0.09, 0.05))
    out = write_run(tmp_path / "out", [cube], names=("cube",), ground=True)
    frames = [io_frames.read_ply(p)[0] for p in sorted((out / "frames").glob("*.ply"))]
    _, faces, vb = io_frames.read_ply(out / "frames" / "surface_00000.ply", with_body=True)
    r = make_renderer(frames, faces, vb, scene_layout(out))
    dark = []
    for groups in (r.shadows, []):
        r.shadows = groups
        rgb = r.draw(frames[-1], faces).astype(int)
        dark.append(((np.ptp(rgb, axis=2) <= 1) & (rgb[..., 0] >= 150) & (rgb[..., 0] <= 200)).mean())
    assert dark[0] > 0.02 and dark[1] < 0.002, dark  # measured 0.040 and 1.3e-4 (antialiased edges)


def test_distinct_colours():
    colors = body_colors(14, 3)
    d = np.linalg.norm(colors[:, None] - colors[None], axis=2) + np.eye(len(colors))
    assert d.min() > 0.08, d.min()  # measured 0.087 (two obstacle greys); bodies among themselves 0.19
    assert d[:14, :14].min() > 0.15
    assert np.ptp(colors[14:], axis=1).max() < 0.05  # obstacles grey


def test_auto_view_looks_across_the_closing_axis():
    # a grasp: two flat pads at x = +-0.07 squeezing a ball-like box between them (closing axis x, y up)
    pads = [box((-0.09, 0.0, -0.05), (-0.06, 0.1, 0.05)), box((0.06, 0.0, -0.05), (0.09, 0.1, 0.05))]
    parts = [box((-0.06, 0.0, -0.04), (0.06, 0.1, 0.04)), *pads]
    v = np.concatenate([p[0] for p in parts])
    body = np.repeat([0, 1, 2], 8)
    toward = auto_toward([v], body, [0, 1, 2], (0.0, 1.0, 0.0))
    # seen along z (across x): measured |toward . x| = 0 (azimuth 0); the default 35 degrees gives 0.52
    assert abs(toward[0]) < 0.1 and abs(toward[2]) > 0.8, toward
    # one moving body: the default view
    assert np.allclose(auto_toward([v], body, [0], (0.0, 1.0, 0.0)), view_toward({}, (0.0, 1.0, 0.0)))


def test_view_override():
    up = (0.0, 1.0, 0.0)
    assert np.allclose(view_toward("front", up), [0, 0, 1]) and np.allclose(view_toward("side", up), [1, 0, 0])
    assert np.allclose(view_toward([0, 0, -2], up), [0, 0, -1])
    assert view_toward(None, up) is None and view_toward("auto", up) is None
    for bad in ("diagonal", [0, 0, 0], [1, 2]):
        with pytest.raises(ValueError, match="view"):
            view_toward(bad, up)


def test_render_cli_view(tmp_path, cli):
    cube = box((0.0, 0.0, 0.0), (0.05, 0.05, 0.05))
    out = write_run(tmp_path / "out", [cube, box((0.1, 0.0, 0.0), (0.15, 0.05, 0.05))], moving=(0, 1),
                    names=("a", "b"))
    rc, _, err = cli("render", out, "--view", "top")
    assert rc == 0, err
    top = np.asarray(Image.open(out / "preview.png").convert("RGB"))
    assert cli("render", out, "--view", "0,0,1")[0] == 0
    front = np.asarray(Image.open(out / "preview.png").convert("RGB"))
    assert np.abs(top.astype(int) - front).sum() > 0
    rc, _, err = cli("render", out, "--view", "0,0")
    assert rc == 2 and err.startswith("error:") and "view" in err
    rc, _, err = cli("render", out, "--view", "sideways")
    assert rc == 2 and err.startswith("error:") and "sideways" in err


def test_layout_colours_follow_body_ids():
    layout = Layout(names={0: "a", 1: "b", 2: "wall"}, n_bodies=2)
    entries = layout.legend([2, 0, 1], 3)
    assert [n for n, _ in entries] == ["a", "b", "wall"]
    assert np.ptp(entries[2][1]) < 0.05 and np.ptp(entries[0][1]) > 0.2  # the obstacle grey, the bodies coloured


def test_legend_is_capped():
    from ipcsim.app.render import LEGEND_ROWS

    parts = [box((0.1 * i, 0.0, 0.0), (0.1 * i + 0.05, 0.05, 0.05)) for i in range(LEGEND_ROWS + 3)]
    v = np.concatenate([p[0] for p in parts])
    faces = np.concatenate([p[1] + 8 * i for i, p in enumerate(parts)])
    body = np.repeat(np.arange(len(parts)), 8)
    r = make_renderer([v, v + 0.01], faces, body, Layout())
    labels = [t.get_text() for t in r.ax.get_legend().get_texts()]
    assert labels[:2] == ["body0", "body1"] and labels[-1] == "and 3 more" and len(labels) == LEGEND_ROWS + 1


def test_preview_bodies_only_those_drawn_and_framed(tmp_path):
    # output.preview_bodies (a face run: its skin): the other bodies are neither drawn nor framed
    lip, skin = box((3.0, 0.0, 0.0), (3.05, 0.05, 0.05)), box((0.0, 0.0, 0.0), (0.05, 0.05, 0.05))
    kw = dict(moving=(0, 1), names=("lip", "skin"))
    images = {}
    for case, output in (("skin", {"preview_bodies": ["skin"]}), ("all", None), ("teeth", {"preview_bodies": ["x"]})):
        render_run(write_run(tmp_path / case, [lip, skin], output=output, **kw))
        images[case] = np.asarray(Image.open(tmp_path / case / "preview.png").convert("RGB"))
    render_run(write_run(tmp_path / "alone", [box((9.0, 9.0, 9.0), (9.0, 9.0, 9.0)), skin], moving=(1,),
                         names=("lip", "skin"), output={"preview_bodies": ["skin"]}))
    alone = np.asarray(Image.open(tmp_path / "alone" / "preview.png").convert("RGB"))
    assert np.array_equal(images["skin"], alone)  # the lip 3 m away changes nothing
    assert not np.array_equal(images["all"], images["skin"])
    assert np.array_equal(images["teeth"], images["all"])  # a name no body has: everything, not a blank picture
    rgb = images["skin"].astype(int)
    orange = (rgb[..., 0] - rgb[..., 2] > 60).mean()  # the skin (body 1's colour) fills the picture: measured 0.33
    assert bluish(images["skin"]).mean() == 0.0 and orange > 0.1, orange
