"""The namespace test cluster itself: real sshd and dockerd per node, stand-ins, fault knobs."""

import json
import os
import subprocess
import time
from pathlib import Path

import pytest

from tests.cluster import cluster as tc

pytestmark = pytest.mark.cluster


def ssh(cluster, node, *cmd, check=True, timeout=20):
    proc = subprocess.run(cluster.ssh_argv(node, *cmd), capture_output=True, text=True, timeout=timeout)
    if check:
        assert proc.returncode == 0, proc.stderr
    return proc


def test_ssh_into_each_node_reaches_its_own_docker_engine(cluster):
    names = set()
    for node in cluster.nodes:
        out = ssh(
            cluster,
            node,
            "hostname && docker info --format '{{.Name}}' && docker ps --format '{{.Names}}' && docker images --format '{{.Repository}}:{{.Tag}}'",
        ).stdout.split("\n")
        assert out[0] == node.name and out[1] == node.name
        assert tc.IMAGE in out
        names.add(out[1])
    assert len(names) == len(cluster.nodes)
    # a container started on node 1 is seen by node 1's engine only
    cluster.docker(cluster.nodes[0], "run", "-d", "--name", "probe1", "--entrypoint", "sleep", tc.IMAGE, "60")
    assert "probe1" in ssh(cluster, cluster.nodes[0], "docker ps --format '{{.Names}}'").stdout
    assert "probe1" not in ssh(cluster, cluster.nodes[1], "docker ps -a --format '{{.Names}}'").stdout


def test_host_network_container_sees_the_spark_interface(cluster):
    node = cluster.nodes[1]
    out = ssh(
        cluster,
        node,
        f"docker run --rm --network host --entrypoint ip {tc.IMAGE} -4 -o addr show {tc.NETDEV}",
    ).stdout
    assert f"inet {node.ip}/24" in out and tc.NETDEV in out


def test_gpus_all_runs_with_the_hook_stand_in(cluster):
    node = cluster.nodes[0]
    proc = ssh(cluster, node, f"docker run --rm --gpus all --entrypoint echo {tc.IMAGE} gpu-ok")
    assert proc.stdout.strip() == "gpu-ok"


def test_host_tool_stand_ins_print_captured_outputs(cluster):
    node = cluster.nodes[0]
    table = ssh(cluster, node, "nvidia-smi").stdout
    assert "NVIDIA GB10" in table and "Not Supported" in table
    assert (
        ssh(cluster, node, "nvidia-smi --query-gpu=name,memory.used --format=csv,noheader").stdout.strip()
        == "NVIDIA GB10, [N/A]"
    )
    assert "rocep1s0f1 port 1 ==> enp1s0f1np1 (Up)" in ssh(cluster, node, "ibdev2netdev").stdout
    cluster.set_host_tool_sample(node, IBDEV_SAMPLE="netif/ibdev2netdev-dgxspark-koyo-f0-up-with-prompt.txt")
    try:
        assert "rocep1s0f1 port 1 ==> enp1s0f1np1 (Down)" in ssh(cluster, node, "ibdev2netdev").stdout
        assert "(Up)" in ssh(cluster, cluster.nodes[1], "ibdev2netdev | grep enp1s0f1np1").stdout
    finally:
        cluster.set_host_tool_sample(node, IBDEV_SAMPLE="netif/ibdev2netdev-dgxspark-three-sparks-all-up.txt")


def _ray_status(cluster, head, name="rayhead", timeout=30.0):
    """`ray status` once Ray's monitor has published one: right after "Ray runtime started" the
    real Ray says "No cluster status" for a few seconds (longer on a loaded machine)."""
    deadline = time.monotonic() + timeout
    while True:
        out = cluster.docker(head, "exec", name, "ray", "status", check=False).stdout
        if "No cluster status" not in out or time.monotonic() > deadline:
            return out
        time.sleep(1)


def _ray_start(cluster, node, name, *args, env=()):
    """Real `ray start --block` in a container of the test image, as a Spark runs it (--gpus all:
    the node's NVML, one GB10, is what Ray counts)."""
    env_args = [arg for kv in env for arg in ("-e", kv)]
    cluster.docker(
        node,
        *("run", "-d", "--name", name, "--network", "host", "--gpus", "all", *env_args),
        *("--entrypoint", "ray", tc.IMAGE, "start", "--block", "--disable-usage-stats", *args),
    )


def test_ray_worker_joins_head_across_the_node_network(cluster):
    head, worker = cluster.nodes[0], cluster.nodes[1]
    _ray_start(cluster, head, "rayhead", "--head", "--port", "6379", "--node-ip-address", head.ip)
    _wait_log(cluster, head, "rayhead", "Ray runtime started.", timeout=90)
    status = _ray_status(cluster, head)
    assert status.count(" 1 node_") == 1 and " 0.0/1.0 GPU" in status, status
    _ray_start(cluster, worker, "rayworker", f"--address={head.ip}:6379", "--node-ip-address", worker.ip)
    deadline = time.monotonic() + 90
    while _ray_status(cluster, head).count(" 1 node_") < 2:
        assert time.monotonic() < deadline, cluster.docker(worker, "logs", "rayworker").stdout
        time.sleep(0.5)
    assert " 0.0/2.0 GPU" in _ray_status(cluster, head)
    assert f"Local node IP: {worker.ip}" in _wait_log(cluster, worker, "rayworker", "Ray runtime started.")
    # Ray's own list of nodes: each registered under its data address, one GPU each.
    listing = cluster.docker(
        head,
        *("exec", "rayhead", "python3", "-c"),
        'import ray; ray.init(address="auto", logging_level="ERROR"); '
        'print(sorted((n["NodeManagerAddress"], n["Resources"].get("GPU")) for n in ray.nodes() if n["Alive"]))',
    ).stdout
    assert listing.strip().splitlines()[-1] == str(sorted([(head.ip, 1.0), (worker.ip, 1.0)]))


def test_ray_sees_no_gpu_without_the_gpu_request(cluster):
    """Ray counts GPUs with NVML, which only a --gpus container gets (the hook puts it there)."""
    head = cluster.nodes[0]
    cluster.docker(
        head,
        *("run", "-d", "--name", "rayhead", "--network", "host", "--entrypoint", "ray", tc.IMAGE),
        *("start", "--block", "--head", "--port", "6381", "--node-ip-address", head.ip),
    )
    _wait_log(cluster, head, "rayhead", "Ray runtime started.", timeout=90)
    status = _ray_status(cluster, head)
    assert "Total Usage:" in status and " GPU" not in status, status


def test_ray_worker_that_cannot_reach_the_head_says_so_within_seconds(cluster):
    worker = cluster.nodes[1]
    _ray_start(cluster, worker, "rayworker", f"--address={cluster.nodes[0].ip}:6390")
    logs = _wait_log(cluster, worker, "rayworker", "Failed to connect to GCS", timeout=30, stderr=True)
    assert f"Failed to connect to GCS at address {cluster.nodes[0].ip}:6390 within 5 seconds" in logs


def test_fault_knob_sshd(cluster):
    node = cluster.nodes[1]
    cluster.stop_sshd(node)
    assert ssh(cluster, node, "true", check=False).returncode == 255
    cluster.start_sshd(node)
    assert ssh(cluster, node, "echo back").stdout.strip() == "back"


def test_fault_knob_dockerd(cluster):
    node = cluster.nodes[1]
    cluster.stop_dockerd(node)
    proc = ssh(cluster, node, "docker ps", check=False)
    assert proc.returncode != 0 and "docker.sock" in proc.stderr
    assert ssh(cluster, cluster.nodes[0], "docker ps").returncode == 0
    cluster.start_dockerd(node)
    assert ssh(cluster, node, "docker ps").returncode == 0


def test_fault_knob_link(cluster):
    node = cluster.nodes[1]
    cluster.link_down(node)
    assert ssh(cluster, node, "true", check=False, timeout=30).returncode == 255
    cluster.link_up(node)
    assert ssh(cluster, node, "echo up").stdout.strip() == "up"


def test_fault_knob_delete_image(cluster):
    node = cluster.nodes[1]
    cluster.delete_image(node)
    try:
        assert tc.IMAGE not in ssh(cluster, node, "docker images --format '{{.Repository}}:{{.Tag}}'").stdout
    finally:
        cluster.import_image(node)
    assert tc.IMAGE in ssh(cluster, node, "docker images --format '{{.Repository}}:{{.Tag}}'").stdout


def test_fault_knob_different_image_same_tag(cluster):
    a, b = cluster.nodes[0], cluster.nodes[1]

    def layers(node):
        return json.loads(
            cluster.docker(node, "image", "inspect", tc.IMAGE, "--format", "{{json .RootFS.Layers}}").stdout
        )

    assert layers(a) == layers(b)  # same tar on both: same layers, though the IDs differ
    cluster.import_image(b, variant="other")
    try:
        assert layers(a) != layers(b)
    finally:
        cluster.import_image(b)
    assert layers(a) == layers(b)


def _ours() -> str:
    """This cluster's namespaces: other test runs on the machine have their own."""
    names = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout.split("\n")
    return "\n".join(n for n in names if n.startswith(tc.NS_PREFIX))


def _net(pid: int) -> str:
    try:
        return os.readlink(f"/proc/{pid}/ns/net")
    except OSError:
        return ""


def _started(pid: int) -> str:
    """The process's start time in clock ticks since boot (/proc/PID/stat field 22): with the pid,
    it names one process even after the pid is reused (pid_max is 32,768 on these machines, and a
    full test run wraps it)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return ""


def test_down_leaves_nothing_and_up_cleans_a_crashed_run(test_cluster):
    """The session's cluster stands for a crashed run: forgotten, never brought down, its nodes'
    sshd, dockerd and image all there. `up` must clean it before it builds; `down` leaves nothing."""
    crashed = test_cluster.cluster
    last = f"{tc.NS_PREFIX}{len(crashed.nodes)}"
    host_net = _net(os.getpid())
    try:
        assert len(crashed.nodes) > 1 and last in _ours()
        os.kill(crashed.nodes[0].sshd_pid, 0)
        first_nets = {_net(n.holder_pid) for n in crashed.nodes}
        daemons = [(p, _started(p)) for n in crashed.nodes for p in (n.dockerd_pid, n.sshd_pid)]
        assert all(started for _, started in daemons)
        start = time.monotonic()
        c2 = tc.up(1)
        print(f"\n1-node test cluster up over a crashed one in {time.monotonic() - start:.2f} s")
        assert [n.name for n in c2.nodes] == ["spark-1"]
        assert last not in _ours()
        assert not any(tc._alive(p) and _started(p) == started for p, started in daemons)
        nets = first_nets | {_net(n.holder_pid) for n in c2.nodes}
        tc.down()
        tc.down()  # idempotent
        assert _ours() == ""
        assert not os.path.exists(tc.ROOT)
        assert subprocess.run(["ip", "link", "show", tc.BRIDGE], capture_output=True).returncode != 0
        # Left running: a process in one of the nodes' namespaces, or one naming the cluster's
        # directory (dockerd and containerd run on the host side with their state under it).
        leftovers = []
        for pid in filter(str.isdigit, os.listdir("/proc")):
            try:
                cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
                comm = Path(f"/proc/{pid}/comm").read_text().strip()
            except OSError:
                continue
            if (_net(int(pid)) in nets - {host_net, ""}) or f"{tc.ROOT}/" in cmdline:
                leftovers.append(comm)
        assert leftovers == [], leftovers
    finally:
        test_cluster.rebuild()


def _wait_log(cluster, node, name, needle, timeout=20, stderr=False):
    deadline = time.monotonic() + timeout
    while True:
        proc = cluster.docker(node, "logs", name)
        logs = proc.stdout + (proc.stderr if stderr else "")
        if needle in logs:
            return logs
        assert time.monotonic() < deadline, logs
        time.sleep(0.2)


def test_vllm_stand_in_serves_health_and_models(cluster):
    import urllib.request

    node = cluster.nodes[0]
    cluster.docker(
        node,
        "run",
        "-d",
        "--name",
        "vllm1",
        "--network",
        "host",
        "-e",
        f"NCCL_SOCKET_IFNAME={tc.NETDEV}",
        "-e",
        f"VLLM_HOST_IP={node.ip}",
        tc.IMAGE,
        "org/model-x",
        "--port",
        "8011",
        "--served-model-name",
        "mx",
    )
    logs = _wait_log(cluster, node, "vllm1", "Application startup complete")
    assert "Loading safetensors checkpoint shards: 100% Completed | 4/4" in logs
    assert urllib.request.urlopen(f"http://{node.ip}:8011/health", timeout=5).status == 200
    models = json.loads(urllib.request.urlopen(f"http://{node.ip}:8011/v1/models", timeout=5).read())
    assert [m["id"] for m in models["data"]] == ["mx"]


def test_vllm_native_rendezvous_across_nodes_and_hang_when_unreachable(cluster):
    head, worker = cluster.nodes[0], cluster.nodes[1]

    def env(n):
        return [
            "-e",
            f"NCCL_SOCKET_IFNAME={tc.NETDEV}",
            "-e",
            f"VLLM_HOST_IP={n.ip}",
            "-e",
            "NCCL_IB_HCA=rocep1s0f1,roceP2p1s0f1",
        ]

    common = [
        "m",
        "--tensor-parallel-size",
        "2",
        "--nnodes",
        "2",
        "--master-addr",
        head.ip,
        "--master-port",
        "29511",
    ]
    cluster.docker(
        worker,
        "run",
        "-d",
        "--name",
        "w1",
        "--network",
        "host",
        *env(worker),
        tc.IMAGE,
        *common,
        "--node-rank",
        "1",
        "--headless",
    )
    time.sleep(1.5)
    assert "Init COMPLETE" not in cluster.docker(worker, "logs", "w1").stdout  # nobody to rendezvous with yet
    cluster.docker(
        head,
        "run",
        "-d",
        "--name",
        "h1",
        "--network",
        "host",
        *env(head),
        tc.IMAGE,
        *common,
        "--node-rank",
        "0",
        "--port",
        "8012",
    )
    _wait_log(cluster, head, "h1", "Application startup complete")
    wlogs = _wait_log(cluster, worker, "w1", "Init COMPLETE")
    assert (
        f"Bootstrap: Using {tc.NETDEV}:{worker.ip}<0>" in wlogs
        and "NET/IB : Using [0]rocep1s0f1:1/RoCE [1]roceP2p1s0f1:1/RoCE" in wlogs
    )
    # a worker whose head is unreachable never completes init
    cluster.docker(
        worker,
        "run",
        "-d",
        "--name",
        "w2",
        "--network",
        "host",
        *env(worker),
        tc.IMAGE,
        "m",
        "--nnodes",
        "2",
        "--node-rank",
        "1",
        "--master-addr",
        head.ip,
        "--master-port",
        "29599",
        "--headless",
    )
    time.sleep(2)
    logs = cluster.docker(worker, "logs", "w2").stdout
    assert "Init START" in logs and "Init COMPLETE" not in logs


@pytest.mark.parametrize(
    "mode,needle",
    [("oom", "torch.OutOfMemoryError: CUDA out of memory"), ("crash", "Engine core initialization failed")],
)
def test_vllm_failure_modes(cluster, mode, needle):
    node = cluster.nodes[0]
    proc = cluster.docker(
        node,
        "run",
        "--rm",
        "--network",
        "host",
        "-e",
        f"SPARK_TEST_FAIL={mode}",
        tc.IMAGE,
        "m",
        "--port",
        "8013",
        check=False,
    )
    assert proc.returncode == 1 and needle in proc.stdout


# --- the stand-ins behave like the real images and programs (shared/reference/real-images.md) ---


def test_image_entrypoint_swallows_a_command_as_vllm_openai_does(cluster):
    """ENTRYPOINT ["vllm", "serve"]: `docker run IMAGE ray start ...` runs `vllm serve ray start ...`."""
    node = cluster.nodes[0]
    proc = cluster.docker(
        node, "run", "--rm", "--network", "host", tc.IMAGE, "ray", "start", "--head", check=False
    )
    # argparse's own words; `--head` abbreviates vLLM's `--headless`, so only `start` is left over.
    assert proc.returncode == 2 and "vllm: error: unrecognized arguments: start" in proc.stderr
    proc = cluster.docker(node, "run", "--rm", tc.IMAGE, "vllm", "serve", "m", check=False)
    assert proc.returncode == 2 and "unrecognized arguments: serve m" in proc.stderr


def test_old_vllm_rejects_native_multinode_flags_and_ngc_entrypoint_execs(cluster):
    node = cluster.nodes[0]
    image = tc.IMAGES["ngc-25.10"].ref
    cluster.import_image(node, image, profile="ngc-25.10")
    try:
        proc = cluster.docker(node, "run", "--rm", image, "vllm", "--version")
        assert (
            proc.stdout.splitlines()[-1] == "0.10.2" and "NVIDIA Release 25.10" in proc.stdout
        )  # banner, then exec "$@"
        proc = cluster.docker(
            node, "run", "--rm", image, "vllm", "serve", "m", "--nnodes", "2", "--node-rank", "1", check=False
        )
        assert (
            proc.returncode == 2
            and "vllm: error: unrecognized arguments: --nnodes 2 --node-rank 1" in proc.stderr
        )
        labels = json.loads(
            cluster.docker(node, "image", "inspect", "--format", "{{json .Config.Labels}}", image).stdout
        )
        assert labels["com.nvidia.vllm.version"].startswith("0.10.2")
    finally:
        cluster.docker(node, "rmi", "-f", image)


def test_image_without_ray(cluster):
    node = cluster.nodes[0]
    image = tc.IMAGES["noray"].ref
    cluster.import_image(node, image, profile="noray")
    try:
        proc = cluster.docker(
            node, "run", "--rm", "--entrypoint", "sh", image, "-c", "ray --version", check=False
        )
        assert proc.returncode == 127 and "not found" in proc.stderr
    finally:
        cluster.docker(node, "rmi", "-f", image)


@pytest.mark.parametrize(
    "knob, present, absent",
    [
        ({}, "Application startup complete", "Uvicorn running on"),  # current vLLM
        ({"SPARK_TEST_LEGACY_UVICORN": "1"}, "Uvicorn running on http://0.0.0.0:8014", None),
    ],
)
def test_vllm_readiness_lines_current_by_default_legacy_behind_a_knob(cluster, knob, present, absent):
    node = cluster.nodes[0]
    env = [arg for k, v in knob.items() for arg in ("-e", f"{k}={v}")]
    cluster.docker(
        node, "run", "-d", "--name", "ready1", "--network", "host", *env, tc.IMAGE, "m", "--port", "8014"
    )
    logs = _wait_log(cluster, node, "ready1", present)
    assert "Starting vLLM API server 0 on http://0.0.0.0:8014" in logs
    if absent:
        assert absent not in logs


def test_ray_status_is_the_real_2_49_layout(cluster):
    head = cluster.nodes[0]
    _ray_start(cluster, head, "rayfmt", "--head", "--port", "6380", "--node-ip-address", head.ip)
    _wait_log(cluster, head, "rayfmt", "Ray runtime started", timeout=90)
    status = _ray_status(cluster, head, "rayfmt")
    for header in (
        "Active:",
        "Pending:",
        "Recent failures:",
        "Total Usage:",
        "Total Constraints:",
        "Total Demands:",
    ):
        assert f"\n{header}\n" in status, status
    assert "\nUsage:" not in status and "Healthy:" not in status
    assert " 0.0/1.0 GPU\n" in status
