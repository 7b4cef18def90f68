"""One Spark, no cluster file, on a namespace test node.

Why the CLI runs *inside* the node's namespaces (nsenter: its network, mount and hostname) rather
than with a one-node cluster file: "no cluster file" means the embedded default, this machine as
a one-node cluster (`host: local`, named after the hostname, reached without SSH, its Docker at the
default socket, `~` this user's home). A cluster file naming the node over SSH would test another
path (SSH transport, host keys, data_ip from the file) and could hide what the default lacks. Inside
the node, `spark-tui` sees what it sees on a lone Spark: its own hostname (spark-1), its own
/var/run/docker.sock, nvidia-smi in /usr/local/bin, and nothing else set. The only flags are the
model, the image, and the sandbox's two limits (tc.SANDBOX_FLAGS) that this machine cannot grant.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from spark_tui.core.launch import events as ev
from spark_tui.core.launch.drift import drift
from spark_tui.core.launch.live import with_detected
from spark_tui.core.node.connection import LocalTransport
from spark_tui.core.node.nodes import Nodes
from spark_tui.settings.resolve import Inputs, resolve
from tests.cluster import cluster as tc
from tests.helpers import DATA, ROOT
from tests.test_launch import config_for, containers, launch
from tests.test_sync import write_model

pytestmark = pytest.mark.cluster

MODEL = "test/tiny-model"
NODE_PATH = "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin"


def node_cli(node: tc.Node, home: Path, *argv: str, path: str = NODE_PATH, timeout: float = 240):
    """`spark-tui ARGV` run inside the node's namespaces with a clean environment: no SPARK_TUI_*
    variable, no cluster file, HOME a fresh directory. Returns (exit code, stdout, stderr)."""
    env = {
        "HOME": str(home),
        "PATH": path,
        "PYTHONPATH": str(ROOT),  # the code under test, wherever the package is installed
        "XDG_CACHE_HOME": str(home / ".cache"),
        "LANG": "C.UTF-8",
    }
    argv_ = node.nsenter(
        "env", "-i", *(f"{k}={v}" for k, v in env.items()), sys.executable, "-m", "spark_tui", *argv
    )
    proc = subprocess.run(argv_, capture_output=True, text=True, cwd=home, timeout=timeout)
    return proc.returncode, proc.stdout, proc.stderr


@pytest.fixture
def home(tmp_path):
    path = tmp_path / "home"
    path.mkdir()
    return path


def test_embedded_default_plans_checks_launches_and_tears_down(cluster, home):
    node = cluster.nodes[0]
    given = ["--model", MODEL, "--image", tc.IMAGE, *tc.SANDBOX_FLAGS]
    write_model(home / ".cache" / "huggingface")  # in the default cache (~/.cache/huggingface)
    cluster.set_meminfo(node, 119.7, 116.0)  # an idle Spark's memory, not this machine's

    code, out, err = node_cli(node, home, "config", "--json", *given)
    assert code == 0, err
    rows = {r["key"]: r for r in json.loads(out)["cluster"]}
    assert rows["executor"]["effective"] == "solo" and "derived: 1 node(s)" in rows["executor"]["source"]
    (only,) = json.loads(out)["nodes"]
    assert only["name"] == node.name  # the node's own hostname, from the default

    code, out, err = node_cli(node, home, "plan", *given)
    assert code == 0, err
    assert f"NODE {node.name} (head)" in out and "''" not in out and '""' not in out, out
    assert f"command: vllm serve {MODEL} --served-model-name {MODEL}" in out
    for multi in (
        "ray start",
        "--nnodes",
        "--master-addr",
        "--node-ip-address",
        "MASTER_ADDR",
        "MASTER_PORT",
    ):
        assert multi not in out, multi

    code, out, err = node_cli(node, home, "check", "--json", *given)
    results = {(r["id"]): r for r in json.loads(out)["results"]}
    assert code == (1 if any(r["status"] == "fail" for r in results.values()) else 0), out + err
    for between in ("net.data_interface", "roce.twins", "net.reach", "port.master_port"):
        assert results[between]["status"] == "skipped", results[between]
        assert "executor solo: one node" in results[between]["message"]
    for kept in ("image.present", "gpu.present", "containers.foreign", "port.vllm_port", "container.absent"):
        assert results[kept]["status"] == "pass", results[kept]
    for kept in ("model.cached", "model.complete", "memory.fit", "model.architecture", "parallel.size"):
        assert results[kept]["status"] == "pass", results[kept]
    assert "gpu.processes" in results

    code, out, err = node_cli(node, home, "up", *given)
    assert code == 0 and "READY" in out and "http://127.0.0.1:8000/v1" in out, out + err
    assert "Traceback" not in err
    real = json.loads(cluster.docker(node, "inspect", "vllm_node").stdout)[0]
    assert real["Config"]["Entrypoint"] == ["vllm"] and real["Config"]["Cmd"][:2] == ["serve", MODEL]
    assert real["Config"]["Labels"]["spark-tui.executor"] == "solo"
    assert real["Config"]["Labels"]["spark-tui.node"] == node.name

    code, out, err = node_cli(node, home, "status", *given)
    assert code == 0 and f"READY: {MODEL} at http://127.0.0.1:8000/v1" in out, out + err
    assert "DRIFT" not in out and "NCCL: no traffic between nodes (executor solo)" in out

    code, out, err = node_cli(node, home, "down", "--yes", *given)
    assert code == 0 and f"removed vllm_node ({tc.IMAGE}) on {node.name}" in out, out + err
    assert cluster.docker(node, "ps", "-aq").stdout.split() == []


def _path_without(tool: str, node: tc.Node, into: Path) -> str:
    """A PATH of one directory holding every program the node's PATH holds, except `tool` (the
    node's own /usr/local/bin first: its nvidia-smi stand-in and the file that stand-in reads)."""
    into.mkdir()
    dirs = [Path(node.dir) / "bin", Path("/usr/bin"), Path("/bin"), Path("/usr/sbin"), Path("/sbin")]
    docker = shutil.which("docker")  # where this machine keeps the Docker CLI (/usr/local/bin here)
    for d in dirs:
        for entry in d.iterdir():
            if entry.name != tool and not (into / entry.name).exists():
                (into / entry.name).symlink_to(entry)
    if docker and tool != "docker" and not (into / "docker").exists():
        (into / "docker").symlink_to(docker)
    assert not (into / tool).exists()
    return str(into)


@pytest.mark.parametrize("tool", ["nvidia-smi", "docker", "ip", "python3"])
def test_every_headless_command_on_a_node_lacking_a_program(cluster, home, tmp_path, tool):
    """Each command's exit code as documented, and never a traceback, with `tool` missing."""
    node = cluster.nodes[0]
    path = _path_without(tool, node, tmp_path / "bin")
    given = ["--model", MODEL, "--image", tc.IMAGE, *tc.SANDBOX_FLAGS]
    write_model(home / ".cache" / "huggingface")  # so that check reads the model's files (python3)
    report = tmp_path / "report.md"
    runs = [
        ("config", []),
        ("plan", []),
        ("images", []),
        ("check", []),
        ("status", []),
        ("report", ["--out", str(report)]),
        ("up", []),
        ("status", []),
        ("down", ["--yes"]),
        ("diagnose", [str(DATA / "nvidia-smi" / "gb10-table-vllm-enginecore-truncated-mem-580.126.txt")]),
    ]
    seen = {}
    for command, extra in runs:
        args = [command, *extra] + (given if command != "diagnose" else [])
        code, out, err = node_cli(node, home, *args, path=path)
        assert "Traceback" not in out + err, f"{command} without {tool}:\n{err}"
        seen[command] = (code, out, err)
        if command == "check":  # exit 1 exactly when a check failed
            assert code == (1 if "[FAIL]" in out else 0), out
        else:
            assert code == 0, f"{command} without {tool}: exit {code}\n{out}\n{err}"
    assert "READY" in seen["up"][1]
    text = report.read_text()
    assert "## Versions" in text and "## Check" in text and "## Status" in text
    if tool == "nvidia-smi":
        row = next(line for line in text.splitlines() if line.startswith(f"| {node.name} |"))
        assert row.rstrip().endswith("| no nvidia-smi on this node |"), row
        assert "no GPU (no nvidia-smi on this node)" in seen["check"][1]
    if tool == "python3":
        assert "no python3 on this node (spark-tui reads the model's files with it)" in seen["check"][1]
    if tool == "ip":
        assert "net.data_interface" in seen["check"][1] and "executor solo" in seen["check"][1]
    assert cluster.docker(node, "ps", "-aq").stdout.split() == []


def test_report_on_a_machine_without_nvidia_drivers_or_docker(cluster, home, tmp_path):
    """The node with no Docker engine (its socket gone from /run) and no nvidia-smi on PATH:
    the report is written, its sections saying so."""
    node = cluster.nodes[0]
    path = _path_without("nvidia-smi", node, tmp_path / "bin")
    out_file = tmp_path / "report.md"
    # A private /run with nothing in it: this machine has no Docker engine to talk to.
    code, out, err = node_cli(
        node,
        home,
        "report",
        "--out",
        str(out_file),
        "--docker-socket",
        "/run/no-docker/docker.sock",
        path=path,
    )
    assert code == 0 and "Traceback" not in err, err
    text = out_file.read_text()
    row = next(line for line in text.splitlines() if line.startswith(f"| {node.name} |"))
    assert "none: docker engine at /run/no-docker/docker.sock unreachable" in row, row
    assert row.rstrip().endswith("| no nvidia-smi on this node |"), row
    assert "[FAIL] " in text and "docker.engine" in text


def _transports(cluster, tmp_path):
    """The same node reached both ways: SSH (a one-node cluster file) and local (this machine)."""
    path = cluster.cluster_file(1, tmp_path / "c1.yaml")
    ssh = resolve(Inputs(cluster_file=path, user_config="", environ={}))
    local = resolve(Inputs(user_config="", environ={}))
    return ssh, LocalTransport(local.nodes[0])


@pytest.mark.parametrize("via", ["ssh", "local"])
def test_a_program_missing_not_executable_or_killed_is_a_result(cluster, tmp_path, via):
    node = cluster.nodes[0]
    # A file without its execute bit, where both transports look: the node's bin dir is this
    # machine's directory too (the node bind-mounts it on /usr/local/bin).
    noexec = Path(node.dir) / "bin" / "spark-tui-test-noexec"
    noexec.write_text("#!/bin/sh\necho never\n")
    noexec.chmod(0o644)
    ssh_config, local = _transports(cluster, tmp_path)

    async def main():
        async with Nodes(ssh_config) as nodes:
            t = nodes.transports[node.name] if via == "ssh" else local
            missing = await t.run(["spark-tui-no-such-program", "--version"])
            exec_path = "/usr/local/bin/spark-tui-test-noexec" if via == "ssh" else str(noexec)
            not_exec = await t.run([exec_path])
            killed = await t.run(["sh", "-c", "kill -KILL $$"])
            streamed = await t.stream(["spark-tui-no-such-program"], lambda line: None)
            script = await t.run_script("spark-tui-no-such-program; echo after")
            return missing, not_exec, killed, streamed, script

    try:
        missing, not_exec, killed, streamed, script = asyncio.run(main())
    finally:
        noexec.unlink()
    assert missing.problem("spark-tui-no-such-program") == "no spark-tui-no-such-program on this node"
    assert streamed.problem("x") == "no x on this node"
    assert not_exec.problem("noexec") == "noexec is not executable on this node", not_exec
    assert killed.problem("sh") is not None and "killed" in killed.problem("sh"), killed
    assert script.strip().endswith("after")
    ok_result = asyncio.run(LocalTransport(resolve(Inputs(user_config="")).nodes[0]).run(["true"]))
    assert ok_result.problem("true") is None and ok_result.exit_status == 0


# --- a solo launch fails, guards and rolls back as a cluster launch does ----------------------


@pytest.mark.parametrize(
    "env, flags, cause",
    [
        ({"SPARK_TEST_FAIL": "oom"}, {}, "torch.OutOfMemoryError: CUDA out of memory"),
        # "container exited with code 1: ..." or "vLLM failed: ...", by which is seen first: the line either way
        (
            {"SPARK_TEST_FAIL": "crash"},
            {},
            "RuntimeError: Engine core initialization failed. See root cause above.",
        ),
        ({}, {"vllm_args": ["--no-such-option"]}, "unrecognized arguments: --no-such-option"),
    ],
    ids=["oom", "crash", "bad argument"],
)
def test_solo_failure_is_named_and_rolled_back(cluster, tmp_path, env, flags, cause):
    node = cluster.nodes[0]
    config = config_for(cluster, 1, tmp_path, env={"SPARK_TEST_SHARD_DELAY": "0.02", **env}, **flags)
    assert config["executor"] == "solo"
    ok, got, _ = asyncio.run(launch(config))
    assert not ok
    failed = next(e for e in got if isinstance(e, ev.Failed))
    assert failed.cause.startswith(f"{node.name}: ") and cause.format(node=node.name) in failed.cause, failed
    assert containers(cluster, 1) == {node.name: []}


def test_solo_memory_guard_stops_the_load_and_rolls_back(cluster, tmp_path):
    node = cluster.nodes[0]
    cluster.set_meminfo(node, 119.7, 110.0)
    config = config_for(cluster, 1, tmp_path, env={"SPARK_TEST_SHARD_DELAY": "1", "SPARK_TEST_SHARDS": "30"})
    collapsed = []

    def on_event(e):
        if isinstance(e, ev.Stage) and e.stage == "shards" and not collapsed:
            cluster.set_meminfo(node, 119.7, 1.5)
            collapsed.append(e.elapsed)

    ok, got, _ = asyncio.run(launch(config, on_event=on_event))
    assert not ok and collapsed
    failed = next(e for e in got if isinstance(e, ev.Failed))
    assert failed.cause.startswith(f"{node.name}: memory nearly exhausted during the model load: "), failed
    assert {e.node for e in got if isinstance(e, ev.Memory)} == {node.name}
    assert containers(cluster, 1) == {node.name: []}


def test_solo_ready_then_drift_is_seen(cluster, tmp_path):
    """READY with no drift; a hand replacement of the container is drift, as on a cluster."""
    node = cluster.nodes[0]
    config = config_for(cluster, 1, tmp_path)
    ok, got, items = asyncio.run(launch(config))
    assert ok and items == [], got
    ready = next(e for e in got if isinstance(e, ev.Ready))
    assert ready.endpoint == f"http://{node.ip}:8000/v1"
    assert [n.text for n in ready.nccl] == ["NCCL: no traffic between nodes (executor solo)"]
    assert not any(isinstance(e, ev.Stage) and e.stage in ("ray_join", "nccl_init") for e in got)
    cluster.docker(node, "rm", "-f", "vllm_node")
    cluster.docker(node, "run", "-d", "--name", "vllm_node", "--entrypoint", "sleep", tc.IMAGE, "600")

    async def look():
        async with Nodes(config) as nodes:
            config2, _ = await with_detected(config, nodes)
            return await drift(config2, nodes)

    drifted = asyncio.run(look())
    assert {d.what for d in drifted} >= {"command"}, drifted


def test_cockpit_with_no_cluster_file_goes_from_the_image_step_to_ready(cluster, home):
    """`spark-tui --model M` on the node: the wizard lists the node's images, the one picked is
    the image, check and review pass, the launch reaches READY; teardown removes it."""
    node = cluster.nodes[0]
    write_model(home / ".cache" / "huggingface")
    cluster.set_meminfo(node, 119.7, 116.0)
    env = {"HOME": str(home), "PATH": NODE_PATH, "PYTHONPATH": str(ROOT), "LANG": "C.UTF-8"}
    env["XDG_CACHE_HOME"] = str(home / ".cache")
    argv = node.nsenter(
        "env",
        "-i",
        *(f"{k}={v}" for k, v in env.items()),
        sys.executable,
        "-m",
        "tests.solo_cockpit",
        tc.IMAGE,
        "--model",
        MODEL,
        *tc.SANDBOX_FLAGS,
    )
    proc = subprocess.run(argv, capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    seen = json.loads(proc.stdout.strip().splitlines()[-1])
    assert seen["node"] == node.name and seen["executor"] == "solo"
    assert "derived: 1 node(s)" in seen["executor_source"]
    assert seen["image_source"] == "interactive"  # chosen at the image step, not given
    failed = {k: v for k, v in seen["checks"].items() if v[0] == "fail"}
    assert not failed, failed
    assert seen["checks"]["net.reach"][0] == "skipped" and seen["checks"]["image.present"][0] == "pass"
    assert seen["review"] == "review" and seen["launch_state"] == "ready", seen
    assert "READY" in seen["banner"] and "http://127.0.0.1:8000/v1" in seen["banner"], seen["banner"]
    assert f"{node.name}: vllm_node" in seen["teardown_text"] and seen["teardown_ok"] == [True]
    assert cluster.docker(node, "ps", "-aq").stdout.split() == []
