"""What a pasted input is, so the right parser reads it: a `show_gids` table or a GPU CSV is not
a vLLM log, and a vLLM log mentioning `ProcessGroupNCCL` is not an NCCL log."""

from __future__ import annotations

import re

from spark_tui.diagnose.formats import FORMAT_KINDS, detect_format
from spark_tui.diagnose.paste import Cleaned
from spark_tui.parsers import docker_text, nccl, rdma

KINDS = ("nccl", "vllm", "gpu", "netif", "ibstat", "gids", "docker-ps") + FORMAT_KINDS
CSV_CELL = re.compile(
    r"^(?:\[N/A\]|\[Not Supported\]|N/A|Not Supported|-?[\d.]+(?: ?(?:MiB|%|W|C|MHz))?|GPU-[\w.-]+|[\w/.:-]+(?: [\w/.:-]+)*)$"
)
# A GPU's rows in the nvidia-smi table, whatever its name (`Tesla V100-PCIE...`, `GeForce GTX 1080`):
# `|   1  Tesla V100-PCIE...  On   | 00008ED0:00:00.0 Off |` and `| N/A   29C    P0   ERR! / 250W |`,
# also in a window of the table without its header.
SMI_ROW = re.compile(
    r"^\|\s+\d+\s+\S[^|\n]*\|\s*[0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.\d"
    r"|^\|\s*(?:\d+%|N/A|ERR!)\s+(?:\d+C|N/A|ERR!)\s+(?:P\d+|ERR!)\s",
    re.M,
)
# nvidia-smi's table or CSV command line pasted bare (Windows' `nvidia-smi.exe`, a path before
# it); not `nvidia-smi topo -m` or another subcommand, whose output is no GPU table
SMI_COMMAND = re.compile(
    r'^"?(?:[\w:.~/\\ -]*[/\\])?nvidia-smi(?:\.exe)?"?(?:[ \t]*$|[ \t][^\n]*--query-(?:gpu|compute-apps)=)',
    re.I | re.M,
)
# a `--query-gpu` CSV header: `name, utilization.gpu [%], power.draw [W]`
CSV_HEADER_CELL = re.compile(r"^[a-z_]+(?:\.[a-z_]+)*(?: \[[^\]]{1,8}\])?$")
PS_HEADER = re.compile(r"^(?:CONTAINER ID|NAMES)\s{2,}.*\bIMAGE\b", re.M)
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
        or SMI_ROW.search(head)
        or "memory.used" in head
        or "process_name" in head
        or SMI_COMMAND.match(head.lstrip())
        or any(_csv_header(line) for line in head.splitlines()[:8])
        or _gpu_csv(head)
    ):
        return "gpu"
    first = head.lstrip().split("\n", 1)[0]
    if re.match(r"^(?:CONTAINER ID|NAMES)\s{2,}", first) and "IMAGE" in first:
        return "docker-ps"
    rows = [line for line in head.splitlines()[:64] if line.strip()]
    if rows and sum(bool(docker_text.PS_ROW.match(line)) for line in rows) >= 0.8 * len(rows):
        return "docker-ps"  # `docker ps` rows pasted without their header
    # the table after other commands of a session (`$ docker run ...`, then `$ docker ps -a`),
    # when no log line of vLLM or NCCL says the paste is a log that quotes a table
    if PS_HEADER.search(head) and not any(m in head for m in VLLM_MARKS) and "NCCL" not in head:
        return "docker-ps"
    if (
        " ==> " in head
        or "hca_id:" in head
        or re.search(r"^\d+: \S+:? .*(mtu|inet)", head, re.M)
        or re.search(r"^\S+\s+(UP|DOWN|UNKNOWN)\s", head, re.M)
    ) and "NCCL INFO" not in head:
        return "netif"
    return _log_kind(head)


def _csv_header(line: str) -> bool:
    """A `--query-gpu` / `--query-compute-apps` header: field names, one at least dotted or one
    nvidia-smi names alone (pid, process_name), each perhaps with its unit."""
    cells = [c.strip() for c in line.split(",")]
    return (
        len(cells) >= 2
        and all(CSV_HEADER_CELL.match(c) for c in cells)
        and any("." in c or c in ("pid", "process_name", "used_memory", "gpu_uuid") for c in cells)
    )


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
