"""Events say themselves (core/launch/events.py), shown by the core's one rule (inert, then masked):
the CLI and the wizard print the same words for every event type, and no face masks on its own."""

import asyncio
import importlib
import inspect
import pkgutil
import re
import typing
from pathlib import Path
from types import SimpleNamespace

from textual.app import App
from textual.widgets import Log

import spark_tui
from spark_tui.cli.commands import _event_printer
from spark_tui.core.launch import events as ev
from spark_tui.core.launch.launch import Launch
from spark_tui.core.node.redact import Redactor
from spark_tui.core.sync.sync import _Run
from spark_tui.ui.messages import LaunchProgress
from spark_tui.ui.screens.wizard.launch import LaunchStep
from tests.frozen import FrozenCore, cluster_config

TOKEN = "hf_EventWordsSecret987"
# What a node may say: the token, an escape sequence that would clear a terminal, a bell.
HOSTILE = f"\x1b[2Jsaid HF_TOKEN={TOKEN} \x07and --api-key sk-{TOKEN[3:]}"


def samples() -> list:
    """One event of every type a launch, sync or teardown emits, each carrying node text."""
    net = ev.NcclNet("spark-2", "warn", f"NCCL: Socket (TCP, not RoCE): {HOSTILE}")
    return [
        ev.Stage("spark-2", "vllm", "progress", HOSTILE, 3.25, 0.5),
        ev.Stage("cluster", "ray_join", "done", "2 nodes", 6.2),
        net,
        ev.Memory("spark-2", 121_000.0, 60_000.0, 12.0),
        ev.Diagnosis("spark-2", "hub.gated", "error", f"gated {HOSTILE}", f"fix {HOSTILE}", HOSTILE),
        ev.Ready("http://10.231.0.11:8000/v1", "Qwen/Qwen3-30B-A3B", 96.4, [net]),
        ev.Failed(f"vLLM exited: {HOSTILE}", [HOSTILE, "last line"]),
        ev.Removed("spark-1", "vllm_node", HOSTILE),
        ev.StillHolding("spark-2", "vllm_node", f"could not remove: {HOSTILE}"),
        ev.Restart("spark-1", f"container exited with code 137: {HOSTILE}", 1, 3, 600.0),
        ev.DriftItem("spark-1", "env NOTE", HOSTILE, "(unset)"),
        ev.KernelLogLost("spark-2", f"connection lost: {HOSTILE}"),
        ev.KernelLogGap("spark-2", "2026-12-03T23:35:02,123456+00:00", HOSTILE),
    ]


def test_the_samples_walk_every_event_type():
    every = set(typing.get_args(ev.LaunchEvent)) | set(typing.get_args(ev.TeardownEvent))
    assert {type(e) for e in samples()} == every


def wizard_log(core, events) -> list[str]:
    """The lines the wizard's launch step writes in its log for `events`."""

    class Harness(App):
        def compose(self):
            yield LaunchStep(core, id="launch")

    async def flow():
        app = Harness()
        async with app.run_test(size=(160, 50)) as pilot:
            step = app.query_one(LaunchStep)
            for e in events:
                step.post_message(LaunchProgress(e))
            await pilot.pause(0.3)
            return list(step.query_one("#launch-log", Log).lines)

    return asyncio.run(flow())


def test_every_event_type_says_the_same_words_in_the_cli_and_the_wizard(capsys):
    config, reconfigure = cluster_config(2, {"SPARK_TUI_HF_TOKEN": TOKEN})
    emitted: list = []
    # The core's own emit paths (a launch's, a sync's): every event leaves them shown.
    # only the launch's emit is used: its nodes need hold nothing but the configuration
    launch_emit = Launch(config, SimpleNamespace(config=config), emitted.append).emit  # type: ignore[arg-type]
    sync_emit = _Run(config, None, emitted.append, "sync_image").emit  # type: ignore[arg-type]
    for i, e in enumerate(samples()):
        (launch_emit if i % 2 else sync_emit)(e)
    assert [type(e) for e in emitted] == [type(e) for e in samples()]

    printer = _event_printer(False, Redactor(lambda: config))
    for e in emitted:
        printer(e)
    cli = capsys.readouterr().out.splitlines()
    wizard = wizard_log(FrozenCore(config, reconfigure), emitted)

    assert wizard == cli
    assert len(cli) == sum(len(e.lines()) for e in emitted) > len(emitted)
    for line in cli:
        assert TOKEN not in line and TOKEN[3:] not in line, line
        assert "\x1b" not in line and "\x07" not in line, repr(line)
    assert any("HF_TOKEN=*** ^Gand --api-key ***" in line for line in cli), cli
    # Words the CLI printed before events said themselves.
    assert "[   3.2s] spark-2    vllm       progress 50% said HF_TOKEN=***" in cli[0]
    assert "[  12.0s] spark-2    memory     58.6 of 118.2 GiB available" in cli
    assert "READY in 96.4 s: Qwen/Qwen3-30B-A3B at http://10.231.0.11:8000/v1" in cli
    assert "    fix: fix said HF_TOKEN=*** ^Gand --api-key ***" in cli


def test_a_shown_event_is_shown_again_unchanged():
    """The JSON printer masks what the core already showed: the second pass changes nothing."""
    config, _ = cluster_config(2, {"SPARK_TUI_HF_TOKEN": TOKEN})
    show = Redactor(lambda: config).show
    for e in samples():
        once = e.shown(show)
        assert once.shown(show) == once
        assert TOKEN not in repr(once)


REDACTOR_PARAMETERS = {"redact", "redactor", "show", "mask"}


def test_no_redactor_defaults_to_the_identity():
    """A parameter that takes the masking rule has no default (None, a lambda): none can be left
    out and show secrets. Every function and method of the package is looked at."""
    found = []
    for info in pkgutil.walk_packages(spark_tui.__path__, "spark_tui."):
        if info.name.endswith("__main__"):
            continue  # runs the CLI when imported
        module = importlib.import_module(info.name)
        for _, obj in inspect.getmembers(module):
            if getattr(obj, "__module__", None) != info.name:
                continue
            functions = [obj] if inspect.isfunction(obj) else []
            if inspect.isclass(obj):
                functions += [f for _, f in inspect.getmembers(obj, inspect.isfunction)]
            for fn in functions:
                for p in inspect.signature(fn).parameters.values():
                    if p.name in REDACTOR_PARAMETERS:
                        found.append((info.name, fn.__qualname__, p.name, p.default))
    assert found, "the walk found no redactor parameter at all"
    # A flag of that name (`show=True` of a key binding) is no redactor; None or a function is one.
    defaulted = [f for f in found if f[3] is not inspect.Parameter.empty and (f[3] is None or callable(f[3]))]
    assert not defaulted, defaulted


def test_the_logs_screen_masks_with_the_cores_rule():
    from spark_tui.ui.screens.logs import LogsScreen

    config, reconfigure = cluster_config(2, {"SPARK_TUI_HF_TOKEN": TOKEN})
    screen = LogsScreen(FrozenCore(config, reconfigure), [("spark-1", "vllm_node")])
    assert screen.redact(HOSTILE) == "said HF_TOKEN=*** ^Gand --api-key ***"


def test_the_mask_is_written_in_one_place():
    root = Path(spark_tui.__file__).parent
    written = [
        f"{path.relative_to(root)}:{n}"
        for path in root.rglob("*.py")
        for n, line in enumerate(path.read_text().splitlines(), 1)
        if re.search(r"""["']\*\*\*["']""", line)
    ]
    assert [w.split(":")[0] for w in written] == ["secret_names.py"], written
