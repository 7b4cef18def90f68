"""The upgrade from the wizard: choosing another image in the image step while a deployment
serves asks whether to upgrade to it (kept or rolled back) or to go on in the wizard (teardown and
launch). The keys are the registry's (choice.upgrade, choice.relaunch, choice.cancel).

One test drives a real upgrade through the screens on the namespace test cluster (a real
CockpitCore, real SSH and Docker engines, the stand-in vLLM at the candidate image's speed) to its
verdict, shown on the upgrade screen; one walks the three answers on the frozen core."""

import asyncio

import pytest

from spark_tui.ui.screens.dialogs import UpgradeOrRelaunch
from spark_tui.ui.screens.upgrade import UpgradeScreen
from spark_tui.ui.screens.wizard import WizardScreen
from tests.cluster import cluster as tc
from tests.test_cockpit import make_app, until
from tests.test_upgrade import SLOW, _running_image, _serves


async def _choose(pilot, app, image: str) -> None:
    """`w`, then the image typed in the image step's box and enter."""
    await pilot.press("w")
    await pilot.pause(0.2)
    wizard = app.screen
    assert isinstance(wizard, WizardScreen)
    box = wizard.query_one("#image-input")
    box.focus()
    box.value = image
    await pilot.press("enter")
    await pilot.pause(0.2)


def test_the_three_answers_on_the_frozen_core():
    from spark_tui.ui.app import SparkApp
    from tests.frozen import FrozenCore, cluster_config

    config, reconfigure = cluster_config(2)

    def app_with(running: str):
        core = FrozenCore(config, reconfigure)
        core.running = running
        return core, SparkApp(core, live_refresh=False)

    async def flow(running: str, keys: list[str]):
        core, app = app_with(running)
        async with app.run_test(size=(140, 40)) as pilot:
            await _choose(pilot, app, "vllm:next")
            asked = isinstance(app.screen, UpgradeOrRelaunch)
            text = str(app.screen.query_one("#choice-text").render()) if asked else ""
            for key in keys:
                await pilot.press(key)
                await pilot.pause(0.2)
            for _ in range(30):  # an upgrade started: the frozen core answers at once
                if not isinstance(app.screen, UpgradeScreen) or not app.screen.running:
                    break
                await pilot.pause(0.1)
            screen = app.screen
            step = screen.step if isinstance(screen, WizardScreen) else None
            return asked, text, type(screen).__name__, step, core

    running = config["image"]
    asked, text, screen, step, core = asyncio.run(flow(running, ["u"]))
    assert asked and text.startswith(f"{running} serves now. Use vllm:next?"), text
    assert "[u] upgrade: bench what runs" in text and "[t] relaunch: go on in the wizard" in text
    assert "[esc] cancel" in text
    assert screen == "UpgradeScreen" and "upgrade vllm:next" in core.calls
    assert core.config["image"] == running  # an upgrade edits nothing: it tries the candidate

    asked, _, screen, step, core = asyncio.run(flow(running, ["t"]))
    assert asked and screen == "WizardScreen" and step == "check"
    assert core.config["image"] == "vllm:next" and not any(c.startswith("upgrade") for c in core.calls)

    asked, _, screen, step, core = asyncio.run(flow(running, ["escape"]))
    assert asked and screen == "WizardScreen" and step == "image" and core.config["image"] == running

    # Nothing serves: no question, the wizard goes on as before.
    asked, _, screen, step, core = asyncio.run(flow("", []))
    assert not asked and screen == "WizardScreen" and step == "check"


@pytest.mark.cluster
def test_the_wizard_upgrades_a_running_deployment_to_its_verdict_on_a_real_core(cluster, tmp_path, run_cli):
    """The known-good (tc.IMAGE, 50 tokens/s) serves on one node; in the wizard the operator types
    the candidate (8 tokens/s, first token after 1.5 s: a regression far beyond any machine's
    noise), answers `u`; the upgrade screen runs the real upgrade (bench, sync, check, teardown,
    launch, bench) and shows it ROLLED BACK with its figures; the node runs the known-good again.
    With `restart: on-failure`, the cockpit supervises what serves after the verdict, as after a
    launch from the wizard."""
    node = cluster.nodes[0]
    cluster.import_image(node, SLOW, env={"SPARK_TEST_TOKENS_PER_S": "8", "SPARK_TEST_FIRST_TOKEN_S": "1.5"})
    path = cluster.cluster_file(1, tmp_path / "c1.yaml")  # the cockpit's cluster file (make_app)
    code, out, err = run_cli("up", "--cluster", path, *tc.SANDBOX_FLAGS, "-e", "SPARK_TEST_SHARD_DELAY=0.02")
    assert code == 0, out + err
    app = make_app(cluster, tmp_path, count=1, argv=["--restart", "on-failure"])

    async def flow() -> tuple[str, str]:
        async with app.run_test(size=(140, 40)) as pilot:
            await until(pilot, lambda: app.core.running_image() == tc.IMAGE, "the running deployment seen")
            await _choose(pilot, app, SLOW)
            assert isinstance(app.screen, UpgradeOrRelaunch)
            await pilot.press("u")
            await pilot.pause(0.2)
            screen = app.screen
            assert isinstance(screen, UpgradeScreen)
            log = screen.query_one("#upgrade-log")
            await until(pilot, lambda: not screen.running and len(log.lines) > 0, "the verdict", 400)
            await until(pilot, lambda: bool(app.supervision), "supervision of what serves after the verdict")
            return "\n".join(line.text for line in log.lines), app.supervision[0].plain

    text, supervision = asyncio.run(flow())
    assert supervision.startswith("supervising (restart on-failure, "), supervision
    flat = " ".join(text.split())  # the log wraps at the screen's width
    assert f"ROLLED BACK: {SLOW} regressed against {tc.IMAGE}: c=1: decode " in flat, text
    assert f"{tc.IMAGE} relaunched and serving" in flat
    for step in (
        "known-good done",
        "sync done",
        "check done",
        "teardown done",
        "launch done",
        "restore done",
    ):
        assert f"upgrade {step}" in flat, (step, text)
    assert f"serving: {tc.IMAGE}; recorded as upgrade " in flat, text
    assert f"node {node.name}: vllm_node running ({tc.IMAGE})" in flat
    assert _running_image(cluster, node) == tc.IMAGE and _serves(node)
    cluster.remove_all_containers(node)
    cluster.docker(node, "rmi", "-f", SLOW, check=False)
