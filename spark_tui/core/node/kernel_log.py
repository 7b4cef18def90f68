"""A node's kernel log during a launch: the lines it gains after the launch began.

GPU faults (NVRM Xid lines, the driver running out of memory, the GPU falling off the bus) and the
kernel's OOM killer are said in the kernel log, never in a container's log. The real readers are
`dmesg` (util-linux) and, where dmesg is restricted to root (kernel.dmesg_restrict=1, Ubuntu's
default), `journalctl -k` for users in the adm or systemd-journal group.

A reader is first asked once for the log as it is (its last line's timestamp is the cursor; a
refusal says the reader cannot be used), then followed: both readers print what they hold before
following, and only lines stamped after the cursor are handed on, so nothing depends on when the
follow began on the node. When no reader can be used, `refusal` is the reader's own words.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from dataclasses import dataclass

from spark_tui.core.node.connection import Transport
from spark_tui.core.node.errors import NodeError


@dataclass(frozen=True)
class Reader:
    read: tuple[str, ...]  # the log as it is, once
    follow: tuple[str, ...]  # the log, then each new line as the kernel writes it


READERS = (
    Reader(("dmesg", "--time-format", "iso"), ("dmesg", "--follow", "--time-format", "iso")),
    # short-iso-precise: microseconds, so lines of one second are told apart as dmesg's are.
    Reader(
        ("journalctl", "-k", "-q", "--no-pager", "-o", "short-iso-precise", "-n", "200"),
        ("journalctl", "-k", "-q", "--no-pager", "-o", "short-iso-precise", "-n", "200", "-f"),
    ),
)

# The follow runs until the launch stops reading: the reader's output goes to stderr (the lines
# a transport's `stream` hands over as they come), and the end of stdin (the launch is done, or
# the connection is gone) ends it; a follower waiting for the kernel's next line would otherwise
# outlive the session. A fixed script: the reader's arguments reach it only as "$@".
UNTIL_STDIN_ENDS = '"$@" 1>&2 & p=$!; read -r _; kill "$p" 2>/dev/null'


def stamp(line: str) -> str:
    """The line's ISO timestamp (dmesg: `2026-12-03T23:35:02,123456+00:00`, journalctl:
    `2026-12-03T23:35:02.123456+0000`), or "" for a line that starts with none."""
    head = line[:40].partition(" ")[0]
    return head if len(head) >= 19 and head[4] == "-" and head[10] == "T" else ""


def last_stamp(text: str) -> str:
    for line in reversed(text.splitlines()):
        s = stamp(line)
        if s:
            return s
    return ""


class KernelLog:
    """Follows one node's kernel log; `on_lines` gets each batch of new lines (text after the
    timestamp is kept whole: the line as the reader printed it)."""

    def __init__(self, transport: Transport, node: str, on_lines: Callable[[list[str]], object]):
        self.transport = transport
        self.node = node
        self.on_lines = on_lines
        self.refusal = ""  # why no reader could be used, in the reader's own words
        self._reader: Reader | None = None
        self._cursor = ""
        self._past = False
        self._stop: asyncio.Future[str] | None = None
        self._task: asyncio.Task | None = None

    async def open(self) -> bool:
        """Find a reader this node lets us use and read where its log ends now."""
        said = []
        for reader in READERS:
            try:
                got = await self.transport.run(list(reader.read), timeout=20)
            except (NodeError, TimeoutError) as exc:
                said.append(f"{reader.read[0]}: {exc}")
                continue
            cursor = last_stamp(got.stdout)
            if got.exit_status == 0 and cursor:
                self._reader, self._cursor = reader, cursor
                return True
            # A refusal says why (dmesg: "read kernel buffer failed: Operation not permitted");
            # journalctl without the right group shows no kernel line at all.
            why = (got.stderr.strip() or got.stdout.strip()).splitlines()
            said.append(why[0] if why else f"{reader.read[0]}: no kernel lines readable")
        self.refusal = "; ".join(said)
        return False

    def start(self) -> None:
        if self._reader is None or self._task is not None:
            return
        loop = asyncio.get_running_loop()
        self._stop = loop.create_future()
        argv = ["sh", "-c", UNTIL_STDIN_ENDS, "sh", *self._reader.follow]
        self._task = asyncio.ensure_future(self.transport.stream(argv, self._line, self._stop))

    def _line(self, line: str) -> None:
        if not self._past:
            s = stamp(line)
            if not s or s <= self._cursor:
                return  # what the log held before the launch began
            self._past = True  # from here on every line is new (a record's unstamped rest too)
        self.on_lines([line])

    async def stop(self) -> None:
        if self._stop is not None and not self._stop.done():
            self._stop.set_result("")  # stdin ends: the follower is killed on the node
        task, self._task = self._task, None
        if task is None:
            return
        try:
            await asyncio.wait_for(asyncio.shield(task), 5)
        except (TimeoutError, NodeError, OSError):
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
