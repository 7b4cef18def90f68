"""`restart: on-failure` on the namespace test cluster: a crash (the container's process killed by
its real Docker engine, exit 137, as the kernel's OOM killer ends it) is relaunched after
`memory.fit` ran again on the node's live numbers; a crash after the window's last restart is a
restart loop, stopped and named; a node whose memory no longer fits refuses the restart."""

import asyncio
import time

import pytest

from spark_tui.core.launch import events as ev
from spark_tui.core.launch.launch import Launch
from spark_tui.core.launch.live import with_detected
from spark_tui.core.launch.supervise import Supervisor
from spark_tui.core.node.nodes import Nodes
from spark_tui.settings.resolve import Inputs, resolve
from tests.cluster import cluster as tc
from tests.test_sync import config_for as cache_cluster_file
from tests.test_sync import write_model

pytestmark = pytest.mark.cluster
NAME = "vllm_node"


def _config(cluster, tmp_path, restart_max: int):
    node = cluster.nodes[0]
    cache = tmp_path / f"hf-{node.name}"
    if not cache.exists():
        write_model(cache)  # the model in the node's cache: memory.fit has weights to weigh
    cache_cluster_file(cluster, 1, tmp_path, {node.name: cache})
    flags = {
        **tc.SANDBOX,
        "restart": "on-failure",
        "restart_max": restart_max,
        "env": {"SPARK_TEST_SHARD_DELAY": "0.02"},
    }
    return resolve(
        Inputs(
            cluster_file=str(tmp_path / "c1.yaml"),
            user_config="",
            flags={k: (v, f"--{k.replace('_', '-')}") for k, v in flags.items()},
        )
    )


async def _until(what: str, check, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, f"{what}: not within {timeout} s"
        await asyncio.sleep(0.2)


def _container(cluster, node) -> tuple[str, str, str]:
    out = cluster.docker(node, "inspect", "-f", "{{.Id}} {{.State.Status}} {{.State.ExitCode}}", NAME)
    cid, status, code = out.stdout.split()
    return cid, status, code


def test_a_crash_is_relaunched_after_memory_fit_and_the_next_crash_is_a_named_loop(cluster, tmp_path):
    node = cluster.nodes[0]
    cluster.set_meminfo(node, 128, 124)  # a Spark with its memory free: the model fits
    config = _config(cluster, tmp_path, restart_max=1)
    got: list = []

    async def scenario():
        async with Nodes(config) as nodes:
            cfg, snaps = await with_detected(config, nodes)
            assert await Launch(cfg, nodes, got.append, snapshots=snaps).run(), got
            first, _, _ = _container(cluster, node)
            task = asyncio.ensure_future(Supervisor(cfg, nodes, got.append).run())
            mark = len(got)
            await asyncio.to_thread(cluster.docker, node, "kill", NAME)  # SIGKILL: exit 137
            await _until("relaunched and ready", lambda: any(isinstance(e, ev.Ready) for e in got[mark:]))
            after = got[mark:]
            restart = next(e for e in after if isinstance(e, ev.Restart))
            assert restart.node == node.name and (restart.attempt, restart.limit) == (1, 1), restart
            assert restart.cause.startswith(f"{node.name}: container exited with code 137"), restart
            fit = [e for e in after if isinstance(e, ev.Stage) and e.stage == "memory"]
            assert fit and fit[0].node == node.name and fit[0].detail.startswith("memory.fit pass: fits"), fit
            # the memory check ran before the new container started
            assert after.index(fit[0]) < next(
                i for i, e in enumerate(after) if isinstance(e, ev.Stage) and e.stage == "container"
            )
            second, status, _ = _container(cluster, node)
            assert second != first and status == "running"

            mark = len(got)
            await asyncio.to_thread(cluster.docker, node, "kill", NAME)
            ended = await asyncio.wait_for(task, 60)
            return ended, got[mark:]

    ended, after = asyncio.run(scenario())
    assert ended == "loop", after
    failed = [e for e in after if isinstance(e, ev.Failed)]
    assert len(failed) == 1 and not any(isinstance(e, ev.Restart) for e in after), after
    cause = failed[0].cause
    assert cause.startswith(f"restart loop: {node.name}: container exited with code 137"), cause
    assert "2 crashes within 600 s (restart_max 1 in restart_window 600 s): not restarted again" in cause
    _, status, code = _container(cluster, node)  # kept for its logs, not running, not restarted
    assert (status, code) == ("exited", "137")


def test_a_restart_the_nodes_memory_no_longer_fits_is_refused_and_named(cluster, tmp_path):
    node = cluster.nodes[0]
    cluster.set_meminfo(node, 128, 124)
    config = _config(cluster, tmp_path, restart_max=3)
    got: list = []

    async def scenario():
        async with Nodes(config) as nodes:
            cfg, snaps = await with_detected(config, nodes)
            assert await Launch(cfg, nodes, got.append, snapshots=snaps).run(), got
            task = asyncio.ensure_future(Supervisor(cfg, nodes, got.append).run())
            await asyncio.sleep(1.0)
            cluster.set_meminfo(node, 128, 20)  # something else took the memory meanwhile
            mark = len(got)
            await asyncio.to_thread(cluster.docker, node, "kill", NAME)
            return await asyncio.wait_for(task, 60), got[mark:]

    try:
        ended, after = asyncio.run(scenario())
    finally:
        cluster.reset_meminfo(node)
    assert ended == "refused", after
    assert [e.attempt for e in after if isinstance(e, ev.Restart)] == [1]
    failed = [e for e in after if isinstance(e, ev.Failed)]
    assert len(failed) == 1, after
    assert failed[0].cause.startswith(
        f"restart refused: memory.fit failed on {node.name}: vLLM would refuse"
    ), failed
    assert "20.0 of 128.0 GiB available" in failed[0].cause
    assert not any(isinstance(e, ev.Stage) and e.stage == "container" for e in after)  # nothing started
    assert cluster.docker(node, "inspect", NAME, check=False).returncode != 0  # the crashed one removed


def test_up_stays_attached_restarts_once_then_names_the_loop(cluster, tmp_path, clean_env):
    """The CLI as an operator runs it: `up` with restart on-failure prints that it supervises, the
    restart with its cause, READY again, then the loop, and exits 1."""
    import os
    import subprocess
    import sys

    from tests.helpers import ROOT

    node = cluster.nodes[0]
    path = cluster.cluster_file(1, tmp_path / "c1.yaml")
    out, err = tmp_path / "up.out", tmp_path / "up.err"
    argv = [sys.executable, "-m", "spark_tui", "up", "--cluster", path, *tc.SANDBOX_FLAGS]
    argv += ["--restart", "on-failure", "--restart-max", "1"]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    with out.open("w") as o, err.open("w") as e:
        proc = subprocess.Popen(argv, stdout=o, stderr=e, env=env)
    try:

        async def wait_for(path_, text: str, count: int = 1) -> None:
            await _until(f"{text!r} x{count}", lambda: path_.read_text().count(text) >= count, 180)

        asyncio.run(wait_for(err, "supervising (restart on-failure, at most 1 restarts in 600 s)"))
        assert out.read_text().count("READY in ") == 1
        cluster.docker(node, "kill", NAME)
        asyncio.run(wait_for(out, "READY in ", 2))
        cluster.docker(node, "kill", NAME)
        assert proc.wait(timeout=60) == 1
    finally:
        if proc.poll() is None:
            proc.kill()
    text = out.read_text()
    restart = f"RESTART 1/1 within 600 s after a crash: {node.name}: container exited with code 137"
    assert text.count("RESTART ") == 1 and restart in text, text
    assert text.index(restart) < text.rindex("READY in ") < text.index("FAILED: restart loop: "), text


def test_a_relaunch_that_fails_counts_toward_the_loop(cluster, tmp_path):
    """The node's image was removed after the launch (a disk cleanup): every relaunch fails its
    preflight; each failure is the crash again, counted, until the loop is stopped and named."""
    node = cluster.nodes[0]
    cluster.set_meminfo(node, 128, 124)
    config = _config(cluster, tmp_path, restart_max=2)
    got: list = []

    async def scenario():
        async with Nodes(config) as nodes:
            cfg, snaps = await with_detected(config, nodes)
            assert await Launch(cfg, nodes, got.append, snapshots=snaps).run(), got
            await asyncio.to_thread(cluster.docker, node, "rmi", "-f", tc.IMAGE)  # untagged; still runs
            task = asyncio.ensure_future(Supervisor(cfg, nodes, got.append).run())
            mark = len(got)
            await asyncio.to_thread(cluster.docker, node, "kill", NAME)
            return await asyncio.wait_for(task, 120), got[mark:]

    try:
        ended, after = asyncio.run(scenario())
    finally:
        cluster.reset_meminfo(node)
    assert ended == "loop", after
    restarts = [e for e in after if isinstance(e, ev.Restart)]
    assert [r.attempt for r in restarts] == [1, 2], after
    assert restarts[1].cause.startswith(
        f"the relaunch failed: {node.name}: image {tc.IMAGE} is not on this node"
    )
    loop = [e for e in after if isinstance(e, ev.Failed)][-1].cause
    assert loop.startswith(
        f"restart loop: the relaunch failed: {node.name}: image {tc.IMAGE} is not on this node"
    )
    assert "3 crashes within 600 s (restart_max 2 in restart_window 600 s)" in loop
