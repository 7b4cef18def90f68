"""`restart: on-failure` for a launch from the cockpit, on the namespace test cluster: the wizard's
launch is supervised by the core's Supervisor (as `up` supervises), a real crash (the container
killed by its Docker engine, exit 137) is restarted after the memory check, the next crash is a
restart loop, named; the dashboard shows the headline, the restart and the loop."""

import asyncio

import pytest

from spark_tui.core.launch import events as ev
from spark_tui.ui.messages import SupervisionEvent
from spark_tui.ui.screens.wizard import WizardScreen
from tests.test_cockpit import make_app, text_of, until

pytestmark = pytest.mark.cluster
NAME = "vllm_node"


def test_a_cockpit_launch_is_supervised_restarted_after_a_crash_then_the_loop_named(cluster, tmp_path):
    node = cluster.nodes[0]
    app = make_app(cluster, tmp_path, count=1, argv=["--restart", "on-failure", "--restart-max", "1"])
    messages: list = []

    def events() -> list:
        return [m.event for m in messages if isinstance(m, SupervisionEvent)]

    async def flow() -> tuple[str, str]:
        async with app.run_test(size=(140, 40), message_hook=messages.append) as pilot:
            await until(pilot, lambda: node.name in app.views, "the pane")
            app.open_wizard("review")
            await pilot.pause()
            wizard = app.screen
            assert isinstance(wizard, WizardScreen)
            await pilot.press("ctrl+l")
            await until(pilot, lambda: wizard.launch_state in ("ready", "failed"), "the launch", 120)
            assert wizard.launch_state == "ready"
            await pilot.press("escape")  # back to the dashboard: supervision shows there
            await until(pilot, lambda: bool(app.supervision), "supervision to begin")
            headline = text_of(app.screen, "#supervision")

            await asyncio.to_thread(cluster.docker, node, "kill", NAME)  # SIGKILL: exit 137
            await until(pilot, lambda: any(isinstance(e, ev.Ready) for e in events()), "READY again", 120)
            await asyncio.to_thread(cluster.docker, node, "kill", NAME)
            await until(pilot, lambda: any(isinstance(e, ev.Failed) for e in events()), "the loop", 60)
            await pilot.pause(0.3)
            return headline, text_of(app.screen, "#supervision")

    headline, shown = asyncio.run(flow())
    assert headline.startswith("supervising (restart on-failure, at most 1 restarts in 600 s): "), headline
    got = events()
    restarts = [e for e in got if isinstance(e, ev.Restart)]
    assert (
        len(restarts) == 1
        and restarts[0].node == node.name
        and (restarts[0].attempt, restarts[0].limit)
        == (
            1,
            1,
        )
    )
    assert restarts[0].cause.startswith(f"{node.name}: container exited with code 137"), restarts
    # The memory check ran before the relaunch's container started.
    memory = next(i for i, e in enumerate(got) if isinstance(e, ev.Stage) and e.stage == "memory")
    assert got[memory].detail.startswith("memory.fit "), got[memory]
    container = next(i for i, e in enumerate(got) if isinstance(e, ev.Stage) and e.stage == "container")
    assert memory < container
    loop = [e for e in got if isinstance(e, ev.Failed)]
    assert len(loop) == 1 and loop[0].cause.startswith(
        f"restart loop: {node.name}: container exited with code 137"
    )
    # The dashboard: the restart, READY again, then the loop, in the CLI's words.
    assert f"RESTART 1/1 within 600 s after a crash: {node.name}: container exited with code 137" in shown, (
        shown
    )
    assert "serving again: READY in " in shown and "FAILED: restart loop: " in shown, shown
    assert shown.index("RESTART 1/1") < shown.index("serving again") < shown.index("FAILED: restart loop"), (
        shown
    )
    state = cluster.docker(
        node, "inspect", "-f", "{{.State.Status}} {{.State.ExitCode}}", NAME
    ).stdout.split()
    assert state == ["exited", "137"]  # stopped for its logs, not restarted again
