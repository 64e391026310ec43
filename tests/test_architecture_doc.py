"""docs/architecture.md's equation tables name real code: every `module.py` cell exists under src/ipcsim, and every
name in the function cell of that row is defined (def/class, or a method of a class) in one of the row's modules."""
from __future__ import annotations

import ast
import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DOC = REPO / "docs" / "architecture.md"
SRC = REPO / "src" / "ipcsim"


def _rows():
    """(line number, module paths, names) of each three-column table row that names modules and functions."""
    for k, line in enumerate(DOC.read_text(encoding="utf-8").splitlines(), 1):
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 3 or cells[0] in ("equation", "equation / step", "piece") or set(cells[0]) <= set("- "):
            continue
        modules = re.findall(r"`([\w/]+\.py)`", cells[1])
        names = re.findall(r"`([A-Za-z_][\w.]*)`", re.sub(r"\(.*?\)", "", cells[2]))
        names = [n for n in names if not n.endswith(".py")]
        if modules:
            yield k, modules, names


def _defined(path: Path) -> set[str]:
    """Top-level defs/classes of a module, and Class.method for their methods (also plain method names)."""
    out = set()
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            out.add(node.name)
            if isinstance(node, ast.ClassDef):
                for item in node.body:
                    if isinstance(item, ast.FunctionDef):
                        out.update({f"{node.name}.{item.name}", item.name})
                    if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                        out.add(item.target.id)
    return out


def test_architecture_tables_name_existing_code():
    rows = list(_rows())
    assert len(rows) >= 30, "the equation tables were not found"
    missing = []
    for k, modules, names in rows:
        known = set()
        for m in modules:
            path = SRC / m
            if not path.exists():
                missing.append(f"line {k}: no module {m}")
                continue
            known |= _defined(path)
        missing += [f"line {k}: {n} not in {modules}" for n in names if n not in known and n.split(".")[-1] not in known]
    assert not missing, "\n".join(missing)
