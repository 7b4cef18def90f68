"""The dashboard: one pane per node, refreshed node by node."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Grid, VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Header, Static

from spark_tui.core.monitor import NodeView
from spark_tui.core.serving.serving_watch import ServingLook
from spark_tui.parsers.text import inert
from spark_tui.ui.keys_ui import bindings_for
from spark_tui.ui.widgets.node_pane import NodePane


class DashboardScreen(Screen):
    CSS_PATH = "dashboard.tcss"
    BINDINGS = bindings_for("dashboard")

    def __init__(self, nodes: list[tuple[str, str, str]], banner: str = ""):
        super().__init__(id="dashboard")
        self.banner = banner
        # Made here, not in compose: a first refresh can beat the screen's mount, and a pane
        # takes its view whether or not it is mounted yet.
        self.panes = {name: NodePane(name, host, role) for name, host, role in nodes}

    def compose(self) -> ComposeResult:
        yield Header()
        # Warnings quote environment values: plain text, never markup, escapes made inert.
        yield Static(Text(inert(self.banner)), id="banner", classes="-empty" if not self.banner else "")
        # Supervision of a deployment launched here (restart: on-failure): restarts, a loop.
        yield Static(id="supervision", classes="-empty")
        count = len(self.panes)
        layout = "-n1" if count == 1 else "-n2" if count == 2 else "-n4" if count <= 4 else "-many"
        with VerticalScroll(id="panes-scroll"):
            with Grid(id="panes", classes=layout):
                yield from self.panes.values()
        yield Footer()

    def show_supervision(self, text: Text | None) -> None:
        line = self.query_one("#supervision", Static)
        line.update(text or "")
        line.set_class(text is None, "-empty")

    def show(self, view: NodeView) -> None:
        self.panes[view.node].show(view)

    def show_serving(self, look: ServingLook | None) -> None:
        for name, pane in self.panes.items():
            if look is None:
                pane.show_serving(None, [])  # no longer serving: the line goes
            else:
                pane.show_serving(
                    look.loads.get(name),
                    [s for s in look.signals if s.node == name],
                    [k for k in look.kernel if k.node == name],
                )
