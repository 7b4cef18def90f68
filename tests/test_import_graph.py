"""The package's modules import downwards only: no circle, however deep, and none through a
function-level import. A circle means two rooms that cannot be understood (or changed) apart."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "spark_tui"


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph() -> dict[str, set[str]]:
    modules = {module_name(p): p for p in PACKAGE.rglob("*.py")}
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text())):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    base = ".".join(
                        package.split(".")[: len(package.split(".")) - node.level + 1]
                        + ([base] if base else [])
                    )
                targets = [base] + [f"{base}.{a.name}" for a in node.names]
            for target in targets:
                if target in modules and target != name:
                    graph[name].add(target)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every elementary circle found by depth-first search (each reported once, from its smallest name)."""
    found: set[tuple[str, ...]] = set()

    def visit(start: str, node: str, path: list[str]) -> None:
        for nxt in graph[node]:
            if nxt == start:
                found.add(tuple(path))
            elif nxt > start and nxt not in path:
                visit(start, nxt, path + [nxt])

    for start in sorted(graph):
        visit(start, start, [start])
    return [list(c) + [c[0]] for c in sorted(found)]


def test_graph_sees_imports():
    graph = import_graph()
    assert "spark_tui.settings.resolve" in graph["spark_tui.cli.main"] or any(
        "spark_tui.settings" in t for t in graph["spark_tui.cli.main"]
    )


def test_no_import_cycles():
    assert cycles(import_graph()) == []


def test_core_and_parsers_know_no_textual():
    for path in list((PACKAGE / "core").rglob("*.py")) + list((PACKAGE / "parsers").rglob("*.py")):
        tree = ast.parse(path.read_text())
        names = [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
        names += [n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)]
        assert not [n for n in names if n.startswith(("textual", "spark_tui.ui"))], path


# The rooms, bottom to top: a module imports only from its own room or rooms below it. Rooms on
# one line are side by side (neither imports the other). The cockpit core (core/cockpit.py and
# the operations over everything: monitor, image_table, bench_run, upgrade) sits on core's top.
LAYERS = [
    ["spark_tui", "spark_tui.parsers.text", "spark_tui.secret_names", "spark_tui.paths"],
    ["spark_tui.errors"],
    ["spark_tui.parsers"],
    ["spark_tui.settings", "spark_tui.knowledge"],
    ["spark_tui.diagnose"],
    ["spark_tui.core.node"],
    ["spark_tui.core.models"],
    ["spark_tui.core.launch"],
    ["spark_tui.core.images", "spark_tui.core.sync"],
    ["spark_tui.core.fabric"],
    ["spark_tui.core.bench"],
    ["spark_tui.core.serving"],
    ["spark_tui.core.report"],
    ["spark_tui.core"],
    ["spark_tui.ui"],
    ["spark_tui.cli"],
    ["spark_tui.__main__"],
]


def room_of(module: str) -> tuple[int, str]:
    """The layer and room of a module: the longest room name it falls under."""
    best = (-1, "")
    for level, rooms in enumerate(LAYERS):
        for room in rooms:
            if (module == room or module.startswith(room + ".")) and len(room) > len(best[1]):
                best = (level, room)
    return best


def test_every_module_is_in_a_room():
    assert [m for m in import_graph() if room_of(m)[0] < 0] == []


def test_rooms_import_only_downwards():
    wrong = []
    for module, targets in import_graph().items():
        level, room = room_of(module)
        for target in targets:
            t_level, t_room = room_of(target)
            if t_room != room and t_level >= level:
                wrong.append(f"{module} -> {target}")
    assert wrong == []


def test_nothing_outside_the_cli_imports_it():
    assert [
        f"{m} -> {t}"
        for m, targets in import_graph().items()
        for t in targets
        if t.startswith("spark_tui.cli") and not m.startswith(("spark_tui.cli", "spark_tui.__main__"))
    ] == []


def test_the_layer_test_sees_a_wrong_import():
    assert room_of("spark_tui.core.node.nodes")[0] < room_of("spark_tui.core.launch.launch")[0]
    assert room_of("spark_tui.core.cockpit")[1] == "spark_tui.core"
    assert (
        room_of("spark_tui.parsers.text")[0]
        < room_of("spark_tui.errors")[0]
        < room_of("spark_tui.parsers.nccl")[0]
    )
