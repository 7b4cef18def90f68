"""A node lost mid-upgrade, on the namespace test cluster (two nodes, executor native, real SSH
and real Docker engines): the worker's sshd stopped with its sessions cut, or its dockerd
stopped (which ends its containers, as a node's engine going down does).

- lost during the candidate's sync or check: refused, the known-good's containers the very same
  ones, still serving;
- lost during the candidate's launch and back within upgrade.restore_wait: the known-good is
  relaunched on both nodes;
- lost for good during the launch: the restore cannot run on it either; the outcome is `failed`
  with RestoreFailed's text naming the node, what each node holds, `serving: NOTHING`, recorded
  in the database, exit 3, no traceback;
- lost during the candidate's bench: the candidate is not kept (not every node runs it); the
  restore waits in vain, nothing more is removed, and the candidate that still serves is named
  as what serves (never the known-good)."""

import asyncio
import os
import subprocess
import sys

import pytest

from spark_tui.core.bench.bench_store import Store, upgrades
from spark_tui.core.launch import events as ev
from spark_tui.core.node.nodes import Nodes
from spark_tui.core.upgrade import UpgradeOutcome, UpgradeRun, UpgradeStep, event_text
from spark_tui.settings.resolve import Inputs, resolve
from tests.cluster import cluster as tc
from tests.helpers import ROOT
from tests.test_upgrade import BENCH, FAST, _running_image, _serves

pytestmark = pytest.mark.cluster

CANDIDATE_ENV = {"SPARK_TEST_TOKENS_PER_S": "200", "SPARK_TEST_FIRST_TOKEN_S": "0.01"}


def _flags(path: str, restore_wait: float | None = None) -> list[str]:
    flags = ["--cluster", path, *tc.SANDBOX_FLAGS, "--executor", "native"]
    return flags + (["--upgrade-restore-wait", str(restore_wait)] if restore_wait is not None else [])


def _config(path: str, restore_wait: float | None = None):
    flags: dict = {**tc.SANDBOX, "executor": "native"}
    if restore_wait is not None:
        flags["upgrade.restore_wait"] = restore_wait
    return resolve(
        Inputs(
            cluster_file=path,
            user_config="",
            flags={k: (v, f"--{k.replace('_', '-').replace('.', '-')}") for k, v in flags.items()},
        )
    )


def _params(config):
    from spark_tui.core import bench_run

    return bench_run.params_for(config, concurrency=(1,), prompt_tokens=8, output_tokens=12, requests=2)


@pytest.fixture
def two(cluster, tmp_path, run_cli):
    """The known-good (tc.IMAGE) serving on two nodes; the candidate on both unless a test
    removes it from the worker."""
    head, worker = cluster.nodes[:2]
    for node in (head, worker):
        cluster.import_image(node, FAST, env=CANDIDATE_ENV)
    path = cluster.cluster_file(2, tmp_path / "c2.yaml")
    code, out, err = run_cli("up", *_flags(path))
    assert code == 0, out + err
    yield cluster, head, worker, path, tmp_path / "bench.sqlite"
    for node in (head, worker):
        if tc._alive(node.dockerd_pid):
            cluster.docker(node, "rmi", "-f", FAST, check=False)


def _upgrade(config, db, hook) -> tuple[UpgradeOutcome, list]:
    """The core's upgrade, every event seen by `hook(event, got)` first (where a test loses a node)."""
    got: list = []

    def emit(event) -> None:
        got.append(event)
        hook(event, got)

    async def main() -> UpgradeOutcome:
        store = Store(db)
        try:
            async with Nodes(config) as nodes:
                return await UpgradeRun(config, nodes, emit, FAST, store, _params(config)).run()
        finally:
            store.close()

    return asyncio.run(main()), got


def _text(got: list) -> str:
    return "\n".join(t for t in (event_text(e, str) for e in got) if t is not None)


def _lose_sshd(cluster, node) -> None:
    cluster.stop_sshd(node)
    cluster.kill_sshd_sessions(node)


@pytest.mark.parametrize("step", ["sync", "check"])
def test_a_node_lost_during_the_candidates_sync_or_check_is_refused_untouched(two, step):
    cluster, head, worker, path, db = two
    if step == "sync":
        cluster.docker(worker, "rmi", "-f", FAST)  # the sync has to copy it to the worker
    before = {n.name: cluster.docker(n, "ps", "-q").stdout.split() for n in (head, worker)}
    lost: list = []

    def hook(event, got) -> None:
        if isinstance(event, UpgradeStep) and (event.step, event.status) == (step, "started") and not lost:
            lost.append(event)
            _lose_sshd(cluster, worker)

    try:
        outcome, got = _upgrade(_config(path), db, hook)
    finally:
        cluster.start_sshd(worker)
    text = _text(got)
    assert lost and outcome.verdict == "refused", text
    assert worker.name in outcome.reason, outcome.reason
    assert "upgrade    teardown" not in text
    # Untouched: the very same containers on both nodes, serving the known-good.
    assert {n.name: cluster.docker(n, "ps", "-q").stdout.split() for n in (head, worker)} == before
    assert _running_image(cluster, worker) == tc.IMAGE and _serves(head)
    assert outcome.serving == tc.IMAGE
    # What each node held when it ended, as the nodes answered: the worker unreachable, said so.
    assert outcome.nodes[0] == f"{head.name}: vllm_node running ({tc.IMAGE})", outcome.nodes
    assert outcome.nodes[1].startswith(f"{worker.name}: unreachable ("), outcome.nodes
    store = Store(db)
    try:
        record = upgrades(store)[0]
    finally:
        store.close()
    assert record.verdict == "refused" and record.details["serving"] == tc.IMAGE
    assert record.details["nodes"] == outcome.nodes


def _on_worker_container(worker, act):
    """A hook: `act()` once the candidate's container is up on the worker (native: workers first)."""
    state = {"launch": False, "done": False}

    def hook(event, got) -> None:
        if isinstance(event, UpgradeStep) and (event.step, event.status) == ("launch", "started"):
            state["launch"] = True
        if (
            state["launch"]
            and not state["done"]
            and isinstance(event, ev.Stage)
            and (event.node, event.stage, event.status) == (worker.name, "container", "done")
        ):
            state["done"] = True
            act()

    return hook


def test_a_node_lost_during_the_launch_and_back_within_the_wait_gets_the_known_good_again(two):
    cluster, head, worker, path, db = two
    back: list = []
    launch_hook = _on_worker_container(worker, lambda: cluster.stop_dockerd(worker))

    def hook(event, got) -> None:
        launch_hook(event, got)
        if (
            isinstance(event, UpgradeStep)
            and event.step == "restore"
            and event.detail.startswith("waiting up to 60 s (upgrade.restore_wait) for ")
            and not back
        ):
            # The node's engine comes back while the restore waits (a daemon restarted by systemd).
            back.append(asyncio.get_running_loop().run_in_executor(None, cluster.start_dockerd, worker))

    outcome, got = _upgrade(_config(path, restore_wait=60), db, hook)
    text = _text(got)
    assert back, text
    assert outcome.verdict == "refused" and outcome.reason.startswith(f"{FAST} failed to launch"), text
    assert outcome.reason.endswith(f"{tc.IMAGE} relaunched and serving"), outcome.reason
    failed = [e for e in got if isinstance(e, ev.Failed)]
    assert failed and worker.name in failed[0].cause, failed
    assert _running_image(cluster, head) == tc.IMAGE and _running_image(cluster, worker) == tc.IMAGE
    assert _serves(head) and outcome.serving == tc.IMAGE
    assert outcome.nodes == [f"{n.name}: vllm_node running ({tc.IMAGE})" for n in (head, worker)]


def test_a_node_lost_for_good_during_the_launch_ends_failed_named_and_recorded(two, clean_env):
    """The CLI as an operator runs it: the worker's engine dies once the candidate's container
    started there and does not come back; the restore waits upgrade.restore_wait, then says
    which node, what each node holds, that nothing serves; exit 3, no traceback."""
    cluster, head, worker, path, db = two
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    argv = [sys.executable, "-m", "spark_tui", "upgrade", FAST, *_flags(path, 3), *BENCH, "--db", str(db)]
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stderr is not None
    seen, launching = [], False
    try:
        for line in proc.stdout:
            seen.append(line)
            launching = launching or "upgrade    launch     started" in line
            if launching and f"{worker.name:<10} container  done" in line:
                cluster.stop_dockerd(worker)
                break
        rest, err = proc.communicate(timeout=300)
    finally:
        if proc.poll() is None:
            proc.kill()
        cluster.start_dockerd(worker)
    out = "".join(seen) + rest
    assert proc.returncode == 3, out + err
    assert "Traceback" not in out + err, err
    verdict = next(line for line in out.splitlines() if line.startswith("FAILED: ") and "restore" in line)
    assert verdict.startswith(f"FAILED: {FAST} failed to launch"), verdict
    assert f"and the restore failed: {worker.name} unreachable (" in verdict, verdict
    assert (
        f"after 3 s (upgrade.restore_wait): {tc.IMAGE} runs on all 2 node(s) or not at all, so nothing "
        f"more was removed or relaunched; once {worker.name} answer(s) again, `spark-tui down` then "
        f"`spark-tui up` brings {tc.IMAGE} back"
    ) in verdict
    assert "; serving: NOTHING; recorded as upgrade " in out
    assert f"    node {head.name}: no vllm_node container of cluster local" in out
    worker_line = next(line for line in out.splitlines() if line.startswith(f"    node {worker.name}: "))
    assert worker_line.startswith(f"    node {worker.name}: unreachable (")
    assert "; last seen by this upgrade: " in worker_line
    assert not _serves(head) and cluster.docker(head, "ps", "-q").stdout.split() == []
    store = Store(db)
    try:
        record = upgrades(store)[0]
    finally:
        store.close()
    assert record.verdict == "failed" and record.details["serving"] == ""
    assert record.reason == verdict.removeprefix("FAILED: ")
    assert record.details["nodes"][1] == worker_line.removeprefix("    node ")


def test_a_node_lost_during_the_candidates_bench_is_not_kept_and_what_serves_is_named(two):
    cluster, head, worker, path, db = two
    lost: list = []

    def hook(event, got) -> None:
        if (
            isinstance(event, UpgradeStep)
            and (event.step, event.status) == ("bench", "started")
            and event.detail.startswith(FAST)
            and not lost
        ):
            lost.append(event)
            _lose_sshd(cluster, worker)

    try:
        outcome, got = _upgrade(_config(path, restore_wait=2), db, hook)
    finally:
        cluster.start_sshd(worker)
    text = _text(got)
    assert lost and outcome.verdict == "failed", text
    assert outcome.reason.startswith(
        f"{FAST} cannot be kept: after its bench not every node runs it ({worker.name} unreachable ("
    ), outcome.reason
    assert f"and the restore failed: {worker.name} unreachable (" in outcome.reason, outcome.reason
    # Nothing more was removed: the candidate still serves, and the outcome says so, not the known-good.
    assert outcome.serving == FAST and _running_image(cluster, head) == FAST and _serves(head)
    assert _running_image(cluster, worker) == FAST  # its containers ran on while it could not be asked
    assert outcome.nodes[0] == f"{head.name}: vllm_node running ({FAST})"
    assert outcome.nodes[1].startswith(f"{worker.name}: unreachable (")
    assert f"serving: {FAST}" in text and "KEPT" not in text
