"""The preview draws only the bodies named in OUT/scene.json's output.preview_bodies (a face run: its skin, not
the lips' collision proxy embedded under it), framed on them; names come from the frames' header."""
import json

import numpy as np
from PIL import Image

from ipcsim.io import frames as io_frames
from ipcsim.app.render import render_run

TRIANGLE = np.array([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.2]])


def _run(out, bodies, names, preview_bodies=None):
    """A two-frame run of the given bodies ({id: offset (3,)}), one triangle each, rendered; the preview image."""
    (out / "frames").mkdir(parents=True)
    ids = sorted(bodies)
    for k in range(2):
        v = np.concatenate([TRIANGLE + bodies[i] + [0.0, 0.1 * k, 0.0] for i in ids])
        f = np.arange(3 * len(ids)).reshape(-1, 3)
        io_frames.write_ply(out / "frames" / f"surface_{k:05d}.ply", v, f, np.repeat(ids, 3), names)
    if preview_bodies is not None:
        io_frames.write_json(out / "scene.json", {"output": {"preview_bodies": preview_bodies}})
    render_run(out)
    return np.asarray(Image.open(out / "preview.png"))


def test_only_the_named_bodies_are_drawn_and_framed(tmp_path):
    near, far = np.zeros(3), np.array([3.0, 0.0, 0.0])
    both = _run(tmp_path / "both", {0: far, 1: near}, ["lip", "skin"], ["skin"])
    alone = _run(tmp_path / "alone", {1: near}, ["lip", "skin"])  # body 1 only, same id and colour
    assert np.array_equal(both, alone)
    unfiltered = _run(tmp_path / "all", {0: far, 1: near}, ["lip", "skin"])
    assert not np.array_equal(unfiltered, alone)  # without preview_bodies both are drawn and framed
    unknown = _run(tmp_path / "unknown", {0: far, 1: near}, ["lip", "skin"], ["teeth"])
    assert np.array_equal(unknown, unfiltered)  # a name no body has: everything, not a blank picture
