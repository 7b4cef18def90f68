"""A node's kernel log during a launch: the lines it gains after the launch began.

GPU faults (NVRM Xid lines, the driver running out of memory, the GPU falling off the bus) and the
kernel's OOM killer are said in the kernel log, never in a container's log. The real readers are
`dmesg` (util-linux) and, where dmesg is restricted to root (kernel.dmesg_restrict=1, Ubuntu's
default), `journalctl -k` for users in the adm or systemd-journal group.

A reader is first asked once for the log as it is (its last line's timestamp is the cursor; a
refusal says the reader cannot be used), then followed: both readers print what they hold before
following, and only lines stamped after the cursor are handed on, so nothing depends on when the
follow began on the node. When no reader can be used, `refusal` is the reader's own words.

A follow that ends while it is still wanted (the SSH connection dropped: sshd restarted, a network
blip; the reader killed on the node) is opened again over the transport, which reconnects with the
connection layer's backoff (core/node/backoff.py), and resumes from its cursor: the last stamp
handed on and how many lines carried it, so nothing is handed on twice and nothing written in the
gap is lost (dmesg prints its whole buffer first; journalctl its last 200 lines). When the
reader no longer holds the cursor's line (more was written while the follow was down than it
prints back, or dmesg's buffer wrapped), `on_gap` is told the two stamps: lines between them may
be missing, and that is said, never passed over. After MAX_RESUMES failed tries in a row, `on_lost`
gets the cause once and the follow ends.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from dataclasses import dataclass

from spark_tui.core.node.backoff import retry_wait
from spark_tui.core.node.connection import Result, Transport
from spark_tui.core.node.errors import NodeError, why
from spark_tui.parsers.text import inert


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
# outlive the session. The reader ending by itself ends the session too, with its exit status (a
# follow that ended is resumed, never left open and silent). stdin reaches the background `read`
# as fd 3: sh gives an asynchronous list /dev/null for stdin. A fixed script: the reader's
# arguments reach it only as "$@".
UNTIL_STDIN_ENDS = 'exec 3<&0; "$@" 1>&2 & p=$!; { read -r _ <&3; kill "$p"; } >/dev/null 2>&1 & wait "$p"'

# Tries in a row to open an ended follow again (0.5, 1, 2, 4 and 8 s before them, or the
# connection's own backoff when longer): a restarted sshd or a blip is over well within them.
MAX_RESUMES = 5


def stamp(line: str) -> str:
    """The line's ISO timestamp (dmesg: `2026-12-03T23:35:02,123456+00:00`, journalctl:
    `2026-12-03T23:35:02.123456+0000`), or "" for a line that starts with none."""
    head = line[:40].partition(" ")[0]
    return head if len(head) >= 19 and head[4] == "-" and head[10] == "T" else ""


def last_stamp(text: str) -> tuple[str, int]:
    """The last timestamp of `text` and how many of its lines carry it ("", 0 for none)."""
    last, count = "", 0
    for line in reversed(text.splitlines()):
        s = stamp(line)
        if not s:
            continue
        if last and s != last:
            break
        last, count = s, count + 1
    return last, count


class KernelLog:
    """Follows one node's kernel log; `on_lines` gets each batch of new lines (text after the
    timestamp is kept whole: the line as the reader printed it); `on_lost` the cause, once, when
    an ended follow cannot be resumed."""

    def __init__(
        self,
        transport: Transport,
        node: str,
        on_lines: Callable[[list[str]], object],
        on_lost: Callable[[str], object] = lambda _cause: None,
        on_gap: Callable[[str, str], object] = lambda _last, _first: None,
    ):
        self.transport = transport
        self.node = node
        self.on_lines = on_lines
        self.on_lost = on_lost
        self.on_gap = on_gap
        self.refusal = ""  # why no reader could be used, in the reader's own words
        self.resumed = 0  # follows opened again after one ended
        self.lost = ""  # why the follow ended for good, once it has
        self._reader: Reader | None = None
        # The cursor: the last stamp handed on (or read by `open`), and how many lines carried it.
        self._cursor = ""
        self._at_cursor = 0
        self._seen_at_cursor = 0  # this follow's lines at the cursor's stamp, before any new one
        self._past = False  # this follow has reached lines after the cursor
        self._heard = False  # this follow printed a stamped line: its reader runs
        self._said: list[str] = []  # its last unstamped lines (a reader's refusal)
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
            cursor, count = last_stamp(got.stdout)
            if got.exit_status == 0 and cursor:
                self._reader, self._cursor, self._at_cursor = reader, cursor, count
                return True
            # A refusal says why (dmesg: "read kernel buffer failed: Operation not permitted");
            # journalctl without the right group shows no kernel line at all.
            why_not = (got.stderr.strip() or got.stdout.strip()).splitlines()
            said.append(why_not[0] if why_not else f"{reader.read[0]}: no kernel lines readable")
        self.refusal = "; ".join(said)
        return False

    def start(self) -> None:
        if self._reader is None or self._task is not None:
            return
        self._stop = asyncio.get_running_loop().create_future()
        self._task = asyncio.ensure_future(self._follow(self._reader, self._stop))

    async def _follow(self, reader: Reader, stop: asyncio.Future[str]) -> None:
        """Follow until stopped; a follow that ends before is opened again (see the module)."""
        argv = ["sh", "-c", UNTIL_STDIN_ENDS, "sh", *reader.follow]
        failures = 0
        while True:
            self._past, self._heard, self._seen_at_cursor, self._said = False, False, 0, []
            try:
                # Shielded: a stream that ends cancels its wait for stdin, which must not cancel
                # `stop`, which the next follow waits on.
                got = await self.transport.stream(argv, self._line, asyncio.shield(stop))
                cause = self._ended(reader, got)
            except NodeError as exc:  # the connection dropped, or cannot be made again yet
                cause = why(exc)
            if stop.done():
                return
            failures = 1 if self._heard else failures + 1  # one that ran is a new drop
            if failures > MAX_RESUMES:
                self.lost = f"{cause}; not resumed after {MAX_RESUMES} tries"
                self.on_lost(self.lost)
                return
            await asyncio.wait([stop], timeout=retry_wait(failures, self.transport))
            if stop.done():
                return
            self.resumed += 1

    def _ended(self, reader: Reader, got: Result) -> str:
        """Why a follow ended by itself, in the reader's words when it said any."""
        program = reader.follow[0]
        if got.signal:
            how = f"{program} was killed (SIG{got.signal.removeprefix('SIG')})"
        elif got.exit_status == 255:
            how = "the connection closed"
        else:
            how = f"{program} ended (exit {got.exit_status})"
        said = next((line for line in reversed(self._said) if line.strip()), "")
        return f"{how}: {inert(said.strip())[:200]}" if said else how

    def _line(self, line: str) -> None:
        if self._stop is None or self._stop.done():
            return  # stopped: what follows is the follower's end on the node ("Terminated")
        s = stamp(line)
        first, self._heard = bool(s) and not self._heard, self._heard or bool(s)
        if not self._past:
            if not s:
                self._said = (self._said + [line])[-5:]
                return  # before the cursor: a record's unstamped rest, or the reader's own words
            if first and s > self._cursor:
                self.on_gap(self._cursor, s)  # its oldest line is newer than the last one seen
            if s < self._cursor:
                return  # what the log held before the cursor
            if s == self._cursor:
                self._seen_at_cursor += 1
                if self._seen_at_cursor <= self._at_cursor:
                    return  # a line of the cursor's stamp that was handed on (or read) before
            self._past = True  # from here on every line is new (a record's unstamped rest too)
        if s > self._cursor:
            self._cursor, self._at_cursor = s, 1
        elif s and s == self._cursor:
            self._at_cursor += 1
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
