"""The cluster's live side: one transport per node, refreshed in parallel."""

from __future__ import annotations

import asyncio

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

    async def close(self) -> None:
        await asyncio.gather(*(t.close() for t in self.transports.values()))

    async def __aenter__(self) -> "Nodes":
        return self

    async def __aexit__(self, *exc) -> None:
        await self.close()
