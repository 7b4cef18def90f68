"""The cluster's live side: one transport per node, refreshed in parallel."""

from __future__ import annotations

import asyncio

import docker

from spark_tui.core import engines
from spark_tui.core.connection import transport_for
from spark_tui.core.errors import NodeError
from spark_tui.core.probes import NodeSnapshot, snapshot
from spark_tui.settings.resolve import Config

# Each node checks the others with its own tools: ping where present, else a TCP connect to sshd.
# `bash --norc`: run under sshd, bash sources ~/.bashrc even for -c (~120 ms each on Debian).
REACH_SCRIPT = (
    'for ip in "$@"; do if command -v ping >/dev/null 2>&1; then ping -c 1 -W 2 "$ip" >/dev/null 2>&1; '
    'else timeout 3 bash --norc -c "exec 3<>/dev/tcp/$ip/22" 2>/dev/null; fi && echo "ok $ip" || echo "fail $ip" & done; wait'
)


class Nodes:
    def __init__(self, config: Config):
        # The live configuration: detected values and edits replace it here (core/live.py, the
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

    async def engine(self, name: str) -> docker.DockerClient:
        """The node's shared Docker engine client (the one the refreshes use), over its tunnel."""
        url = await self.transports[name].docker_url()
        return await asyncio.to_thread(engines.engine, url)

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
