"""Which transport NCCL runs on, per node, from whichever log holds that node's NCCL lines.

With the native executor every node's ranks print into that node's own container log. With
the Ray executor a worker's ranks run in Ray actors whose output Ray forwards to the head's
log, prefixed `(RayWorkerWrapper pid=N, ip=A)`: the parser keeps network facts per origin
(that ip, else NCCL's host field), and here an origin is mapped back to a node by its data
address or hostname. A Socket fallback is explained from what spark-tui knows: the variable
that forced it and where that value came from, or the node's HCA state.

Ray's log deduplication (parsers/ray_lines.py) can fold a node's lines into another actor's
line: a folded line counts for the node its prefix names, the occurrences it does not name are
counted apart and never given to a node; a node left without lines says so, naming the fold.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from spark_tui.core.node.probes import NodeSnapshot
from spark_tui.parsers.nccl import NcclParser, NcclSummary, OriginNet
from spark_tui.settings.resolve import Config


@dataclass
class NodeNccl:
    node: str
    transport: str | None  # IB, IBext..., Socket; None while no NCCL line has said
    hcas: list[str] = field(default_factory=list)
    interface: str = ""  # the bootstrap interface and address NCCL chose, `ifname:addr`
    level: str = "unknown"  # ok | warn | unknown
    cause: str = ""  # for Socket: where the fallback came from
    solo: bool = False  # executor solo: no traffic between nodes, so silence is expected
    init_start: int = 0  # Init START / COMPLETE lines of this node's ranks
    init_complete: int = 0
    errors: list[str] = field(default_factory=list)  # NCCL errors this node's ranks printed
    folded: int = 0  # NCCL lines Ray folded away without naming their node, in the logs read
    dedup: str = ""  # Ray's log deduplication, when on: the value and where it came from

    def text(self) -> str:
        over = f" over {self.interface}" if self.interface else ""
        if self.transport is None:
            if self.hcas:
                return f"NCCL: HCAs {', '.join(self.hcas)} listed, transport not logged yet{over}"
            if self.solo:  # silence is expected: one node has no NCCL traffic to log
                return "NCCL: no traffic between nodes (executor solo)"
            if self.folded or self.dedup:
                folded = (
                    f"folded {self.folded} NCCL line(s) of actors it does not name into others'"
                    if self.folded
                    else "folds alike lines of several nodes into one and prints the fold later, if at all"
                )
                on = f" is on ({self.dedup})" if self.dedup else ""
                return (
                    f"NCCL: not said for this node: Ray's log deduplication{on} {folded} "
                    "([repeated Nx across cluster]); RAY_DEDUP_LOGS=0 keeps every node's"
                )
            return "NCCL: no NCCL lines from this node yet"
        if self.transport.startswith("IB"):
            return f"NCCL: IB/RoCE ({self.transport}) on {', '.join(self.hcas) or 'devices not listed'}{over}"
        if self.transport == "Socket":
            return f"NCCL: Socket (TCP, not RoCE){over}: {self.cause}"
        return f"NCCL: {self.transport}{over}"

    def init_text(self) -> str:
        """This node's ranks' init, as their own lines say it ("" before any)."""
        # A rank's COMPLETE line proves it started: with Ray folding lines its START line can be in
        # another actor's fold while its COMPLETE line arrives plain, so the ranks are the larger count.
        ranks = max(self.init_start, self.init_complete)
        if not ranks:
            return ""
        if self.init_complete == ranks:
            return f"init complete ({ranks}/{ranks} of its ranks)"
        if self.dedup or self.folded:  # its COMPLETE lines may be in another actor's fold
            return (
                f"init complete not seen ({self.init_complete}/{ranks} of its ranks): "
                "Ray's log deduplication may have folded its lines"
            )
        return f"init in progress ({self.init_complete}/{ranks} of its ranks)"

    def line(self) -> str:
        """Transport, init and the first error: the node's whole NCCL state in one line."""
        parts = [self.text(), self.init_text()]
        if self.errors:
            parts.append(f"ERROR {self.errors[0][:160]}")
        return "; ".join(p for p in parts if p)


def node_of(config: Config, origin: str, log_node: str, snaps: list[NodeSnapshot] | None = None) -> str:
    """The node a line came from: its origin (an address or hostname) mapped to a node, else
    the node whose log it was read in."""
    return origin_nodes(config, snaps).get(origin, log_node) if origin else log_node


def origin_nodes(config: Config, snaps: list[NodeSnapshot] | None = None) -> dict[str, str]:
    """Origin (address or hostname in NCCL lines) -> node name."""
    out: dict[str, str] = {}
    for snap in snaps or []:
        if snap.host.hostname:
            out[snap.host.hostname] = snap.node
    for node in config.nodes:
        out[node["host"]] = node.name
        if node["data_ip"]:
            out[node["data_ip"]] = node.name
    return out


def per_node(
    config: Config, logs: dict[str, NcclSummary], snaps: list[NodeSnapshot] | None = None
) -> dict[str, NodeNccl]:
    """Every configured node's NCCL network, from the summaries of the logs read (node -> summary
    of its own container's log). Origins that name no node belong to the log they appear in."""
    where = origin_nodes(config, snaps)
    nets: dict[str, list[OriginNet]] = {}
    for log_node, summary in logs.items():
        for origin, net in summary.by_origin.items():
            nets.setdefault(where.get(origin, log_node), []).append(net)
    by_snap = {s.node: s for s in snaps or []}
    folded = sum(s.folded for s in logs.values())
    dedup = dedup_on(config)
    out: dict[str, NodeNccl] = {}
    for node in config.nodes:
        mine = nets.get(node.name, [])
        said = out[node.name] = _node_nccl(config, node.name, mine, by_snap.get(node.name))
        said.init_start = sum(n.init_start for n in mine)
        said.init_complete = sum(n.init_complete for n in mine)
        said.errors = [e for n in mine for e in n.errors]
        said.folded = folded
        said.dedup = dedup
    return out


def dedup_on(config: Config) -> str:
    """Whether Ray folds the workers' lines in the head's log (its driver runs there): "" when
    not, else the head's RAY_DEDUP_LOGS and where it came from (Ray's default when unset)."""
    if config["executor"] != "ray":
        return ""
    mine = [e for e in config.head.container_env if e.name == "RAY_DEDUP_LOGS" and e.overridden_by is None]
    if not mine:
        return "RAY_DEDUP_LOGS unset: Ray's default"
    return "" if mine[-1].value == "0" else f"RAY_DEDUP_LOGS={mine[-1].value} from {mine[-1].derived_from}"


def _node_nccl(config: Config, name: str, nets: list[OriginNet], snap: NodeSnapshot | None) -> NodeNccl:
    transports = [n.transport for n in nets if n.transport]
    # One Socket rank makes the node's traffic Socket: report the worst.
    transport = "Socket" if "Socket" in transports else (transports[0] if transports else None)
    hcas = list(dict.fromkeys(h for n in nets for h in n.hcas))
    boot = next((b for n in nets for b in n.bootstrap), None)
    out = NodeNccl(name, transport, hcas, f"{boot[0]} {boot[1]}" if boot else "")
    out.solo = config["executor"] == "solo"
    if transport is None:
        return out
    if transport == "Socket":
        out.level, out.cause = "warn", socket_cause(config, name, nets, snap)
    else:
        out.level = "ok"
    return out


def socket_cause(config: Config, name: str, nets: list[OriginNet], snap: NodeSnapshot | None) -> str:
    """Why NCCL fell back to Socket on a node, naming where the deciding value came from."""
    env = {e.name: e for e in config.node(name).container_env if e.overridden_by is None}
    said = {k: v for n in nets for k, v in n.env.items()}
    for var, bad in (("NCCL_IB_DISABLE", "1"), ("NCCL_NET", "Socket")):
        mine = env.get(var)
        if mine is not None and mine.value == bad:
            return f"{var}={bad} from {mine.derived_from}"
        if said.get(var) == bad:
            return f"{var}={bad} in the container's environment (not set by spark-tui: the image's ENV?)"
    node_hcas = config.node(name)["hca"] or []
    if snap is not None and snap.reachable:
        states = {m.device: m.state for m in snap.roce}
        down = [f"{h} is {states[h]}" for h in node_hcas if h in states and states[h] != "Up"]
        if down:
            return "HCA " + ", ".join(down) + f" on {name}"
        absent = [h for h in node_hcas if h not in states]
        if absent:
            return f"HCA {', '.join(absent)} not found on {name} (ibdev2netdev)"
    if not node_hcas:
        return "no RoCE device known for this node (hca unset and none detected)"
    return "cause not in the log: check /dev/infiniband in the container and `ibdev2netdev` on the node"


class NcclWatch:
    """One NCCL parser per node's log, fed as the log grows, and which nodes' transport
    became known or changed since last asked: a launch says each the moment it shows."""

    def __init__(self, config: Config, snaps: list[NodeSnapshot] | None = None):
        self.config, self.snaps = config, snaps
        self.parsers: dict[str, NcclParser] = {}
        self._said: dict[str, str] = {}

    def parser(self, node: str) -> NcclParser:
        if node not in self.parsers:
            self.parsers[node] = NcclParser()
        return self.parsers[node]

    def nets(self) -> dict[str, NodeNccl]:
        return per_node(self.config, {n: p.summary for n, p in self.parsers.items()}, self.snaps)

    def changed(self) -> list[NodeNccl]:
        out = []
        for name, net in self.nets().items():
            if net.transport is not None and self._said.get(name) != net.text():
                self._said[name] = net.text()
                out.append(net)
        return out
