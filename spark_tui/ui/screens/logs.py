"""Follow spark-tui containers' logs: one node, or all of them merged with a node prefix."""

from __future__ import annotations

import os
import re
import time

from textual.app import ComposeResult
from textual.reactive import reactive
from textual.screen import Screen
from textual.widgets import Footer, Header, Input

from spark_tui import paths
from spark_tui.core.cockpit import CockpitAPI, Follower
from spark_tui.core.node.logs import LogLines, StreamState
from spark_tui.knowledge import Watch
from spark_tui.settings.keys import hint
from spark_tui.ui.keys_ui import bindings_for
from spark_tui.ui.messages import LogStreamEvent
from spark_tui.ui.widgets.log_view import LogView

ALL = "all nodes"


class LogsScreen(Screen):
    CSS_PATH = "logs.tcss"
    BINDINGS = bindings_for("logs")

    def __init__(self, core: CockpitAPI, sources: list[tuple[str, str]], source: str = ALL):
        """sources: (node, container) pairs that can be followed; source: a node name or ALL."""
        super().__init__(id="logs")
        self.core = core
        self.sources = sources
        self.source = source
        # Every line passes the core's one rule (core/node/redact.py) before the view or a saved file.
        self.redact = core.redact.show
        self.kb: dict[str, Watch] = {}  # per node: failures the knowledge base names in its lines
        self.followers: list[Follower] = []
        self.filter_text = ""

    # The regex box: "" (closed), "filter" or "search" (open, asking for that).
    input_mode: reactive[str] = reactive("", init=False)

    def watch_input_mode(self, mode: str) -> None:
        box = self.query_one("#log-input", Input)
        box.set_class(not mode, "-hidden")
        if mode:
            box.focus()
        else:
            self.view.text_log.focus()

    def compose(self) -> ComposeResult:
        yield Header()
        yield LogView(self.core.config["log_buffer_lines"], id="logview")
        yield Input(id="log-input", classes="-hidden")  # its placeholder is set when it opens
        yield Footer()

    @property
    def view(self) -> LogView:
        return self.query_one("#logview", LogView)

    def on_mount(self) -> None:
        self._start()

    def _title(self) -> None:
        extra = f"  filter /{self.filter_text}/" if self.filter_text else ""
        extra += "  NCCL only" if self.view.nccl_only else ""
        self.sub_title = f"logs: {self.source}{extra}"
        self.app.sub_title = self.sub_title

    def _start(self) -> None:
        self._title()
        chosen = [(n, c) for n, c in self.sources if self.source in (ALL, n)]
        if not chosen:
            self.view.set_source_state(self.source, "nothing to follow: no spark-tui container")
        merged = self.source == ALL and len(self.sources) > 1
        for node, container in chosen:
            prefix = f"[{node}] " if merged else ""

            def emit(event, prefix=prefix):
                self.post_message(LogStreamEvent(prefix, event))

            follower = self.core.follower(node, container, emit)
            follower.start()
            self.followers.append(follower)

    async def _stop(self) -> None:
        followers, self.followers = self.followers, []
        for f in followers:
            await f.stop()

    async def on_unmount(self) -> None:
        await self._stop()

    def on_log_stream_event(self, message: LogStreamEvent) -> None:
        prefix, event = message.prefix, message.event
        if isinstance(event, LogLines):
            lines = [self.redact(line) for line in event.lines]
            self.view.add(prefix, lines)
            watch = self.kb.setdefault(event.node, Watch(event.node))
            for f in watch.feed_lines(lines):
                if f.severity in ("error", "warn"):
                    # Named once, with the fix: the line itself stays where it is in the log.
                    self.notify(
                        f"{f.node}: {f.title}\nfix: {f.fix}",
                        title="known failure" if f.severity == "error" else "known warning",
                        severity="error" if f.severity == "error" else "warning",
                        markup=False,
                        timeout=30,
                    )
        elif isinstance(event, StreamState):
            text = event.state + (f" ({event.detail})" if event.detail else "")
            if event.state == "disconnected":
                text += f", reconnecting in {event.retry_in:.0f} s"
            self.view.set_source_state(event.node, text)

    # --- actions ----------------------------------------------------------------------

    def action_back(self) -> None:
        if self.input_mode:
            self.input_mode = ""
            return
        self.app.pop_screen()

    def _open_input(self, mode: str) -> None:
        box = self.query_one("#log-input", Input)
        close = hint("logs.back", getattr(self.app, "keymap", {}))
        box.placeholder = f"{mode} regex (enter: apply, empty: clear, {close}: close)"
        box.value = self.filter_text if mode == "filter" else ""
        self.input_mode = mode

    def action_filter(self) -> None:
        self._open_input("filter")

    def action_search(self) -> None:
        self._open_input("search")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        text = event.value
        try:
            if self.input_mode == "filter":
                self.view.set_pattern(text)
                self.filter_text = text
            elif text and self.view.search(text) is None:
                self.notify(f"no line matches /{text}/", severity="warning", markup=False)
        except re.error as exc:
            self.notify(f"bad regex /{text}/: {exc}", severity="error", markup=False)
            return
        self.input_mode = ""
        self._title()

    def action_pause(self) -> None:
        self.view.toggle_pause()

    def action_nccl_only(self) -> None:
        self.view.nccl_only = not self.view.nccl_only
        self._title()

    def action_wrap(self) -> None:
        self.view.wrap = not self.view.wrap

    def action_save(self) -> None:
        path = save_log(self.view.buffer.lines, self.core.config["name"], self.source)
        self.notify(f"saved {len(self.view.buffer.lines)} lines to {path}", markup=False)

    async def action_next_source(self) -> None:
        order = [ALL] + sorted({n for n, _ in self.sources})
        self.source = order[(order.index(self.source) + 1) % len(order)] if self.source in order else ALL
        await self._stop()
        self.view.buffer.lines.clear()
        self.view.sources.clear()
        self.view.rerender()
        self._start()


def save_log(lines, cluster: str, source: str) -> str:
    """The whole buffer (unfiltered, already redacted and inert) to the state dir."""
    folder = os.path.join(paths.state_dir(os.environ), "logs")
    os.makedirs(folder, exist_ok=True)
    name = f"{cluster}-{source.replace(' ', '_')}-{time.strftime('%Y%m%d-%H%M%S')}.log"
    path = os.path.join(folder, name)
    with open(path, "w", encoding="utf-8") as fh:
        fh.writelines(line + "\n" for line in lines)
    return path
