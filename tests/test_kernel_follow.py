"""The kernel log is followed whenever a deployment runs: during the launch, resumed when a node's
SSH connection drops (nothing said twice, nothing in the gap lost), and after READY while `up`
supervises, where a GPU fault is named for its node without a rollback."""

import asyncio
import threading
import time

import pytest

from spark_tui.core.launch import events as ev
from spark_tui.core.launch.launch import Launch
from spark_tui.core.launch.live import with_detected
from spark_tui.core.launch.supervise import Supervisor
from spark_tui.core.node.nodes import Nodes
from tests.helpers import DATA
from tests.test_knowledge_up import _kernel_line
from tests.test_launch import config_for, containers, down, launch

pytestmark = pytest.mark.cluster


def _diagnoses(got, ident):
    return [(d.node, d.id) for d in got if isinstance(d, ev.Diagnosis) and d.id == ident]


def test_a_dropped_connection_during_the_load_is_followed_again_and_an_xid_after_it_is_named(
    cluster, tmp_path
):
    """The worker's SSH connection drops during the load (every sshd session killed, the listener
    kept: a blip). The kernel's warning before the drop is said once, not again when the resumed
    follow reads the log from its start; the Xid written in the gap is named for the worker."""
    head, worker = cluster.nodes[0], cluster.nodes[1]
    warning, xid = _kernel_line("nvrm_no_memory_oneline"), _kernel_line("xid_79_syslog")
    warned = threading.Event()
    dropped: list[bool] = []

    def drop_then_fault() -> None:
        if warned.wait(20):  # the follow handed the warning on: now its connection goes
            cluster.drop_ssh_connections(worker)
            cluster.kernel_says(worker, xid)  # in the gap, before the follow is back
            dropped.append(True)

    def on_event(e):
        if isinstance(e, ev.Stage) and (e.node, e.stage, e.status) == (head.name, "container", "done"):
            cluster.kernel_says(worker, warning)
            threading.Thread(target=drop_then_fault, daemon=True).start()
        if isinstance(e, ev.Diagnosis) and e.id == "driver.nvrm_no_memory":
            warned.set()

    config = config_for(cluster, 2, tmp_path, env={"SPARK_TEST_SHARD_DELAY": "3"}, executor="native")
    ok, got, _ = asyncio.run(launch(config, on_event=on_event))
    assert dropped and not ok
    failed = next(e for e in got if isinstance(e, ev.Failed))
    assert failed.cause.startswith(f"{worker.name}: GPU failure Xid 79 (GPU has fallen off the bus)"), (
        failed.cause
    )
    assert _diagnoses(got, "driver.nvrm_no_memory") == [(worker.name, "driver.nvrm_no_memory")]
    assert not [e for e in got if isinstance(e, ev.KernelLogLost | ev.KernelLogGap)]
    assert all(ids == [] for ids in containers(cluster, 2).values()), "not rolled back"


def _oom_kill_line() -> str:
    """The kernel OOM killer's summary line of the real sample, as dmesg prints it after its stamp."""
    line = next(
        x for x in (DATA / "failures" / "oom_killer.log").read_text().splitlines() if "oom-kill:" in x
    )
    return line.split(" ", 1)[1]


async def _until(what: str, check, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, f"{what}: not within {timeout} s"
        await asyncio.sleep(0.1)


def test_a_gpu_fault_after_ready_is_named_for_its_node_by_the_supervisor_once_and_nothing_restarts(
    cluster, tmp_path
):
    """`up` supervising (restart on-failure) keeps the launch's kernel follow after READY: an Xid
    the worker's kernel logs right after READY and the OOM killer on the head later are each named
    once for their node (a Diagnosis marked serving, with figures and fix); the deployment keeps
    serving: no restart, no rollback."""
    head, worker = cluster.nodes[0], cluster.nodes[1]
    xid = _kernel_line("xid_79_syslog")
    config = config_for(cluster, 2, tmp_path, executor="native", restart="on-failure")
    got: list = []

    def serving(ident):
        return [d for d in got if isinstance(d, ev.Diagnosis) and d.serving and d.id == ident]

    async def scenario():
        async with Nodes(config) as nodes:
            cfg, snaps = await with_detected(config, nodes)
            launch_ = Launch(cfg, nodes, got.append, snapshots=snaps, follow_after_ready=True)
            assert await launch_.run(), got
            cluster.kernel_says(worker, xid)  # at once after READY: no gap before supervision
            task = asyncio.ensure_future(Supervisor(cfg, nodes, got.append, kernels=launch_.kernels).run())
            try:
                await _until("the Xid named", lambda: serving("driver.xid_hardware"))
                cluster.kernel_says(head, _oom_kill_line())
                await _until("the OOM killer named", lambda: serving("system.oom_killer"))
                await asyncio.sleep(2 * 1.0)  # two more of the supervisor's rounds: nothing said again
            finally:
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)

    asyncio.run(scenario())
    (fault,) = serving("driver.xid_hardware")
    assert fault.node == worker.name and fault.severity == "error"
    assert fault.figures["xid"] == 79 and fault.figures["pci"] == "PCI:0000:01:00", fault.figures
    assert fault.fix.startswith("Reboot the node")
    assert fault.lines()[-1] == "    while serving (kernel log); nothing rolled back or restarted for it"
    (oom,) = serving("system.oom_killer")
    assert oom.node == head.name and oom.figures["process"] == "perl", oom.figures
    assert not [e for e in got if isinstance(e, ev.Restart | ev.Failed | ev.Removed | ev.KernelLogLost)]
    running = {n.name: cluster.docker(n, "ps", "-q").stdout.split() for n in (head, worker)}
    assert all(len(ids) == 1 for ids in running.values()), running  # still serving
    assert asyncio.run(down(config))[0]


def test_a_follow_that_cannot_be_resumed_is_said_once_naming_the_node_and_the_cause(
    cluster, tmp_path, monkeypatch
):
    """The worker's connection drops and its dmesg now refuses (dmesg_restrict set meanwhile):
    each resumed follow ends at once; after the bounded tries one KernelLogLost names the worker
    and dmesg's own words, and nothing more is tried or said."""
    from spark_tui.core.launch.kernel_watch import KernelWatch
    from spark_tui.core.node import kernel_log

    monkeypatch.setattr(kernel_log, "MAX_RESUMES", 2)  # 0.5 s and 1 s of backoff, not 15 s
    worker = cluster.nodes[1]
    config = config_for(cluster, 2, tmp_path)
    got: list = []

    async def scenario():
        async with Nodes(config) as nodes:
            watch = KernelWatch(nodes, got.append, serving=True)
            await watch.start([worker.name])
            assert list(watch.logs) == [worker.name]
            cluster.set_standin(worker, KERNEL_LOG_DENIED="1")
            cluster.drop_ssh_connections(worker)
            await _until("the follow given up", lambda: [e for e in got if isinstance(e, ev.KernelLogLost)])
            await asyncio.sleep(1.5)  # no try after the last, nothing said twice
            resumed = watch.logs[worker.name].resumed
            await watch.stop()
            return resumed

    try:
        resumed = asyncio.run(scenario())
    finally:
        cluster.set_standin(worker, KERNEL_LOG_DENIED="")
    (lost,) = [e for e in got if isinstance(e, ev.KernelLogLost)]
    assert lost.node == worker.name
    assert "dmesg: read kernel buffer failed: Operation not permitted" in lost.cause, lost.cause
    assert lost.cause.endswith("not resumed after 2 tries"), lost.cause
    assert resumed == 2
    assert lost.lines() == [
        f"WARNING {worker.name}: kernel log no longer followed ({lost.cause}): "
        "GPU faults (Xid) on it will not be named"
    ]


@pytest.mark.parametrize("restart", ["no", "on-failure"])
def test_the_cockpits_serving_view_names_a_gpu_fault_in_the_workers_pane_and_tells_it_once(
    cluster, tmp_path, restart
):
    """A launch from the cockpit hands its kernel follow to the serving view (through the
    supervisor when it supervises): an Xid the worker's kernel logs while serving is notified once
    (not again at each serving round) and shown in the worker's pane, not the head's; the
    deployment keeps serving."""
    from spark_tui.ui.screens.wizard import WizardScreen
    from tests.test_cockpit import make_app, until

    head, worker = cluster.nodes[0], cluster.nodes[1]
    argv = ["--executor", "native", "--metrics-interval", "0.5", "--restart", restart]
    app = make_app(cluster, tmp_path, count=2, argv=argv)
    told: list[tuple[str, str]] = []
    notify = app.notify

    def recording(message, *, title="", **kw):
        told.append((title, message))
        return notify(message, title=title, **kw)

    app.notify = recording  # type: ignore[method-assign]

    def pane(node) -> str:
        return str(app.dashboard.panes[node.name]._serving.render())

    async def flow() -> tuple[str, str]:
        async with app.run_test(size=(140, 40)) as pilot:
            await until(pilot, lambda: head.name in app.views and worker.name in app.views, "the panes")
            app.open_wizard("review")
            await pilot.pause()
            wizard = app.screen
            assert isinstance(wizard, WizardScreen)
            await pilot.press("ctrl+l")
            await until(pilot, lambda: wizard.launch_state in ("ready", "failed"), "the launch", 120)
            assert wizard.launch_state == "ready"
            await pilot.press("escape")
            assert bool(app.supervision) == (restart == "on-failure")
            cluster.kernel_says(worker, _kernel_line("xid_79_syslog"))
            await until(pilot, lambda: "Xid 79" in pane(worker), "the worker's pane to name the Xid", 30)
            await pilot.pause(1.5)  # three more serving rounds: told once all the same
            return pane(worker), pane(head)

    try:
        worker_pane, head_pane = asyncio.run(flow())
        running = [cluster.docker(n, "ps", "-q").stdout.split() for n in (head, worker)]
    finally:
        for n in (head, worker):
            cluster.remove_all_containers(n)
    assert "ERROR kernel: GPU failure Xid 79 (GPU has fallen off the bus) on PCI:0000:01:00 (fix: Reboot" in (
        worker_pane
    ), worker_pane
    assert "Xid" not in head_pane
    kernel = [(title, m) for title, m in told if title.endswith("kernel log")]
    assert len(kernel) == 1 and kernel[0][0] == f"{worker.name}: kernel log", told
    assert kernel[0][1].startswith(f"ERROR {worker.name}: GPU failure Xid 79"), kernel
    assert all(len(ids) == 1 for ids in running), running  # still serving: nothing rolled back


def test_up_supervising_prints_the_oom_killer_on_its_node_once_and_keeps_serving(
    cluster, tmp_path, clean_env
):
    """The CLI as an operator runs it: `up` with restart on-failure stays attached; the kernel's
    OOM killer on the node while serving is printed once (node, cause, fix, the kernel's line) and
    restarts nothing; removing the container ends supervision (exit 0)."""
    import os
    import subprocess
    import sys

    from tests.cluster import cluster as tc
    from tests.helpers import ROOT

    node = cluster.nodes[0]
    path = cluster.cluster_file(1, tmp_path / "c1.yaml")
    out, err = tmp_path / "up.out", tmp_path / "up.err"
    argv = [sys.executable, "-m", "spark_tui", "up", "--cluster", path, *tc.SANDBOX_FLAGS]
    argv += ["--restart", "on-failure"]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    with out.open("w") as o, err.open("w") as e:
        proc = subprocess.Popen(argv, stdout=o, stderr=e, env=env)
    said = f"ERROR {node.name}: the kernel's OOM killer ran and ended perl (pid 1440763)"
    try:

        async def wait_for(path_, text: str) -> None:
            await _until(f"{text!r}", lambda: text in path_.read_text(), 120)

        asyncio.run(wait_for(err, "supervising (restart on-failure"))
        cluster.kernel_says(node, _oom_kill_line())
        asyncio.run(wait_for(out, said))
        time.sleep(2.5)  # the supervisor's rounds go on: nothing said again
        cluster.docker(node, "rm", "-f", "vllm_node")
        assert proc.wait(timeout=60) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            cluster.remove_all_containers(node)
    text = out.read_text()
    assert text.count(said) == 1, text
    after = text[text.index(said) :].splitlines()
    assert after[1].startswith("    fix: ") and "oom-kill:" in after[2], after
    assert after[3] == "    while serving (kernel log); nothing rolled back or restarted for it", after
    assert "RESTART" not in text and "FAILED" not in text, text


def test_a_resumed_follow_that_cannot_get_the_gap_back_says_which_lines_may_be_missing(cluster, tmp_path):
    """Where dmesg is restricted, journalctl -k -f prints only its last 200 lines before following:
    250 lines written while the worker's connection was down cannot all come back. The resumed
    follow says between which stamps lines may be missing (never passes over it) and still names
    the Xid written last."""
    from spark_tui.core.launch.kernel_watch import KernelWatch

    worker = cluster.nodes[1]
    config = config_for(cluster, 2, tmp_path)
    flood = [f"spark-test: kernel line {i} of a flood" for i in range(250)]
    got: list = []

    def said(kind):
        return [e for e in got if isinstance(e, kind)]

    async def scenario():
        async with Nodes(config) as nodes:
            watch = KernelWatch(nodes, got.append, serving=True)
            await watch.start([worker.name])
            cluster.drop_ssh_connections(worker)
            cluster.kernel_says(worker, *flood, _kernel_line("xid_79_syslog"))
            try:
                await _until(
                    "the Xid named", lambda: [d for d in said(ev.Diagnosis) if d.id == "driver.xid_hardware"]
                )
            finally:
                await watch.stop()

    cluster.set_standin(worker, KERNEL_LOG_DENIED="dmesg")
    try:
        asyncio.run(scenario())
    finally:
        cluster.set_standin(worker, KERNEL_LOG_DENIED="")
    (gap,) = said(ev.KernelLogGap)
    assert gap.node == worker.name and gap.last_seen < gap.first_back, gap
    assert gap.say().startswith(
        f"WARNING {worker.name}: kernel log lines written between {gap.last_seen} and "
    ), gap
    (xid,) = [d for d in said(ev.Diagnosis) if d.id == "driver.xid_hardware"]
    assert xid.node == worker.name and xid.serving
    assert not said(ev.KernelLogLost)
