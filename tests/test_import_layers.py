"""Dependencies point down only: no import cycle between the package's files, nor between its top-level parts,
and no import from a part to a part of the same or a higher layer (``RANKS``, docs/architecture.md).

Every module of src/ipcsim is parsed with ``ast``; its imports (at module level and inside functions, relative
ones resolved; ``from . import x`` where x is a submodule imports that submodule) make a directed graph. The
test fails listing the cycles, (1) between modules and (2) between the top-level parts (``ipcsim.contact``,
``ipcsim.model``, ``ipcsim.cli``, ...: each top-level module or subpackage of ipcsim is one node; a package's
``__init__`` counts as part of its package, so its re-exports count), and (3) every import that points up or
sideways: a module of a part of rank r may import modules of its own part and of parts of rank < r only.
"""
from __future__ import annotations

import ast
from pathlib import Path

import ipcsim

ROOT = Path(ipcsim.__file__).resolve().parent
PACKAGE = "ipcsim"


# ----------------------------------------------------------------------------------------------- the graph
def module_files(root: Path = ROOT, package: str = PACKAGE) -> dict[str, Path]:
    """{dotted module name: file} of every module under root (a package's name maps to its __init__.py)."""
    out = {}
    for path in sorted(root.rglob("*.py")):
        parts = [package, *path.relative_to(root).with_suffix("").parts]
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def _base(module: str, is_package: bool, level: int, name: str | None) -> str:
    """The absolute module of a (possibly relative) ``from`` import in ``module``."""
    if level == 0:
        return name or ""
    parts = module.split(".") if is_package else module.split(".")[:-1]
    parts = parts[: len(parts) - (level - 1)]
    return ".".join(parts + ([name] if name else []))


def _known(name: str, modules) -> str | None:
    """The longest prefix of ``name`` that is one of ``modules`` (``a.b.c`` -> ``a.b`` if c is a name in it)."""
    parts = name.split(".")
    for i in range(len(parts), 0, -1):
        candidate = ".".join(parts[:i])
        if candidate in modules:
            return candidate
    return None


def imports_of(module: str, path: Path, modules) -> set[str]:
    """The package modules that ``module`` (file ``path``) imports anywhere in its body."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    is_package = path.name == "__init__.py"
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = _base(module, is_package, node.level, node.module)
            # "from pkg import x": x is a submodule (imported) or a name defined in pkg
            targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base
                       for alias in node.names]
        else:
            continue
        for target in targets:
            known = _known(target, modules)
            if known is not None and known != module:
                found.add(known)
    return found


def module_graph(root: Path = ROOT, package: str = PACKAGE) -> dict[str, set[str]]:
    """{module: modules it imports} for every module of the package."""
    files = module_files(root, package)
    return {m: imports_of(m, p, files) for m, p in files.items()}


def part_of(module: str, package: str = PACKAGE) -> str:
    """The top-level part a module belongs to: ``ipcsim.contact.ccd.additive`` -> ``ipcsim.contact``."""
    return ".".join(module.split(".")[:2])


def part_graph(graph: dict[str, set[str]], package: str = PACKAGE) -> dict[str, set[str]]:
    """The module graph collapsed onto top-level parts (edges inside one part dropped; the package's own
    ``__init__`` is no part)."""
    out: dict[str, set[str]] = {}
    for module, targets in graph.items():
        if module == package:
            continue
        a = part_of(module, package)
        out.setdefault(a, set())
        out[a] |= {part_of(t, package) for t in targets if t != package and part_of(t, package) != a}
    return out


def find_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The cycles of a directed graph, one per strongly connected component with more than one node (or a
    self loop), each as a closed path through that component [a, b, ..., a]; [] when there are none."""
    index, low, on_stack, stack, comps = {}, {}, set(), [], []

    def connect(v):  # Tarjan's strongly connected components (graphs here are small: recursion is fine)
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                connect(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1 or v in graph.get(v, ()):
                comps.append(set(comp))

    for v in sorted(graph):
        if v not in index:
            connect(v)
    return [_cycle_in(graph, comp) for comp in comps]


def _cycle_in(graph, comp: set) -> list:
    """A closed path [start, ..., start] inside the strongly connected component ``comp``."""
    start = min(comp)
    parent, frontier = {start: None}, [start]
    while frontier:  # breadth first back to start, within the component
        nxt = []
        for v in frontier:
            for w in sorted(graph.get(v, ())):
                if w == start:
                    path = [v]
                    while parent[path[-1]] is not None:
                        path.append(parent[path[-1]])
                    return [*reversed(path), start]
                if w in comp and w not in parent:
                    parent[w] = v
                    nxt.append(w)
        frontier = nxt
    return [start, start]


def describe(cycles) -> str:
    return "\n".join("  " + " -> ".join(c) for c in cycles)


#: the layers, bottom (0) to top: a part imports only its own modules and parts of a lower rank. A new top-level
#: part must be placed here (the test names it otherwise).
RANKS = {
    "ipcsim.runtime": 0, "ipcsim.errors": 0,                      # plumbing: Numba, threads, scratch; SceneError
    "ipcsim.geometry": 1, "ipcsim.linalg": 1, "ipcsim.io": 1,     # meshes; factorization, CSR; frames on disk
    "ipcsim.contact": 2,                                          # distances, barrier, CCD, friction
    "ipcsim.energies": 3,                                         # elasticity, shape targeting
    "ipcsim.model": 4,                                            # Model, builder, embedding, sanity check
    "ipcsim.solvers": 5,                                          # Newton loop, terms, integrators
    "ipcsim.face": 6,                                             # the face system (PD + IPC)
    "ipcsim.scene": 7,                                            # scene files -> Simulation
    "ipcsim.demos": 8,                                            # built-in demos
    "ipcsim.app": 9,                                              # run loop, render, plots, viewer, export
    "ipcsim.sweep": 10,                                           # parameter sweeps
    "ipcsim.cli": 11, "ipcsim.__main__": 12,                      # the command line
}


def upward_imports(graph: dict[str, set[str]], ranks: dict[str, int], package: str = PACKAGE) -> list[str]:
    """Every import of ``graph`` (module -> modules) from a part to another part of the same or a higher rank,
    and every part without a rank, as lines "a (rank) -> b (rank)"; [] when all point down."""
    bad = []
    for module in sorted(graph):
        if module == package:
            continue
        a = part_of(module, package)
        if a not in ranks:
            bad.append(f"{module}: part {a} has no rank")
            continue
        for target in sorted(graph[module]):
            b = part_of(target, package)
            if target == package or b == a:
                continue
            if b not in ranks:
                bad.append(f"{module} -> {target}: part {b} has no rank")
            elif ranks[b] >= ranks[a]:
                bad.append(f"{module} ({ranks[a]}) -> {target} ({ranks[b]})")
    return bad


# ----------------------------------------------------------------------------------------------- tests
def test_upward_imports_on_a_hand_made_graph():
    graph = {"p.low.a": {"p.low.b"}, "p.low.b": set(), "p.mid": {"p.low.a", "p.top"}, "p.top": {"p.mid"},
             "p.side": {"p.mid"}, "p.new": set()}
    ranks = {"p.low": 0, "p.mid": 1, "p.top": 2, "p.side": 1}
    assert upward_imports(graph, ranks, "p") == ["p.mid (1) -> p.top (2)", "p.new: part p.new has no rank",
                                                 "p.side (1) -> p.mid (1)"]
    assert upward_imports({"p.top": {"p.mid", "p.low.a"}, "p.mid": {"p.low.b"}}, ranks, "p") == []


def test_imports_point_down_by_layer_rank():
    bad = upward_imports(module_graph(), RANKS)
    assert not bad, "imports that do not point down the layers (RANKS):\n  " + "\n  ".join(bad)


def test_find_cycles_on_a_hand_made_graph():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": set(), "e": {"e"}, "f": {"d"}}
    cycles = find_cycles(graph)
    assert sorted(map(tuple, cycles)) == [("a", "b", "c", "a"), ("e", "e")]
    assert find_cycles({"a": {"b"}, "b": {"c"}, "c": set()}) == []


def test_imports_are_resolved(tmp_path):
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("from .a import f\n")
    (pkg / "a.py").write_text("def f():\n    from .sub import b\n    from . import c\n")
    (pkg / "c.py").write_text("import pkg.sub.b as bb\nimport numpy\n")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "sub" / "b.py").write_text("from ..a import f\nfrom .. import c\n")
    graph = module_graph(pkg, "pkg")
    assert graph == {"pkg": {"pkg.a"}, "pkg.a": {"pkg.sub.b", "pkg.c"}, "pkg.c": {"pkg.sub.b"},
                     "pkg.sub": set(), "pkg.sub.b": {"pkg.a", "pkg.c"}}
    assert sorted(map(tuple, find_cycles(graph))) == [("pkg.a", "pkg.sub.b", "pkg.a")]
    assert part_graph(graph, "pkg") == {"pkg.a": {"pkg.sub", "pkg.c"}, "pkg.c": {"pkg.sub"},
                                        "pkg.sub": {"pkg.a", "pkg.c"}}


def test_no_import_cycle_between_modules():
    graph = module_graph()
    cycles = find_cycles(graph)
    assert not cycles, "import cycles between modules:\n" + describe(cycles)


def test_no_import_cycle_between_top_level_parts():
    graph = part_graph(module_graph())
    cycles = find_cycles(graph)
    assert not cycles, "import cycles between the top-level parts of ipcsim:\n" + describe(cycles)


def test_the_face_package_sits_below_the_scene_and_above_the_solvers():
    """``ipcsim.face`` (the face's model, data, scenes, solver and runner) is imported by the scene loader and the
    CLI only, and imports neither of them (its scene errors come from the bottom module ``ipcsim.errors``); the
    layers below it (solvers, energies, contact, geometry, model, errors) never import it."""
    graph = part_graph(module_graph())
    face = "ipcsim.face"
    assert face in graph
    assert not graph[face] & {"ipcsim.scene", "ipcsim.cli"}, sorted(graph[face])
    users = {part for part, targets in graph.items() if face in targets}
    below = {"ipcsim.solvers", "ipcsim.energies", "ipcsim.contact", "ipcsim.geometry", "ipcsim.model",
             "ipcsim.errors", "ipcsim.runtime"}
    assert not users & below, sorted(users & below)
    assert graph["ipcsim.errors"] == set()
