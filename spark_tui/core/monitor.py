"""What the cockpit shows per node, refreshed one node at a time.

`Monitor.refresh(node)` returns a NodeView: the live snapshot, the GPU memory history,
the NCCL summary and tail of the node's spark-tui container (read incrementally, so a
long log is never re-read) and drift marks. Each node refreshes on its own, so a dead
node never holds up the others. No Textual here: the cockpit and tests both use it.
"""

from __future__ import annotations

import time
from collections import deque
from dataclasses import dataclass, field, replace

import docker

from spark_tui.core.launch.nccl_nodes import NodeNccl, per_node
from spark_tui.core.launch.plan import ContainerSpec, build
from spark_tui.core.node import engines, labels
from spark_tui.core.node.errors import NodeError, why
from spark_tui.core.node.logs import LogCursor
from spark_tui.core.node.nodes import Nodes
from spark_tui.core.node.probes import ContainerState, NodeSnapshot, not_understood, snapshot
from spark_tui.core.node.redact import Redactor
from spark_tui.parsers.nccl import NcclParser, NcclSummary, Verdict
from spark_tui.settings.resolve import Config

HISTORY = 60  # GPU memory samples kept for the sparkline
NCCL_TAIL = 12


@dataclass
class NodeView:
    node: str
    host: str
    role: str  # head | worker
    snapshot: NodeSnapshot
    retry_in: float | None = None  # seconds until the next reconnect attempt, when unreachable
    memory_history: list[float] = field(default_factory=list)  # used fraction, oldest first
    # The host's memory over time (GiB, oldest first): "used", "available", "page cache".
    memory_series: dict[str, list[float]] = field(default_factory=dict)
    nccl: NcclSummary | None = None
    nccl_tail: list[tuple[str, str]] = field(default_factory=list)  # (level, message), shown
    nccl_verdicts: list[Verdict] = field(default_factory=list)
    # This node's NCCL transport, from whichever log holds its lines (a Ray worker's are the head's).
    nccl_net: NodeNccl | None = None
    drifted: dict[str, list[str]] = field(default_factory=dict)  # container name -> what differs
    foreign: set[str] = field(default_factory=set)  # containers not of this cluster

    def own_containers(self, cluster: str) -> list[ContainerState]:
        return [c for c in self.snapshot.containers if c.cluster == cluster]

    @property
    def memory_fraction(self) -> float | None:
        g = self.snapshot.gpu
        if g is None or not g.present:
            return None
        if g.unified is not None and g.unified.total_mib:
            return g.unified.used_mib / g.unified.total_mib
        used = sum(c.memory_used_mib or 0 for c in g.gpus)
        total = sum(c.memory_total_mib or 0 for c in g.gpus)
        return used / total if total else None


@dataclass
class _NcclState:
    container_id: str
    parser: NcclParser
    cursor: LogCursor = field(default_factory=LogCursor)


@dataclass
class ImageRow:
    """One image reference as found across the nodes."""

    ref: str
    nodes: dict[str, str]  # node -> short image id
    layers: dict[str, tuple]  # node -> layer digests
    digest: str  # a RepoDigest, or the top layer when the image was never pushed
    size_mb: float
    created: str

    @property
    def mismatch(self) -> bool:
        """Same tag, different content on some node (layer digests differ)."""
        return len(set(self.layers.values())) > 1


def failed_view(config: Config, name: str, exc: BaseException) -> NodeView:
    """What a node's pane shows when its refresh raised (a bug on odd node output): the error,
    named, while the node's refresh loop goes on."""
    node = config.node(name)
    snap = NodeSnapshot(name, False, error=f"refresh failed ({not_understood(exc)})", taken_at=time.time())
    return NodeView(name, node["host"], "head" if node.is_head else "worker", snap)


class Monitor:
    def __init__(self, nodes: Nodes):
        self.nodes = nodes
        config = nodes.config
        self._history: dict[str, deque] = {n.name: deque(maxlen=HISTORY) for n in config.nodes}
        self._memory: dict[str, deque] = {n.name: deque(maxlen=HISTORY) for n in config.nodes}
        self._nccl: dict[str, _NcclState] = {}
        self._specs: dict[str, ContainerSpec] = {}
        self._specs_for: Config | None = None
        self._snaps: dict[str, NodeSnapshot] = {}
        # What the panes show of a node's log (NCCL lines, errors, verdicts quoting them) leaves
        # here shown: inert, then masked (core/node/redact.py), like every event of the core.
        self.show = Redactor(lambda: self.config).show

    @property
    def config(self) -> Config:
        """The live configuration, as the nodes hold it (edits and detected values included)."""
        return self.nodes.config

    async def refresh(self, name: str) -> NodeView:
        node = self.config.node(name)
        transport = self.nodes.transports[name]
        snap = await snapshot(transport, node)
        view = NodeView(name, node["host"], "head" if node.is_head else "worker", snap)
        self._snaps[name] = snap
        if not snap.reachable:
            retry = transport.next_retry - time.monotonic()
            view.retry_in = max(0.0, retry)
            view.memory_history = list(self._history[name])
            view.memory_series = self._series(name)
            return view
        frac = view.memory_fraction
        if frac is not None:
            self._history[name].append(frac)
        view.memory_history = list(self._history[name])
        mem = snap.host.memory
        if mem is not None:
            self._memory[name].append(
                (mem.used_mib / 1024, mem.available_mib / 1024, (mem.cached_mib or 0) / 1024)
            )
        view.memory_series = self._series(name)
        own = [c for c in view.own_containers(self.config["name"]) if c.name == self.config["container_name"]]
        if own and not snap.docker_error:
            await self._read_nccl(name, own[0])
            state = self._nccl.get(name)
            if state:
                show = self.show
                view.nccl = state.parser.summary
                view.nccl_tail = [(level, show(msg)) for level, msg in state.parser.tail or ()]
                view.nccl_verdicts = [
                    replace(v, text=show(v.text))
                    for v in state.parser.summary.verdicts(time.monotonic(), self.config.timeouts.nccl_init)
                ]
        if self._nccl:
            logs = {n: state.parser.summary for n, state in self._nccl.items()}
            net = per_node(self.config, logs, list(self._snaps.values())).get(name)
            view.nccl_net = replace(net, errors=[self.show(e) for e in net.errors]) if net else None
        view.drifted = self.drift_marks(name, snap)
        view.foreign = {c.name for c in snap.containers if c.cluster != self.config["name"]}
        return view

    def last_snapshot(self, name: str) -> NodeSnapshot | None:
        """The node's latest refresh (None before the first)."""
        return self._snaps.get(name)

    def _series(self, name: str) -> dict[str, list[float]]:
        samples = list(self._memory[name])
        return {label: [s[i] for s in samples] for i, label in enumerate(("used", "available", "page cache"))}

    async def _read_nccl(self, name: str, container: ContainerState) -> None:
        state = self._nccl.get(name)
        cid = container.labels.get(labels.CONFIG_HASH, "") + container.started_at
        if state is None or state.container_id != cid:
            state = self._nccl[name] = _NcclState(cid, NcclParser(tail=NCCL_TAIL))
        kwargs = state.cursor.read_args(5000)
        try:
            raw = await self.nodes.docker(
                name,
                lambda c: c.containers.get(container.name).logs(**kwargs).decode("utf-8", errors="replace"),
            )
        except (NodeError, docker.errors.APIError):
            return
        now = time.monotonic()
        state.parser.feed_lines(state.cursor.fresh(raw.splitlines()), now)

    def _spec(self, name: str) -> ContainerSpec | None:
        """The plan for a node, built once per configuration (edits in the wizard replace it)."""
        if self._specs_for is not self.config:
            self._specs = {s.node: s for s in build(self.config)}
            self._specs_for = self.config
        return self._specs.get(name)

    def drift_marks(self, name: str, snap: NodeSnapshot) -> dict[str, list[str]]:
        """A quick per-container comparison with the plan (image and config hash) for the panes."""
        spec = self._spec(name)
        marks: dict[str, list[str]] = {}
        if spec is None:
            return marks
        for c in snap.containers:
            if c.name != spec.name or c.cluster not in (
                None,
                self.config["name"],
            ):
                continue
            diffs = []
            if c.image_ref != spec.image:
                diffs.append(f"image {c.image_ref} (requested {spec.image})")
            if c.labels.get(labels.CONFIG_HASH) != spec.labels[labels.CONFIG_HASH]:
                diffs.append("config differs from the plan")
            if diffs:
                marks[c.name] = diffs
        return marks

    async def images(self) -> list[ImageRow]:
        """Every tagged image on every reachable node, grouped by reference."""

        rows: dict[str, ImageRow] = {}
        for name, images in (await self.nodes.each(self._images_on)).items():
            if isinstance(images, NodeError):  # a node that cannot be asked lists nothing
                continue
            for ref, attrs in images:
                layers = tuple((attrs.get("RootFS") or {}).get("Layers") or [])
                row = rows.get(ref)
                if row is None:
                    digests = attrs.get("RepoDigests") or []
                    digest = digests[0].split("@", 1)[-1] if digests else (layers[-1] if layers else "")
                    row = rows[ref] = ImageRow(
                        ref, {}, {}, digest, (attrs.get("Size") or 0) / 1e6, (attrs.get("Created") or "")[:19]
                    )
                row.nodes[name] = attrs.get("Id", "")[7:19]
                row.layers[name] = layers
        return sorted(rows.values(), key=lambda r: (-len(r.nodes), r.ref))

    async def teardown_targets(self) -> dict[str, list[str] | str]:
        """What `down` would remove, per node: container descriptions, or why the node cannot tell."""
        name, cluster = self.config["container_name"], self.config["name"]

        async def described(node: str) -> list[str]:
            found = await self.nodes.docker(node, lambda c: engines.own_containers(c, cluster, name))
            return [f"{name} ({c.get('State', '?')}, image {c.get('Image', '?')})" for c in found]

        show = self.show  # the nodes' words (container descriptions, errors), shown as every event is
        return {
            node: show(f"unreachable: {why(found)[:120]}")
            if isinstance(found, NodeError)
            else [show(x) for x in found]
            for node, found in (await self.nodes.each(described)).items()
        }

    async def _images_on(self, name: str) -> list[tuple[str, dict]]:
        images = await self.nodes.docker(name, lambda c: c.images.list())
        return [(ref, img.attrs) for img in images for ref in img.tags]
