"""The cluster as a whole, for `status`: is it serving, on which NCCL transport each node runs,
what else runs on the nodes, what differs from the plan, and, while it does not serve, which
node's rank failed (a Ray worker's failure is read in the head's log and named for the worker).
Per-node facts are the snapshots."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from spark_tui.core.launch import serving
from spark_tui.core.launch.drift import drift
from spark_tui.core.launch.events import DriftItem
from spark_tui.core.launch.nccl_nodes import NodeNccl, node_of, per_node
from spark_tui.core.node import engines
from spark_tui.core.node.errors import NodeError
from spark_tui.core.node.nodes import Nodes
from spark_tui.core.node.probes import ContainerState, NodeSnapshot
from spark_tui.core.serving.deployment import Deployment
from spark_tui.core.serving.deployment import find as find_deployment
from spark_tui.core.serving.deployment import lines as deployment_lines
from spark_tui.parsers.nccl import NcclParser, NcclSummary
from spark_tui.parsers.vllm import VllmParser
from spark_tui.settings.resolve import Config


@dataclass
class ClusterState:
    running: list[str]  # nodes where this cluster's container runs
    serving: serving.Serving | None  # None when the head's container is not running
    nccl: dict[str, NodeNccl] = field(default_factory=dict)
    foreign: dict[str, list[ContainerState]] = field(default_factory=dict)
    drift: list[DriftItem] = field(default_factory=list)
    # node -> why vLLM failed there, read while the cluster does not serve
    failures: dict[str, str] = field(default_factory=dict)
    # Once serving: the figures with their series, node loads and signals (core/serving/serving_watch.py).
    serving_view: dict | None = None
    serving_lines: list[str] = field(default_factory=list)
    # Found by its containers' labels: image, config hash, who/when launched, its last bench.
    deployment: Deployment | None = None


def _ours(config: Config, c: ContainerState) -> bool:
    return c.cluster == config["name"] and c.name == config["container_name"]


# NCCL summaries already read, by (node, container start time): NCCL says how it set up at the
# start of the log, so `status --watch` reads each container's log head once, not every round.
NcclCache = dict[tuple[str, str], NcclSummary]


async def cluster_state(
    config: Config,
    nodes: Nodes,
    snaps: list[NodeSnapshot],
    cache: NcclCache | None = None,
    watches: dict | None = None,
) -> ClusterState:
    """`config` resolved from `snaps` (core/launch/live.py): drift compares like with like."""
    running = [s.node for s in snaps if any(_ours(config, c) and c.state == "running" for c in s.containers)]
    foreign = {s.node: [c for c in s.containers if c.cluster != config["name"]] for s in snaps if s.reachable}
    state = ClusterState(running, None, foreign={n: cs for n, cs in foreign.items() if cs})
    if not running:
        return state
    state.deployment = find_deployment(config, snaps)
    head = config.head.name
    asked = serving.ask(config, nodes.transports[head]) if head in running else _none()
    started = {
        s.node: c.started_at for s in snaps for c in s.containers if _ours(config, c) and c.state == "running"
    }
    logs, state.serving, state.drift = await asyncio.gather(
        _nccl_logs(config, nodes, started, {} if cache is None else cache),
        asked,
        _drift(config, nodes),
    )
    state.nccl = per_node(config, logs, snaps)
    if state.serving is not None and state.serving.ready and watches is not None:
        await _serving_view(config, nodes, state, watches)
    if state.serving is None or not state.serving.ready:
        state.failures = await _failures(config, nodes, running, snaps)
    return state


FAILURE_TAIL = 2000  # lines of each log read for a failure while the cluster does not serve


async def _failures(
    config: Config, nodes: Nodes, running: list[str], snaps: list[NodeSnapshot]
) -> dict[str, str]:
    """Which node's rank failed, from the end of each running container's log: a Ray worker's
    error lines arrive in the head's log with the worker's address (actor prefix, RayTaskError)."""
    name = config["container_name"]

    async def failure_in_log(node: str) -> tuple[str, str] | None:
        raw = await nodes.docker(node, lambda client: client.containers.get(name).logs(tail=FAILURE_TAIL))
        parser = VllmParser()
        for line in raw.decode(errors="replace").splitlines():
            parser.feed(line)
        # Only what vLLM's verdicts call an error (an OOM, a named exception, ...), not any ERROR line.
        failed = any(v.level == "error" for v in parser.summary.verdicts())
        return parser.summary.failure() if failed else None

    out: dict[str, str] = {}
    for log_node, found in (await nodes.each(failure_in_log, running)).items():
        if found is None or isinstance(found, NodeError):  # an unreadable log names no failure
            continue
        line, origin = found
        node = node_of(config, origin, log_node, snaps)
        where = "" if node == log_node else f" (ip={origin}, read in {log_node}'s log)"
        out.setdefault(node, f"vLLM failed on {node}'s rank{where}: {line[:200]}")
    return out


async def _serving_view(config: Config, nodes: Nodes, state: ClusterState, watches: dict) -> None:
    """Two looks `metrics_interval` apart (at most 2 s) the first time, so rates exist; `--watch`
    keeps the watch, and each round's rates span the rounds."""
    from spark_tui.core.serving.serving_watch import ServingWatch

    watch = watches.get("watch")
    if watch is None:
        watch = watches["watch"] = ServingWatch(config, nodes)
        await watch.look()
        await asyncio.sleep(min(2.0, config["metrics_interval"]))
    look = await watch.look()
    state.serving_view = look.as_json()
    state.serving_lines = look.lines()


async def _none() -> None:
    return None


async def _drift(config: Config, nodes: Nodes) -> list[DriftItem]:
    # A container not (or no longer) there, or a node not answering, is told per node above.
    return [i for i in await drift(config, nodes, live=True) if i.what not in ("missing", "unreachable")]


async def _nccl_logs(
    config: Config, nodes: Nodes, started: dict[str, str], cache: NcclCache
) -> dict[str, NcclSummary]:
    name = config["container_name"]

    async def summary_of(node: str) -> NcclSummary:
        known = cache.get((node, started[node]))
        if known is not None:
            return known
        lines = await nodes.docker(node, lambda client: engines.log_head(client, name))
        parser = NcclParser()
        parser.feed_lines(lines)
        return parser.summary

    found = await nodes.each(summary_of, started)
    read = {n: s for n, s in found.items() if not isinstance(s, NodeError)}
    # Once NCCL has set up (some log says its transport), later rounds have nothing to add; before
    # that, every round reads again. (A Ray worker's own log never has NCCL lines.)
    if any(s.transport for s in read.values()):
        cache.update({(n, started[n]): s for n, s in read.items()})
    return read


def as_lines(state: ClusterState, config: Config) -> list[str]:
    """The cluster's part of `status`, after the per-node sections."""
    if state.serving is None:
        where = f" (running on {', '.join(state.running)}, not on the head)" if state.running else ""
        lines = [f"cluster {config['name']}: not running{where}"]
    else:
        s = state.serving
        verdict = "READY" if s.ready else f"NOT READY ({s.detail})"
        lines = [f"cluster {config['name']}: {verdict}: {s.model} at {s.endpoint}"]
    if state.deployment is not None:
        lines += deployment_lines(state.deployment)
    for node, net in state.nccl.items():
        lines.append(f"  {node:<10} {'WARNING ' if net.level == 'warn' else ''}{net.line()}")
    lines += [f"  FAILED {node}: {why}" for node, why in state.failures.items()]
    for node, found in state.foreign.items():
        for c in found:
            look = ", looks like vLLM/Ray" if c.looks_like_inference else ""
            up = f", {c.uptime}" if c.uptime else ""
            lines.append(f"  FOREIGN {node} {c.name} ({c.state}, image {c.image_ref}{up}{look})")
    lines += [i.say() for i in state.drift]
    return lines + state.serving_lines
