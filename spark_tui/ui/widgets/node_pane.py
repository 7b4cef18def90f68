"""One node's pane: header, interfaces, GPU memory, containers, NCCL tail.

Each section is a small Static fed a rich Text built here from a NodeView. Text from the
node (names, log lines) is added as plain text, never as markup, and made inert first.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Static

from spark_tui.core.launch.events import KernelLogGap, KernelLogLost, KernelSaid
from spark_tui.core.monitor import NodeView
from spark_tui.core.serving.node_load import NodeLoad
from spark_tui.core.serving.serving_signals import Signal
from spark_tui.parsers.text import inert
from spark_tui.ui.widgets.memory_plot import MemoryPlot

BAR = 16
VERDICT_STYLE = {"ok": "bold green", "warn": "bold yellow", "error": "bold red"}


def _text() -> Text:
    """Pane text: one line per item, cut with an ellipsis rather than wrapped."""
    return Text(no_wrap=True, overflow="ellipsis")


def header_text(view: NodeView) -> Text:
    snap = view.snapshot
    t = _text()
    t.append(f"{inert(view.host)}  ", style="dim")  # the border title names the node and role
    if not snap.reachable:
        t.append("UNREACHABLE", style="bold red")
        t.append(f" · {inert(snap.error or '')}")
        if view.retry_in is not None:
            t.append(f" · reconnect in {view.retry_in:.0f} s", style="yellow")
        return t
    t.append("up", style="bold green")
    if snap.rtt_ms is not None:
        t.append(f" · rtt {snap.rtt_ms:.0f} ms")
    t.append(f" · at {time.strftime('%H:%M:%S', time.localtime(snap.taken_at))}", style="dim")
    if snap.docker_error:
        t.append("\ndocker: ", style="bold red")
        t.append(inert(snap.docker_error))
    return t


def interfaces_text(view: NodeView) -> Text:
    t = _text()
    for iface in view.snapshot.interfaces.values():
        if iface.name == "lo":
            continue
        style = "bold reverse" if iface.is_data else ""
        t.append(("*" if iface.is_data else " ") + f"{inert(iface.name):<14}", style=style)
        t.append(f" {inert(iface.state):<4}", style="green" if iface.state == "UP" else "red")
        t.append(f" {iface.mtu or '?':<5}")
        # The RoCE device in green when its port is up, red otherwise.
        roce = inert(iface.roce_device or "-")
        t.append(
            f" {roce:<13}",
            style=("green" if iface.roce_state == "Up" else "red") if iface.roce_device else "dim",
        )
        t.append(f" {inert(' '.join(iface.ipv4)) or '-'}\n")
    if not t.plain:
        t.append("no interfaces reported", style="dim")
    t.rstrip()
    return t


def gpu_text(view: NodeView) -> Text:
    g = view.snapshot.gpu
    t = _text()
    if g is not None and g.driver_failed:
        t.append(f"GPU: {inert(g.reason)}", style="bold red")  # a state to act on, not an absence
        return t
    if g is None or not g.present:
        t.append(f"GPU: none ({inert(g.reason) if g else 'not probed'})", style="dim")
        return t
    frac = view.memory_fraction
    for card in g.gpus:
        t.append(f"GPU{card.index} {inert(card.name)} ", style="bold")
        t.append(f"util {_num(card.utilization_pct)}%  {_num(card.temperature_c)}C  {_num(card.power_w)}W\n")
    if g.unified is not None:
        label = "unified" if g.is_gb10 else "memory (/proc/meminfo)"
        used, total = g.unified.used_mib / 1024, g.unified.total_mib / 1024
    else:
        label = "memory"
        used = sum(c.memory_used_mib or 0 for c in g.gpus) / 1024
        total = sum(c.memory_total_mib or 0 for c in g.gpus) / 1024
    if frac is not None:
        filled = round(frac * BAR)
        style = "red" if frac > 0.9 else "yellow" if frac > 0.75 else "green"
        t.append("█" * filled, style=style)
        t.append("░" * (BAR - filled), style="dim")
        t.append(f" {label} {used:.1f}/{total:.1f} GiB {frac:.0%}")
    if len(view.memory_history) > 1:
        t.append("\nhistory ", style="dim")
        t.append(sparkline(view.memory_history[-BAR - 12 :]), style="cyan")
    for p in g.processes[:3]:
        if p.used_mib is not None:
            held = f"{p.used_mib} MiB"
        elif g.is_gb10:  # GB10's nvidia-smi reports no per-process figure: it is in the unified total
            held = "counted in unified (no per-process MiB on GB10)"
        else:
            held = "MiB not reported"
        t.append(f"\n  pid {p.pid} {inert(p.name)[:28]} {held}", style="dim")
    return t


def containers_text(view: NodeView) -> Text:
    snap = view.snapshot
    t = _text()
    if snap.docker_error:
        t.append("containers: unknown (docker engine unreachable)", style="red")
        return t
    if not snap.containers:
        t.append("no containers", style="dim")
        return t
    for c in snap.containers:
        drift = view.drifted.get(c.name)
        t.append("DRIFT " if drift else "", style="bold reverse red")
        if c.name in view.foreign:  # not this cluster's: it holds memory all the same
            t.append("FOREIGN ", style="bold yellow")
        t.append(f"{inert(c.name)} ", style="bold")
        state_style = (
            "green" if c.state == "running" else "yellow" if c.state in ("created", "restarting") else "red"
        )
        t.append(inert(c.state), style=state_style)
        if c.health:
            t.append(f" ({inert(c.health)})")
        t.append(f" {c.uptime}")
        t.append(f" {inert(c.image_ref)}", style="dim")
        t.append(
            " (vLLM/Ray?)\n" if c.name in view.foreign and c.looks_like_inference else "\n", style="yellow"
        )
        for d in drift or []:
            t.append(f"   {inert(d)}\n", style="red")
    t.rstrip()
    return t


def nccl_text(view: NodeView) -> Text:
    t = _text()
    s, net = view.nccl, view.nccl_net
    if net is not None and (net.transport is not None or net.hcas or net.folded or net.dedup):
        # The transport, even when this node's lines are in another log (a Ray worker's are the head's).
        folded = net.transport is None and (net.folded or net.dedup)  # said why it is not known
        t.append(inert(net.text()), style="yellow" if net.level == "warn" or folded else "bold")
    elif s is None:
        t.append("NCCL: no spark-tui container log yet", style="dim")
        return t
    else:
        t.append("NCCL: transport not logged yet", style="dim")
    if net is not None and net.init_text():
        # This node's own ranks, wherever their lines were read (the log's totals follow below).
        t.append(
            f"\nthis node: {net.init_text()}", style="" if net.init_complete >= net.init_start else "yellow"
        )
    for err in net.errors[:2] if net is not None else []:
        t.append(f"\nERROR {inert(err[:160])}", style="red")  # shown by the core; inert: the last guard
    if s is None:
        return t
    if s.version or s.init_start:
        t.append(f"\nNCCL {inert(s.version or '?')}  init {s.init_complete}/{s.init_start}")
    if s.warnings:
        t.append(f"  {len(s.warnings)} WARN", style="yellow")
    for v in view.nccl_verdicts:  # they quote NCCL lines: shown by the core
        t.append(f"\n{inert(v.text)}", style=VERDICT_STYLE.get(v.level, ""))
    for level, message in view.nccl_tail[-4:]:  # split by the core's parser, shown by the core
        said = f"{level} {message}" if level else message
        t.append(f"\n{inert(said)}", style="yellow" if level == "WARN" else "dim")
    return t


def serving_text(load: NodeLoad | None, signals: list[Signal], kernel: Sequence[KernelSaid] = ()) -> Text:
    """The serving line: temperature, power, SM clock (with the reasons slowing it), link traffic;
    then this node's signals, then what its kernel log named while serving (the last few)."""
    t = _text()
    if load is not None:
        t.append("serving ", style="bold")
        t.append(inert(load.line()), style="yellow" if any(g.active for g in load.gpus) else "")
    for s in signals:
        t.append(
            f"\n{s.level.upper()} {inert(s.text)}",
            style=VERDICT_STYLE.get("error" if s.level == "fail" else "warn"),
        )
    for k in list(kernel)[-KERNEL_SHOWN:]:  # shown by the core; inert again as the last guard
        if isinstance(k, KernelLogGap):
            t.append(
                f"\nWARNING kernel log lines between {inert(k.last_seen)} and {inert(k.first_back)} may be missing",
                style=VERDICT_STYLE.get("warn"),
            )
            continue
        if isinstance(k, KernelLogLost):
            t.append(
                f"\nWARNING kernel log no longer followed: {inert(k.cause)}", style=VERDICT_STYLE.get("warn")
            )
            continue
        level = "ERROR" if k.severity == "error" else "WARNING"
        t.append(
            f"\n{level} kernel: {inert(k.title)} (fix: {inert(k.fix)})",
            style=VERDICT_STYLE.get("error" if k.severity == "error" else "warn"),
        )
    return t


KERNEL_SHOWN = 3  # kernel findings a pane shows while serving (all of them are notified)


def sparkline(fractions: list[float]) -> str:
    """Used-memory fractions (0..1) as one line of block characters, oldest first."""
    blocks = " ▁▂▃▄▅▆▇█"
    return "".join(blocks[min(8, max(0, round(f * 8)))] for f in fractions)


def _num(value) -> str:
    return "?" if value is None else f"{value:g}"


class NodePane(Vertical, can_focus=True):
    """A focusable pane for one node (tab / arrows move between panes)."""

    DEFAULT_CSS = """
    NodePane {
        border: round $primary 50%;
        border-title-color: $text;
        border-title-style: bold;
        padding: 0 1;
        height: 100%;
        overflow-y: auto;
    }
    NodePane:focus { border: round $accent; }
    NodePane.-unreachable { border: round $error; }
    NodePane.-drift { border: double $error; }
    NodePane Static { height: auto; text-wrap: nowrap; text-overflow: ellipsis; }
    NodePane .pane-header { text-wrap: wrap; margin-bottom: 0; }
    NodePane .pane-net { color: $text-muted; }
    NodePane .pane-containers { border-top: dashed $primary 30%; }
    NodePane .pane-nccl { border-top: dashed $primary 30%; }
    NodePane .pane-serving.-empty { display: none; }
    NodePane .pane-plot { border-top: dashed $primary 30%; }
    """

    def __init__(self, node: str, host: str, role: str):
        super().__init__(id=f"pane-{node}", classes="node-pane")
        self.node = node
        self.border_title = f"{node} ({role})"
        # Held, not queried: a first refresh can arrive before these are mounted, and a Static
        # takes new content either way.
        self._header = Static(
            Text(f"{node}: waiting for the first refresh", style="dim"), classes="pane-header"
        )
        self._net = Static(classes="pane-net")
        self._gpu = Static(classes="pane-gpu")
        self._containers = Static(classes="pane-containers")
        self._nccl = Static(classes="pane-nccl")
        self._serving = Static(classes="pane-serving -empty")  # once serving: heat, power, clock, links
        self._plot = MemoryPlot(classes="pane-plot")

    def compose(self) -> ComposeResult:
        yield from (
            self._header,
            self._net,
            self._gpu,
            self._serving,
            self._containers,
            self._nccl,
            self._plot,
        )

    def show_serving(
        self, load: NodeLoad | None, signals: list[Signal], kernel: Sequence[KernelSaid] = ()
    ) -> None:
        self._serving.update(serving_text(load, signals, kernel))
        self._serving.set_class(load is None and not signals and not kernel, "-empty")

    def show(self, view: NodeView) -> None:
        self.set_class(not view.snapshot.reachable, "-unreachable")
        self.set_class(bool(view.drifted), "-drift")
        self._header.update(header_text(view))
        self._net.update(interfaces_text(view))
        self._gpu.update(gpu_text(view))
        self._containers.update(containers_text(view))
        self._nccl.update(nccl_text(view))
        mem = view.snapshot.host.memory
        self._plot.update(view.memory_series, mem.total_mib / 1024 if mem else None)
