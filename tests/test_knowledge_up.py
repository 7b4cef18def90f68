"""`up` names a known failure the moment a node's log shows it: node, cause, figures and fix, then
rolls back. The stand-in vLLM prints real failures' lines (SPARK_TEST_FAIL=log:NAME[@HOST], the
files of tests/data/failures) as the real program printed them."""

import asyncio
import re
import time

import pytest

from spark_tui.core.launch import events as ev
from tests.helpers import DATA
from tests.test_launch import config_for, containers, launch

pytestmark = pytest.mark.cluster


def _failed_up(cluster, tmp_path, fail: str, **flags):
    env = {"SPARK_TEST_SHARD_DELAY": "0.02", "SPARK_TEST_FAIL": fail}
    config = config_for(cluster, 2, tmp_path, env=env, **flags)
    start = time.monotonic()
    ok, got, _ = asyncio.run(launch(config))
    assert not ok
    failed = next(e for e in got if isinstance(e, ev.Failed))
    named = [e for e in got if isinstance(e, ev.Diagnosis) and e.severity == "error"]
    assert all(ids == [] for ids in containers(cluster, 2).values()), "not rolled back"
    return failed, named, time.monotonic() - start


def test_a_worker_whose_kv_cache_is_too_small_is_named_with_both_figures(cluster, tmp_path):
    worker = cluster.nodes[1].name
    failed, named, took = _failed_up(
        cluster, tmp_path, f"log:vllm_max_len_over_kv_cache@{worker}", executor="native"
    )
    # The same words whether the worker's log was read while it ran or after its container exited
    assert failed.cause.startswith(
        f"{worker}: max model length 29000 does not fit the KV cache (23648 tokens). Fix: "
    ), failed.cause
    assert "Fix: Set --max-model-len 23648 or less" in failed.cause
    d = next(d for d in named if d.id == "vllm.max_len_over_kv_cache")
    assert d.node == worker and d.figures == {"max_len": 29000, "kv_tokens": 23648}
    assert took < 60  # named when the log says it, not at a timeout


def test_a_gated_model_on_the_ray_head_is_named_with_the_model_and_the_token_fix(cluster, tmp_path):
    head = cluster.nodes[0].name
    failed, named, _ = _failed_up(cluster, tmp_path, "log:hub_gated_401", executor="ray")
    assert failed.cause.startswith(f"{head}: the model meta-llama/Llama-2-7b is gated"), failed.cause
    assert "HF_TOKEN" in failed.cause
    assert [(d.node, d.id) for d in named][:1] == [(head, "hub.gated")]


def test_an_image_without_the_gpus_kernels_is_named_not_just_an_exit(cluster, tmp_path):
    failed, named, _ = _failed_up(cluster, tmp_path, "log:cuda_no_kernel_image", executor="native")
    assert "the image has no GPU code for this GPU (no kernel image)" in failed.cause, failed.cause
    assert "sm_121" in failed.cause
    assert {d.id for d in named} == {"cuda.no_kernel_image"}


def test_the_cause_above_an_engine_that_died_is_the_one_named(cluster, tmp_path):
    """vLLM logs the start-up memory check, then 'EngineCore failed to start': the first is the cause."""
    failed, _, _ = _failed_up(cluster, tmp_path, "log:vllm_startup_free_memory_nodev", executor="ray")
    assert (
        "too little GPU memory free at start-up for gpu_memory_utilization 0.95: only 31.44 of 47.38 GiB free,"
        " 45.01 GiB wanted" in failed.cause
    ), failed.cause
    assert "engine core died" not in failed.cause


def test_an_unknown_failure_still_ends_with_the_exit_and_its_line(cluster, tmp_path):
    """Lines the table does not know are not squeezed into a near match: the exit is reported as before."""
    failed, named, _ = _failed_up(cluster, tmp_path, "log:no_such_sample", executor="native")
    assert named == []
    assert "container exited with code 1" in failed.cause and "Fix:" not in failed.cause, failed.cause


def test_a_ray_version_mismatch_on_the_head_is_named_with_both_versions(cluster, tmp_path):
    """vLLM's driver on the Ray head joins a cluster started by another Ray: Ray's own
    'Version mismatch' lines name both versions; up names the node, both figures and the fix."""
    head = cluster.nodes[0].name
    failed, named, _ = _failed_up(cluster, tmp_path, "log:ray_version_mismatch", executor="ray")
    assert failed.cause.startswith(f"{head}: "), failed.cause
    assert "(Ray 2.42.0 here, 2.12.0 there) (Python 3.9.21 here, 3.11.11 there)" in failed.cause
    assert "Fix: Run the same image on every node" in failed.cause
    d = next(d for d in named if d.id == "ray.version_mismatch")
    assert d.node == head and d.figures["node_ray"] == "2.42.0" and d.figures["cluster_ray"] == "2.12.0"


def test_an_nvml_driver_library_mismatch_on_a_worker_is_named_for_that_worker(cluster, tmp_path):
    """A worker whose kernel module and NVIDIA libraries differ (a driver update without a reboot):
    NVML's own lines, named for that worker with the library version and the reboot fix."""
    worker = cluster.nodes[1].name
    failed, named, _ = _failed_up(cluster, tmp_path, f"log:nvml_version_mismatch@{worker}", executor="native")
    assert failed.cause.startswith(f"{worker}: "), failed.cause
    assert "NVIDIA driver and library differ (library 570.124)" in failed.cause
    assert "Fix: Reboot the node" in failed.cause
    assert [(d.node, d.id) for d in named] == [(worker, "driver.nvml_mismatch")]


def test_tritons_old_ptxas_on_a_worker_is_named_with_the_gpus_architecture(cluster, tmp_path):
    """GB10's sm_121a is unknown to the ptxas a Triton wheel ships: the compile fails on the worker
    while the engine warms up; up names the worker, the architecture and the TRITON_PTXAS_PATH fix."""
    worker = cluster.nodes[1].name
    failed, named, _ = _failed_up(cluster, tmp_path, f"log:triton_ptxas_sm121a@{worker}", executor="native")
    assert failed.cause.startswith(
        f"{worker}: the CUDA compiler (Triton's ptxas or nvcc) does not know the GPU architecture sm_121a"
    )
    assert "TRITON_PTXAS_PATH=/usr/local/cuda/bin/ptxas" in failed.cause
    d = next(d for d in named if d.id == "cuda.ptxas_unknown_arch")
    assert d.node == worker and d.figures == {"arch": "sm_121a"}


def test_an_out_of_memory_sampler_warmup_under_ray_is_named_with_the_batch_width(cluster, tmp_path):
    """vLLM's sampler warm-up after the KV cache was sized runs out of memory (an engine actor's
    lines, as the Ray executor prints them): named with --max-num-seqs's figure and the fix."""
    failed, named, _ = _failed_up(cluster, tmp_path, "log:vllm_sampler_warmup_oom_ray", executor="ray")
    assert "out of memory while warming up the sampler with 1024 dummy requests" in failed.cause, failed.cause
    assert "Fix: Lower --max-num-seqs below 1024" in failed.cause
    d = next(d for d in named if d.id == "vllm.sampler_warmup_oom")
    assert d.figures == {"requests": 1024}


def _kernel_line(sample: str) -> str:
    """A real kernel log line of tests/data/failures as the kernel wrote it (what `dmesg` prints
    after its timestamp): the syslog host and kernel stamp of the sample taken off."""
    line = (DATA / "failures" / f"{sample}.log").read_text().splitlines()[0]
    return line.split("] ", 1)[1] if "] NVRM" in line else line


# The reader up uses on the node and how it prints the kernel's line: dmesg (root, or
# dmesg_restrict=0), else journalctl -k (a user in the adm group when dmesg is restricted).
KERNEL_READERS = {
    "dmesg": ("", r"\d{4}-\d\d-\d\dT[\d:,]+\+00:00 "),
    "journalctl": ("dmesg", r"\d{4}-\d\d-\d\dT[\d:.]+\+0000 {node} kernel: "),
}


@pytest.mark.parametrize("reader", sorted(KERNEL_READERS))
def test_a_gpu_fault_in_a_workers_kernel_log_during_the_load_is_named_for_it_and_rolled_back(
    cluster, tmp_path, reader
):
    """An Xid is said in the node's kernel log, never in a container's log: up follows every node's
    kernel log (dmesg --follow; journalctl -k -f where dmesg is restricted) from the launch's
    start and names the worker's GPU fault with the Xid's meaning and the fix, then rolls back.
    The line is written once the head's container runs, while the load goes on."""
    head, worker = cluster.nodes[0], cluster.nodes[1]
    denied, stamp = KERNEL_READERS[reader]
    xid = _kernel_line("xid_79_syslog")
    said: list[str] = []

    def on_event(e):
        if (
            not said
            and isinstance(e, ev.Stage)
            and (e.node, e.stage, e.status) == (head.name, "container", "done")
        ):
            cluster.kernel_says(worker, xid)
            said.append(xid)

    config = config_for(cluster, 2, tmp_path, env={"SPARK_TEST_SHARD_DELAY": "3"}, executor="native")
    cluster.set_standin(worker, KERNEL_LOG_DENIED=denied)
    start = time.monotonic()
    try:
        ok, got, _ = asyncio.run(launch(config, on_event=on_event))
    finally:
        cluster.set_standin(worker, KERNEL_LOG_DENIED="")
    assert said and not ok
    failed = next(e for e in got if isinstance(e, ev.Failed))
    assert failed.cause.startswith(
        f"{worker.name}: GPU failure Xid 79 (GPU has fallen off the bus) on PCI:0000:01:00. Fix: Reboot the node"
    ), failed.cause
    # The kernel's line as the reader printed it, its ISO time first: when the GPU failed
    line = stamp.replace("{node}", re.escape(worker.name)) + re.escape(xid)
    assert re.search(r"\(kernel log: " + line + r"\)", failed.cause), failed.cause
    named = [(d.node, d.id) for d in got if isinstance(d, ev.Diagnosis) and d.severity == "error"]
    assert named == [(worker.name, "driver.xid_hardware")]
    assert not [d for d in got if isinstance(d, ev.Diagnosis) and d.id == "driver.kernel_log_unreadable"]
    assert all(ids == [] for ids in containers(cluster, 2).values()), "not rolled back"
    assert time.monotonic() - start < 12 + 20  # named during the 12 s load, not at a timeout


def test_a_node_whose_kernel_log_is_closed_is_said_once_and_the_launch_goes_on(cluster, tmp_path):
    """dmesg restricted to root (kernel.dmesg_restrict=1) and no journal group: one warning naming
    the node and dmesg's own words, and the launch still comes up."""
    worker = cluster.nodes[1]
    cluster.set_standin(worker, KERNEL_LOG_DENIED="1")
    try:
        ok, got, _ = asyncio.run(launch(config_for(cluster, 2, tmp_path, executor="native")))
    finally:
        cluster.set_standin(worker, KERNEL_LOG_DENIED="")
    assert ok
    warned = [d for d in got if isinstance(d, ev.Diagnosis) and d.id == "driver.kernel_log_unreadable"]
    assert [d.node for d in warned] == [worker.name]
    assert warned[0].severity == "warn" and "dmesg: read kernel buffer failed: Operation not permitted" in (
        warned[0].means
    )


def test_a_worker_without_rdma_devices_is_named_from_the_engines_refusal(cluster, tmp_path):
    """The engine itself refuses the worker's container (Docker's own words: /dev/infiniband holds
    no device node, as on a node whose RDMA modules are not loaded): up names the worker, the
    device and the fix from the table, not 'container failed to start', and rolls back."""
    from tests.cluster.cluster import run

    worker = cluster.nodes[1]
    run(worker.nsenter("rm", "/dev/infiniband/uverbs0"))
    try:
        failed, named, _ = _failed_up(cluster, tmp_path, "", executor="native")
    finally:
        run(worker.nsenter("mknod", "/dev/infiniband/uverbs0", "c", "1", "3"))
    assert failed.cause.startswith(
        f"{worker.name}: the node has no device /dev/infiniband to give the container (not a device node). Fix: "
    ), failed.cause
    assert "mlx5_ib" in failed.cause and "(docker: " in failed.cause
    assert [(d.node, d.id) for d in named] == [(worker.name, "docker.device_missing")]


def test_an_rdma_completion_error_on_a_worker_is_named_with_its_status_and_peer(cluster, tmp_path):
    """NCCL's first collectives run during the load: a RoCE completion error (the peer's retries
    exhausted) on a worker names the worker, the IBV_WC status and the peer, then rolls back."""
    worker = cluster.nodes[1].name
    failed, named, took = _failed_up(
        cluster, tmp_path, f"log:nccl_ib_completion_error@{worker}", executor="native"
    )
    assert failed.cause.startswith(
        f"{worker}: RDMA completion error IBV_WC_RETRY_EXC_ERR from 172.36.143.59<44206>. Fix: "
    ), failed.cause
    d = next(d for d in named if d.id == "nccl.ib_completion_error")
    assert d.node == worker and d.figures["status_name"] == "IBV_WC_RETRY_EXC_ERR"
    assert took < 60  # named when the log says it, not at a timeout
