"""vLLM and Ray log parsing: Ray start/join, `ray status`, shard loading, readiness, OOM, metrics."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from spark_tui.parsers.text import strip_ansi
from spark_tui.parsers.verdict import Verdict

SHARDS = re.compile(
    r"Loading (?P<kind>\w+) checkpoint shards: +(?P<pct>\d+)% Completed \| (?P<done>\d+)/(?P<total>\d+)"
)
ONLY_PREFIX = re.compile(r"^\((?P<proc>\w+) pid=\d+(?:, ip=[\d.]+)?\)\s*$")
UVICORN = re.compile(r"Uvicorn running on (?P<url>https?://\S+)")
API_START = re.compile(r"Starting vLLM API server \d+ on (?P<url>https?://\S+)")
# What `ray start --address` prints on each attempt that cannot reach the head (Ray's GCS client).
GCS_UNREACHABLE = re.compile(
    r"Failed to connect to GCS at address (?P<addr>\S*?)\.? within|Unable to connect to GCS at (?P<addr2>\S+?)\.?(?:\s|$)"
    r"|Timed out while waiting for GCS"
)
LOCAL_IP = re.compile(r"Local node IP: (?P<ip>[\d.]+)")
OOM = re.compile(
    r"(?:torch\.(?:cuda\.)?OutOfMemoryError|CUDA out of memory|Free memory on device \S+ \([\d./ ]+GiB\) on startup is less than desired"
    r"|No available memory for the cache blocks|Killed process \d+|out of memory)"
)
TP_EXCEEDS = re.compile(r"Tensor parallel size \((?P<tp>\d+)\) exceeds available GPUs \((?P<gpus>\d+)\)")
METRICS = re.compile(
    r"Avg prompt throughput: (?P<prompt>[\d.]+) tokens/s, Avg generation throughput: (?P<gen>[\d.]+) tokens/s, "
    r"Running: (?P<running>\d+) reqs, Waiting: (?P<waiting>\d+) reqs, GPU KV cache usage: (?P<kv>[\d.]+)%"
)
STATUS_NODE = re.compile(r"^\s*(?P<count>\d+) \S+")
STATUS_RES = re.compile(r"^\s*(?P<used>[\d.]+)/(?P<total>[\d.]+) (?P<name>CPU|GPU)\b")
# Section headers of `ray status`: Ray 2.4x says `Active:`/`Idle:` and `Total Usage:`; older Ray
# `Healthy:` and `Usage:`. Nodes under Active, Idle and Healthy have all joined.
STATUS_SECTIONS = {
    "Active:": "joined",
    "Idle:": "joined",
    "Healthy:": "joined",
    "Pending:": "pending",
    "Recent failures:": "failures",
    "Usage:": "usage",
    "Total Usage:": "usage",
    "Demands:": "other",
    "Total Demands:": "other",
    "Total Constraints:": "other",
    "Resources": "other",
}
# argparse's own failure (`vllm serve: error: unrecognized arguments: ...`) counts too.
ERROR_LINE = re.compile(
    r"\b(?:ERROR|Traceback \(most recent call last\)|RuntimeError:|ValueError:)|^[\w. -]+: error: "
)


@dataclass
class RayStatus:
    active_nodes: int = 0
    pending_nodes: int = 0
    gpus_total: float = 0.0
    gpus_used: float = 0.0
    cpus_total: float = 0.0


@dataclass
class VllmSummary:
    ray_started: bool = False
    ray_node_ips: list[str] = field(default_factory=list)
    shards_done: int | None = None
    shards_total: int | None = None
    shard_owner: str | None = None
    startup_complete: bool = False
    endpoint: str | None = None
    oom: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    tp_exceeds: tuple[int, int] | None = None
    gcs_unreachable: str | None = None  # the address `ray start` could not reach ("" when it had none)
    metrics: dict[str, float] = field(default_factory=dict)

    @property
    def ready(self) -> bool:
        """The log says the API server finished starting: time to ask it over HTTP, which alone
        decides readiness. Current vLLM prints no `Uvicorn running on` line; older versions do."""
        return self.startup_complete

    @property
    def shard_fraction(self) -> float | None:
        if not self.shards_total or self.shards_done is None:
            return None
        return self.shards_done / self.shards_total

    def verdicts(self) -> list[Verdict]:
        out = []
        if self.oom:
            out.append(Verdict("error", "oom", f"out of memory: {self.oom[-1][:160]}"))
        if self.tp_exceeds:
            tp, gpus = self.tp_exceeds
            text = f"tensor parallel size {tp} exceeds the {gpus} GPU(s) Ray sees: not every node joined"
            out.append(Verdict("error", "tp_exceeds_gpus", text))
        if self.ready:
            at = f" at {self.endpoint}" if self.endpoint else ""
            out.append(Verdict("ok", "api_started", f"API server started{at}"))
        elif self.shards_total:
            out.append(Verdict("warn", "loading", f"loading shards {self.shards_done}/{self.shards_total}"))
        if self.gcs_unreachable is not None:
            addr = self.gcs_unreachable
            hint = (
                f"the address has no host ({addr}): the head address given to `ray start --address` was empty "
                "(an unset variable?)"
                if addr.startswith(":") or not addr
                else f"check that the head runs Ray at {addr} and that this node reaches it (firewall, data address)"
            )
            out.append(
                Verdict(
                    "error", "gcs_unreachable", f"Ray cannot reach the head's GCS at {addr or '?'}: {hint}"
                )
            )
        if self.ray_started:
            out.append(Verdict("ok", "ray_started", "Ray runtime started"))
        return out


class VllmParser:
    def __init__(self) -> None:
        self.summary = VllmSummary()

    def feed(self, line: str) -> None:
        # tqdm redraws with \r: each segment is its own progress update.
        for part in line.split("\r"):
            self._one(part)

    def _one(self, line: str) -> None:
        s = self.summary
        if "shards" in line:
            m = SHARDS.search(line)
            if m:
                s.shards_done, s.shards_total = int(m.group("done")), int(m.group("total"))
                return
        if s.shards_total and line.startswith("(") and "pid=" in line:
            # tqdm output is unprefixed; its process prefix lands alone on the next line.
            m = ONLY_PREFIX.match(strip_ansi(line))
            if m:
                s.shard_owner = m.group("proc")
                return
        if "Application startup complete" in line:
            s.startup_complete = True
        elif "Uvicorn running on" in line or "Starting vLLM API server" in line:
            m = UVICORN.search(line) or API_START.search(line)
            if m:
                s.endpoint = m.group("url")
        elif "Ray runtime started" in line:
            s.ray_started = True
        elif "GCS" in line and GCS_UNREACHABLE.search(line):
            m = GCS_UNREACHABLE.search(line)
            if m and s.gcs_unreachable is None:
                s.gcs_unreachable = m.group("addr") or m.group("addr2") or ""
        elif "Local node IP" in line:
            m = LOCAL_IP.search(line)
            if m and m.group("ip") not in s.ray_node_ips:
                s.ray_node_ips.append(m.group("ip"))
        elif "throughput" in line:
            m = METRICS.search(line)
            if m:
                s.metrics = {k: float(v) for k, v in m.groupdict().items()}
        elif "exceeds available GPUs" in line:
            m = TP_EXCEEDS.search(line)
            if m:
                s.tp_exceeds = (int(m.group("tp")), int(m.group("gpus")))
                s.errors.append(line.strip())
        if "memory" in line or "Killed" in line:
            if OOM.search(line):
                s.oom.append(strip_ansi(line).strip())
                return
        if ERROR_LINE.search(line) and "NCCL" not in line:
            s.errors.append(strip_ansi(line).strip())


def parse_text(text: str) -> VllmSummary:
    parser = VllmParser()
    for line in text.splitlines():
        parser.feed(line)
    return parser.summary


def parse_ray_status(text: str) -> RayStatus:
    """`ray status` output in either layout: counts the nodes that joined (not merely 'ray status
    answers') and the GPUs; log lines before the header are skipped."""
    st = RayStatus()
    section = ""
    usage_read = False  # the cluster's totals come first; per-node `Usage:` blocks follow them
    for line in text.splitlines():
        stripped = line.strip()
        if stripped in STATUS_SECTIONS or (stripped.endswith(":") and not STATUS_RES.match(line)):
            section = STATUS_SECTIONS.get(stripped, "other")
            if section == "usage" and usage_read:
                section = "other"
            usage_read = usage_read or section == "usage"
            continue
        if not stripped or stripped.startswith("("):
            continue
        if section in ("joined", "pending"):
            m = STATUS_NODE.match(line)
            if m:
                if section == "joined":
                    st.active_nodes += int(m.group("count"))
                else:
                    st.pending_nodes += int(m.group("count"))
        elif section == "usage":
            m = STATUS_RES.match(line)
            if m and m.group("name") == "GPU":
                st.gpus_used, st.gpus_total = float(m.group("used")), float(m.group("total"))
            elif m:
                st.cpus_total = float(m.group("total"))
    return st
