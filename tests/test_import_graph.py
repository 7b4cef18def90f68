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
    assert "spark_tui.settings.resolve" in graph["spark_tui.cli"] or any(
        "spark_tui.settings" in t for t in graph["spark_tui.cli"]
    )


def test_no_import_cycles():
    assert cycles(import_graph()) == []


def test_core_and_parsers_know_no_textual():
    for path in list((PACKAGE / "core").rglob("*.py")) + list((PACKAGE / "parsers").rglob("*.py")):
        tree = ast.parse(path.read_text())
        names = [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
        names += [n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)]
        assert not [n for n in names if n.startswith(("textual", "spark_tui.ui"))], path
