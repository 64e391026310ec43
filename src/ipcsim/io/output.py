"""The layout of a run's output directory (docs/output.md): OUT/frames/<kind>_%05d.ply|vtu, the files a run
owns there, preparing OUT for a fresh or resumed run, listing its frames, the default OUT, and the scene
fingerprint a resumed run is checked against. Shared by the run loop (``ipcsim.app.runner``) and the face's
runner (``ipcsim.face.runner``).
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

from . import frames as io_frames

CHECKPOINT = "checkpoint.npz"
# files and patterns the run owns in OUT (removed when a fresh run starts there)
_OWNED = ("stats.csv", "forces.csv", CHECKPOINT, "preview.png", "preview.mp4", "preview.gif", "viewer.html")
FRAME_GLOBS = ("surface_*.ply", "volume_*.vtu")


class RunError(ValueError):
    """A run that cannot start or continue (bad resume, inconsistent output directory); one-line message."""


def scene_fingerprint(data: dict | None) -> str:
    """SHA-256 of a resolved scene dict without its end time, name and output options: two scenes with the
    same fingerprint produce the same steps, so one may resume the other's checkpoint."""
    if data is None:
        return ""
    d = json.loads(json.dumps(data))
    d.pop("output", None)
    d.pop("name", None)
    d.get("time", {}).pop("end", None)
    return hashlib.sha256(json.dumps(d, sort_keys=True).encode()).hexdigest()


def frame_path(out_dir: Path, kind: str, index: int) -> Path:
    """OUT/frames/<kind>_<index:05d>.<ply|vtu> for kind "surface" or "volume"."""
    return Path(out_dir) / "frames" / f"{kind}_{index:05d}.{'ply' if kind == 'surface' else 'vtu'}"


def prepare_output(out_dir, scene_data: dict | None, resume: bool) -> Path:
    """Create OUT and OUT/frames; for a fresh run remove the files a previous run left there (only the ones
    this layout names); write OUT/scene.json. ``run`` calls it once the scene (and on resume the checkpoint)
    is validated, so a bad input leaves no trace."""
    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise RunError(f"output path {str(out)!r} exists and is not a directory")
    (out / "frames").mkdir(parents=True, exist_ok=True)
    if not resume:
        for name in _OWNED:
            if (out / name).is_file():
                (out / name).unlink()
        for pattern in FRAME_GLOBS:
            for f in (out / "frames").glob(pattern):
                f.unlink()
    if scene_data is not None:
        io_frames.write_json(out / "scene.json", scene_data)
    return out


def list_frames(out_dir, kind: str = "surface") -> list[Path]:
    """The frame files of a run directory in order (frames/<kind>_*.ply|vtu)."""
    ext = "ply" if kind == "surface" else "vtu"
    return sorted((Path(out_dir) / "frames").glob(f"{kind}_*.{ext}"))


def default_output_dir(name: str) -> Path:
    """./ipcsim-out/<name> (relative to the working directory)."""
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in name) or "scene"
    return Path("ipcsim-out") / safe
