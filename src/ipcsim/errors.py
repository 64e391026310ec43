"""The one error type of scene loading: a one-line message naming the file and the key path (or script line);
and the warning of the IPC script importer.

A bottom module (it imports nothing from the package): both ``ipcsim.scene`` and the face scenes of
``ipcsim.face`` raise these, and ``scene.loader`` dispatches to ``face.scene`` without an import cycle.
``ipcsim.scene`` re-exports ``SceneError``."""
from __future__ import annotations


class SceneError(ValueError):
    """A scene that cannot be used. The message is one line: ``FILE: key.path[0].sub: what is wrong``
    (JSON scenes), ``FILE:LINE:COL: invalid JSON: ...`` (malformed JSON) or ``FILE:LINE: ...`` (IPC scripts)."""


class IPCScriptWarning(UserWarning):
    """An IPC script command that ipcsim ignores (it changes nothing physical); the message names the line.
    (``scene.ipc_script`` and ``scene.ipc_scene`` warn with it; importable from either.)"""


def key_path(parts) -> str:
    """Render a key path, e.g. ("bodies", 0, "material") -> "bodies[0].material"; () -> ""."""
    out = ""
    for p in parts:
        if isinstance(p, int):
            out += f"[{p}]"
        else:
            out += f".{p}" if out else str(p)
    return out


def scene_error(source: str, path, message: str) -> SceneError:
    """A SceneError ``source: path: message`` (``source: message`` when the path is empty); path is a key-path
    string or a sequence of keys and indices."""
    where = path if isinstance(path, str) else key_path(path)
    text = " ".join(str(message).split())
    return SceneError(f"{source}: {where}: {text}" if where else f"{source}: {text}")
