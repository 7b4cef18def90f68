"""`up` names the Docker failures that happen when a container is created or started on a node, in
the real engine's own words: a dockerd without the NVIDIA container toolkit refusing --gpus, an image
whose programs are for another CPU (exec format error), a full disk under the engine. Each test
makes the failure real on one worker of the namespace test cluster (its real dockerd, runc and
kernel), then checks that `up` names that worker, the failure table's cause and fix, rolls back
every container of the launch, and ends well before the shortest default timeout (named when the
engine says it, not when a wait runs out).

A registry's refused pull cannot happen during `up`: `up` never pulls (its preflight stops at an
image missing on a node, tests/test_launch.py), so it has no test here."""

import asyncio
import subprocess
import time

import pytest

from spark_tui.core.launch import events as ev
from spark_tui.knowledge import Matcher
from tests.test_launch import config_for, containers, launch

pytestmark = pytest.mark.cluster


def _failed_up(cluster, tmp_path, **flags):
    """A 2-node launch at the defaults that must fail: its Failed event, the errors the failure
    table named, and how long it took against the shortest default timeout (containers' start)."""
    config = config_for(cluster, 2, tmp_path, **flags)
    start = time.monotonic()
    ok, got, _ = asyncio.run(launch(config))
    took = time.monotonic() - start
    assert not ok
    failed = next(e for e in got if isinstance(e, ev.Failed))
    named = [e for e in got if isinstance(e, ev.Diagnosis) and e.severity == "error"]
    assert all(ids == [] for ids in containers(cluster, 2).values()), "not rolled back"
    assert took < config.timeouts.container, f"{took:.1f} s: named at a timeout, not when docker said it"
    return failed, named


def _entry(ident: str):
    return Matcher().table.by_id(ident)


def test_a_worker_without_the_nvidia_runtime_is_named_with_the_toolkit_fix(cluster, tmp_path):
    """The worker's real dockerd started without the NVIDIA container toolkit's hook registers no
    GPU device driver: it refuses the container's --gpus request (DeviceRequests) itself."""
    worker = cluster.nodes[1]
    cluster.stop_dockerd(worker)
    cluster.start_dockerd(worker, gpu_runtime=False)
    try:
        failed, named = _failed_up(cluster, tmp_path, executor="native")
    finally:
        cluster.stop_dockerd(worker)
        cluster.start_dockerd(worker)
    entry = _entry("docker.gpu_runtime_missing")
    assert failed.cause.startswith(f"{worker.name}: {entry.title}. Fix: {entry.fix}"), failed.cause
    # dockerd's own words, as the Docker SDK hands them over
    assert '(docker: could not select device driver "" with capabilities: [[gpu]])' in failed.cause
    assert [(d.node, d.id) for d in named] == [(worker.name, "docker.gpu_runtime_missing")]


def test_an_image_built_for_another_cpu_is_named_for_its_node(cluster, tmp_path):
    """An image whose programs are executables of another architecture (a real aarch64 ELF on this
    x86_64 machine: the mirror of an amd64 image on the arm64 Spark). The worker's kernel refuses
    it (ENOEXEC), runc says `exec format error`: up names the worker, the program and the fix."""
    worker = cluster.nodes[1]
    image = "spark-test/vllm-foreign:latest"
    cluster.import_image(cluster.nodes[0], image)
    arch = cluster.import_foreign_image(worker, image, ("/opt/venv/bin/vllm",))
    said = cluster.docker(worker, "image", "inspect", "--format", "{{.Architecture}}", image).stdout.strip()
    assert said == arch != cluster.docker(cluster.nodes[0], "info", "--format", "{{.Architecture}}").stdout
    try:
        failed, named = _failed_up(cluster, tmp_path, executor="native", image=image)
    finally:
        for node in cluster.nodes[:2]:
            cluster.docker(node, "rmi", "-f", image, check=False)
    # runc's words in the worker's container log, the program named in the table's title
    assert [(d.node, d.id) for d in named] == [(worker.name, "docker.exec_format_error")]
    title = named[0].title
    assert "/opt/venv/bin/vllm" in title and "another CPU (exec format error)" in title, title
    assert failed.cause.startswith(f"{worker.name}: {title}. Fix: "), failed.cause
    assert "(log: exec /opt/venv/bin/vllm: exec format error)" in failed.cause
    assert f"Fix: {named[0].fix}" in failed.cause and named[0].fix.startswith(
        "Use an arm64 (linux/arm64) build"
    )
    assert "container exited with code" in failed.cause  # how the container ended, after the cause


def test_a_full_disk_under_a_workers_engine_is_named_with_the_space_fix(cluster, tmp_path):
    """The worker engine's state directory (its exec-root, where containerd writes each container's
    bundle at start) on a small filesystem filled to the last byte by a real write: the engine's
    own ENOSPC ('no space left on device') ends the container's start."""
    worker = cluster.nodes[1]
    exec_root = f"{worker.dir}/exec"
    cluster.stop_dockerd(worker)
    subprocess.run(worker.nsenter("mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", exec_root), check=True)
    try:
        cluster.start_dockerd(worker)
        fill = subprocess.run(
            worker.nsenter("dd", "if=/dev/zero", f"of={exec_root}/fill", "bs=4k"),
            capture_output=True,
            text=True,
        )
        assert "No space left on device" in fill.stderr, fill.stderr  # the disk is full, for real
        failed, named = _failed_up(cluster, tmp_path, executor="native")
    finally:
        cluster.stop_dockerd(worker)
        subprocess.run(worker.nsenter("umount", "-l", exec_root), check=False)
        cluster.start_dockerd(worker)
    assert [(d.node, d.id) for d in named] == [(worker.name, "docker.no_space")]
    entry, title = _entry("docker.no_space"), named[0].title
    assert title.startswith("no space left on the device"), title
    assert failed.cause.startswith(f"{worker.name}: {title}. Fix: {entry.fix}"), failed.cause
    # containerd's words through dockerd: the path it could not write is the figure, and the
    # quote (cut around the matched words: two long paths come first) keeps them
    assert named[0].figures["path"].startswith(exec_root) and named[0].figures["path"].endswith("/work")
    assert "(docker: " in failed.cause and failed.cause.endswith("/work: no space left on device: unknown)")
