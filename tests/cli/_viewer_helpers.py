"""Helpers of the viewer tests: a short run whose top cube falls onto the bottom one, and readers of viewer.html."""
import base64
import copy
import json
import re
import zlib

import numpy as np

from _cli_helpers import TINY, write_scene

#: TINY with the top cube 2.8 cm above the bottom one (falling at 1 m/s: contact at about 0.028 s), 7 frames
FALLING = copy.deepcopy(TINY)
FALLING["name"] = "falling"
FALLING["time"] = {"end": 0.06, "dt": 0.01}
FALLING["bodies"][1]["transform"]["translation"] = [0.02, 0.13, 0.01]
FALLING["output"] = {"every": 1, "checkpoint_every": 1}


def run_falling(directory, *extra):
    """Run FALLING into directory/out with ``extra`` options (``ipcsim run``); returns OUT."""
    from ipcsim.cli import main

    out = directory / "out"
    assert main(["run", str(write_scene(directory, FALLING, name="falling.json")), "-o", str(out), "--quiet",
                 *extra]) == 0
    return out


def page_data(html: str) -> dict:
    """The run's JSON block of a viewer page."""
    m = re.search(r'<script type="application/json" id="ipcsim-data">(.*?)</script>', html, re.S)
    return json.loads(m.group(1))


def _inflate(b64: str, dtype) -> np.ndarray:
    return np.frombuffer(zlib.decompress(base64.b64decode(b64)), dtype=dtype)


def decoded_frames(data: dict) -> np.ndarray:
    """(k, n, 3) [m] positions in the page's (body-sorted) vertex order, decoded as viewer.js does: the int16
    second differences over the frames summed twice with wrap-around, then lo + (q + 32768) * step per body."""
    d = _inflate(data["positions"], "<i2").reshape(data["nFrames"], data["nVerts"], 3)
    q = np.cumsum(np.cumsum(d.astype(np.int64), axis=0), axis=0)
    q = ((q + 32768) % 65536) - 32768  # int16 wrap, as the page's Int16Array stores it
    x = np.zeros(q.shape)
    for b in data["bodies"]:
        s = slice(b["start"], b["start"] + b["nv"])
        x[:, s] = np.asarray(b["lo"]) + (q[:, s] + 32768.0) * np.asarray(b["step"])
    return x


def distance_codes(data: dict) -> np.ndarray:
    """(k, n) uint8 codes of the distance field."""
    return _inflate(data["distance"]["codes"], np.uint8).reshape(data["nFrames"], data["nVerts"])
