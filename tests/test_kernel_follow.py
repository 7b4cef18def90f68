"""The kernel log is followed whenever a deployment runs: during the launch, resumed when a node's
SSH connection drops (nothing said twice, nothing in the gap lost), and after READY while `up`
supervises, where a GPU fault is named for its node without a rollback."""

import asyncio
import threading

import pytest

from spark_tui.core.launch import events as ev
from tests.test_knowledge_up import _kernel_line
from tests.test_launch import config_for, containers, launch

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
    assert not [e for e in got if isinstance(e, ev.KernelLogLost)]
    assert all(ids == [] for ids in containers(cluster, 2).values()), "not rolled back"
