"""Drives the cockpit by keyboard (Textual's pilot) where it is started: run by
tests/test_solo_node.py inside a namespace node, with no cluster file, so the cockpit is the one
a lone Spark's owner opens. `python -m tests.solo_cockpit IMAGE [spark-tui flags...]`: from the
wizard's image step (IMAGE picked from the listed images) through check and review to READY,
then teardown from the dashboard; prints what it saw as one JSON object on stdout."""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time

from spark_tui.cli.commands import build_app
from spark_tui.cli.main import _SettingsNamespace, build_parser
from spark_tui.ui.messages import JobDone
from spark_tui.ui.screens.dialogs import ConfirmTeardown
from spark_tui.ui.screens.wizard import WizardScreen


async def until(pilot, condition, what: str, timeout: float = 90.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")
        await pilot.pause(0.1)


def main(image: str, argv: list[str]) -> dict:
    args = build_parser().parse_args(argv, namespace=_SettingsNamespace())
    app = build_app(args, dict(os.environ))
    seen: dict = {}
    messages: list = []

    def teardown_done() -> list[bool]:
        return [m.ok for m in messages if isinstance(m, JobDone) and m.job == "teardown"]

    async def flow() -> None:
        async with app.run_test(size=(120, 40), message_hook=messages.append) as pilot:
            node = app.core.config.nodes[0].name
            seen["node"], seen["executor"] = node, app.core.config["executor"]
            seen["executor_source"] = str(app.core.config.values["executor"].source)
            await until(pilot, lambda: node in app.views and app.views[node].snapshot.reachable, "the pane")
            await pilot.press("w")
            wizard = app.screen
            assert isinstance(wizard, WizardScreen)
            table = wizard.query_one("#images")
            await until(pilot, lambda: image in [k.value for k in table.rows], "the image list")
            seen["images"] = [k.value for k in table.rows]
            table.move_cursor(row=table.get_row_index(image))
            await pilot.press("enter")
            seen["image_source"] = app.core.config.values["image"].source.layer
            await until(pilot, lambda: not wizard.check_running and wizard.check_results, "the check")
            seen["checks"] = {r.id: [r.status, r.message] for r in wizard.check_results}
            await pilot.press("n")
            seen["review"] = wizard.step
            await pilot.press("n")
            await until(pilot, lambda: wizard.launch_state in ("ready", "failed"), "the launch", 120)
            seen["launch_state"] = wizard.launch_state
            seen["banner"] = str(wizard.query_one("#launch-banner").render())
            await pilot.press("escape")
            await pilot.press("ctrl+d")
            await until(pilot, lambda: isinstance(app.screen, ConfirmTeardown), "the teardown dialog")
            seen["teardown_text"] = str(app.screen.query_one("#confirm-text").render())
            await pilot.press("y")
            await until(pilot, teardown_done, "the teardown", 60)
            seen["teardown_ok"] = teardown_done()

    asyncio.run(flow())
    return seen


if __name__ == "__main__":
    print(json.dumps(main(sys.argv[1], sys.argv[2:])))
