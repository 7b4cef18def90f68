"""The serving view as one object: the head's /metrics and every node's load, sampled together, and
the signals they give. `status`, `report` and the cockpit all look through a ServingWatch."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

import docker

from spark_tui.core.fabric import fabric_record
from spark_tui.core.launch.events import KernelSaid
from spark_tui.core.node.errors import NodeError
from spark_tui.core.node.nodes import Nodes
from spark_tui.core.serving.deployment import Deployment
from spark_tui.core.serving.node_load import NodeLoad, NodeLoadTracker
from spark_tui.core.serving.serving_metrics import MetricsScraper, ServingFigures
from spark_tui.core.serving.serving_signals import Signal, all_signals
from spark_tui.settings.resolve import Config

LOG_TAIL = 300  # lines of the head's log read for the stat-line fallback


@dataclass
class ServingLook:
    figures: ServingFigures
    loads: dict[str, NodeLoad] = field(default_factory=dict)
    signals: list[Signal] = field(default_factory=list)
    history: list[ServingFigures] = field(default_factory=list)  # oldest first, for plots
    # What serves, by its containers' labels, with its last bench (the cockpit sets it; `status`
    # shows it in its own section).
    deployment: Deployment | None = None
    # What the nodes' kernel logs named while serving (Diagnosis marked serving, a follow lost),
    # oldest first; the cockpit sets it (core/cockpit.py).
    kernel: list[KernelSaid] = field(default_factory=list)

    def as_json(self) -> dict:
        return {
            **self.figures.as_json(),
            "nodes": {
                n: {
                    "error": x.error or None,
                    "gpus": [g.__dict__ for g in x.gpus],
                    "gpu_problem": x.gpu_problem or None,
                    "links": [
                        {
                            "name": k.name,
                            "rx_bytes_s": k.rx_bps,
                            "tx_bytes_s": k.tx_bps,
                            "twin": k.twin,
                            "rdma": k.rdma,
                        }
                        for k in x.links
                    ],
                    "kernel": None
                    if x.kernel is None
                    else {
                        "readable": x.kernel.readable,
                        "reason": x.kernel.reason or None,
                        "counts": x.kernel.counts,
                        "new": x.kernel_new,
                        "last": x.kernel.last or None,
                    },
                    "swap_out_pages_s": x.swap_out_ps,
                    "mem_available_gib": x.mem_available_gib,
                }
                for n, x in self.loads.items()
            },
            "signals": [s.__dict__ for s in self.signals],
        }

    def lines(self) -> list[str]:
        """The serving part of `status` and `report`: every figure with its series."""
        f = self.figures
        where = {"metrics": "/metrics", "log": "the head's log (stat line)", "none": "nothing readable"}[
            f.origin
        ]
        out = [f"serving figures from {where}{', vLLM ' + f.version if f.version else ''}"]
        if f.problem:
            out.append(f"  {f.problem}")
        for fig in f.figures.values():
            source = f"  [{fig.source}]" if fig.source else ""
            out.append(f"  {fig.label:<24} {fig.text():<34}{source}")
        if f.finished:
            out.append(
                "  finished by reason     " + ", ".join(f"{k} {v:.0f}" for k, v in sorted(f.finished.items()))
            )
        for node, load in self.loads.items():
            kernel = ""
            if load.kernel is not None:
                kernel = (
                    " | kernel: " + ", ".join(f"{v} {k}" for k, v in load.kernel.counts.items()) + " (dmesg)"
                    if load.kernel.readable
                    else f" | kernel log not readable: {load.kernel.reason}"
                )
            out.append(f"  {node:<10} {load.line()}{kernel}")
        out += [f"  SIGNAL {s.line()}" for s in self.signals]
        return out


class ServingWatch:
    def __init__(self, config: Config, nodes: Nodes):
        self.config, self.nodes = config, nodes
        head = config.head
        self.head = head.name
        self.scraper = MetricsScraper(
            nodes.transports[head.name],
            head["data_ip"] or "127.0.0.1",
            config["vllm_port"],
            window=config["metrics_window"],
            max_bytes=config["metrics_max_bytes"],
            timeout=min(10.0, max(2.0, config["metrics_interval"])),
            log_tail=self._log_tail,
        )
        self.trackers = {n.name: NodeLoadTracker(n.name, n["netdev"]) for n in config.nodes}
        self.measured = fabric_record.last_measured(config["name"])  # read once: check writes it

    async def _log_tail(self) -> list[str]:
        name = self.config["container_name"]
        try:
            raw = await self.nodes.docker(
                self.head, lambda client: client.containers.get(name).logs(tail=LOG_TAIL)
            )
        except (NodeError, docker.errors.APIError):
            return []
        return raw.decode("utf-8", errors="replace").splitlines()

    async def look(self) -> ServingLook:
        names = list(self.trackers)
        figures, sampled = await asyncio.gather(self.scraper.scrape(), self.nodes.each(self._load, names))
        # A node that cannot be asked is a sample with its error (the tracker says so): never a value here.
        loads = {n: load for n, load in sampled.items() if not isinstance(load, NodeError)}
        history = list(self.scraper.window.history)
        samples = {n: list(self.trackers[n].history) for n in names}
        signals = all_signals(self.head, history if figures.origin == "metrics" else [], samples)
        return ServingLook(figures, loads, signals, history)

    async def _load(self, name: str) -> NodeLoad:
        load = await self.trackers[name].sample(self.nodes.transports[name])
        for link in load.links:
            link.measured = self.measured.get((name, link.name), "")
        return load

    async def close(self) -> None:
        await self.scraper.close()
