"""Failure modes of the Ray executor with real Ray (tests/README.md): what the nodes register as,
a worker's Ray dying during the load, head and worker with different Ray versions, a stale Ray head
holding the GCS port, and the stand-in vLLM's failure-log knob."""

import asyncio
import json
import time

import pytest

from spark_tui.core.launch import events as ev
from tests.cluster import cluster as tc
from tests.cluster.images import FAILURES
from tests.test_check import checks
from tests.test_check import config_for as check_config
from tests.test_launch import _assert_rolled_back, config_for, launch

pytestmark = pytest.mark.cluster

NODES_SCRIPT = (
    'import json, ray; ray.init(address="auto", logging_level="ERROR"); '
    'print("NODES " + json.dumps(sorted(n["NodeManagerAddress"] for n in ray.nodes() if n["Alive"])))'
)


def _only_container(cluster, node):
    ids = cluster.docker(node, "ps", "-q").stdout.split()
    assert len(ids) == 1, ids
    return ids[0]


def test_ray_nodes_at_data_addresses_and_a_worker_ray_dying_in_the_load(cluster, tmp_path):
    """The worker has a second (management) network with the default route, where Ray would put
    the node if not told: every Ray node registers under its data address all the same (Ray's own
    node table says so). Then the worker's raylet is killed while the model loads: the launch
    names that node and removes every container."""
    head, worker = cluster.nodes[:2]
    management = cluster.add_management_network(worker)
    try:
        alone = cluster.docker(
            *(worker, "run", "--rm", "--network", "host", "--entrypoint", "python3", tc.IMAGE, "-c"),
            "import ray._private.services as s; print(s.get_node_ip_address())",
        ).stdout.strip()
        assert alone == management  # Ray's own choice on this node
        config = config_for(cluster, 2, tmp_path, executor="ray", env={"SPARK_TEST_SHARD_DELAY": "3"})
        seen: dict = {}

        def on_event(e):
            if isinstance(e, ev.Stage) and (e.node, e.stage, e.status) == ("cluster", "ray_join", "done"):
                head_id = _only_container(cluster, head)
                out = cluster.docker(head, "exec", head_id, "python3", "-c", NODES_SCRIPT).stdout
                seen["nodes"] = json.loads(out.split("NODES ", 1)[1])
            if isinstance(e, ev.Stage) and (e.node, e.stage, e.status) == (head.name, "vllm", "started"):
                time.sleep(2)  # the workers are up and the shards are loading
                cluster.docker(worker, "exec", _only_container(cluster, worker), "pkill", "-KILL", "raylet")
                seen["killed"] = time.monotonic()

        ok, got, _ = asyncio.run(launch(config, on_event=on_event))
    finally:
        cluster.remove_management_network(worker)
    assert seen["nodes"] == sorted([head.ip, worker.ip])
    assert not ok and "killed" in seen
    failed = next(e for e in got if isinstance(e, ev.Failed))
    assert failed.cause.startswith(f"{worker.name}: container exited"), failed.cause
    _assert_rolled_back(cluster, 2, got, worker.name)


def test_a_ray_node_registered_under_the_management_address_is_named(cluster, tmp_path):
    """Another launcher's leftover worker on spark-2, started with the node's management address
    (the SSH host address, as launchers that take it for the node IP do), joins the new head under
    that address: the launch names the node, the address and its interface, and rolls back."""
    head, worker = cluster.nodes[:2]
    management = cluster.add_management_network(worker)
    config = config_for(cluster, 2, tmp_path, executor="ray")
    seen: dict = {}

    def on_event(e):
        # Once the head is up, the leftover joins it (before the launch's own worker, or after).
        if isinstance(e, ev.Stage) and e.stage == "ray_join" and "stray" not in seen:
            seen["stray"] = True
            cluster.docker(
                *(worker, "run", "-d", "--name", "ray_leftover", "--network", "host", "--gpus", "all"),
                *("--entrypoint", "ray", tc.IMAGE, "start", "--block"),
                *(f"--address={head.ip}:{config['master_port']}", "--node-ip-address", management),
            )
            deadline = time.monotonic() + 90
            while "Ray runtime started" not in cluster.docker(worker, "logs", "ray_leftover").stdout:
                assert time.monotonic() < deadline, cluster.docker(worker, "logs", "ray_leftover")
                time.sleep(0.5)

    try:
        ok, got, _ = asyncio.run(launch(config, on_event=on_event))
    finally:
        cluster.docker(worker, "rm", "-f", "ray_leftover", check=False)
        cluster.remove_management_network(worker)
    assert not ok
    failed = next(e for e in got if isinstance(e, ev.Failed))
    assert failed.cause.startswith(
        f"{worker.name}: a Ray node registered under {management} (enP7s7), not its data address {worker.ip}"
    ), failed.cause
    _assert_rolled_back(cluster, 2, got, worker.name)


def test_head_and_worker_with_different_ray_versions_are_named_with_both(cluster, tmp_path):
    """An NGC-like image (Ray 2.48.0) under the worker's tag, the head on Ray 2.49.2: the real
    head's GCS fails a check on the older raylet's registration and exits without a word (or the
    worker refuses, when it reads the cluster's version first); the launch names both versions
    and the nodes, and rolls back."""
    head, worker = cluster.nodes[:2]
    cluster.import_image(worker, profile="ngc-25.10")
    try:
        ok, got, _ = asyncio.run(launch(config_for(cluster, 2, tmp_path, executor="ray")))
    finally:
        cluster.import_image(worker)
    assert not ok
    failed = next(e for e in got if isinstance(e, ev.Failed))
    refused = f"{worker.name}: container exited with code 1: Ray refuses to join: this node's image has Ray {tc.RAY_VERSION_NGC}, the head's cluster runs Ray {tc.RAY_VERSION}"
    crashed = f"Ray versions differ ({head.name} has Ray {tc.RAY_VERSION}, {worker.name} has Ray {tc.RAY_VERSION_NGC})"
    # the knowledge base names Ray's own refusal when the worker reads the cluster's version first
    named = failed.cause.startswith(
        f"{worker.name}: the Ray or Python version here differs from the head's "
        f"(Ray {tc.RAY_VERSION_NGC} here, {tc.RAY_VERSION} there)"
    )
    assert failed.cause.startswith(refused) or crashed in failed.cause or named, failed.cause
    _assert_rolled_back(cluster, 2, got, "Ray")


def test_check_names_a_stale_ray_head_holding_the_gcs_port(cluster, tmp_path):
    head = cluster.nodes[0]
    config = check_config(cluster, 2, tmp_path)
    port = str(config["master_port"])
    cluster.docker(
        head,
        *("run", "-d", "--name", "ray_stale", "--network", "host", "--entrypoint", "ray", tc.IMAGE),
        *(
            "start",
            "--block",
            "--head",
            "--port",
            port,
            "--node-ip-address",
            head.ip,
            "--include-dashboard=false",
        ),
    )
    deadline = time.monotonic() + 90
    while "Ray runtime started" not in cluster.docker(head, "logs", "ray_stale").stdout:
        assert time.monotonic() < deadline
        time.sleep(0.5)
    _, by = checks(config)
    result = by[("port.master_port", head.name)]
    assert result.status == "fail", result
    assert result.message.endswith(
        f"held by gcs_server (pid {result.message.split('(pid ')[1].split(')')[0]}) "
        f"in container ray_stale (image {tc.IMAGE})"
    ), result.message


LOGS = sorted(p.stem for p in FAILURES.glob("*.log"))


@pytest.mark.parametrize("name", [*LOGS[:1], "no-such-failure"])
def test_stand_in_vllm_prints_a_recorded_failure_log(cluster, name):
    node = cluster.nodes[0]
    proc = cluster.docker(
        node, "run", "--rm", "-e", f"SPARK_TEST_FAIL=log:{name}", tc.IMAGE, "m", "--port", "8015", check=False
    )
    if name in LOGS:
        assert proc.returncode == 1
        expected = (FAILURES / f"{name}.log").read_text(errors="replace").splitlines()
        assert proc.stdout.splitlines()[-len(expected) :] == expected
    else:
        # As the shell stand-in's `cat` did: the missing file said, exit 1 (up names the exit).
        assert proc.returncode == 1 and "can't open" in proc.stdout and "no-such-failure.log" in proc.stdout
