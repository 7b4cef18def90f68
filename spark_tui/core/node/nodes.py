"""The cluster's live side: one transport per node, refreshed in parallel."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable
from typing import TypeVar, cast

import docker

from spark_tui.core.node import engines
from spark_tui.core.node.connection import transport_for
from spark_tui.core.node.errors import NodeError
from spark_tui.core.node.probes import NodeSnapshot, snapshot
from spark_tui.settings.resolve import Config

T = TypeVar("T")

# Each node checks the others with its own tools: ping where present, else a TCP connect to sshd.
# `bash --norc`: run under sshd, bash sources ~/.bashrc even for -c (~120 ms each on Debian).
REACH_SCRIPT = (
    'for ip in "$@"; do if command -v ping >/dev/null 2>&1; then ping -c 1 -W 2 "$ip" >/dev/null 2>&1; '
    'else timeout 3 bash --norc -c "exec 3<>/dev/tcp/$ip/22" 2>/dev/null; fi && echo "ok $ip" || echo "fail $ip" & done; wait'
)


class Nodes:
    def __init__(self, config: Config):
        # The live configuration: detected values and edits replace it here (core/launch/live.py, the
        # cockpit), and every part reads it here.
        self.config = config
        self.transports = {n.name: transport_for(n) for n in config.nodes}

    async def snapshot_all(self) -> list[NodeSnapshot]:
        """All nodes at once: a slow or dead node never holds up the others' results."""
        return list(await asyncio.gather(*(snapshot(self.transports[n.name], n) for n in self.config.nodes)))

    def replace_transport(self, node) -> object:
        """A new transport for a node whose connection settings changed; returns the old one,
        which the caller closes. The new one connects with the new values on first use."""
        old = self.transports[node.name]
        self.transports[node.name] = transport_for(node)
        return old

    async def docker(self, name: str, call: Callable[[docker.DockerClient], T]) -> T:
        """`call(client)` on the node's shared Docker engine client, in a thread: the one door to
        a node's engine. A failure of the engine or its tunnel raises `EngineError` naming the
        node (or the tunnel's `NodeError`), and the client is dropped, so the next call
        reconnects; an engine's answer (`docker.errors.NotFound`, a conflict) passes unchanged."""
        url = await self.transports[name].docker_url()
        return await asyncio.to_thread(engines.call, name, url, call)

    async def each(
        self, fn: Callable[[str], Awaitable[T]], names: Iterable[str] | None = None
    ) -> dict[str, T | NodeError]:
        """`fn(node)` on every node (or on `names`) at once: `{node: result | NodeError}`, in the
        nodes' order. Errors are values: a dead node never holds up or hides the others'
        results. An engine's answer nobody handled (a 500, a conflict) is that node's error too."""
        chosen = [n.name for n in self.config.nodes] if names is None else list(names)

        async def one(name: str) -> T | NodeError:
            try:
                return await fn(name)
            except NodeError as exc:
                return exc
            except docker.errors.APIError as exc:
                return NodeError(name, str(exc))

        return dict(zip(chosen, await asyncio.gather(*(one(n) for n in chosen)), strict=True))

    async def every(
        self, fn: Callable[[str], Awaitable[T]], names: Iterable[str] | None = None
    ) -> dict[str, T]:
        """`each`, for work that needs every node: the results, or the first node's error (in the
        nodes' order) raised once all have finished. Other exceptions propagate as they come."""
        found = await self.each(fn, names)
        failed = next((r for r in found.values() if isinstance(r, NodeError)), None)
        if failed is not None:
            raise failed
        return cast(dict[str, T], found)

    async def reaches(self, name: str, *ips: str) -> set[str] | None:
        """Which of `ips` the node reaches over its own network (its own ping), or None when the
        node itself could not be asked."""
        try:
            out = await self.transports[name].run_script(REACH_SCRIPT, ips, timeout=20)
        except (TimeoutError, NodeError):
            return None
        return {
            line.split()[1] for line in out.splitlines() if line.startswith("ok ") and len(line.split()) > 1
        }

    async def close(self) -> None:
        await asyncio.gather(*(t.close() for t in self.transports.values()))

    async def __aenter__(self) -> Nodes:
        return self

    async def __aexit__(self, *exc) -> None:
        await self.close()
