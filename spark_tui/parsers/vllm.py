"""vLLM and Ray log parsing: Ray start/join, `ray status`, shard loading, readiness, OOM, metrics."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from spark_tui.parsers.ray_lines import DIED_IP, TASK_ERROR, origin_ip, unfold
from spark_tui.parsers.text import count, strip_ansi
from spark_tui.parsers.verdict import Verdict

SHARDS = re.compile(
    r"Loading (?P<kind>\w+) checkpoint shards: +(?P<pct>\d+)% Completed \| (?P<done>\d+)/(?P<total>\d+)"
)
ONLY_PREFIX = re.compile(r"^\((?P<proc>\w+) pid=\d+(?:, ip=[\d.]+)?\)\s*$")
UVICORN = re.compile(r"Uvicorn running on (?P<url>https?://\S+)")
API_START = re.compile(r"Starting vLLM API server (?:\d+ )?on (?P<url>https?://\S+)")
# What `ray start --address` prints on each attempt that cannot reach the head (Ray's GCS client).
GCS_UNREACHABLE = re.compile(
    r"Failed to connect to GCS at address (?P<addr>\S*?)\.? within|Unable to connect to GCS at (?P<addr2>\S+?)\.?(?:\s|$)"
    r"|Timed out while waiting for GCS"
)
LOCAL_IP = re.compile(r"Local node IP: (?P<ip>[\d.]+)")
OOM = re.compile(
    r"(?:torch\.(?:cuda\.)?OutOfMemoryError|CUDA out of memory|Free memory on device (?:\S+ )?\([\d./ ]+GiB\) on startup is less than desired"
    r"|No available memory for the cache blocks|Killed process \d+|out of memory)"
)
# vLLM's start-up check: "Free memory on device [cuda:0 ](4.22/79.14 GiB) on startup is less than
# desired GPU memory utilization (0.9, 71.22 GiB)".
STARTUP_FREE = re.compile(
    r"Free memory on device (?:(?P<dev>\S+) )?\((?P<free>[\d.]+)/(?P<total>[\d.]+) GiB\) on startup is less than "
    r"desired GPU memory utilization \((?P<util>[\d.]+), (?P<want>[\d.]+) GiB\)"
)
SIZE = r"[\d.]+ (?:[KMGT]i?B|bytes)"
OOM_NOW = re.compile(
    rf"Tried to allocate (?P<tried>{SIZE})\. GPU (?P<gpu>\d+) has a total capacity of (?P<total>{SIZE}) of which "
    rf"(?P<free>{SIZE}) is free\.(?: Including non-PyTorch memory, this process has (?P<inuse>{SIZE}) memory in use)?"
)
OOM_LEGACY = re.compile(
    rf"Tried to allocate (?P<tried>{SIZE}) \(GPU (?P<gpu>\d+); (?P<total>{SIZE}) total capacity; "
    rf"(?P<inuse>{SIZE}) already allocated; (?P<free>{SIZE}) free"
)
# What a load costs and gives, in the forms vLLM has printed over its versions.
LOAD_FIGURES = {
    "model_gib": re.compile(r"(?:Model loading|Loading model weights) took (?P<v>[\d.]+) ?(?:GiB|GB)"),
    "model_s": re.compile(r"Model loading took [\d.]+ GiB(?: memory)? and (?P<v>[\d.]+) seconds"),
    "weights_s": re.compile(r"Loading weights took (?P<v>[\d.]+) seconds"),
    "kv_gib": re.compile(r"(?:Available KV cache memory: |reserved for KV Cache is )(?P<v>[\d.]+) ?GiB"),
    "kv_tokens": re.compile(r"GPU KV cache size: (?P<v>[\d,]+) tokens"),
    "concurrency": re.compile(r"Maximum concurrency for [\d,]+ tokens per request: (?P<v>[\d.]+)x"),
    "request_tokens": re.compile(r"Maximum concurrency for (?P<v>[\d,]+) tokens per request"),
    "engine_init_s": re.compile(
        r"init engine \(profile, create kv cache, warmup model\) took (?P<v>[\d.]+) seconds"
    ),
    "gpu_blocks": re.compile(r"(?:# GPU blocks: |num_gpu_blocks is: )(?P<v>\d+)"),
}
# Lines carrying them hold one of: took, KV, concurrency, blocks (tested with `in`: a regex
# alternation on every line cost a third of the parser's speed).
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
# Ray's `RayTaskError(OutOfMemoryError): ray::RayWorkerWrapper.execute_method() (pid=N, ip=A, ...)`
# is how the driver hears that a worker actor's call failed.
ERROR_LINE = re.compile(
    r"\b(?:ERROR|Traceback \(most recent call last\)|RuntimeError:|ValueError:|RayTaskError\b|ActorDiedError:)"
    r"|^[\w. -]+: error: |A worker died or was killed"
)
# The process prefixes in front of a line (`(EngineCore_DP0 pid=7) `), and the last line of a
# Python traceback (`torch.OutOfMemoryError: ...`, `ValueError`).
PROC_PREFIX = re.compile(r"^(?:\s*\(\w+ pid=\d+(?:, ip=[\d.]+)?\) ?)+")
REMOTE_END = re.compile(r"^[\w.]+(?:Error|Exception|Interrupt|Exit)\b")
# The line that names the exception (not the traceback's frames).
NAMED_ERROR = re.compile(r"\b\w+(?:Error|Exception)(?:\(\w+\))?: |: error: ")


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
    gcs_unreachable: str | None = None  # the address `ray start` could not reach ("" when it had none)
    metrics: dict[str, float] = field(default_factory=dict)
    startup_memory: dict[str, str] | None = None  # vLLM's start-up free-memory check that failed
    oom_figures: dict[str, str] | None = None  # tried, gpu, total, free, in use, as the line says
    load: dict[str, float] = field(default_factory=dict)  # LOAD_FIGURES found
    # Where each line in `oom` and `errors` came from: the address a Ray prefix or RayTaskError
    # names (ray_lines.origin_ip), "" for the log's own node.
    origins: dict[str, str] = field(default_factory=dict)

    def failure(self) -> tuple[str, str] | None:
        """The line that says why vLLM failed and the address of the node it came from ("" for
        the node whose log this is). A rank's own line first: the first out-of-memory line, else
        the first named error (any error line when none is named) that a Ray worker's prefix or
        RayTaskError places on a node, else the last one (the driver's summary)."""
        if self.oom:
            line = self.oom[0]
        else:
            told = [e for e in self.errors if NAMED_ERROR.search(e)] or self.errors
            placed = [e for e in told if self.origins.get(e)]
            if not told:
                return None
            line = placed[0] if placed else told[-1]
        return line, self.origins.get(line, "")

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
        if self.startup_memory:
            m = self.startup_memory
            held = float(m["total"]) - float(m["free"])
            share = float(m["free"]) / float(m["total"])
            fix = (
                f"Stop it, or lower --gpu-memory-utilization below {share:.2f}"
                if share >= 0.3
                else f"Stop it first: only {share:.0%} of the memory is free, too little to serve from"
            )
            out.append(
                Verdict(
                    "error",
                    "startup_memory",
                    f"vLLM's start-up check failed on {m.get('dev') or 'the GPU'}: {m['free']} of {m['total']} GiB "
                    f"free, gpu_memory_utilization {m['util']} wants {m['want']} GiB; something else holds "
                    f"{held:.1f} GiB (another process or container: on a Spark, the unified memory). {fix}",
                )
            )
        elif self.oom_figures:
            f = self.oom_figures
            holds = f" (this process holds {f['inuse']})" if f.get("inuse") else ""
            out.append(
                Verdict(
                    "error",
                    "oom",
                    f"out of memory on GPU {f['gpu']}: tried to allocate {f['tried']} with {f['free']} free of "
                    f"{f['total']}{holds}; lower --gpu-memory-utilization or --max-model-len, or spread the "
                    "model over more GPUs (tensor parallel)",
                )
            )
        elif self.oom:
            out.append(Verdict("error", "oom", f"out of memory: {self.oom[-1][:160]}"))
        else:
            # The line that names the exception (not the traceback's frames) says most.
            named = [e for e in self.errors if NAMED_ERROR.search(e)]
            if named:
                out.append(Verdict("error", "error", f"error: {named[-1][-200:]}"))
        if self.ready:
            at = f" at {self.endpoint}" if self.endpoint else ""
            out.append(Verdict("ok", "api_started", f"API server started{at}"))
        elif self.endpoint:
            out.append(
                Verdict(
                    "ok",
                    "api_starting",
                    f"API server starting at {self.endpoint} (no 'Application startup complete' in this input)",
                )
            )
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
            where = f" on {', '.join(self.ray_node_ips)}" if self.ray_node_ips else ""
            out.append(Verdict("ok", "ray_started", f"Ray runtime started{where}"))
        load = self.load
        if "model_gib" in load:
            took = f" in {load['model_s']:g} s" if "model_s" in load else ""
            out.append(
                Verdict("ok", "model_loaded", f"model loaded: {load['model_gib']:g} GiB of weights{took}")
            )
        if "kv_gib" in load or "kv_tokens" in load:
            parts = [f"{load['kv_gib']:g} GiB" if "kv_gib" in load else ""]
            parts.append(f"{load['kv_tokens']:,.0f} tokens" if "kv_tokens" in load else "")
            if "concurrency" in load:
                parts.append(
                    f"{load['concurrency']:g}x concurrency at {load.get('request_tokens', 0):,.0f} tokens per request"
                )
            out.append(Verdict("ok", "kv_cache", "KV cache: " + ", ".join(p for p in parts if p)))
        if "engine_init_s" in load:
            out.append(Verdict("ok", "engine_init", f"engine initialised in {load['engine_init_s']:g} s"))
        return out


class VllmParser:
    def __init__(self) -> None:
        self.summary = VllmSummary()
        self._died: tuple[str, int] | None = None  # an ActorDiedError waiting for its `ip:` line
        # A RayTaskError's remote traceback follows it in the driver's output, ending in the
        # exception the actor raised: those lines are the actor's node's (`ip=` of the error).
        self._remote: str | None = None
        # The process prefixes the RayTaskError was printed under: a line under others is another
        # process's (Ray forwards a worker's own lines into the driver's output as they come), not
        # part of the traceback, and does not end it.
        self._remote_under = ""
        self._here: str | None = None  # the remote node the current line belongs to

    def feed(self, line: str) -> None:
        # Ray's dedup suffix is not part of what the program printed (the prefix still names the node).
        line = unfold(line)[0]
        # tqdm redraws with \r: each segment is its own progress update.
        if "\r" in line:
            for part in line.split("\r"):
                self._one(part)
        else:
            self._one(line)

    def _one(self, line: str) -> None:
        s = self.summary
        if self._died is not None:
            self._actor_died(line)
        self._here = None
        if self._remote is not None:
            self._remote_step(line)
        if "shards" in line:
            m = SHARDS.search(line)
            if m:
                s.shards_done, s.shards_total = count(m.group("done")) or 0, count(m.group("total")) or 0
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
        if "took" in line or "KV" in line or "oncurrency" in line or "blocks" in line:
            for key, rx in LOAD_FIGURES.items():
                m = rx.search(line)
                if m:
                    s.load[key] = float(m.group("v").replace(",", ""))
        if "memory" in line or "Killed" in line or "allocate" in line:
            if OOM.search(line) or "Tried to allocate" in line:
                text = strip_ansi(line).strip()
                s.oom.append(text)
                s.origins.setdefault(text, origin_ip(text) or self._here or "")
                m = STARTUP_FREE.search(line)
                if m:
                    s.startup_memory = {k: v for k, v in m.groupdict().items() if v}
                m = OOM_NOW.search(line) or OOM_LEGACY.search(line)
                if m:
                    s.oom_figures = {k: v for k, v in m.groupdict().items() if v}
                return
        if (
            ("rror" in line or "RROR" in line or "Traceback" in line)
            and ERROR_LINE.search(line)
            and "NCCL" not in line
        ):
            self._error(strip_ansi(line).strip(), line)

    def _error(self, text: str, line: str) -> None:
        self.summary.errors.append(text)
        self.summary.origins.setdefault(text, origin_ip(strip_ansi(line)) or self._here or "")
        if "ActorDiedError:" in text:
            self._died = (text, 0)
        m = TASK_ERROR.search(text)
        if m:
            self._remote = m.group("ip")
            self._remote_under = _prefixes(text)

    def _remote_step(self, line: str) -> None:
        """Whether this line is part of the remote traceback after a RayTaskError."""
        clean = strip_ansi(line)
        if _prefixes(clean) != self._remote_under:
            return  # another process's line in the middle of the traceback
        body = PROC_PREFIX.sub("", clean, count=1)
        if not body.strip() or body.startswith((" ", "\t", "Traceback (most recent call last)")):
            self._here = self._remote  # a frame of the actor's traceback
        elif REMOTE_END.match(body):
            self._here, self._remote = self._remote, None  # the exception the actor raised
        else:
            self._remote = None

    def _actor_died(self, line: str) -> None:
        """Ray says which node a dead actor was on a few lines below ActorDiedError (`\tip: A`)."""
        assert self._died is not None
        text, seen = self._died
        m = DIED_IP.search(strip_ansi(line))
        if m:
            self.summary.origins[text] = m.group("ip")
        self._died = None if m or seen >= 8 else (text, seen + 1)


def _prefixes(line: str) -> str:
    """The process prefixes a line starts with (vLLM's `(EngineCore_DP0 pid=N)`, Ray's actor's),
    spaces aside: which process's output the line is."""
    m = PROC_PREFIX.match(line)
    return " ".join(m.group(0).split()) if m else ""


def parse_text(text: str) -> VllmSummary:
    parser = VllmParser()
    for line in text.splitlines():
        parser.feed(line)
    return parser.summary


# Ray's refusal to join a cluster of another version (ray/_private/utils.py check_version_info):
# "Version mismatch: The cluster was started with:\n    Ray: A\n    Python: B\nThis process on
# node IP was started with:\n    Ray: C\n    Python: D".
RAY_MISMATCH = re.compile(
    r"Version mismatch: The cluster was started with:\s+Ray: (?P<cluster_ray>\S+)\s+Python: (?P<cluster_py>\S+)"
    r"\s+This process on (?P<where>.+?) was started with:\s+Ray: (?P<ray>\S+)\s+Python: (?P<py>\S+)"
)


# The head's GCS log line for each node that joins (gcs_node_manager.cc, Ray 2.4x).
RAY_NODE_REGISTERED = re.compile(
    r"Registering new node\. node_id=\S+ node_name=\S+ node_address=(?P<addr>[\d.]+)"
)


def ray_version_mismatch(lines: list[str]) -> str | None:
    """Ray's version refusal in a node's log, said with both versions; None when there is none."""
    m = RAY_MISMATCH.search("\n".join(strip_ansi(line) for line in lines))
    if not m:
        return None
    what = f"Ray {m['ray']}" if m["ray"] != m["cluster_ray"] else f"Python {m['py']} (Ray {m['ray']})"
    theirs = f"Ray {m['cluster_ray']}" if m["ray"] != m["cluster_ray"] else f"Python {m['cluster_py']}"
    return (
        f"Ray refuses to join: this node's image has {what}, the head's cluster runs {theirs} "
        "(every node needs the same Ray and Python: the same image)"
    )


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
                    st.active_nodes += count(m.group("count")) or 0
                else:
                    st.pending_nodes += count(m.group("count")) or 0
        elif section == "usage":
            m = STATUS_RES.match(line)
            if m and m.group("name") == "GPU":
                st.gpus_used, st.gpus_total = float(m.group("used")), float(m.group("total"))
            elif m:
                st.cpus_total = float(m.group("total"))
    return st
