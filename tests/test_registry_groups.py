"""The registry owns its groups: every setting name the code looks up is declared there, and no
list of setting names lives anywhere else (AST over spark_tui's source)."""

from __future__ import annotations

import ast
from pathlib import Path

from spark_tui.settings.registry import SETTINGS

PACKAGE = Path(__file__).resolve().parent.parent / "spark_tui"
KEYS = {s.key for s in SETTINGS}
# What a configuration or a node's configuration is called where it is read. diagnose/ and parsers/
# read pasted text and node output, never the configuration.
HOLDERS = {"config", "cfg", "node", "n", "head", "worker", "node_cfg", "before"}
NO_CONFIG_HERE = ("diagnose", "parsers", "knowledge")


def sources() -> list[tuple[Path, ast.Module]]:
    return [
        (p, ast.parse(p.read_text()))
        for p in sorted(PACKAGE.rglob("*.py"))
        if p.relative_to(PACKAGE).parts[0] not in NO_CONFIG_HERE
    ]


def _holder(expr: ast.expr) -> bool:
    """`config[...]`, `self.config[...]`, `node[...]`, `x.values[...]`, `config.node(n)[...]`."""
    if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and expr.func.attr == "node":
        return True
    if isinstance(expr, ast.Attribute):
        return expr.attr in HOLDERS or expr.attr == "values" and _holder(expr.value)
    return isinstance(expr, ast.Name) and expr.id in HOLDERS


def literal_lookups() -> list[tuple[str, int, str]]:
    found = []
    for path, tree in sources():
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Subscript)
                and isinstance(node.slice, ast.Constant)
                and isinstance(node.slice.value, str)
                and _holder(node.value)
            ):
                found.append((str(path.relative_to(PACKAGE)), node.lineno, node.slice.value))
    return found


def test_every_literal_setting_lookup_is_in_the_registry():
    lookups = literal_lookups()
    assert len(lookups) > 100  # the finder sees the lookups (config["image"], node["host"], ...)
    unknown = [f"{path}:{line}: {key!r}" for path, line, key in lookups if key not in KEYS]
    assert unknown == []


def test_the_finder_flags_a_lookup_the_registry_lacks():
    tree = ast.parse(
        'def f(config, node):\n    return config["imgae"], node.values["netdve"], config["image"]\n'
    )
    seen = [
        n.slice.value
        for n in ast.walk(tree)
        if isinstance(n, ast.Subscript) and isinstance(n.slice, ast.Constant) and _holder(n.value)
    ]
    assert seen == ["imgae", "netdve", "image"] and [k for k in seen if k not in KEYS] == ["imgae", "netdve"]


# Literal collections whose strings happen to be setting names but name something else.
NOT_SETTING_LISTS = {
    ("cli/main.py", ("image", "model")): "what `sync` copies",
    ("core/bench/bench_store.py", ("image_id", "config_hash", "model", "revision", "nodes", "executor")): (
        "fields of a bench run's provenance record"
    ),
    ("settings/model.py", ("default", "detected", "user", "cluster", "env", "flag", "interactive")): (
        "the layers, in precedence order"
    ),
}


def test_no_list_of_setting_names_outside_the_registry():
    """A group of settings (connection, detected, cockpit-only, the ports check frees, ...) is a
    property in the registry, derived where it is used: a new setting joins its group by its
    declaration, not by someone remembering a tuple elsewhere."""
    found = []
    for path, tree in sources():
        where = str(path.relative_to(PACKAGE))
        if where == "settings/registry.py":
            continue
        for node in ast.walk(tree):
            if not isinstance(node, (ast.Tuple, ast.List, ast.Set)):
                continue
            names = tuple(
                e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)
            )
            if sum(name in KEYS for name in names) >= 2 and (where, names) not in NOT_SETTING_LISTS:
                found.append(f"{where}:{node.lineno}: {names}")
    assert found == []


def test_typed_groups_match_the_registry():
    import dataclasses

    from spark_tui.settings.model import Detected, Timeouts
    from spark_tui.settings.registry import CONNECTION_KEYS, DETECTED_KEYS, TIMEOUT_KEYS

    assert (
        {f.name for f in dataclasses.fields(Detected)} - {"home", "model_complete"}
        == set(DETECTED_KEYS)
        == {"netdev", "hca"}
    )
    assert {f"timeouts.{f.name}" for f in dataclasses.fields(Timeouts)} == set(TIMEOUT_KEYS)
    assert (
        "host" in CONNECTION_KEYS and "docker_socket" in CONNECTION_KEYS and "data_ip" not in CONNECTION_KEYS
    )


def test_timeouts_are_read_typed_from_the_resolved_configuration():
    from spark_tui.settings.model import Timeouts
    from spark_tui.settings.resolve import Inputs, resolve

    config = resolve(
        Inputs(
            user_config="",
            environ={"SPARK_TUI_TIMEOUTS_READY": "90"},
            flags={"timeouts.ray_join": (7, "--x")},
        )
    )
    assert config.timeouts == Timeouts(container=120.0, ray_join=7.0, nccl_init=300.0, ready=90.0)
