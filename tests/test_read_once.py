"""The configuration files are read once per command: detected values (netdev, hca, a node's home)
and interactive edits re-layer what was read (settings/resolve.py relayer), they never read or
validate a file again. Counted as real reads: the interpreter's own `open` audit events in a real
`spark-tui status --watch` against the namespace test cluster, and the one YAML reader in the
cockpit's core."""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import time

import pytest

from spark_tui import paths
from spark_tui.settings import yamlfile
from tests.helpers import ROOT

# The command as a user runs it, with an audit hook that counts every open() of the watched files
# (whoever opens them: the resolver, a theme check, anything) and says the counts at exit.
COUNTING_MAIN = """
import atexit, json, os, sys
watched = set(json.loads(os.environ["READ_ONCE_WATCH"]))
opens = {}
def hook(event, args):
    if event == "open" and isinstance(args[0], (str, bytes, os.PathLike)):
        path = os.path.abspath(os.fsdecode(args[0]))
        if path in watched:
            opens[path] = opens.get(path, 0) + 1
sys.addaudithook(hook)
atexit.register(lambda: sys.stderr.write("OPENS " + json.dumps(opens) + "\\n"))
from spark_tui.cli.main import main
sys.exit(main(sys.argv[1:]))
"""


def watch_rounds(
    argv: list[str], env: dict[str, str], rounds: int, timeout: float = 120.0
) -> tuple[int, str]:
    """Run `spark-tui ARGV` (JSON rounds), interrupt it (Ctrl-C) after `rounds` whole rounds."""
    proc = subprocess.Popen(
        [sys.executable, "-c", COUNTING_MAIN, *argv],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        text=True,
    )
    assert proc.stdout is not None and proc.stderr is not None
    done, deadline = 0, time.monotonic() + timeout
    try:
        while done < rounds:
            ready, _, _ = select.select([proc.stdout], [], [], max(0.0, deadline - time.monotonic()))
            line = proc.stdout.readline() if ready else ""
            if not line:
                raise AssertionError(f"{done} rounds before the command ended or {timeout:.0f} s passed")
            done += line == "}\n"  # a round's JSON document ends with its closing brace alone
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    return done, err


@pytest.mark.cluster
def test_status_watch_reads_each_file_once_over_three_rounds(cluster, tmp_path):
    path = cluster.cluster_file(2, tmp_path / "two.yaml")  # no netdev, hca: detected every round
    xdg = tmp_path / "xdg"
    (xdg / "spark-tui").mkdir(parents=True)
    user = xdg / "spark-tui" / "config.yaml"
    user.write_text("refresh_interval: 0.2\n")
    assert paths.user_config_file({"XDG_CONFIG_HOME": str(xdg)}) == str(user)
    themes = [str(p) for p in sorted(paths.PACKAGE_THEMES.glob("*.yaml"))]
    watched = [os.path.abspath(path), str(user), *themes]
    env = {k: v for k, v in os.environ.items() if not k.startswith("SPARK_TUI_")}
    env |= {
        "XDG_CONFIG_HOME": str(xdg),
        "HOME": str(tmp_path),
        "PYTHONPATH": str(ROOT),
        "READ_ONCE_WATCH": json.dumps(watched),
    }
    rounds, err = watch_rounds(["status", "--watch", "--json", "--cluster", path], env, rounds=3)
    assert rounds == 3
    opens = json.loads(next(line for line in err.splitlines() if line.startswith("OPENS "))[6:])
    assert opens == {file: 1 for file in watched}, err


@pytest.mark.cluster
def test_the_cockpit_core_reads_no_file_on_refresh_detection_or_edit(cluster, tmp_path, monkeypatch):
    """Each node's first refresh brings detected values, an edit the interactive layer: both
    re-layer the configuration read once, and every part reads it where the nodes hold it."""
    import asyncio

    from spark_tui.core.cockpit import CockpitCore
    from spark_tui.settings.resolve import Inputs, resolve

    path = cluster.cluster_file(2, tmp_path / "two.yaml")
    config = resolve(Inputs(cluster_file=path, user_config="", environ={}))
    reads: list[str] = []
    real = yamlfile.load
    monkeypatch.setattr(yamlfile, "load", lambda p: reads.append(p) or real(p))
    names = [n.name for n in cluster.nodes[:2]]

    async def go():
        core = CockpitCore(config)
        try:
            for name in names:
                await core.refresh(name)
            detected = core.config
            core.edit("model", "test/another-model")
            return detected, core
        finally:
            await core.close()

    detected, core = asyncio.run(go())
    assert reads == []
    worker = detected.node(names[1])
    assert worker["netdev"] and worker.values["netdev"].source.layer == "detected"
    assert (
        core.config["model"] == "test/another-model"
        and core.config.node(names[1])["netdev"] == worker["netdev"]
    )
    assert core.nodes.config is core.config and core.monitor.config is core.config


def test_relayer_reads_no_file(tmp_path, monkeypatch):
    """Detected values and edits on top of the layers read once: the files may be gone."""
    from spark_tui.settings.model import Detected, Found
    from spark_tui.settings.resolve import Inputs, relayer, resolve

    path = tmp_path / "c.yaml"
    path.write_text("image: a:1\nnodes:\n  - {name: a, host: 10.0.0.1}\n  - {name: b, host: 10.0.0.2}\n")
    config = resolve(Inputs(cluster_file=str(path), user_config="", environ={}))
    path.unlink()
    monkeypatch.setattr(yamlfile, "load", lambda p: pytest.fail(f"{p} read again"))
    found = Detected(
        netdev=Found("enp1", "on b: the interface holding 10.0.0.2"), home=Found("/home/u", "$HOME")
    )
    again = relayer(config, detected={"b": found})
    edited = relayer(again, interactive={"image": "b:2"})
    b = edited.node("b")
    assert (b["netdev"], b.values["netdev"].source.layer, b.home) == ("enp1", "detected", "/home/u")
    assert edited["image"] == "b:2" and edited.values["image"].source.layer == "interactive"
    assert edited.files_read == [str(path)] and relayer(edited, interactive={})["image"] == "a:1"


def test_the_commands_open_their_cluster_one_way():
    """load → nodes → detect is open_cluster's alone: no command builds Nodes or detects itself."""
    import ast

    from tests.helpers import ROOT as root

    for name in ("commands.py", "bench.py", "upgrade.py", "main.py"):
        tree = ast.parse((root / "spark_tui" / "cli" / name).read_text())
        owners = {
            id(inner): outer.name
            for outer in ast.walk(tree)
            if isinstance(outer, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
            for inner in ast.walk(outer)
        }
        calls = [
            (node.func.id, owners.get(id(node)))
            for node in ast.walk(tree)
            if isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in ("Nodes", "with_detected")
        ]
        assert all(owner in ("open_cluster", "__aenter__", "detect") for _, owner in calls), (name, calls)
