"""`spark-tui check` on the namespace test cluster."""

import asyncio
import json
import os
import re
import shutil
import subprocess

import pytest

from spark_tui.core.node.nodes import REACH_SCRIPT, Nodes
from spark_tui.core.report.check import run_checks
from spark_tui.settings.resolve import Inputs, resolve
from tests.cluster import cluster as tc

pytestmark = pytest.mark.cluster


def config_for(cluster, count, tmp_path, environ=None, **flags):
    path = cluster.cluster_file(count, tmp_path / f"c{count}.yaml")
    return resolve(
        Inputs(
            cluster_file=path,
            user_config="",
            environ=environ or {},
            flags={k: (v, f"--{k}") for k, v in flags.items()},
        )
    )


def checks(config):
    async def go():
        async with Nodes(config) as nodes:
            return await run_checks(config, nodes)

    results = asyncio.run(go())
    return results, {(r.id, r.node): r for r in results}


@pytest.mark.parametrize("count", [2, 4])
def test_check_passes_on_a_healthy_cluster(cluster, tmp_path, count):
    results, by = checks(config_for(cluster, count, tmp_path))
    assert [r for r in results if r.status == "fail"] == []
    for node in cluster.nodes[:count]:
        for cid in (
            "ssh.reachable",
            "docker.engine",
            "image.present",
            "container.absent",
            "gpu.present",
            "net.data_interface",
            "roce.device",
            "roce.twins",
            "image.platform",
        ):
            assert by[(cid, node.name)].status == "pass", (cid, node.name, by[(cid, node.name)])
        # netdev and hca were left unset: the nodes' own interfaces and RoCE twins were detected
        assert "rocep1s0f1,roceP2p1s0f1" in by[("roce.twins", node.name)].message
        assert (
            "roce.dev_infiniband",
            node.name,
        ) not in by  # privileged (the default) needs no /dev/infiniband check
        assert by[("model.cached", node.name)].status == "warn"  # the test model is in no cache
    assert (
        by[("image.same", "cluster")].status == "pass" and by[("parallel.size", "cluster")].status == "pass"
    )
    assert sum(r.id == "net.reach" and r.status == "pass" for r in results) == count * (count - 1)
    # The verdict follows the node's real free space (the host's disk, measured here with df), not a
    # fixed answer: a test host with under 50 GiB free sees the warning an operator would.
    disk = by[("disk.free", cluster.nodes[0].name)]
    df = subprocess.run(
        cluster.nodes[0].nsenter("df", "-Pk", "/root"), capture_output=True, text=True, check=True
    )
    free_gib = int(df.stdout.splitlines()[-1].split()[3]) / 1024**2
    shown = re.match(r"(\d+) GiB free on the filesystem of /root", disk.message)
    assert shown and abs(int(shown[1]) - free_gib) < 2, (disk, free_gib)
    assert disk.status == ("pass" if free_gib >= 50 else "warn"), (disk, free_gib)
    assert "overlay2" in by[("docker.engine", cluster.nodes[0].name)].message
    assert "GB10" in by[("gpu.present", cluster.nodes[0].name)].message


def test_missing_image_names_the_node_and_the_fix(cluster, tmp_path):
    cluster.delete_image(cluster.nodes[1])
    try:
        _, by = checks(config_for(cluster, 2, tmp_path))
    finally:
        cluster.restore_image(cluster.nodes[1])
    r = by[("image.present", cluster.nodes[1].name)]
    assert (
        r.status == "fail"
        and cluster.nodes[1].name in r.message
        and f"spark-tui sync image --to {cluster.nodes[1].name}" in r.fix
    )
    assert by[("image.present", cluster.nodes[0].name)].status == "pass"


def test_same_tag_different_image_fails(cluster, tmp_path):
    cluster.import_image(cluster.nodes[1], variant="other")
    try:
        _, by = checks(config_for(cluster, 2, tmp_path))
    finally:
        cluster.import_image(cluster.nodes[1])
    r = by[("image.same", "cluster")]
    assert r.status == "fail" and cluster.nodes[1].name in r.message and "layer digests differ" in r.message


def test_an_image_built_for_another_cpu_is_named_before_the_launch(cluster, tmp_path):
    """The worker holds the image built for another CPU (an amd64 image on the arm64 Spark,
    mirrored on this machine): check names that node, both architectures and the fix, before
    anything starts; the head's own build passes."""
    head, worker = cluster.nodes[:2]
    image = "spark-test/vllm-foreign-check:latest"
    cluster.import_image(head, image)
    try:
        arch = cluster.import_foreign_image(worker, image, ("/opt/venv/bin/vllm",))
        machine = os.uname().machine  # a namespace node runs on this machine's kernel
        _, by = checks(config_for(cluster, 2, tmp_path, image=image))
    finally:
        for node in (head, worker):
            cluster.docker(node, "rmi", "-f", image, check=False)
    bad = by[("image.platform", worker.name)]
    assert bad.status == "fail" and f"built for linux/{arch}, but {worker.name} is {machine}" in bad.message
    assert "exec format error" in bad.message and "docker pull --platform linux/" in bad.fix, bad
    good = by[("image.platform", head.name)]
    assert good.status == "pass" and good.message.endswith(f"the CPU of {head.name} ({machine})"), good


def test_existing_container_fails_and_shows_its_image(cluster, tmp_path):
    cluster.import_image(cluster.nodes[0], "someone/else:2", variant="other")
    cluster.docker(
        cluster.nodes[0], "run", "-d", "--name", "vllm_node", "--entrypoint", "sleep", "someone/else:2", "300"
    )
    _, by = checks(config_for(cluster, 2, tmp_path))
    r = by[("container.absent", cluster.nodes[0].name)]
    assert r.status == "fail" and "someone/else:2" in r.message


def test_dockerd_down_fails_that_node_only(cluster, tmp_path):
    cluster.stop_dockerd(cluster.nodes[1])
    _, by = checks(config_for(cluster, 2, tmp_path))
    assert by[("docker.engine", cluster.nodes[1].name)].status == "fail"
    assert by[("image.present", cluster.nodes[1].name)].status == "skipped"
    assert by[("docker.engine", cluster.nodes[0].name)].status == "pass"


def test_one_twin_mtu_port_and_lookalike(cluster, tmp_path):
    node = cluster.nodes[1]
    tc.run(["ip", "-n", node.netns, "link", "set", tc.NETDEV, "mtu", "1500"])
    cluster.docker(
        cluster.nodes[0],
        "run",
        "-d",
        "--name",
        "squatter",
        "--network",
        "host",
        "--entrypoint",
        "python3",
        tc.IMAGE,
        "-m",
        "http.server",
        "8000",
    )
    try:
        config = config_for(
            cluster,
            2,
            tmp_path,
            environ={"IMAGE_NAME": "their/image"},
            hca=["rocep1s0f1"],
            min_free_disk="900000g",
        )
        results, by = checks(config)
    finally:
        tc.run(["ip", "-n", node.netns, "link", "set", tc.NETDEV, "mtu", "9000"])
    assert (
        by[("roce.twins", node.name)].status == "warn"
        and "roceP2p1s0f1" in by[("roce.twins", node.name)].message
    )
    assert by[("net.mtu", node.name)].status == "warn" and by[("net.mtu_equal", "cluster")].status == "fail"
    assert by[("port.vllm_port", cluster.nodes[0].name)].status == "fail"
    assert by[("port.master_port", cluster.nodes[0].name)].status == "pass"
    look = by[("config.lookalike_env", "cluster")]
    assert look.status == "warn" and "IMAGE_NAME=their/image" in look.message
    disk = by[("disk.free", node.name)]
    assert disk.status == "warn" and "below min_free_disk 900000g" in disk.message


def test_unreachable_node_and_exit_codes(cluster, tmp_path, run_cli):
    config_for(cluster, 2, tmp_path)
    code, out, _ = run_cli("check", "--cluster", str(tmp_path / "c2.yaml"), "--json")
    data = json.loads(out)
    assert code == 0 and data["ok"]
    cluster.link_down(cluster.nodes[1])
    try:
        code, out, _ = run_cli("check", "--cluster", str(tmp_path / "c2.yaml"), "--connect-timeout", "2")
    finally:
        cluster.link_up(cluster.nodes[1])
    assert code == 1 and f"[FAIL] {cluster.nodes[1].name}" in out and "ssh.reachable" in out
    # The node still up tried the other's data address with its own ping, and says it failed.
    assert f"cannot reach {cluster.nodes[1].name} at {cluster.nodes[1].ip} over the data network" in out


@pytest.mark.parametrize("tools", ["ping", "bash /dev/tcp (no ping on the node)"])
def test_reachability_from_a_node_with_either_tool(cluster, tmp_path, tools):
    """REACH_SCRIPT run on node 1 against a live peer and an address nobody holds."""
    config = config_for(cluster, 2, tmp_path)
    dead = "10.231.0.250"
    script = REACH_SCRIPT
    if tools != "ping":
        # A PATH with bash and timeout but no ping: the TCP fallback runs.
        only = tmp_path / "bin"
        only.mkdir()
        for tool in ("bash", "timeout"):
            (only / tool).symlink_to(shutil.which(tool))
        script = f"PATH={only}\n{script}"

    async def go():
        async with Nodes(config) as nodes:
            return await nodes.transports[cluster.nodes[0].name].run_script(
                script, (cluster.nodes[1].ip, dead), timeout=20
            )

    out = asyncio.run(go()).split()
    assert out.count("ok") == 1 and out[out.index("ok") + 1] == cluster.nodes[1].ip
    assert out.count("fail") == 1 and out[out.index("fail") + 1] == dead


def test_non_privileged_mode_checks_dev_infiniband(cluster, tmp_path):
    results, by = checks(config_for(cluster, 2, tmp_path, privileged=False))
    for node in cluster.nodes[:2]:
        assert by[("roce.dev_infiniband", node.name)].status == "pass"


def test_check_shows_the_cache_path_as_the_node_resolves_it(cluster, tmp_path):
    results, by = checks(config_for(cluster, 2, tmp_path))
    for node in cluster.nodes[:2]:
        assert "test/tiny-model not in /root/.cache/huggingface on" in by[("model.cached", node.name)].message
        assert "~" not in by[("disk.free", node.name)].message


def test_gpu_driver_not_answering_is_a_named_failure_not_a_crash(cluster, tmp_path, run_cli):
    """After a kernel update nvidia-smi exits 9 with its own message: a node state and a check failure."""
    node = cluster.nodes[1]
    cluster.set_standin(node, SMI_FAIL="driver")
    try:
        results, by = checks(config_for(cluster, 2, tmp_path))
        gpu = by[("gpu.present", node.name)]
        assert (
            gpu.status == "fail"
            and "GPU driver not answering: NVIDIA-SMI has failed" in gpu.message
            and "kernel module" in gpu.fix
        )
        assert by[("gpu.present", cluster.nodes[0].name)].status == "pass"
        code, out, err = run_cli("check", "--cluster", str(tmp_path / "c2.yaml"))
        assert code == 1 and "Traceback" not in err and "GPU driver not answering" in out
    finally:
        cluster.set_standin(node, SMI_FAIL="")


def test_what_else_holds_memory_is_reported_per_node(cluster, tmp_path):
    """GPU processes (nvidia-smi --query-compute-apps) and running containers not of this cluster,
    those that look like vLLM or Ray flagged: on unified memory they decide whether a load fits."""
    node = cluster.nodes[1]
    image = "vllm-node-old:latest"  # what the community launcher left running
    cluster.import_image(node, image, variant="other")
    cluster.docker(node, "run", "-d", "--name", "vllm_community", "--entrypoint", "sleep", image, "600")
    try:
        results, by = checks(config_for(cluster, 2, tmp_path))
    finally:
        cluster.docker(node, "rm", "-f", "vllm_community")
        cluster.docker(node, "rmi", "-f", image)
    foreign = by[("containers.foreign", node.name)]
    assert foreign.status == "warn" and "vllm_community (vllm-node-old:latest, up " in foreign.message
    assert "looks like vLLM/Ray" in foreign.message and "docker stop" in foreign.fix
    assert by[("containers.foreign", cluster.nodes[0].name)].status == "pass"
    # the stand-in nvidia-smi reports the process of the captured GB10 sample on every node
    procs = by[("gpu.processes", node.name)]
    assert procs.status == "warn" and "pid 114687 /usr/local/bin/python 19135 MiB" in procs.message
