"""Following container logs over a node's SSH connection, surviving disconnects.

The Docker SDK streams `docker logs --follow` through the node's tunnel in a thread;
chunks are handed to the event loop in batches (a flood of lines costs one hop per
chunk, not per line). When the connection drops, the follower says so, waits with the
transport's backoff, reconnects and resumes from the last timestamp it saw, so no line
is shown twice and none is lost.
"""

from __future__ import annotations

import asyncio
import calendar
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import docker
import requests

from spark_tui.core.node import engines
from spark_tui.core.node.backoff import retry_wait
from spark_tui.core.node.engines import new_client
from spark_tui.core.node.errors import NodeError, why
from spark_tui.core.node.nodes import Nodes
from spark_tui.parsers.text import count


@dataclass
class LogLines:
    node: str
    container: str
    lines: list[str]


@dataclass
class StreamState:
    node: str
    container: str
    state: str  # connecting | following | disconnected | ended
    detail: str = ""
    retry_in: float = 0.0


Emit = Callable[[Any], object]  # takes LogLines and StreamState


def split_timestamp(line: str) -> tuple[tuple[int, int] | None, str]:
    """`2026-12-02T17:01:02.123456789Z text` -> ((seconds key, nanos), text).

    Docker trims trailing zeros of the fraction, so timestamps are compared as numbers,
    never as strings.
    """
    stamp, sep, text = line.partition(" ")
    if not sep or len(stamp) < 20 or stamp[4] != "-" or stamp[10] != "T":
        return None, line
    head, _, frac = stamp.rstrip("Z").partition(".")
    digits = head.replace("-", "").replace("T", "").replace(":", "")
    when = count(digits)
    if when is None:
        return None, line
    nanos = count((frac + "000000000")[:9]) or 0
    return (when, nanos), text


class LogCursor:
    """How far a container's log has been read, by Docker timestamp.

    Docker's `since` takes whole seconds, so a read resumed from the cursor starts again
    at the last second seen; `fresh` drops what was already read and strips the stamps.
    """

    def __init__(self) -> None:
        self.last: tuple[int, int] | None = None

    def since(self) -> int | None:
        return since_seconds(self.last) if self.last is not None else None

    def read_args(self, first_tail: int | str) -> dict:
        """Docker `logs` arguments that resume from the cursor: timestamps on, and `since` the
        last second seen, or the last `first_tail` lines on a first read."""
        since = self.since()
        return {"timestamps": True, **({"tail": first_tail} if since is None else {"since": since})}

    def fresh(self, lines) -> list[str]:
        out = []
        for line in lines:
            key, text = split_timestamp(line)
            if key is not None:
                if self.last is not None and key <= self.last:
                    continue
                self.last = key
            out.append(text)
        return out


class LogFollower:
    """Follows one container on one node until `stop()`; emits LogLines and StreamState."""

    def __init__(self, nodes: Nodes, node: str, container: str, emit: Emit, tail: int | str = 500):
        self.nodes = nodes
        self.node = node
        self.container = container
        self.emit = emit
        self.tail = tail
        self.cursor = LogCursor()
        self._stopping = False
        self._client: docker.DockerClient | None = None
        self._task: asyncio.Task | None = None

    def start(self) -> asyncio.Task:
        self._task = asyncio.ensure_future(self.run())
        return self._task

    async def stop(self) -> None:
        self._stopping = True
        self._close_client()
        if self._task is not None:
            self._task.cancel()
            try:
                await self._task
            except (asyncio.CancelledError, Exception):
                pass

    def _state(self, state: str, detail: str = "", retry_in: float = 0.0) -> None:
        self.emit(StreamState(self.node, self.container, state, detail, retry_in))

    def _close_client(self) -> None:
        client, self._client = self._client, None
        if client is not None:
            try:
                client.close()
            except Exception:  # closing a dead connection may raise anything; it is gone either way
                pass

    async def run(self) -> None:
        failures = 0
        while not self._stopping:
            self._state("connecting")
            try:
                # Through the door, as `Nodes.docker` goes, but on a client of its own (the
                # stream holds it open): nothing shared to drop when it fails.
                with engines.door(self.node):
                    ended = await self._follow_once()
                failures = 0
                if ended:
                    self._state("ended", "the container stopped")
                    return
                reason = "stream closed"
            except docker.errors.NotFound:
                self._state("ended", f"no container {self.container} on {self.node}")
                return
            except (NodeError, docker.errors.APIError) as exc:
                reason = why(exc)[:160]
            self._close_client()
            if self._stopping:
                return
            failures += 1
            wait = retry_wait(failures, self.nodes.transports[self.node])
            self._state("disconnected", reason, retry_in=wait)
            await asyncio.sleep(wait)

    async def _follow_once(self) -> bool:
        """One streaming session. True when the container ended, False when the stream broke."""
        url = await self.nodes.transports[self.node].docker_url()
        self._client = client = await asyncio.to_thread(new_client, url, None)
        container = await asyncio.to_thread(client.containers.get, self.container)
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue = asyncio.Queue()
        resume = self.cursor.read_args(self.tail)

        def post(item) -> bool:
            try:
                loop.call_soon_threadsafe(queue.put_nowait, item)
                return True
            except RuntimeError:  # the loop is gone (the cockpit quit): nobody is listening
                return False

        def pump() -> None:
            # Blocking reads in a thread; each chunk crosses to the loop once.
            try:
                for chunk in container.logs(stream=True, follow=True, **resume):
                    if not post(chunk):
                        return
                post(None)
            except Exception as exc:  # the connection died under the stream: hand it to the loop
                post(exc)

        threading.Thread(target=pump, name=f"logs-{self.node}", daemon=True).start()
        self._state("following")
        partial = b""
        while True:
            item = await queue.get()
            if item is None or isinstance(item, Exception):
                break
            partial += item
            # Drain whatever else is already queued: one emit per batch, not per chunk.
            while not queue.empty():
                nxt = queue.get_nowait()
                if nxt is None or isinstance(nxt, Exception):
                    queue.put_nowait(nxt)
                    break
                partial += nxt
            *complete, partial = partial.split(b"\n")
            self._emit_lines(complete)
        if partial:
            self._emit_lines([partial])
        if isinstance(item, Exception):
            raise (
                item
                if isinstance(
                    item, (OSError, requests.exceptions.RequestException, docker.errors.DockerException)
                )
                else OSError(str(item))
            )
        # The stream ended cleanly: either the container stopped or the connection closed it.
        try:
            with engines.door(self.node):
                await asyncio.to_thread(container.reload)
        except (NodeError, docker.errors.APIError):
            return False
        return container.status not in ("running", "restarting", "created")

    def _emit_lines(self, raw: list[bytes]) -> None:
        out = self.cursor.fresh(b.decode("utf-8", errors="replace") for b in raw)  # nothing shown twice
        if out:
            self.emit(LogLines(self.node, self.container, out))


def since_seconds(key: tuple[int, int]) -> int:
    """Docker's `since` takes whole seconds: resume from the last second and drop what was seen."""
    return calendar.timegm(time.strptime(f"{key[0]:014d}", "%Y%m%d%H%M%S"))
