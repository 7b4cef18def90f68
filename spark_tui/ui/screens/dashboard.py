"""The dashboard: one pane per node, refreshed node by node."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Grid, VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Header, Static

from spark_tui.core.monitor import NodeView
from spark_tui.parsers.text import inert
from spark_tui.ui.keys_ui import bindings_for
from spark_tui.ui.widgets.node_pane import NodePane


class DashboardScreen(Screen):
    CSS_PATH = "dashboard.tcss"
    BINDINGS = bindings_for("dashboard")

    def __init__(self, nodes: list[tuple[str, str, str]], banner: str = ""):
        super().__init__(id="dashboard")
        self.node_rows = nodes  # (name, host, role)
        self.banner = banner
        self._early: dict[str, NodeView] | None = {}  # None once the panes exist

    def compose(self) -> ComposeResult:
        yield Header()
        # Warnings quote environment values: plain text, never markup, escapes made inert.
        yield Static(Text(inert(self.banner)), id="banner", classes="-empty" if not self.banner else "")
        count = len(self.node_rows)
        layout = "-n1" if count == 1 else "-n2" if count == 2 else "-n4" if count <= 4 else "-many"
        with VerticalScroll(id="panes-scroll"):
            with Grid(id="panes", classes=layout):
                for name, host, role in self.node_rows:
                    yield NodePane(name, host, role)
        yield Footer()

    def show(self, view: NodeView) -> None:
        # A first refresh can beat the screen's mount: keep it until the panes exist.
        if self._early is not None:
            self._early[view.node] = view
            return
        self.query_one(f"#pane-{view.node}", NodePane).show(view)

    def on_mount(self) -> None:
        self.call_after_refresh(self._panes_ready)

    def _panes_ready(self) -> None:
        early, self._early = self._early or {}, None
        for view in early.values():
            self.show(view)

    def set_banner(self, text: str) -> None:
        banner = self.query_one("#banner", Static)
        banner.update(Text(inert(text)))
        banner.set_class(not text, "-empty")
