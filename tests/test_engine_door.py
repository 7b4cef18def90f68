"""One door to a node's engine, errors as values, one error tree.

Over the source: the Docker SDK's failures are matched in one module (`core/node/engines.py`, under
`Nodes.docker`), no module fans out over the nodes by hand (`Nodes.each` does), there is no
public `Nodes.engine`, and every exception class is in the one documented tree. On the namespace
test cluster: a stopped dockerd is an `EngineError` naming the node, a 404 passes unchanged, and
the client dropped after the failure is built again once the engine is back."""

from __future__ import annotations

import ast
import asyncio
import inspect
from pathlib import Path

import docker
import pytest
import requests

from spark_tui import errors
from spark_tui.core.node.nodes import Nodes
from spark_tui.errors import EngineError, NodeError, SparkTuiError
from tests.test_launch import config_for

ROOT = Path(__file__).resolve().parent.parent
SOURCES = sorted([*(ROOT / "spark_tui").rglob("*.py"), *(ROOT / "bench").rglob("*.py")])
DOOR = ROOT / "spark_tui" / "core" / "node" / "engines.py"
FAN_OUT = ROOT / "spark_tui" / "core" / "node" / "nodes.py"
# Fan-outs over something other than the nodes: one task per image (each bounded per node), one
# per load-generating client.
NOT_OVER_NODES = {"spark_tui/core/image_table.py", "spark_tui/core/bench/loadgen.py"}


def trees():
    for path in SOURCES:
        yield path, ast.parse(path.read_text(), str(path))


def rel(path: Path) -> str:
    return str(path.relative_to(ROOT))


def names_in(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)} | {
        n.attr for n in ast.walk(node) if isinstance(n, ast.Attribute)
    }


def test_engine_errors_are_matched_in_one_module():
    matching = {
        rel(path)
        for path, tree in trees()
        for n in ast.walk(tree)
        if isinstance(n, ast.ExceptHandler) and n.type is not None and "ENGINE_ERRORS" in names_in(n.type)
    }
    assert matching == {rel(DOOR)}
    # Nor is the tuple handed around to be matched elsewhere.
    mentioned = {rel(path) for path, tree in trees() if "ENGINE_ERRORS" in names_in(tree)}
    assert mentioned == {rel(DOOR)}


def fan_outs(tree: ast.AST) -> list[str]:
    """`asyncio.gather(*(... for x in xs))` calls, and nested `async def one...` helpers."""
    found = []
    for n in ast.walk(tree):
        if isinstance(n, ast.Call) and ast.unparse(n.func) == "asyncio.gather":
            for arg in n.args:
                if isinstance(arg, ast.Starred) and isinstance(arg.value, (ast.GeneratorExp, ast.ListComp)):
                    found.append(f"line {n.lineno}: {ast.unparse(n)[:80]}")
        if isinstance(n, ast.AsyncFunctionDef) and n.name in ("one", "one_node"):
            found.append(f"line {n.lineno}: async def {n.name}")
    return found


def test_no_hand_written_fan_out_remains():
    by_hand = {
        rel(path): found
        for path, tree in trees()
        if path != FAN_OUT and rel(path) not in NOT_OVER_NODES and (found := fan_outs(tree))
    }
    assert by_hand == {}
    # The scan sees a fan-out when there is one: Nodes.each is one.
    assert fan_outs(ast.parse(FAN_OUT.read_text()))


def test_the_engine_client_is_reached_only_through_the_door():
    assert not hasattr(Nodes, "engine"), "Nodes.engine is private: use Nodes.docker"
    calls = [
        f"{rel(path)}:{n.lineno}"
        for path, tree in trees()
        for n in ast.walk(tree)
        if isinstance(n, ast.Call)
        and isinstance(n.func, ast.Attribute)
        and n.func.attr in ("engine", "_engine", "with_engine")
        and ast.unparse(n.func.value) != "engines"  # the door's own module, inside the door
        or isinstance(n, ast.Call)
        and isinstance(n.func, ast.Attribute)
        and ast.unparse(n.func) == "engines.engine"
        and path != DOOR
    ]
    assert calls == []


def test_every_exception_class_is_in_the_one_documented_tree():
    classes = [
        f"{rel(path)}:{n.name}"
        for path, tree in trees()
        for n in ast.walk(tree)
        if isinstance(n, ast.ClassDef)
        and any(ast.unparse(b).endswith(("Error", "Exception")) for b in n.bases)
    ]
    assert classes and all(c.startswith("spark_tui/errors.py:") for c in classes), classes
    tree = {
        name: cls for name, cls in vars(errors).items() if inspect.isclass(cls) and issubclass(cls, Exception)
    }
    assert all(issubclass(cls, SparkTuiError) for cls in tree.values())
    drawn = errors.__doc__ or ""
    assert all(f"── {name} " in drawn for name in tree if name != "SparkTuiError"), drawn
    assert issubclass(EngineError, NodeError)


@pytest.mark.cluster
def test_a_stopped_engine_is_an_engine_error_naming_the_node_and_the_client_reconnects(cluster, tmp_path):
    config = config_for(cluster, 2, tmp_path)
    head, worker = cluster.nodes[0].name, cluster.nodes[1]

    async def scenario():
        async with Nodes(config) as nodes:
            first = await nodes.docker(worker.name, lambda c: c)
            with pytest.raises(docker.errors.NotFound) as answer:
                await nodes.docker(worker.name, lambda c: c.containers.get("no-such-container"))
            kept = await nodes.docker(worker.name, lambda c: c)
            # In a fan-out, an answer nobody handled is that node's error, beside the others' results.
            unhandled = await nodes.each(
                lambda n: nodes.docker(n, lambda c: c.containers.get("no-such-container"))
            )
            cluster.stop_dockerd(worker)
            try:
                with pytest.raises(EngineError) as failure:
                    await nodes.docker(worker.name, lambda c: c.containers.list())
                pinged = await nodes.each(lambda n: nodes.docker(n, lambda c: c.ping()))
                with pytest.raises(EngineError) as all_needed:
                    await nodes.every(lambda n: nodes.docker(n, lambda c: c.ping()))
            finally:
                cluster.start_dockerd(worker)
            rebuilt = await nodes.docker(worker.name, lambda c: c)
            answered = await nodes.docker(worker.name, lambda c: c.ping())
            return (
                first,
                answer.value,
                kept,
                unhandled,
                failure.value,
                pinged,
                all_needed.value,
                rebuilt,
                answered,
            )

    first, answer, kept, unhandled, failure, pinged, all_needed, rebuilt, answered = asyncio.run(scenario())
    # A 404 is an answer of a working engine: unchanged, and the client is kept.
    assert type(answer) is docker.errors.NotFound and kept is first
    assert [(n, type(e), e.node) for n, e in unhandled.items()] == [
        (n, NodeError, n) for n in (head, worker.name)
    ]
    assert all("no-such-container" in e.reason for e in unhandled.values())
    # The stopped engine: one EngineError naming the node, the SDK's failure as its cause.
    assert failure.node == worker.name and str(failure).startswith(f"{worker.name}: ")
    assert isinstance(failure.__cause__, (requests.exceptions.RequestException, OSError))
    assert failure.reason and "\x1b" not in failure.reason
    # Errors as values: the head answered, the worker's failure is its value.
    assert pinged[head] is True and isinstance(pinged[worker.name], EngineError)
    assert list(pinged) == [head, worker.name]
    assert all_needed.node == worker.name
    # The failed client was dropped: once the engine is back, the next call built a new one.
    assert rebuilt is not first and answered is True
