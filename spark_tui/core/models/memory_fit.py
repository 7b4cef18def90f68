"""Does the model fit, per node, from live numbers (`memory.fit`), and the guard's reading during
a load.

A DGX Spark's ~120 GiB are shared by CPU and GPU. vLLM takes `gpu_memory_utilization` x total
memory for weights, activations and KV cache, and refuses to start when that much is not free
("Free memory on device ... is less than desired GPU memory utilization"); past that, the load
can eat the host's memory until the node swaps or wedges. The weights come from the node's
cache (the shards' sizes), split over tensor x pipeline parallel ranks (one GPU per node).
"""

from __future__ import annotations

import re
from collections.abc import Awaitable
from dataclasses import dataclass

from spark_tui.core.models.model_cache import ModelConfig
from spark_tui.core.models.model_files import Manifest, complete_rows, manifests
from spark_tui.core.node.errors import NodeError
from spark_tui.core.node.nodes import Nodes
from spark_tui.core.node.probes import NodeSnapshot
from spark_tui.parsers.text import count
from spark_tui.settings.kinds import size_bytes
from spark_tui.settings.resolve import Config

GIB = 1024**3
VLLM_DEFAULT_UTIL = 0.9
THIN_KV = 0.10  # warn when the KV cache gets less than this share of the budget
UTIL_FLAG = re.compile(r"^--gpu[-_]memory[-_]utilization(?:=(?P<v>.+))?$")
DTYPE_BYTES = {"float32": 4, "float16": 2, "bfloat16": 2, "float8_e4m3fn": 1, "int8": 1}

# Read by the launch guard on each node's own shell: MemTotal, MemAvailable, then swap-out pages.
GUARD_SCRIPT = (
    '{ read -r a; read -r b; read -r c; } </proc/meminfo; echo "$a"; echo "$c"; '
    'while read -r k v; do [ "$k" = pswpout ] && echo "pswpout $v"; done </proc/vmstat'
)


def utilization(config: Config) -> tuple[float, str]:
    """gpu_memory_utilization from vllm_args, else vLLM's default; with where it came from."""
    args = config["vllm_args"] or []
    for i, arg in enumerate(args):
        m = UTIL_FLAG.match(arg)
        if m:
            text = m.group("v") if m.group("v") is not None else (args[i + 1] if i + 1 < len(args) else "")
            try:
                value = float(text)
            except ValueError:
                break
            if 0 < value <= 1:
                return value, f"--gpu-memory-utilization {value:g} in vllm_args"
    return VLLM_DEFAULT_UTIL, f"vLLM's default gpu_memory_utilization {VLLM_DEFAULT_UTIL:g}"


@dataclass
class Weights:
    total_bytes: float
    how: str  # "shards in the cache on spark-1" / "estimated from config.json"


def weights(manifests: dict[str, Manifest], model: ModelConfig) -> Weights | None:
    """The model's weight bytes: the shard files of a complete copy, else an estimate from
    config.json (parameters from the layer shapes, bytes per the dtype)."""
    for m in manifests.values():
        if m.exists and m.shards:
            sizes = [m.size(m.snapshot(s)) for s in m.shards]
            if all(sizes):
                return Weights(
                    float(sum(s or 0 for s in sizes)), f"{len(sizes)} shard(s) in the cache on {m.node}"
                )
    data: dict = model.data if model.found else {}
    inner = data.get("text_config")
    text: dict = inner if isinstance(inner, dict) else data
    try:
        hidden, layers = int(text["hidden_size"]), int(text["num_hidden_layers"])
        vocab = int(text.get("vocab_size", 0))
        inter = int(text.get("intermediate_size", 4 * hidden))
        heads = int(text.get("num_attention_heads", 1))
        kv_heads = int(text.get("num_key_value_heads", heads))
    except (KeyError, TypeError, ValueError, OverflowError):  # OverflowError: 1e400 in config.json
        return None
    # Per layer: q and o projections, k and v (smaller with grouped-query attention), the MLP's
    # three matrices; then the embeddings (and the output head unless tied to them).
    attention = 2 * hidden * hidden + 2 * hidden * (hidden * kv_heads // max(1, heads))
    embeddings = vocab * hidden * (1 if data.get("tie_word_embeddings") else 2)
    params = layers * (attention + 3 * hidden * inter) + embeddings
    dtype = str(data.get("torch_dtype") or text.get("torch_dtype") or "bfloat16")
    return Weights(
        float(params * DTYPE_BYTES.get(dtype, 2)),
        f"estimated from config.json ({params / 1e9:.1f} B parameters, {dtype})",
    )


def fit(config: Config, snap: NodeSnapshot, w: Weights | None, model_reason: str, add) -> None:
    """The memory.fit row of one node."""
    name = snap.node
    mem = snap.host.memory
    if not snap.reachable or mem is None:
        add("memory.fit", name, "skipped", "the node's /proc/meminfo could not be read")
        return
    if w is None:
        add("memory.fit", name, "skipped", f"model size unknown: {model_reason}")
        return
    world = config["tensor_parallel_size"] * config["pipeline_parallel_size"]
    share = w.total_bytes / max(1, min(world, len(config.nodes))) / GIB
    total, avail = mem.total_mib / 1024, mem.available_mib / 1024
    util, util_from = utilization(config)
    budget = util * total
    floor = size_bytes(config.node(name)["memory_floor"]) / GIB
    numbers = (
        f"weights {share:.1f} GiB on {name} ({w.how}, / TP x PP {world}); "
        f"{avail:.1f} of {total:.1f} GiB available; vLLM budget {budget:.1f} GiB ({util_from})"
    )
    fix_others = "stop what else holds memory there (check lists GPU processes and foreign containers)"
    if share > avail:
        add(
            "memory.fit",
            name,
            "fail",
            f"the weights alone do not fit: {numbers}",
            fix_others + ", or spread the model over more nodes",
        )
    elif budget > avail:
        # A lower utilization helps only while its budget still holds the weights with room to spare.
        lower = (avail - floor) / total
        fix = (
            f"{fix_others}, or lower --gpu-memory-utilization to {lower:.2f} in vllm_args"
            if lower * total > share * (1 + THIN_KV)
            else fix_others
        )
        add(
            "memory.fit",
            name,
            "fail",
            f"vLLM would refuse to start ('Free memory on device ... less than desired GPU memory "
            f"utilization'): {numbers}",
            fix,
        )
    elif share > budget:
        add(
            "memory.fit",
            name,
            "fail",
            f"the weights exceed vLLM's budget, no room for the KV cache: {numbers}",
            "raise --gpu-memory-utilization in vllm_args, or spread the model over more nodes",
        )
    elif budget - share < THIN_KV * budget or avail - budget < floor:
        why = (
            f"KV cache only {budget - share:.1f} GiB"
            if budget - share < THIN_KV * budget
            else f"only {avail - budget:.1f} GiB left to the host outside vLLM's budget (memory_floor {floor:.0f} GiB)"
        )
        add(
            "memory.fit",
            name,
            "warn",
            f"thin headroom, {why}: {numbers}",
            "lower --gpu-memory-utilization or free memory on the node",
        )
    else:
        add("memory.fit", name, "pass", f"fits, KV cache {budget - share:.1f} GiB: {numbers}")


async def model_checks(
    config: Config, nodes: Nodes, add, snaps: list[NodeSnapshot], model_config: Awaitable[ModelConfig]
) -> None:
    """`model.complete` and `memory.fit` on every reachable node (a model not cached at all is
    model.cached's business: skipped here)."""
    model = config["model"]
    reachable = [s.node for s in snaps if s.reachable]
    found = await manifests(config, nodes, reachable) if model and not model.startswith(("/", ".")) else {}
    complete_rows(config, found, add)
    mc = await model_config
    w = weights(found, mc)
    reason = mc.reason or "no shards in any node's cache"
    for snap in snaps:
        fit(config, snap, w, reason, add)


@dataclass
class MemoryReading:
    node: str
    total_mib: float
    available_mib: float
    swapped_out: int | None  # pages swapped out since boot (pswpout)


def parse_guard(node: str, text: str) -> MemoryReading | None:
    values: dict[str, float] = {}
    for line in text.splitlines():
        key, _, rest = line.replace(":", " ", 1).partition(" ")
        fields = rest.split()
        number = count(fields[0]) if fields else None
        if key in ("MemTotal", "MemAvailable", "pswpout") and number is not None:
            values[key] = float(number)
    if "MemTotal" not in values or "MemAvailable" not in values:
        return None
    swap = values.get("pswpout")
    return MemoryReading(
        node,
        values["MemTotal"] / 1024,
        values["MemAvailable"] / 1024,
        int(swap) if swap is not None else None,
    )


class MemoryGuard:
    """While a model loads: every node's MemAvailable (and swap-outs), read on the node's own
    shell about once a second. Below the node's memory_floor the load is stopped before the
    host swaps itself to a standstill; that verdict names the node and the numbers."""

    INTERVAL = 1.0

    def __init__(self, config: Config, nodes: Nodes):
        self.config, self.nodes = config, nodes
        self.last_read = 0.0
        self.first_swap: dict[str, int] = {}

    async def read(self, now: float) -> list[MemoryReading]:
        """Readings of every node, or [] when the last was less than INTERVAL ago."""
        if now - self.last_read < self.INTERVAL:
            return []
        self.last_read = now

        async def reading(name: str) -> MemoryReading | None:
            try:
                text = await self.nodes.transports[name].run_script(GUARD_SCRIPT, timeout=10)
            except TimeoutError:
                return None
            return parse_guard(name, text)

        found = await self.nodes.each(reading)
        # A node that cannot be asked gives no reading: the launch's own checks report a lost node.
        return [r for r in found.values() if r is not None and not isinstance(r, NodeError)]

    def verdict(self, r: MemoryReading) -> str | None:
        """Why the load must stop on this node, or None."""
        floor = size_bytes(self.config.node(r.node)["memory_floor"])
        start = self.first_swap.setdefault(r.node, r.swapped_out or 0)
        swapped = (r.swapped_out or 0) - start
        if r.available_mib * 1024**2 >= floor:
            return None
        swap = f", {swapped * 4 / 1024:.0f} MiB swapped out since the load began" if swapped > 0 else ""
        return (
            f"{r.node}: memory nearly exhausted during the model load: MemAvailable "
            f"{r.available_mib / 1024:.1f} GiB of {r.total_mib / 1024:.1f} GiB, below memory_floor "
            f"{self.config.node(r.node)['memory_floor']}{swap}; stopped before the host wedges"
        )
