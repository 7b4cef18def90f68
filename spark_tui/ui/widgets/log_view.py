"""A followed log: a bounded buffer, batched rendering, filter / NCCL-only / wrap, FOLLOW-PAUSED badge.

Lines arrive in any number; they are appended to a bounded deque and to a pending list,
and a 50 ms timer moves the pending lines into the Log widget in one write. A flood of
lines therefore costs one render per tick, never one per line, and key presses are
handled between ticks.
"""

from __future__ import annotations

import gc
import re
import textwrap
from collections import deque
from dataclasses import dataclass, field

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.reactive import reactive
from textual.widgets import Log, Static

from spark_tui.parsers.nccl import is_nccl_line
from spark_tui.parsers.text import inert

FLUSH_SECONDS = 0.05
TRIM_EVERY_LINES = 200_000


def _load_malloc_trim():
    try:
        import ctypes

        return ctypes.CDLL("libc.so.6").malloc_trim
    except (OSError, AttributeError):
        return None


_malloc_trim = _load_malloc_trim()


def release_freed_memory() -> None:
    """Collect cycles, then give freed heap back to the OS (malloc_trim: glibc only).

    Textual's Log.write_lines starts a thread worker that keeps each written batch; the
    finished Worker sits in a reference cycle until a full collection, which Python
    defers for long. Under a flood that garbage reaches tens of MB, so a long follow
    collects it explicitly every TRIM_EVERY_LINES lines (measured in bench/cockpit.py).
    """
    gc.collect()
    if _malloc_trim is not None:
        _malloc_trim(0)


@dataclass
class LogBuffer:
    """Every line kept (up to `limit`), and what the view currently shows of them."""

    limit: int
    lines: deque = field(init=False)
    pattern: re.Pattern | None = None
    nccl_only: bool = False

    def __post_init__(self) -> None:
        self.lines = deque(maxlen=self.limit)

    def add(self, prefix: str, raw_lines: list[str]) -> list[str]:
        """Store lines (made inert, prefixed) and return those the current view shows."""
        shown = []
        for raw in raw_lines:
            line = f"{prefix}{inert(raw)}" if prefix else inert(raw)
            self.lines.append(line)
            if self.visible(line):
                shown.append(line)
        return shown

    def visible(self, line: str) -> bool:
        if self.nccl_only and not is_nccl_line(line):
            return False
        return self.pattern is None or self.pattern.search(line) is not None

    def view(self) -> list[str]:
        return [line for line in self.lines if self.visible(line)]


class LogView(Vertical):
    """The Log widget plus its status line (source states and the FOLLOW / PAUSED badge)."""

    DEFAULT_CSS = """
    LogView { height: 1fr; }
    LogView .log-status { height: 1; background: $panel; }
    LogView .log-badge {
        width: 8; background: $success; color: $background; text-style: bold; content-align: center middle;
    }
    LogView .log-badge.-paused { background: $warning; }
    LogView .log-sources { width: 1fr; padding: 0 1; }
    LogView #log { height: 1fr; }
    """

    def __init__(self, limit: int, **kw):
        super().__init__(**kw)
        self.buffer = LogBuffer(limit)
        # Lines shown by the next flush; kept while paused so resuming writes only those.
        self.pending: deque = deque(maxlen=limit)
        self.overflowed = False
        self.since_trim = 0
        self.sources: dict[str, str] = {}

    # Pause keeps collecting; resuming writes what arrived meanwhile and follows again.
    paused: reactive[bool] = reactive(False, init=False)
    wrap: reactive[bool] = reactive(False, init=False)  # long lines wrapped at the view's width
    nccl_only: reactive[bool] = reactive(False, init=False)  # only NCCL's lines shown

    def watch_paused(self, paused: bool) -> None:
        if not paused:
            self.flush()
            self.text_log.scroll_end(animate=False)
        self._badge()

    def watch_wrap(self) -> None:
        self.rerender()

    def watch_nccl_only(self, nccl_only: bool) -> None:
        self.buffer.nccl_only = nccl_only
        self.rerender()

    def compose(self) -> ComposeResult:
        with Horizontal(classes="log-status"):
            yield Static("FOLLOW", classes="log-badge", id="badge")
            yield Static("", classes="log-sources", id="sources")
        yield Log(max_lines=self.buffer.limit, auto_scroll=True, id="log")

    def on_mount(self) -> None:
        self.set_interval(FLUSH_SECONDS, self.flush)

    @property
    def text_log(self) -> Log:
        return self.query_one("#log", Log)

    @property
    def following(self) -> bool:
        return not self.paused and self.text_log.is_vertical_scroll_end

    def add(self, prefix: str, lines: list[str]) -> None:
        shown = self.buffer.add(prefix, lines)
        self.since_trim += len(lines)
        if len(self.pending) + len(shown) > self.buffer.limit:
            self.overflowed = True  # more arrived than the view keeps: the next flush redraws it all
        self.pending.extend(shown)

    def flush(self) -> None:
        if self.since_trim >= TRIM_EVERY_LINES:
            self.since_trim = 0
            release_freed_memory()
        if self.paused:
            self._badge()
            return
        if self.overflowed:
            self.rerender()
        elif self.pending:
            batch = list(self.pending)
            self.pending.clear()
            self.text_log.write_lines(self._wrapped(batch))
        self._badge()

    def _wrapped(self, lines: list[str]) -> list[str]:
        if not self.wrap:
            return lines
        width = max(20, self.text_log.size.width - 2)
        out = []
        for line in lines:
            out += textwrap.wrap(line, width, drop_whitespace=False) or [""]
        return out

    def _badge(self) -> None:
        badge = self.query_one("#badge", Static)
        following = self.following
        label = "FOLLOW" if following else "PAUSED"
        if str(badge.render()) != label:
            badge.update(label)
            badge.set_class(not following, "-paused")

    def rerender(self) -> None:
        """Filter, NCCL-only or wrap changed: show the buffer again through the new view."""
        self.pending.clear()
        self.overflowed = False
        self.text_log.clear()
        self.text_log.write_lines(self._wrapped(self.buffer.view()))
        self.text_log.scroll_end(animate=False)

    def set_pattern(self, text: str) -> None:
        """A regex filter; an invalid one raises re.error and changes nothing."""
        self.buffer.pattern = re.compile(text) if text else None
        self.rerender()

    def toggle_pause(self) -> None:
        self.paused = not self.paused

    def search(self, text: str, start: int | None = None) -> int | None:
        """Scroll to the next shown line matching `text` after `start`; pauses following."""
        pattern = re.compile(text)
        lines = self.text_log.lines
        begin = (start if start is not None else int(self.text_log.scroll_offset.y)) + 1
        for offset in range(len(lines)):
            i = (begin + offset) % max(1, len(lines))
            if pattern.search(lines[i]):
                self.paused = True
                self.text_log.scroll_to(y=i, animate=False)
                self._badge()
                return i
        return None

    def set_source_state(self, key: str, state: str) -> None:
        """A source's state; its detail quotes the node (a disconnect reason): shown inert."""
        state = inert(state)
        self.sources[key] = state
        t = Text()
        for k, s in sorted(self.sources.items()):
            style = (
                "green"
                if s.startswith("following")
                else "red"
                if s.startswith(("disconnected", "ended"))
                else "yellow"
            )
            t.append(f" {k}: ", style="bold")
            t.append(s, style=style)
        self.query_one("#sources", Static).update(t)
