"""`spark-tui down`: remove the cluster's containers on every node, matched by label and exact name."""

from __future__ import annotations

from functools import partial

import docker

from spark_tui.core.launch.events import Removed, Stage, StillHolding, shown_by
from spark_tui.core.launch.launch import Emit
from spark_tui.core.node import engines
from spark_tui.core.node.errors import NodeError, why
from spark_tui.core.node.nodes import Nodes
from spark_tui.core.node.redact import Redactor
from spark_tui.settings.resolve import Config


async def teardown(config: Config, nodes: Nodes, emit: Emit) -> bool:
    """Remove the cluster's containers on every node: matched by label and exact name."""
    name, cluster = config["container_name"], config["name"]
    emit = shown_by(Redactor(lambda: config).show, emit)  # the core emits shown text

    async def remove(node: str) -> None:
        mine = await nodes.docker(node, lambda c: engines.own_containers(c, cluster, name))
        for found in mine:
            await nodes.docker(node, partial(_remove, found["Id"]))
            emit(Removed(node, name, found.get("Image", "")))
        emit(Stage(node, "teardown", "done", f"removed {len(mine)}" if mine else "nothing was running"))

    results = await nodes.each(remove)
    for node, result in results.items():
        if isinstance(result, NodeError):
            emit(StillHolding(node, name, f"unreachable: {why(result)[:160]}"))
    return not any(isinstance(r, NodeError) for r in results.values())


def _remove(cid: str, client: docker.DockerClient) -> None:
    client.api.remove_container(cid, force=True)
