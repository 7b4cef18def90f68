"""The cluster's live side: one transport per node, refreshed in parallel."""

from __future__ import annotations

import asyncio

import docker

from spark_tui.core import engines
from spark_tui.core.connection import transport_for
from spark_tui.core.probes import NodeSnapshot, snapshot
from spark_tui.settings.resolve import Config


class Nodes:
    def __init__(self, config: Config):
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

    async def close(self) -> None:
        await asyncio.gather(*(t.close() for t in self.transports.values()))

    async def __aenter__(self) -> Nodes:
        return self

    async def __aexit__(self, *exc) -> None:
        await self.close()
