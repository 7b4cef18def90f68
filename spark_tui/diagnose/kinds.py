"""What a pasted input is, so the right parser reads it: a `show_gids` table or a GPU CSV is not
a vLLM log, and a vLLM log mentioning `ProcessGroupNCCL` is not an NCCL log."""

from __future__ import annotations

import re

from spark_tui.diagnose.formats import FORMAT_KINDS, detect_format
from spark_tui.diagnose.paste import Cleaned
from spark_tui.parsers import nccl, rdma

KINDS = ("nccl", "vllm", "gpu", "netif", "ibstat", "gids", "docker-ps") + FORMAT_KINDS
CSV_CELL = re.compile(
    r"^(?:\[N/A\]|\[Not Supported\]|N/A|Not Supported|-?[\d.]+(?: ?(?:MiB|%|W|C|MHz))?|GPU-[\w.-]+|[\w/.:-]+(?: [\w/.:-]+)*)$"
)
VLLM_MARKS = (
    "(APIServer pid=",
    "(EngineCore",
    "(Worker",
    "(RayWorkerWrapper",
    "vLLM API server",
    "Loading safetensors checkpoint shards",
    "Autoscaler status",
    "Ray runtime started",
    "Model loading took",
    "torch.OutOfMemoryError",
    "OutOfMemoryError",
    "Free memory on device",
    "Traceback (most recent call last)",
    "gcs_rpc_client",
)


def detect(cleaned: Cleaned) -> str:
    fmt = detect_format(cleaned)
    if fmt is not None:
        return fmt
    head = cleaned.text[:200_000]
    cmd = cleaned.command
    for prefix, kind in (
        ("show_gids", "gids"),
        ("ibstat", "ibstat"),
        ("ibstatus", "ibstat"),
        ("nvidia-smi", "gpu"),
    ):
        if cmd.startswith(prefix):
            return kind
    if cmd.startswith("docker ps"):
        return "docker-ps"
    if rdma.parse_show_gids(head[:20_000]) or re.search(r"^DEV\s+PORT\s+INDEX\s+GID", head, re.M):
        return "gids"
    if re.search(r"^\s*CA '[^']+'", head, re.M) and "Link layer:" in head:
        return "ibstat"
    if (
        "NVIDIA-SMI" in head
        or re.search(r"^\|\s+\d+\s+NVIDIA", head, re.M)
        or "memory.used" in head
        or "process_name" in head
        or _gpu_csv(head)
    ):
        return "gpu"
    first = head.lstrip().split("\n", 1)[0]
    if re.match(r"^(?:CONTAINER ID|NAMES)\s{2,}", first) and "IMAGE" in first:
        return "docker-ps"
    if (
        " ==> " in head
        or "hca_id:" in head
        or re.search(r"^\d+: \S+:? .*(mtu|inet)", head, re.M)
        or re.search(r"^\S+\s+(UP|DOWN|UNKNOWN)\s", head, re.M)
    ) and "NCCL INFO" not in head:
        return "netif"
    return _log_kind(head)


def _gpu_csv(head: str) -> bool:
    """Headerless `--query-gpu` / `--query-compute-apps` rows: a few lines of comma-separated
    cells, each a number, `[N/A]`, a GPU UUID or a process path."""
    lines = [line for line in head.splitlines()[:64] if line.strip()]
    if not lines or any(line.count(",") < 1 for line in lines):
        return False
    cells = [c.strip() for line in lines for c in line.split(",")]
    return all(CSV_CELL.match(c) for c in cells) and any(
        c.startswith(("[N/A]", "GPU-")) or c.replace(".", "").isdigit() for c in cells
    )


def _log_kind(head: str) -> str:
    """NCCL when its own lines (host:pid:tid [dev] NCCL ...) are a good part of the log."""
    lines = head.splitlines()
    nccl_lines = sum(1 for line in lines if "NCCL" in line and nccl.split_header(line) is not None)
    vllm_lines = sum(1 for line in lines if any(m in line for m in VLLM_MARKS))
    if nccl_lines and nccl_lines >= vllm_lines:
        return "nccl"
    if not nccl_lines and not vllm_lines and ("NCCL" in head or "nccl" in head):
        return "nccl"  # NCCL errors quoted by torch, without NCCL's own header
    return "vllm"
