"""The serving screen: tokens/s, TTFT/ITL p95, KV % and the queue over time (plotext), every
figure with the series it came from, and the node signals under it. Thin over ServingLook."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Grid, VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Header, Static

from spark_tui.core.serving.deployment import lines as deployment_lines
from spark_tui.core.serving.serving_watch import ServingLook
from spark_tui.parsers.text import inert
from spark_tui.ui.keys_ui import bindings_for
from spark_tui.ui.widgets.serving_plot import ServingPlot

SIGNAL_STYLE = {"warn": "bold yellow", "fail": "bold red"}

# The plots: title, unit, and the figures drawn (label -> figure key).
PLOTS = (
    ("tokens/s", "tok/s", {"decode": "decode_tps", "prefill": "prefill_tps"}),
    ("latency p95", "s", {"TTFT": "ttft_p95", "ITL": "itl_p95"}),
    ("KV cache", "%", {"KV %": "kv_pct"}),
    ("queue", "req", {"running": "running", "waiting": "waiting"}),
)


def series(look: ServingLook, figures: dict[str, str]) -> dict[str, list[float]]:
    """Each figure over the look's history; a scrape without the figure counts as 0 only in the plot
    (the figures table says why it is missing)."""
    return {label: [f.get(key) or 0.0 for f in look.history] for label, key in figures.items()}


def figures_text(look: ServingLook) -> Text:
    t = Text(no_wrap=True, overflow="ellipsis")
    f = look.figures
    where = {"metrics": "/metrics", "log": "the head's log (vLLM's stat line)", "none": "nothing readable"}[
        f.origin
    ]
    if look.deployment is not None:  # its labels and the bench store: node words, made inert
        t.append(
            "\n".join(inert(line.strip()) for line in deployment_lines(look.deployment)) + "\n", style="dim"
        )
    t.append(f"from {where}" + (f", vLLM {inert(f.version)}" if f.version else ""), style="bold")
    if f.problem:
        t.append(f"\n{inert(f.problem)}", style="yellow")
    for fig in f.figures.values():
        t.append(f"\n{fig.label:<24}")
        t.append(f"{inert(fig.text()):<34}", style="dim" if fig.value is None else "bold")
        if fig.source:
            t.append(f" {inert(fig.source)}", style="dim")
    if f.finished:
        t.append(
            "\nfinished by reason       "
            + ", ".join(f"{inert(k)} {v:.0f}" for k, v in sorted(f.finished.items()))
        )
    return t


def nodes_text(look: ServingLook) -> Text:
    t = Text(no_wrap=True, overflow="ellipsis")
    if not look.signals:
        t.append("no signal: nothing named slows serving now", style="green")
    for s in look.signals:
        t.append(f"{s.level.upper()} {s.node} {inert(s.text)}", style=SIGNAL_STYLE.get(s.level, ""))
        t.append(f"\n    {inert(s.evidence)}\n", style="dim")
    for node, load in look.loads.items():
        t.append(f"\n{node:<10} ", style="bold")
        t.append(inert(load.line()))
        if load.kernel is not None and not load.kernel.readable:
            t.append(f"  kernel log not readable: {inert(load.kernel.reason)}", style="dim")
    return t


class ServingScreen(Screen):
    CSS_PATH = "serving.tcss"
    BINDINGS = bindings_for("serving")

    def __init__(self, look: ServingLook | None):
        super().__init__(id="serving")
        self.look = look
        self.plots = [ServingPlot(unit, title, classes="serving-plot") for title, unit, _ in PLOTS]
        self._figure_lines = Static(classes="serving-figures")
        self._node_lines = Static(classes="serving-nodes")

    def compose(self) -> ComposeResult:
        yield Header()
        with Grid(id="serving-plots"):
            yield from self.plots
        with VerticalScroll(id="serving-text"):
            yield self._figure_lines
            yield self._node_lines
        yield Footer()

    def on_mount(self) -> None:
        self.show(self.look)

    def show(self, look: ServingLook | None) -> None:
        self.look = look
        if look is None:
            self._figure_lines.update(
                Text("not serving yet: the head's container is not running", style="dim")
            )
            self._node_lines.update("")
            return
        for plot, (_, _, figures) in zip(self.plots, PLOTS, strict=True):
            plot.update(series(look, figures), 100.0 if "kv_pct" in figures.values() else None)
        self._figure_lines.update(figures_text(look))
        self._node_lines.update(nodes_text(look))

    def refresh_view(self) -> None:
        """`r`: draw the latest look again (the app's watch brings a new one every metrics_interval)."""
        self.show(getattr(self.app, "serving_look", None) or self.look)

    def action_back(self) -> None:
        self.app.pop_screen()
