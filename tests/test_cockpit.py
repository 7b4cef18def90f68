"""The cockpit driven by keyboard (App.run_test) against the real namespace test cluster."""

import asyncio
import time

import pytest

from spark_tui.cli.commands import build_app
from spark_tui.cli.main import _SettingsNamespace, build_parser
from spark_tui.ui.messages import JobDone, TeardownProgress
from spark_tui.ui.screens.dashboard import DashboardScreen
from spark_tui.ui.screens.dialogs import ConfirmTeardown, HelpScreen
from spark_tui.ui.screens.logs import LogsScreen
from spark_tui.ui.screens.wizard import WizardScreen
from tests.cluster import cluster as tc

pytestmark = pytest.mark.cluster


def make_app(cluster, tmp_path, count=2, environ=None, argv=()):
    path = cluster.cluster_file(count, tmp_path / f"c{count}.yaml")
    (tmp_path / "home").mkdir(exist_ok=True)
    env = {"HOME": str(tmp_path / "home"), **(environ or {})}
    args = build_parser().parse_args(
        [
            "--cluster",
            path,
            *tc.SANDBOX_FLAGS,
            "-e",
            "SPARK_TEST_SHARD_DELAY=0.02",
            "--refresh-interval",
            "0.5",
            *argv,
        ],
        namespace=_SettingsNamespace(),
    )
    return build_app(args, env)


async def until(pilot, condition, what: str, timeout: float = 60.0):
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")
        await pilot.pause(0.1)


def text_of(screen, selector) -> str:
    return str(screen.query_one(selector).render())


def containers(cluster, count):
    return {n.name: cluster.docker(n, "ps", "-aq").stdout.split() for n in cluster.nodes[:count]}


def test_whole_flow_by_keyboard(cluster, tmp_path):
    app = make_app(cluster, tmp_path, environ={"IMAGE_NAME": "some/other-image:v2"})
    names = [n.name for n in cluster.nodes[:2]]

    messages = []  # what the app's parts told each other: outcomes are read from these

    async def flow():
        async with app.run_test(size=(120, 40), message_hook=messages.append) as pilot:
            await until(
                pilot,
                lambda: all(n in app.views and app.views[n].snapshot.reachable for n in names),
                "both panes refreshed",
            )
            assert "IMAGE_NAME=some/other-image:v2" in text_of(app.screen, "#banner")

            # 1. image choice: the test image is listed on both nodes; enter picks it
            await pilot.press("w")
            wizard = app.screen
            assert isinstance(wizard, WizardScreen)
            table = wizard.query_one("#images")
            await until(pilot, lambda: tc.IMAGE in [k.value for k in table.rows], "the image list")
            table.move_cursor(row=table.get_row_index(tc.IMAGE))
            await pilot.press("enter")
            assert wizard.step == "check"
            assert app.core.config.values["image"].source.layer == "interactive"

            # 2. check: rows turn from running to results; nothing fails
            await until(pilot, lambda: not wizard.check_running and wizard.check_results, "the check")
            failed = [r for r in wizard.check_results if r.status == "fail"]
            assert not failed, failed
            assert {
                r.node for r in wizard.check_results if r.id == "image.present" and r.status == "pass"
            } == set(names), wizard.check_results
            checks = wizard.query_one("#checks")
            assert "running" not in [str(checks.get_row(k)[0]) for k in checks.rows]

            # 3. review: the look-alike warning on top, the image from the interactive edit
            await pilot.press("n")
            assert wizard.step == "review"
            warnings = text_of(wizard, "#review-warnings")
            assert "IMAGE_NAME=some/other-image:v2" in warnings and "does not read it" in warnings
            settings = wizard.query_one("#settings")
            assert str(settings.get_row("image")[4]).startswith("interactive edit")  # the "from" column
            # the cache volume as each node resolves it: ~ is that node's home, read from the node
            for name in names:
                row = settings.get_row(f"nodes.{name}.volumes")
                assert str(row[3]) == "/root/.cache/huggingface:/root/.cache/huggingface", row
                assert f"~ = /root ($HOME of the login user on {name})" in str(row[4])

            # 4. launch to ready
            await pilot.press("n")
            assert wizard.step == "launch"
            await until(pilot, lambda: wizard.launch_state in ("ready", "failed"), "the launch", timeout=120)
            assert wizard.launch_state == "ready", text_of(wizard, "#launch-banner")
            assert "READY" in text_of(wizard, "#launch-banner")
            assert f"http://{cluster.nodes[0].ip}:8000/v1" in text_of(wizard, "#launch-banner")
            assert all(len(ids) == 1 for ids in containers(cluster, 2).values())
            # the head container's own log streams under the stage events
            await until(
                pilot,
                lambda: any(line.startswith("  | ") for line in wizard.query_one("#launch-log").lines),
                "the head log",
            )

            # back on the dashboard the panes show the running containers and their NCCL summary
            await pilot.press("escape")
            assert isinstance(app.screen, DashboardScreen)
            # With Ray, the NCCL lines of every rank reach the head's log (actor prefixes).
            head = names[0]
            await until(
                pilot,
                lambda: app.views[head].nccl is not None and app.views[head].nccl.init_start,
                "NCCL summary in the head pane",
            )
            assert "init" in text_of(app.screen, f"#pane-{head} .pane-nccl")
            pane = text_of(app.screen, f"#pane-{names[0]} .pane-containers")
            assert "vllm_node" in pane and "running" in pane
            # a clean launch shows no drift: the panes compare with the plan `up` ran (detected values too)
            await until(
                pilot,
                lambda: all(app.views[n].own_containers("local") for n in names),
                "both containers in the panes",
            )
            assert all(app.views[n].drifted == {} for n in names), {n: app.views[n].drifted for n in names}
            assert "DRIFT" not in text_of(app.screen, f"#pane-{names[1]} .pane-containers")

            # logs: followed, then filtered by regex
            await pilot.press("l")
            logs = app.screen
            assert isinstance(logs, LogsScreen)
            await until(pilot, lambda: any("NCCL" in line for line in logs.view.text_log.lines), "log lines")
            assert text_of(logs, "#badge") == "FOLLOW"
            await pilot.press("slash", *"Init COMPLETE", "enter")
            shown = list(logs.view.text_log.lines)
            assert shown and all("Init COMPLETE" in line for line in shown), shown[:5]
            assert all(line.startswith(f"[{names[0]}] ") for line in shown)  # merged view: node prefix
            assert set(logs.view.sources) == set(names)  # both nodes' containers followed
            await pilot.press("escape")

            # teardown: the dialog lists each node's container; y removes them
            await pilot.press("ctrl+d")
            await until(pilot, lambda: isinstance(app.screen, ConfirmTeardown), "the confirmation")
            listed = text_of(app.screen, "#confirm-text")
            assert all(f"{n}: vllm_node (running" in listed for n in names), listed
            await pilot.press("y")
            await until(
                pilot,
                lambda: [m for m in messages if isinstance(m, JobDone) and m.job == "teardown"],
                "the teardown",
            )
            assert [m.ok for m in messages if isinstance(m, JobDone) and m.job == "teardown"] == [True]
            await pilot.press("q")

    asyncio.run(flow())
    assert all(ids == [] for ids in containers(cluster, 2).values())


def test_teardown_cancelled_and_readonly(cluster, tmp_path):
    worker = cluster.nodes[1]
    cluster.docker(
        worker,
        "run",
        "-d",
        "--name",
        "vllm_node",
        "--label",
        "spark-tui.cluster=local",
        "--entrypoint",
        "sleep",
        tc.IMAGE,
        "600",
    )
    app = make_app(cluster, tmp_path)

    messages = []

    async def flow():
        async with app.run_test(size=(120, 40), message_hook=messages.append) as pilot:
            await pilot.press("ctrl+d")
            await until(pilot, lambda: isinstance(app.screen, ConfirmTeardown), "the confirmation")
            assert f"{worker.name}: vllm_node (running, image {tc.IMAGE})" in text_of(
                app.screen, "#confirm-text"
            )
            await pilot.press("n")
            await pilot.pause(0.3)
            assert not isinstance(app.screen, ConfirmTeardown)
            assert not [
                m for m in messages if isinstance(m, (JobDone, TeardownProgress))
            ]  # nothing torn down

    asyncio.run(flow())
    assert len(containers(cluster, 2)[worker.name]) == 1

    ro = make_app(cluster, tmp_path, argv=["--readonly"])

    async def readonly():
        async with ro.run_test(size=(120, 40)) as pilot:
            await pilot.press("ctrl+d")
            await pilot.pause(0.5)
            assert not isinstance(ro.screen, ConfirmTeardown)
            await pilot.press("w")
            ro.screen.action_launch()
            assert ro.screen.launch_state == "idle"

    asyncio.run(readonly())
    assert len(containers(cluster, 2)[worker.name]) == 1


def test_unreachable_node_does_not_stall_the_other_pane(cluster, tmp_path):
    worker = cluster.nodes[1]
    cluster.stop_sshd(worker)
    app = make_app(cluster, tmp_path)

    async def flow():
        async with app.run_test(size=(120, 40)) as pilot:
            head = cluster.nodes[0].name
            await until(pilot, lambda: worker.name in app.views and head in app.views, "both panes")
            assert not app.views[worker.name].snapshot.reachable
            header = text_of(app.screen, f"#pane-{worker.name} .pane-header")
            assert "UNREACHABLE" in header and "reconnect in" in header
            first = app.views[head].snapshot.taken_at
            await until(
                pilot,
                lambda: app.views[head].snapshot.taken_at > first,
                "the head pane to refresh again",
                timeout=10,
            )
            assert app.screen.query_one(f"#pane-{worker.name}").has_class("-unreachable")
            cluster.start_sshd(worker)
            await until(
                pilot,
                lambda: app.views[worker.name].snapshot.reachable,
                "the worker to come back",
                timeout=40,
            )

    asyncio.run(flow())


def test_help_lists_every_binding_and_keys_remap(cluster, tmp_path):
    from spark_tui.settings.keys import KEYS

    (tmp_path / "home" / ".config" / "spark-tui").mkdir(parents=True)
    (tmp_path / "home" / ".config" / "spark-tui" / "config.yaml").write_text("keys:\n  wizard: f5\n")
    app = make_app(cluster, tmp_path)

    async def flow():
        async with app.run_test(size=(120, 40)) as pilot:
            await pilot.press("question_mark")
            assert isinstance(app.screen, HelpScreen)
            rows = {row[0]: row[1] for row in app.screen.rows()}
            assert set(rows) == {k.id for k in KEYS}
            assert rows["wizard"] == "f5" and rows["help"] == "?"
            await pilot.press("escape")
            await pilot.press("w")  # remapped away
            await pilot.pause(0.2)
            assert not isinstance(app.screen, WizardScreen)
            await pilot.press("f5")
            await pilot.pause(0.2)
            assert isinstance(app.screen, WizardScreen)

    asyncio.run(flow())


def test_edited_connection_settings_are_the_ones_connected_with(cluster, tmp_path):
    """A wizard edit of host or port rebuilds that node's connection: shown effective = used."""
    core = make_app(cluster, tmp_path, count=2).core
    worker, third = cluster.nodes[1], cluster.nodes[2]

    async def go():
        try:
            assert (await core.refresh(worker.name)).snapshot.host.hostname == worker.name
            core.edit(f"nodes.{worker.name}.host", third.ip)
            assert core.config.node(worker.name)["host"] == third.ip
            view = await core.refresh(worker.name)
            assert view.snapshot.reachable and view.snapshot.host.hostname == third.name
            core.edit(f"nodes.{worker.name}.port", "2222")  # nothing listens there
            view = await core.refresh(worker.name)
            assert not view.snapshot.reachable and "Connection refused" in (view.snapshot.error or ""), (
                view.snapshot.error
            )
            core.edit(f"nodes.{worker.name}.port", None)
            core.edit(f"nodes.{worker.name}.host", None)
            assert (await core.refresh(worker.name)).snapshot.host.hostname == worker.name
        finally:
            await core.close()

    asyncio.run(go())


def test_cockpit_opened_after_headless_up_shows_no_false_drift(cluster, tmp_path, run_cli):
    """`up` detects netdev/hca/home; the cockpit opened afterwards must compare with the same plan.
    Each pane says its node's NCCL transport; with Ray (the default executor) a worker's NCCL
    lines are in the head's log, attributed to the worker by the actor's address."""
    path = cluster.cluster_file(2, tmp_path / "c2.yaml")
    code, out, err = run_cli("up", "--cluster", path, *tc.SANDBOX_FLAGS, "-e", "SPARK_TEST_SHARD_DELAY=0.02")
    assert code == 0, out + err
    app = make_app(cluster, tmp_path)
    names = [n.name for n in cluster.nodes[:2]]

    async def flow():
        async with app.run_test(size=(120, 40)) as pilot:
            await until(
                pilot,
                lambda: all(n in app.views and app.views[n].own_containers("local") for n in names),
                "both containers",
            )
            await pilot.pause(0.6)  # a second refresh of each node, with the detected values in place
            assert all(app.views[n].drifted == {} for n in names), {n: app.views[n].drifted for n in names}
            worker = cluster.nodes[1]
            await until(
                pilot,
                lambda: "IB/RoCE" in text_of(app.screen, f"#pane-{worker.name} .pane-nccl"),
                "worker's NCCL transport",
            )
            pane = text_of(app.screen, f"#pane-{worker.name} .pane-nccl")
            assert f"NCCL: IB/RoCE (IB) on rocep1s0f1, roceP2p1s0f1 over {tc.NETDEV} {worker.ip}" in pane
            # its ranks' init too, from the head's log, in each node's own pane
            for node in cluster.nodes[:2]:
                await until(
                    pilot,
                    lambda n=node: (
                        "this node: init complete (1/1 of its ranks)"
                        in text_of(app.screen, f"#pane-{n.name} .pane-nccl")
                    ),
                    f"{node.name}'s init",
                )
            await pilot.press("q")

    asyncio.run(flow())


def test_after_a_key_remap_no_screen_shows_the_old_key(cluster, tmp_path):
    """Hints come from the key registry: remapped keys are the ones shown, the old ones nowhere."""
    argv = ("--keys", "wizard.next=ctrl+j", "--keys", "wizard.edit=ctrl+e", "--keys", "confirm.no=x")
    app = make_app(cluster, tmp_path, argv=argv)
    names = [n.name for n in cluster.nodes[:2]]

    async def flow():
        async with app.run_test(size=(120, 40)) as pilot:
            await until(pilot, lambda: all(n in app.views for n in names), "both panes")
            await pilot.press("w")
            steps = text_of(app.screen, "#steps")
            assert "ctrl+j: next" in steps and "n: next" not in steps, steps
            app.screen.step = "review"
            steps = text_of(app.screen, "#steps")
            assert "ctrl+e: edit" in steps and " e: edit" not in steps and "ctrl+l: launch" in steps, steps
            await pilot.press("escape")
            await pilot.press("ctrl+d")
            await until(pilot, lambda: isinstance(app.screen, ConfirmTeardown), "the confirmation")
            text = text_of(app.screen, "#confirm-text")
            assert "[x] cancel" in text and "[y] stop and remove" in text and "n / esc" not in text, text
            await pilot.press("x")
            await pilot.press("q")

    asyncio.run(flow())


def test_pane_marks_containers_of_others(cluster, tmp_path):
    worker = cluster.nodes[1]
    cluster.docker(worker, "run", "-d", "--name", "vllm_community", "--entrypoint", "sleep", tc.IMAGE, "600")
    app = make_app(cluster, tmp_path)

    async def flow():
        async with app.run_test(size=(120, 40)) as pilot:
            await until(
                pilot,
                lambda: worker.name in app.views and app.views[worker.name].foreign,
                "the worker's pane",
            )
            await pilot.pause(0.2)
            pane = text_of(app.screen, f"#pane-{worker.name} .pane-containers")
            assert "FOREIGN vllm_community running up" in pane and "(vLLM/Ray?)" in pane, pane
            await pilot.press("q")

    asyncio.run(flow())


def test_wizard_names_the_worker_whose_rank_failed(cluster, tmp_path):
    """A worker's rank runs out of memory during the launch: the wizard's FAILED banner names that
    worker (its line was read in the head's log, which the banner says too)."""
    head, worker = cluster.nodes[:2]
    app = make_app(cluster, tmp_path, argv=("-e", "SPARK_TEST_FAIL=worker_oom", "--executor", "ray"))

    async def flow():
        async with app.run_test(size=(120, 40)) as pilot:
            await until(pilot, lambda: head.name in app.views, "the head pane")
            await pilot.press("w")
            wizard = app.screen
            table = wizard.query_one("#images")
            await until(pilot, lambda: tc.IMAGE in [k.value for k in table.rows], "the image list")
            table.move_cursor(row=table.get_row_index(tc.IMAGE))
            await pilot.press("enter")
            await until(pilot, lambda: not wizard.check_running and wizard.check_results, "the check")
            await pilot.press("n")
            await pilot.press("n")
            assert wizard.step == "launch"
            await until(pilot, lambda: wizard.launch_state in ("ready", "failed"), "the launch", timeout=120)
            banner = text_of(wizard, "#launch-banner")
            assert wizard.launch_state == "failed", banner
            # Named for the worker, whether the knowledge base or the rank's own prefix says it first
            # (as in up: test_launch's test_a_worker_ranks_oom_is_named_for_the_worker).
            assert f"FAILED: {worker.name}: " in banner and "out of memory" in banner.lower(), banner
            await pilot.press("q")

    asyncio.run(flow())


def test_four_panes_each_say_their_nodes_nccl(cluster, tmp_path, run_cli):
    """Four nodes under Ray: every pane says its own node's transport over its own address and its
    ranks' init, though the workers' lines are all in the head's log."""
    path = cluster.cluster_file(4, tmp_path / "c4.yaml")
    code, out, err = run_cli(
        "up", "--cluster", path, *tc.SANDBOX_FLAGS, "--executor", "ray", "-e", "SPARK_TEST_SHARD_DELAY=0.02"
    )
    assert code == 0, out + err
    app = make_app(cluster, tmp_path, count=4, argv=("--executor", "ray"))

    async def flow():
        async with app.run_test(size=(160, 60)) as pilot:
            for node in cluster.nodes[:4]:
                await until(
                    pilot,
                    lambda n=node: (
                        "this node: init complete (1/1 of its ranks)"
                        in text_of(app.screen, f"#pane-{n.name} .pane-nccl")
                    ),
                    f"{node.name}'s NCCL in its pane",
                )
                pane = text_of(app.screen, f"#pane-{node.name} .pane-nccl")
                assert f"NCCL: IB/RoCE (IB) on rocep1s0f1, roceP2p1s0f1 over {tc.NETDEV} {node.ip}" in pane
            await pilot.press("q")

    asyncio.run(flow())
