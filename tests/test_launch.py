"""Launch, readiness, rollback, teardown and drift on the namespace test cluster."""

import asyncio
import json
import shlex
import tempfile
import time
from pathlib import Path

import pytest

from spark_tui.core.launch import events as ev
from spark_tui.core.launch.drift import drift
from spark_tui.core.launch.launch import Launch
from spark_tui.core.launch.live import with_detected
from spark_tui.core.launch.teardown import teardown
from spark_tui.core.node.nodes import Nodes
from spark_tui.settings.resolve import Inputs, resolve
from tests.cluster import cluster as tc

pytestmark = pytest.mark.cluster


def config_for(cluster, count, tmp_path, **flags):
    """The test cluster file (must-set values only) for `count` nodes, the sandbox's two limits
    (tc.SANDBOX: privileged and ulimit_nofile, which this machine cannot grant), and `flags`."""
    path = cluster.cluster_file(count, tmp_path / f"c{count}.yaml")
    flags = {**tc.SANDBOX, **flags}
    flags.setdefault("env", {"SPARK_TEST_SHARD_DELAY": "0.02"})
    return resolve(
        Inputs(
            cluster_file=path, user_config="", environ={}, flags={k: (v, f"--{k}") for k, v in flags.items()}
        )
    )


def containers(cluster, count):
    return {n.name: cluster.docker(n, "ps", "-aq").stdout.split() for n in cluster.nodes[:count]}


async def launch(config, cancel_after=None, on_event=None):
    """As `spark-tui up` does it: the values the nodes show first (detected layer), then the launch.
    `on_event(event)` sees each event as it is emitted (to change the world mid-launch)."""
    got: list = []

    def emit(e):
        got.append(e)
        if on_event is not None:
            on_event(e)

    async with Nodes(config) as nodes:
        config, _ = await with_detected(config, nodes)
        task = asyncio.ensure_future(Launch(config, nodes, emit, {n.name: True for n in config.nodes}).run())
        if cancel_after is None:
            ok = await task
        else:
            await asyncio.sleep(cancel_after)
            task.cancel()
            try:
                await task
            except asyncio.CancelledError:
                pass
            ok = False
        items = await drift(config, nodes) if ok else []
    return ok, got, items


async def down(config):
    got = []
    async with Nodes(config) as nodes:
        ok = await teardown(config, nodes, got.append)
    return ok, got


@pytest.mark.parametrize("count", [2, 4])
@pytest.mark.parametrize("executor", ["ray", "native"])
def test_up_ready_drift_clean_down_clean(cluster, tmp_path, executor, count):
    config = config_for(cluster, count, tmp_path, executor=executor)
    ok, got, items = asyncio.run(launch(config))
    ready = [e for e in got if isinstance(e, ev.Ready)]
    assert ok and ready and ready[0].endpoint == f"http://{cluster.nodes[0].ip}:8000/v1", got
    assert items == []
    assert all(len(ids) == 1 for ids in containers(cluster, count).values())
    if executor == "ray":
        assert any(isinstance(e, ev.Stage) and e.stage == "ray_join" and e.status == "done" for e in got)
    assert any(isinstance(e, ev.Stage) and e.stage == "shards" and e.fraction == 1.0 for e in got)
    # Every node's NCCL transport in the READY report, a Ray worker's too (its lines are in the head's log).
    # With 4 nodes under Ray, Ray's deduplication would fold all workers' lines but one's:
    # spark-tui turns it off (RAY_DEDUP_LOGS=0), so each node's transport and init are its own.
    nets = {n.node: n for n in ready[0].nccl}
    for node in cluster.nodes[:count]:
        assert nets[node.name].level == "ok", nets
        assert nets[node.name].text == (
            f"NCCL: IB/RoCE (IB) on rocep1s0f1, roceP2p1s0f1 over {tc.NETDEV} {node.ip}; "
            "init complete (1/1 of its ranks)"
        )
    ok, got = asyncio.run(down(config))
    assert ok and sum(isinstance(e, ev.Removed) for e in got) == count
    assert all(ids == [] for ids in containers(cluster, count).values())
    ok, got = asyncio.run(down(config))  # idempotent
    assert ok and all(e.detail == "nothing was running" for e in got if isinstance(e, ev.Stage))


def _assert_rolled_back(cluster, count, got, cause):
    failed = [e for e in got if isinstance(e, ev.Failed)]
    assert failed and cause in failed[0].cause, got
    assert all(ids == [] for ids in containers(cluster, count).values())


def test_rollback_when_image_missing_on_a_worker(cluster, tmp_path):
    cluster.delete_image(cluster.nodes[1])
    try:
        ok, got, _ = asyncio.run(launch(config_for(cluster, 2, tmp_path)))
        assert not ok
        _assert_rolled_back(cluster, 2, got, f"{cluster.nodes[1].name}: image {tc.IMAGE} is not on this node")
    finally:
        cluster.restore_image(cluster.nodes[1])


def test_rollback_when_a_worker_dockerd_is_stopped(cluster, tmp_path):
    cluster.stop_dockerd(cluster.nodes[1])
    ok, got, _ = asyncio.run(launch(config_for(cluster, 2, tmp_path)))
    assert not ok
    cluster.start_dockerd(cluster.nodes[1])
    _assert_rolled_back(cluster, 2, got, cluster.nodes[1].name)


def test_rollback_when_nccl_init_never_completes(cluster, tmp_path):
    config = config_for(
        cluster,
        2,
        tmp_path,
        executor="native",
        env={"SPARK_TEST_FAIL": "nccl_hang"},
        **{"timeouts.nccl_init": 2.0},
    )
    ok, got, _ = asyncio.run(launch(config))
    assert not ok
    _assert_rolled_back(cluster, 2, got, "NCCL init started but not complete after 2 s")
    failed = next(e for e in got if isinstance(e, ev.Failed))
    assert any("Init START" in line for line in failed.log_lines)
    assert sum(isinstance(e, ev.Removed) for e in got) == 2
    # each rank named with its node, from every node's log, and whether the worker reaches the head
    head, worker = cluster.nodes[0], cluster.nodes[1]
    assert f"rank 0 on {head.name} started, never completed" in failed.cause, failed.cause
    assert f"rank 1 on {worker.name} started, never completed" in failed.cause
    assert f"{worker.name} reaches {head.name} at {head.ip}" in failed.cause


def test_nccl_hang_under_ray_attributes_worker_ranks_by_address(cluster, tmp_path):
    """Ray workers' rank lines reach the head's log as `(RayWorkerWrapper pid=N, ip=A)`: the
    address names the node."""
    config = config_for(
        cluster,
        2,
        tmp_path,
        executor="ray",
        env={"SPARK_TEST_FAIL": "nccl_hang"},
        **{"timeouts.nccl_init": 2.0},
    )
    ok, got, _ = asyncio.run(launch(config))
    assert not ok
    failed = next(e for e in got if isinstance(e, ev.Failed))
    assert f"rank 1 on {cluster.nodes[1].name} started, never completed" in failed.cause, failed.cause
    _assert_rolled_back(cluster, 2, got, "NCCL init started but not complete")


def test_with_rays_dedup_left_on_a_folded_node_is_said_not_guessed(cluster, tmp_path):
    """RAY_DEDUP_LOGS=1 (overriding spark-tui's 0): the stand-in folds the workers' NCCL lines as
    Ray does. The first worker's lines and the fold's own node are read; the worker whose lines
    were folded away is said to be unknown, with the reason, never given another's transport."""
    env = {"SPARK_TEST_SHARD_DELAY": "0.02", "RAY_DEDUP_LOGS": "1"}
    config = config_for(cluster, 4, tmp_path, executor="ray", env=env)
    ok, got, _ = asyncio.run(launch(config))
    assert ok, [e for e in got if isinstance(e, ev.Failed)]
    nets = {n.node: n for n in next(e for e in got if isinstance(e, ev.Ready)).nccl}
    # Which nodes' lines come first and which is the fold's depends on the order they arrive; with
    # real Ray a fold is printed only when later lines arrive after its 5 s window, if at all.
    said = [n for n in cluster.nodes[:4] if nets[n.name].level == "ok"]
    unsaid = [n for n in cluster.nodes[:4] if n not in said]
    assert said and 1 <= len(unsaid) <= 3, nets
    for node in said:  # each with its own address: never another node's lines
        text = nets[node.name].text
        assert text.startswith(f"NCCL: IB/RoCE (IB) on rocep1s0f1, roceP2p1s0f1 over {tc.NETDEV} {node.ip}; ")
        # its own COMPLETE line, or (folded into another actor's) said not seen, never "in progress"
        assert text.endswith(
            ("init complete (1/1 of its ranks)", "Ray's log deduplication may have folded its lines")
        ), text
    for node in unsaid:
        assert nets[node.name].level == "unknown"
        assert nets[node.name].text.startswith(
            "NCCL: not said for this node: Ray's log deduplication is on "
            "(RAY_DEDUP_LOGS=1 from env (command line --env))"
        ), nets[node.name]
        # its transport lines were folded away; its init line may still have arrived plain, and is said as read
        said_init = nets[node.name].text.split("RAY_DEDUP_LOGS=0 keeps every node's", 1)[1]
        assert said_init in ("", "; init complete (1/1 of its ranks)") or said_init.startswith(
            "; init complete not seen (0/1 of its ranks)"
        ), nets[node.name]
    asyncio.run(down(config))


def test_a_worker_ranks_oom_is_named_for_the_worker(cluster, tmp_path):
    """A worker's rank runs out of memory; the lines arrive in the head's log with the
    worker's actor prefix: FAILED names the worker, and the head only as where it was read."""
    worker = cluster.nodes[2]
    env = {"SPARK_TEST_SHARD_DELAY": "0.02", "SPARK_TEST_FAIL": "worker_oom", "SPARK_TEST_FAIL_IP": worker.ip}
    config = config_for(cluster, 4, tmp_path, executor="ray", env=env)
    ok, got, _ = asyncio.run(launch(config))
    assert not ok
    # named for the worker in one text, whether the knowledge base or vLLM's failing rank named it
    failed = next(e for e in got if isinstance(e, ev.Failed))
    head = cluster.nodes[0]
    assert failed.cause.startswith(
        f"{worker.name}: CUDA out of memory: tried 28.44 GiB with 1.38 GiB free of 119.7 GiB "
        f"(ip={worker.ip}, read in {head.name}'s log). Fix: "
    ), failed.cause
    _assert_rolled_back(cluster, 4, got, worker.name)


@pytest.mark.parametrize("executor", ["ray", "native"])
def test_socket_fallback_is_a_warning_naming_its_source(cluster, tmp_path, executor):
    """NCCL_IB_DISABLE=1 from --env sends NCCL over TCP: said per node as soon as the lines show it
    (before READY), with the variable and where its value came from."""
    env = {"SPARK_TEST_SHARD_DELAY": "0.02", "NCCL_IB_DISABLE": "1"}
    config = config_for(cluster, 2, tmp_path, executor=executor, env=env)
    ok, got, _ = asyncio.run(launch(config))
    assert ok, got
    ready_at = next(i for i, e in enumerate(got) if isinstance(e, ev.Ready))
    early = {e.node: e for e in got[:ready_at] if isinstance(e, ev.NcclNet)}
    for node in cluster.nodes[:2]:
        assert early[node.name].level == "warn"
        assert early[node.name].text == (
            f"NCCL: Socket (TCP, not RoCE) over {tc.NETDEV} {node.ip}: "
            "NCCL_IB_DISABLE=1 from env (command line --env)"
        )
    assert [n.level for n in got[ready_at].nccl] == ["warn", "warn"]
    asyncio.run(down(config))


def test_ray_workers_keep_their_own_nccl_variables(cluster, tmp_path):
    """vLLM's Ray executor copies the head's NCCL_* to every worker unless its
    ray_non_carry_over_env_vars.json lists them: a worker with its own HCA list (set visibly here,
    per node) must use it, not the head's."""
    path = Path(cluster.cluster_file(2, tmp_path / "c2.yaml"))
    worker = cluster.nodes[1]
    path.write_text(
        path.read_text().replace(
            f"  - name: {worker.name}\n", f"  - name: {worker.name}\n    hca: [roceP2p1s0f1]\n"
        )
    )
    flags = {**tc.SANDBOX, "executor": "ray", "env": {"SPARK_TEST_SHARD_DELAY": "0.02"}}
    config = resolve(
        Inputs(
            cluster_file=str(path),
            user_config="",
            environ={},
            flags={k: (v, f"--{k}") for k, v in flags.items()},
        )
    )
    ok, got, _ = asyncio.run(launch(config))
    assert ok, got
    nets = {n.node: n.text for n in next(e for e in got if isinstance(e, ev.Ready)).nccl}
    assert nets[worker.name] == (
        f"NCCL: IB/RoCE (IB) on roceP2p1s0f1 over {tc.NETDEV} {worker.ip}; init complete (1/1 of its ranks)"
    ), nets
    assert "rocep1s0f1, roceP2p1s0f1" in nets[cluster.nodes[0].name]
    asyncio.run(down(config))


def test_socket_fallback_from_a_down_hca_names_the_port(cluster, tmp_path):
    """A RoCE port that is down leaves NCCL no IB device: the warning names the HCA and its state
    as the node's ibdev2netdev shows it; where spark-tui sees no cause it says so."""
    head, worker = cluster.nodes[:2]
    cluster.set_host_tool_sample(
        worker, IBDEV_SAMPLE="netif/ibdev2netdev-dgxspark-f0-up-perfguide-spark-5c2d.txt"
    )
    env = {"SPARK_TEST_SHARD_DELAY": "0.02", "SPARK_TEST_IB_DOWN": "1"}
    config = config_for(cluster, 2, tmp_path, executor="native", env=env)
    try:
        ok, got, _ = asyncio.run(launch(config))
        assert ok, got
        nets = {n.node: n for n in next(e for e in got if isinstance(e, ev.Ready)).nccl}
        init = "; init complete (1/1 of its ranks)"  # the READY line goes on with the node's init
        assert nets[worker.name].text.endswith(
            f": HCA rocep1s0f1 is Down, roceP2p1s0f1 is Down on {worker.name}{init}"
        ), nets
        assert nets[head.name].text.endswith(
            ": cause not in the log: check /dev/infiniband in the container and `ibdev2netdev` on the node"
            + init
        )
    finally:
        cluster.set_host_tool_sample(
            worker, IBDEV_SAMPLE="netif/ibdev2netdev-dgxspark-three-sparks-all-up.txt"
        )
        asyncio.run(down(config))


def test_rollback_when_interrupted_mid_launch(cluster, tmp_path):
    config = config_for(cluster, 2, tmp_path, env={"SPARK_TEST_SHARD_DELAY": "2"})
    ok, got, _ = asyncio.run(launch(config, cancel_after=2.0))
    assert not ok
    _assert_rolled_back(cluster, 2, got, "interrupted")


def test_rollback_when_vllm_runs_out_of_memory(cluster, tmp_path):
    config = config_for(cluster, 2, tmp_path, env={"SPARK_TEST_FAIL": "oom"})
    ok, got, _ = asyncio.run(launch(config))
    assert not ok
    _assert_rolled_back(cluster, 2, got, "out of memory")


def test_same_name_container_with_other_image_is_refused(cluster, tmp_path):
    worker = cluster.nodes[1]
    cluster.import_image(worker, "other/image:1", variant="other")
    cluster.docker(
        worker, "run", "-d", "--name", "vllm_node", "--entrypoint", "sleep", "other/image:1", "300"
    )
    ok, got, _ = asyncio.run(launch(config_for(cluster, 2, tmp_path)))
    assert not ok
    failed = next(e for e in got if isinstance(e, ev.Failed))
    assert "already exists" in failed.cause and "other/image:1" in failed.cause
    assert containers(cluster, 2)[cluster.nodes[0].name] == []
    assert len(containers(cluster, 2)[worker.name]) == 1  # not ours: left alone


def test_drift_when_container_replaced_by_hand(cluster, tmp_path):
    config = config_for(cluster, 2, tmp_path)
    ok, _, items = asyncio.run(launch(config))
    assert ok and items == []
    worker = cluster.nodes[1]
    cluster.docker(worker, "rm", "-f", "vllm_node")
    cluster.import_image(worker, variant="other")  # another image under the same tag
    cluster.docker(
        worker,
        "run",
        "-d",
        "--name",
        "vllm_node",
        "--network",
        "host",
        "-v",
        f"{tmp_path}:/hostdata",
        "--entrypoint",
        "sleep",
        tc.IMAGE,
        "300",
    )

    async def check():
        async with Nodes(config) as nodes:
            return await drift(config, nodes)

    try:
        items = asyncio.run(check())
        whats = {i.what for i in items if i.node == worker.name}
        assert {"image", "command", "config-hash", "mounts"} <= whats
        mounts = next(i for i in items if i.what == "mounts")
        # the default cache volume, ~ expanded to the home of the login user on the node
        assert (mounts.requested, mounts.actual) == (
            "/root/.cache/huggingface:/root/.cache/huggingface",
            f"{tmp_path}:/hostdata",
        )
        image = next(i for i in items if i.what == "image")
        assert "another image under the same tag" in image.actual
        assert not [i for i in items if i.node == cluster.nodes[0].name]
    finally:
        cluster.import_image(worker)


def test_down_reports_unreachable_node_then_finishes(cluster, tmp_path):
    config = config_for(cluster, 2, tmp_path, connect_timeout=2.0)
    ok, _, _ = asyncio.run(launch(config))
    assert ok
    cluster.link_down(cluster.nodes[1])
    try:
        ok, got = asyncio.run(down(config))
        assert not ok
        holding = [e for e in got if isinstance(e, ev.StillHolding)]
        assert [h.node for h in holding] == [cluster.nodes[1].name]
        assert containers(cluster, 2)[cluster.nodes[0].name] == []
    finally:
        cluster.link_up(cluster.nodes[1])
    ok, got = asyncio.run(down(config))
    assert ok and [e.node for e in got if isinstance(e, ev.Removed)] == [cluster.nodes[1].name]


def test_up_and_down_commands(cluster, tmp_path, run_cli):
    config_for(cluster, 2, tmp_path)
    path = str(tmp_path / "c2.yaml")
    code, out, _ = run_cli("up", "--cluster", path, *tc.SANDBOX_FLAGS, "-e", "SPARK_TEST_SHARD_DELAY=0.02")
    assert code == 0 and "READY" in out and f"http://{cluster.nodes[0].ip}:8000/v1" in out
    code, out, _ = run_cli("down", "--cluster", path, "--yes")
    assert code == 0 and out.count("removed vllm_node") == 2


def test_status_shows_drift_after_a_hand_replacement(cluster, tmp_path, run_cli):
    config = config_for(cluster, 2, tmp_path)
    ok, _, _ = asyncio.run(launch(config))
    assert ok
    code, out, _ = run_cli(
        "status",
        "--cluster",
        str(tmp_path / "c2.yaml"),
        *tc.SANDBOX_FLAGS,
        "-e",
        "SPARK_TEST_SHARD_DELAY=0.02",
    )
    assert "DRIFT" not in out
    worker = cluster.nodes[1]
    cluster.docker(worker, "rm", "-f", "vllm_node")
    cluster.import_image(worker, "hand/made:1", variant="other")
    cluster.docker(worker, "run", "-d", "--name", "vllm_node", "--entrypoint", "sleep", "hand/made:1", "300")
    code, out, _ = run_cli(
        "status",
        "--cluster",
        str(tmp_path / "c2.yaml"),
        *tc.SANDBOX_FLAGS,
        "-e",
        "SPARK_TEST_SHARD_DELAY=0.02",
    )
    assert f"DRIFT {worker.name} image: requested {tc.IMAGE}, actual hand/made:1" in out


def test_status_tells_the_whole_story(cluster, tmp_path, run_cli):
    """Serving state (endpoint, model, ready), NCCL per node, foreign containers, drift."""
    config = config_for(cluster, 2, tmp_path, executor="ray")
    ok, _, _ = asyncio.run(launch(config))
    assert ok
    head, worker = cluster.nodes[:2]
    cluster.docker(worker, "run", "-d", "--name", "vllm_leftover", "--entrypoint", "sleep", tc.IMAGE, "300")
    argv = ["status", "--cluster", str(tmp_path / "c2.yaml"), *tc.SANDBOX_FLAGS, "--executor", "ray"]
    code, out, _ = run_cli(*argv, "-e", "SPARK_TEST_SHARD_DELAY=0.02")
    assert code == 0, out
    model = config["served_model_name"]
    assert f"cluster {config['name']}: READY: {model} at http://{head.ip}:8000/v1" in out, out
    for node in (head, worker):
        assert (
            f"{node.name:<10} NCCL: IB/RoCE (IB) on rocep1s0f1, roceP2p1s0f1 over {tc.NETDEV} {node.ip}"
            in out
        )
    assert f"FOREIGN {worker.name} vllm_leftover (running, image {tc.IMAGE}, up " in out
    assert "looks like vLLM/Ray" in out and "DRIFT" not in out
    # The endpoint stops answering: the container still runs, the cluster is not serving.
    cluster.docker(head, "exec", "vllm_node", "pkill", "-f", "vllm_http")
    code, out, _ = run_cli(*argv, "--json", "-e", "SPARK_TEST_SHARD_DELAY=0.02")
    data = json.loads(out)
    assert data["serving"]["ready"] is False and data["running"] == [head.name, worker.name]
    assert "not answering" in data["serving"]["detail"]
    assert [c["name"] for c in data["foreign"][worker.name]] == ["vllm_leftover"]
    asyncio.run(down(config))


def test_status_names_the_worker_whose_rank_failed(cluster, tmp_path, run_cli):
    """After READY a worker's rank runs out of memory (a big request, say): its lines reach the
    head's log with the worker's prefix and the endpoint stops answering. `status` names the
    worker, and the head only as where the line was read; each of the 4 nodes' NCCL lines keeps
    its transport and init."""
    config = config_for(cluster, 4, tmp_path, executor="ray")
    ok, _, _ = asyncio.run(launch(config))
    assert ok
    head, worker = cluster.nodes[0], cluster.nodes[3]
    oom = (
        f"(RayWorkerWrapper pid=4242, ip={worker.ip}) ERROR 12-03 10:00:00 [worker_base.py:620] "
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 28.44 GiB. GPU 0 has a total "
        "capacity of 119.70 GiB of which 1.38 GiB is free."
    )
    engine = "(EngineCore_DP0 pid=7) ERROR 12-03 10:00:01 [core.py:708] EngineCore encountered an issue."
    script = f"echo {shlex.quote(oom)} >/proc/1/fd/1; echo {shlex.quote(engine)} >/proc/1/fd/1"
    cluster.docker(head, "exec", "vllm_node", "sh", "-c", script)
    # the endpoint stops answering (the Python stand-in's server, else the shell stand-in's httpd)
    if cluster.docker(head, "exec", "vllm_node", "pkill", "-f", "vllm_http", check=False).returncode:
        cluster.docker(head, "exec", "vllm_node", "killall", "httpd")
    argv = ["status", "--cluster", str(tmp_path / "c4.yaml"), *tc.SANDBOX_FLAGS, "--executor", "ray"]
    code, out, _ = run_cli(*argv, "-e", "SPARK_TEST_SHARD_DELAY=0.02")
    assert "NOT READY" in out, out
    assert (
        f"FAILED {worker.name}: vLLM failed on {worker.name}'s rank (ip={worker.ip}, read in {head.name}'s log): "
        f"(RayWorkerWrapper pid=4242, ip={worker.ip}) ERROR" in out
    ), out
    assert f"FAILED {head.name}" not in out
    for node in cluster.nodes[:4]:  # each node its own transport and init, a worker's from the head's log
        assert (
            f"{node.name:<10} NCCL: IB/RoCE (IB) on rocep1s0f1, roceP2p1s0f1 over {tc.NETDEV} {node.ip}; init complete (1/1 of its ranks)"
            in out
        )
    asyncio.run(down(config))


def test_status_watch_reads_each_log_head_once(cluster, tmp_path, monkeypatch):
    """NCCL sets up at the start of a log: once it has, `status --watch` rounds read no log again."""
    from spark_tui.core.node import engines
    from spark_tui.core.report.cluster_state import cluster_state

    config = config_for(cluster, 2, tmp_path, executor="ray")
    ok, _, _ = asyncio.run(launch(config))
    assert ok
    reads = []
    real = engines.log_head
    monkeypatch.setattr(engines, "log_head", lambda client, name: reads.append(name) or real(client, name))

    async def rounds():
        cache: dict = {}
        async with Nodes(config) as nodes:
            cfg, snaps = await with_detected(config, nodes)
            first = await cluster_state(cfg, nodes, snaps, cache)
            second = await cluster_state(cfg, nodes, snaps, cache)
        return first, second

    first, second = asyncio.run(rounds())
    assert len(reads) == 2 and first.nccl == second.nccl  # both nodes once, then from the cache
    assert second.nccl[cluster.nodes[1].name].transport == "IB"
    asyncio.run(down(config))


def test_setting_values_with_shell_metacharacters_never_execute(cluster, tmp_path):
    # Under the temp dir: it exists on the nodes and in the containers, so an injected touch would work.
    canary = f"{tempfile.gettempdir()}/spark-tui-launch-canary-{tmp_path.name}"
    hostile = f"$(touch {canary}); `touch {canary}`; touch {canary}"
    config = config_for(
        cluster,
        2,
        tmp_path,
        env={"SPARK_TEST_SHARD_DELAY": "0.02", "HOSTILE": hostile},
        vllm_args=["--chat-template", hostile],
    )
    ok, _, _ = asyncio.run(launch(config))
    assert ok
    head = cluster.nodes[0]
    env = cluster.docker(head, "exec", "vllm_node", "sh", "-c", 'printf %s "$HOSTILE"').stdout
    assert env == hostile
    for node in cluster.nodes[:2]:
        assert tc.run(node.nsenter("test", "-e", canary), check=False).returncode != 0
        assert cluster.docker(node, "exec", "vllm_node", "test", "-e", canary, check=False).returncode != 0


def test_unset_netdev_and_hca_are_detected_and_labelled(cluster, tmp_path):
    from spark_tui.core.node.probes import detected_values

    path = cluster.cluster_file(2, tmp_path / "nodetect.yaml")
    text = "".join(
        line + "\n"
        for line in Path(path).read_text().splitlines()
        if not line.startswith(("netdev:", "hca:"))
    )
    Path(path).write_text(text)
    config = resolve(Inputs(cluster_file=path, user_config="", environ={}))
    assert config.node(cluster.nodes[1].name)["netdev"] is None

    async def go():
        async with Nodes(config) as nodes:
            return await nodes.snapshot_all()

    detected = detected_values(config, asyncio.run(go()))
    config = resolve(Inputs(cluster_file=path, user_config="", environ={}, detected=detected))
    worker = config.node(cluster.nodes[1].name)
    assert worker["netdev"] == tc.NETDEV and worker.values["netdev"].source.layer == "detected"
    assert worker["hca"] == ["rocep1s0f1", "roceP2p1s0f1"]
    env = {v.name: v for v in worker.container_env}
    assert (
        env["NCCL_SOCKET_IFNAME"].value == tc.NETDEV
        and "detected on spark-2" in env["NCCL_SOCKET_IFNAME"].derived_from
    )
    assert env["NCCL_IB_HCA"].value == "rocep1s0f1,roceP2p1s0f1"


@pytest.mark.parametrize("executor", ["ray", "native"])
def test_vllm_rejecting_an_argument_fails_at_once_naming_node_and_line(cluster, tmp_path, executor):
    """vLLM's argparse error ends `vllm serve` at once: the verdict quotes it, long before any timeout."""
    config = config_for(cluster, 2, tmp_path, executor=executor, vllm_args=["--no-such-option"])
    # Timed from the moment `vllm serve` started (Ray: exec'd on the head; native: each container's
    # command), not from the launch's start: the containers and Ray's join before it take longer on
    # a loaded machine (34.7 s in all once, with helpers' test runs beside it), vLLM's refusal does not.
    at: dict[str, float] = {}

    def note(e):
        if isinstance(e, ev.Stage) and (e.stage, e.status) in (("container", "done"), ("vllm", "started")):
            at["serve"] = time.monotonic()
        elif isinstance(e, ev.Failed):
            at.setdefault("failed", time.monotonic())

    ok, got, _ = asyncio.run(launch(config, on_event=note))
    assert not ok and at["failed"] - at["serve"] < 30, at
    failed = next(e for e in got if isinstance(e, ev.Failed))
    # native: every node's vllm refuses it, and the first exit seen is named; Ray: only the head runs vllm
    named = [n.name for n in cluster.nodes[:2]] if executor == "native" else [cluster.nodes[0].name]
    assert any(failed.cause.startswith(f"{n}: ") for n in named), failed.cause
    assert "unrecognized arguments: --no-such-option" in failed.cause
    _assert_rolled_back(cluster, 2, got, "")


def test_older_vllm_and_ray_output_still_launch(cluster, tmp_path):
    """Older vLLM prints a Uvicorn line, older Ray `Healthy:`/`Usage:`: both still reach READY."""
    env = {
        "SPARK_TEST_SHARD_DELAY": "0.02",
        "SPARK_TEST_LEGACY_UVICORN": "1",
        "SPARK_TEST_RAY_STATUS": "legacy",
    }
    ok, got, items = asyncio.run(launch(config_for(cluster, 2, tmp_path, executor="ray", env=env)))
    assert ok and items == [], got


@pytest.mark.parametrize(
    "profile, executor, evidence",
    [
        # NGC 25.10 ships vLLM 0.10.2: `vllm serve` rejects the native multi-node flags and exits.
        ("ngc-25.10", "native", "unrecognized arguments: --nnodes"),
        # vllm/vllm-openai without Ray: the Ray executor cannot start `ray` in it.
        (
            "noray",
            "ray",
            "`ray` is not in image spark-test/vllm-noray:v0.19.0; executor ray needs Ray in the image",
        ),
    ],
)
def test_image_that_cannot_run_the_executor_fails_naming_node_and_cause(
    cluster, tmp_path, profile, executor, evidence
):
    image = tc.IMAGES[profile].ref
    for node in cluster.nodes[:2]:
        cluster.import_image(node, image, profile=profile)
    try:
        ok, got, _ = asyncio.run(launch(config_for(cluster, 2, tmp_path, executor=executor, image=image)))
        assert not ok
        failed = next(e for e in got if isinstance(e, ev.Failed))
        text = failed.cause + "\n" + "\n".join(failed.log_lines)
        assert any(failed.cause.startswith(n.name + ": ") for n in cluster.nodes[:2]) and evidence in text, (
            text
        )
        _assert_rolled_back(cluster, 2, got, "")
    finally:
        for node in cluster.nodes[:2]:
            cluster.docker(node, "rmi", "-f", image)


@pytest.mark.parametrize("executor", ["ray", "native"])
def test_plan_is_what_up_creates(cluster, tmp_path, run_cli, executor):
    """Every container field `plan` shows is the one `up` creates, detected values included."""
    import json

    path = cluster.cluster_file(2, tmp_path / "c2.yaml")
    flags = [*tc.SANDBOX_FLAGS, "--executor", executor, "-e", "SPARK_TEST_SHARD_DELAY=0.02"]
    code, out, err = run_cli("plan", "--cluster", path, "--json", *flags)
    assert code == 0, err
    planned = {c["node"]: c for c in json.loads(out)["containers"]}
    code, out, err = run_cli("up", "--cluster", path, *flags)
    assert code == 0 and "READY" in out, out + err
    for node in cluster.nodes[:2]:
        spec = planned[node.name]
        real = json.loads(cluster.docker(node, "inspect", spec["name"]).stdout)[0]
        cfg, host = real["Config"], real["HostConfig"]
        image_env = set(
            json.loads(
                cluster.docker(
                    node, "image", "inspect", "--format", "{{json .Config.Env}}", spec["image"]
                ).stdout
            )
            or []
        )
        assert cfg["Image"] == spec["image"]
        assert (cfg["Entrypoint"], cfg["Cmd"]) == (spec["entrypoint"], spec["cmd"])
        assert set(cfg["Env"]) - image_env == {f"{e['name']}={e['value']}" for e in spec["env"]}
        # Who launched and when: added by `up` itself, as the plan says (launch_labels).
        launched = set(spec["launch_labels"])
        assert {k: v for k, v in cfg["Labels"].items() if k not in launched} == spec["labels"]
        assert launched == {"spark-tui.launched-by", "spark-tui.launched-at"} <= set(cfg["Labels"])
        assert sorted(host["Binds"] or []) == sorted(spec["volumes"]) and not any(
            "~" in b for b in host["Binds"]
        )
        assert (host["NetworkMode"], host["IpcMode"], host["Privileged"]) == (
            spec["network"],
            spec["ipc"],
            spec["privileged"],
        )
        assert (host["CapAdd"] or []) == spec["cap_add"]
        assert [d["PathOnHost"] for d in host["Devices"] or []] == spec["devices"]
        assert host["ShmSize"] == 64 << 30 and spec["shm_size"] == "64g"
        assert host["Memory"] == 110 << 30 and spec["memory_limit"] == "110g"
        assert host["PidsLimit"] == spec["pids_limit"]
        assert [(u["Name"], u["Soft"], u["Hard"]) for u in host["Ulimits"]] == [
            ("nofile", *spec["ulimits"]["nofile"])
        ]
        assert host["DeviceRequests"][0]["Capabilities"] == [["gpu"]] and spec["gpus"] == "auto"
        env = {e["name"]: e for e in spec["env"]}
        assert (
            env["NCCL_SOCKET_IFNAME"]["value"] == tc.NETDEV
            and f"detected on {node.name}" in env["NCCL_SOCKET_IFNAME"]["source"]
        )
        assert (
            env["NCCL_IB_HCA"]["value"] == "rocep1s0f1,roceP2p1s0f1"
            and "detected" in env["NCCL_IB_HCA"]["source"]
        )
        assert any("~ = $HOME of the login user on " + node.name in note for note in spec["volume_notes"])
        assert spec["entrypoint_note"] == 'replaces the image\'s ENTRYPOINT ["vllm", "serve"]'
    code, out, _ = run_cli("status", "--cluster", path, *flags)
    assert "DRIFT" not in out  # right after a clean launch: nothing differs


@pytest.mark.parametrize("as_json", [False, True])
def test_up_failure_report_is_masked_and_inert(cluster, tmp_path, run_cli, as_json):
    """vLLM's argparse error quotes the arguments it refused: the token and an escape sequence in
    them reach `up`'s failure report masked and inert, as in the wizard."""
    import json

    path = cluster.cluster_file(2, tmp_path / "c2.yaml")
    token = "hf_TopSecretToken123"
    hostile = f"--bogus={token}\x1b]0;owned\x07\x1b[31m"
    args = [
        "up",
        "--cluster",
        path,
        *tc.SANDBOX_FLAGS,
        "--executor",
        "native",
        "--hf-token",
        token,
        "--vllm-args",
        shlex.quote(hostile),
    ] + (["--json"] if as_json else [])
    code, out, err = run_cli(*args)
    assert code == 1 and token not in out + err
    if as_json:
        failed = next(json.loads(line) for line in out.splitlines() if '"event": "Failed"' in line)
        assert "--bogus=***" in failed["cause"]
    else:
        assert "\x1b" not in out and "\x07" not in out
        assert "unrecognized arguments: --bogus=***" in out


def test_progress_is_emitted_only_when_it_changes(cluster, tmp_path):
    """Polls every 250 ms must not repeat `shards 4/4` or `2/2 nodes` lines until ready."""
    ok, got, _ = asyncio.run(launch(config_for(cluster, 2, tmp_path, env={"SPARK_TEST_SHARD_DELAY": "0.3"})))
    assert ok
    stages = [(e.node, e.stage, e.status, e.detail, e.fraction) for e in got if isinstance(e, ev.Stage)]
    repeats = [a for a, b in zip(stages, stages[1:], strict=False) if a == b]
    assert repeats == [] and len(stages) == len(set(stages)), stages


def test_worker_that_cannot_reach_the_gcs_is_named_in_seconds(cluster, tmp_path):
    """A firewall on the worker refuses the head's GCS port: the worker is named from its own
    log lines within seconds (timeouts.ray_join is 120 s), with what its network can reach."""
    head, worker = cluster.nodes[0], cluster.nodes[1]
    cluster.block_tcp(worker, 29501)
    try:
        start = time.monotonic()
        ok, got, _ = asyncio.run(launch(config_for(cluster, 2, tmp_path, executor="ray")))
        elapsed = time.monotonic() - start
    finally:
        cluster.unblock_tcp(worker, 29501)
    # From the worker's container start to the verdict: Ray's GCS client says it 5 s after `ray
    # start` is up (its imports take seconds more on this shared 2-core machine), the verdict
    # comes from that line, long before timeouts.ray_join (120 s) would end the wait.
    started = next(
        e.elapsed
        for e in got
        if isinstance(e, ev.Stage) and (e.node, e.stage, e.status) == (worker.name, "container", "done")
    )
    assert not ok and elapsed - started < 45, (started, elapsed)
    failed = next(e for e in got if isinstance(e, ev.Failed))
    assert failed.cause.startswith(f"{worker.name}: Ray worker cannot join the head's GCS: "), failed.cause
    assert f"Failed to connect to GCS at address {head.ip}:29501" in failed.cause
    assert f"{worker.name} reaches {head.name} at {head.ip}, but not the GCS port 29501" in failed.cause
    _assert_rolled_back(cluster, 2, got, "")
