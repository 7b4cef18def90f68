"""`spark-tui down`: remove the cluster's containers on every node, matched by label and exact name."""

from __future__ import annotations

import asyncio

from spark_tui.core import engines
from spark_tui.core.errors import ENGINE_ERRORS, why
from spark_tui.core.events import Removed, Stage, StillHolding, shown_by
from spark_tui.core.launch import Emit
from spark_tui.core.nodes import Nodes
from spark_tui.core.redact import Redactor
from spark_tui.settings.resolve import Config


async def teardown(config: Config, nodes: Nodes, emit: Emit) -> bool:
    """Remove the cluster's containers on every node: matched by label and exact name."""
    name, cluster = config["container_name"], config["name"]
    emit = shown_by(Redactor(lambda: config).show, emit)  # the core emits shown text

    async def one(node: str) -> bool:
        try:
            client = await nodes.engine(node)
            mine = await asyncio.to_thread(engines.own_containers, client, cluster, name)
            for c in mine:
                await asyncio.to_thread(client.api.remove_container, c["Id"], force=True)
                emit(Removed(node, name, c.get("Image", "")))
            emit(Stage(node, "teardown", "done", f"removed {len(mine)}" if mine else "nothing was running"))
            return True
        except ENGINE_ERRORS as exc:
            emit(StillHolding(node, name, f"unreachable: {why(exc)[:160]}"))
            return False

    results = await asyncio.gather(*(one(n.name) for n in config.nodes))
    return all(results)
