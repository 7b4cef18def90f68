"""vLLM's Ray executor, on real Ray, as vLLM V1 runs it (vllm/v1/executor/ray_utils.py,
ray_distributed_executor.py): connect to the running cluster, reserve a placement group of
TP x PP bundles {"GPU": 1} (the first one on this node), wait for it with vLLM's own messages,
then start one RayWorkerWrapper actor per bundle. Each actor prints its NCCL lines from its own
node's environment (after the head's NCCL_*/UCX_*/VLLM_* variables are copied over, as vLLM does,
except those named in ray_non_carry_over_env_vars.json); Ray's log forwarding brings them to this
process's output with Ray's own `(RayWorkerWrapper pid=N, ip=A)` prefix."""

from __future__ import annotations

import json
import os
import sys
import time

import ray
from ray.util.placement_group import placement_group
from ray.util.scheduling_strategies import PlacementGroupSchedulingStrategy

from vllm import __version__
from vllm.standin import nccl

PG_WAIT_TIMEOUT = float(os.environ.get("SPARK_TEST_PG_WAIT_TIMEOUT") or 1800)  # vLLM: 1800 s
WORKER_SPECIFIC_ENV_VARS = {"VLLM_HOST_IP", "VLLM_HOST_PORT", "LOCAL_RANK", "CUDA_VISIBLE_DEVICES"}
COPIED_PREFIXES = ("NCCL_", "UCX_", "VLLM_")
LOCAL_GPUS = 1  # cuda_device_count_stateless() on a DGX Spark


def _ts() -> str:
    return time.strftime("%m-%d %H:%M:%S")


class _Prefixed:
    """vLLM V1's engine core runs in its own process whose output it prefixes with the process
    name: Ray's forwarded worker lines printed there carry both prefixes."""

    def __init__(self, stream, prefix: str):
        self.stream, self.prefix, self.at_start = stream, prefix, True

    def write(self, text: str) -> int:
        out = []
        for piece in text.splitlines(keepends=True):
            out.append((self.prefix if self.at_start else "") + piece)
            self.at_start = piece.endswith("\n")
        self.stream.write("".join(out))
        self.stream.flush()
        return len(text)

    def flush(self) -> None:
        self.stream.flush()

    def __getattr__(self, name):
        return getattr(self.stream, name)


def _log(level: str, where: str, msg: str) -> None:
    print(f"{level} {_ts()} [{where}] {msg}", flush=True)


@ray.remote
class RayWorkerWrapper:
    """One rank: it lives on the node whose GPU its bundle holds, with that node's environment."""

    def get_node_ip(self) -> str:
        return os.environ.get("VLLM_HOST_IP") or ray.util.get_node_ip_address()

    def update_environment_variables(self, env: dict[str, str]) -> None:
        os.environ.update(env)

    def init_device(self, rank: int, world: int) -> None:
        for line in nccl.init_start(rank, world):
            print(line, flush=True)

    def init_complete(self, rank: int, world: int) -> None:
        print(nccl.init_complete(rank, world), flush=True)

    def load_model(self) -> None:
        print(f"INFO {_ts()} [default_loader.py:267] Loading weights took 0.52 seconds", flush=True)

    def determine_available_memory(self, rank: int, world: int) -> int:
        """vLLM's memory profiling on each rank. SPARK_TEST_FAIL=worker_oom: the rank on the node at
        SPARK_TEST_FAIL_IP (else the last rank) runs out of memory, logged as vLLM's worker logs it
        (worker_base.py's logger.exception), and the driver gets Ray's RayTaskError naming it."""
        chosen = os.environ.get("SPARK_TEST_FAIL_IP")
        me = self.get_node_ip() == chosen if chosen else rank == world - 1
        if os.environ.get("SPARK_TEST_FAIL") == "worker_oom" and me:
            _log(
                "ERROR",
                "worker_base.py:620",
                "Error executing method 'determine_available_memory'. This might cause deadlock in "
                "distributed execution.",
            )
            print("Traceback (most recent call last):", flush=True)
            err = "CUDA out of memory. Tried to allocate 28.44 GiB. GPU 0 has a total capacity of 119.70 GiB of which 1.38 GiB is free."
            print(f"torch.OutOfMemoryError: {err}", flush=True)
            raise OutOfMemoryError(err)
        return 1 << 30


class OutOfMemoryError(RuntimeError):
    """torch.OutOfMemoryError's stand-in: Ray names the driver's exception after it."""


def _non_carry_over() -> set[str]:
    root = os.environ.get("VLLM_CONFIG_ROOT") or os.path.join(
        os.environ.get("XDG_CONFIG_HOME") or os.path.expanduser("~/.config"), "vllm"
    )
    try:
        with open(os.path.join(root, "ray_non_carry_over_env_vars.json")) as fh:
            return set(json.load(fh))
    except (OSError, ValueError):
        return set()


def _env_to_copy() -> dict[str, str]:
    keep = _non_carry_over()
    if keep:
        _log("INFO", "ray_env.py:41", f"RAY_NON_CARRY_OVER_ENV_VARS from config: {keep}")
    names = sorted(
        k
        for k in os.environ
        if k.startswith(COPIED_PREFIXES) and k not in WORKER_SPECIFIC_ENV_VARS and k not in keep
    )
    _log("INFO", "ray_env.py:65", f"Copying the following environment variables to workers: {names}")
    return {k: os.environ[k] for k in names}


def _wait_until_pg_ready(pg, specs: list[dict]) -> None:
    start = time.time()
    ready_ref = pg.ready()
    interval = 10.0
    while time.time() - start < PG_WAIT_TIMEOUT:
        ready, _ = ray.wait(
            [ready_ref], timeout=min(interval, max(0.1, PG_WAIT_TIMEOUT - (time.time() - start)))
        )
        if ready:
            return
        interval *= 2
        _log(
            "INFO",
            "ray_utils.py:253",
            f"Waiting for creating a placement group of specs for {int(time.time() - start)} seconds. "
            f"specs={specs}. Check `ray status` and `ray list nodes` to see if you have enough resources, "
            "and make sure the IP addresses used by ray cluster are the same as VLLM_HOST_IP environment "
            "variable specified in each node if you are running on a multi-node.",
        )
    gpus = sum(spec.get("GPU", 0) for spec in specs)
    if gpus > 1:
        raise ValueError(
            f"Cannot provide a placement group requiring {gpus:g} GPUs (placement_group_specs={specs}) "
            f"within {PG_WAIT_TIMEOUT:g} seconds.\nTensor parallel size may exceed available GPUs in your "
            "cluster. Check resources with `ray status` and `ray list nodes`.\nIf running on K8s with "
            "limited GPUs, consider reducing --tensor-parallel-size to match available GPU resources."
        )
    raise ValueError(
        f"Cannot provide a placement group of placement_group_specs={specs} within {PG_WAIT_TIMEOUT:g} "
        "seconds. See `ray status` and `ray list nodes` to make sure the cluster has enough resources."
    )


def _start(world: int, hang_in_init: bool) -> None:
    # vLLM 0.11+ (PR 25775) warns before Ray starts, comparing TP x PP with the GPUs of THIS node
    # only: every multi-node launch prints it, a healthy one included (vllm#31005).
    if tuple(int(p) for p in __version__.split(".")[:2]) >= (0, 11) and world > LOCAL_GPUS:
        _log(
            "WARNING",
            "ray_utils.py:352",
            f"Tensor parallel size ({world}) exceeds available GPUs ({LOCAL_GPUS}). This may result in Ray "
            f"placement group allocation failures. Consider reducing tensor_parallel_size to {LOCAL_GPUS} or "
            f"less, or ensure your Ray cluster has {world} GPUs available.",
        )
    ray.init(address="auto")
    _log("INFO", "ray_utils.py:347", "No current placement group found. Creating a new placement group.")
    if world > ray.cluster_resources().get("GPU", 0):
        _log(
            "WARNING",
            "ray_utils.py:356",
            "The number of required GPUs exceeds the total number of available GPUs in the placement group.",
        )
    current_ip = os.environ.get("VLLM_HOST_IP") or ray.util.get_node_ip_address()
    node_id = ray.get_runtime_context().get_node_id()
    here = ray._private.state.available_resources_per_node().get(node_id, {})
    if here.get("GPU", 0) < 1:
        raise ValueError(
            f"Current node has no GPU available. current_node_resource={here}. vLLM engine cannot start "
            f"without GPU. Make sure you have at least 1 GPU available in a node current_node_id={node_id!r} "
            f"current_ip={current_ip!r}."
        )
    specs: list[dict] = [{"GPU": 1.0} for _ in range(world)]
    specs[0][f"node:{current_ip}"] = 0.001
    pg = placement_group(specs, strategy="PACK")
    _wait_until_pg_ready(pg, specs)
    workers = [
        RayWorkerWrapper.options(  # type: ignore[attr-defined]
            num_cpus=0,  # as vLLM asks: a worker holds a GPU, not a CPU
            num_gpus=1,
            scheduling_strategy=PlacementGroupSchedulingStrategy(
                placement_group=pg, placement_group_capture_child_tasks=True, placement_group_bundle_index=i
            ),
        ).remote()
        for i in range(world)
    ]
    ips = ray.get([w.get_node_ip.remote() for w in workers])
    # vLLM's order: the workers on the driver's node first, then by address.
    order = sorted(range(world), key=lambda i: (ips[i] != current_ip, ips[i]))
    workers = [workers[i] for i in order]
    env = _env_to_copy()
    ray.get([w.update_environment_variables.remote(env) for w in workers])
    ray.get([w.init_device.remote(rank, world) for rank, w in enumerate(workers)])
    if hang_in_init:
        while True:
            time.sleep(3600)
    ray.get([w.init_complete.remote(rank, world) for rank, w in enumerate(workers)])
    ray.get([w.load_model.remote() for w in workers])
    ray.get([w.determine_available_memory.remote(rank, world) for rank, w in enumerate(workers)])
    # Ray prints forwarded lines as they arrive: let this round reach the log before going on.
    time.sleep(1.0)
    _WORKERS.extend(workers)  # the actors live as long as the engine


_WORKERS: list = []


def run(world: int, hang_in_init: bool = False) -> int:
    """Start the workers; 1 (after vLLM's error line) when that fails."""
    pid = os.getpid()
    sys.stdout = _Prefixed(sys.__stdout__, f"(EngineCore_DP0 pid={pid}) ")
    sys.stderr = _Prefixed(sys.__stderr__, f"(EngineCore_DP0 pid={pid}) ")
    try:
        _start(world, hang_in_init)
    except (ValueError, ray.exceptions.RayError, ConnectionError) as exc:
        _log("ERROR", "core.py:708", "EngineCore failed to start.")
        print(f"{type(exc).__name__}: {exc}", flush=True)
        return 1
    finally:
        sys.stdout, sys.stderr = sys.__stdout__, sys.__stderr__
    return 0
