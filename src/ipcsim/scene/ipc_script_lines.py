"""Lines and raw shape records of IPC 2020 scene scripts (used by ``ipc_script``): the logical-line reader
(comments, backslash continuations) and the dataclasses of ``shapes`` entries and ``meshCO`` objects."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class ScriptLine:
    """One logical line of a script: words and the physical line (1-based) of each word."""

    words: list[str]
    lines: list[int]

    @property
    def number(self) -> int:
        """Physical line of the first word."""
        return self.lines[0]


def read_script_lines(text: str) -> list[ScriptLine]:
    """Split script text into logical lines: '#' starts a comment (to the end of the physical line), a trailing
    backslash (or a backslash word inside a comment, as IPC's shape lines allow) continues on the next line;
    empty lines are dropped."""
    out: list[ScriptLine] = []
    words: list[str] = []
    lines: list[int] = []
    for number, raw in enumerate(text.splitlines(), start=1):
        toks = raw.split()
        cont = False
        for k, tok in enumerate(toks):
            if tok.startswith("#"):
                cont = "\\" in toks[k + 1:]
                toks = toks[:k]
                break
        else:
            if toks and toks[-1].endswith("\\"):
                cont = True
                toks[-1] = toks[-1][:-1]
                if not toks[-1]:
                    toks.pop()
        words += toks
        lines += [number] * len(toks)
        if not cont and words:
            out.append(ScriptLine(words, lines))
            words, lines = [], []
    if words:
        out.append(ScriptLine(words, lines))
    return out


@dataclass
class Shape:
    """One ``shapes`` entry (raw script values; units of the script: m, deg, deg/s, s)."""

    path: Path
    line: int
    translation: tuple
    rotation_deg: tuple
    scale: tuple
    material: tuple | None = None
    material_line: int = 0
    linear_velocity: tuple | None = None
    angular_velocity_deg: tuple | None = None
    init_velocity: tuple | None = None  # (linear (3,), angular deg/s (3,))
    init_line: int = 0
    dbc: list = field(default_factory=list)  # (min, max, v, w_deg, t0, t1, line)
    nbc: list = field(default_factory=list)  # (min, max, a, t0, t1, line)
    mesh_seq: tuple | None = None  # (folder Path, line)


@dataclass
class MeshCO:
    """A legacy ``meshCO`` static obstacle (raw values)."""

    path: Path
    line: int
    origin: tuple
    scale: float
    friction: float
    rotation_deg: tuple
