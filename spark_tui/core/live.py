"""The configuration as the nodes make it: resolved again with what they show (the detected layer).

Unset per-node values (netdev, hca) and the node's home (where `~` in a volume points) are read
from a snapshot of each node. `plan`, `up`, `check`, `status` and the cockpit all go through here,
so what `plan` shows, what `up` creates and what drift compares against are one and the same.
"""

from __future__ import annotations

import asyncio
import json

import docker

from spark_tui.core.errors import ENGINE_ERRORS
from spark_tui.core.nodes import Nodes
from spark_tui.core.probes import NodeSnapshot, detected_values
from spark_tui.parsers.text import inert
from spark_tui.settings.registry import DETECTED_KEYS
from spark_tui.settings.resolve import Config, relayer


async def with_detected(config: Config, nodes: Nodes) -> tuple[Config, list[NodeSnapshot]]:
    """Snapshot every node, then the configuration with what they showed, re-layered without
    reading any file (resolve.relayer; interactive edits kept). `nodes` holds the result."""
    snaps = await nodes.snapshot_all()
    detected = detected_values(config, snaps)
    if detected:
        config = relayer(config, detected=detected)
        nodes.config = config
    return config, snaps


def detected_lines(config: Config) -> list[str]:
    """One line per detected value, with the node's evidence (for stderr of plan and up); the
    values are the node's words (interface names, $HOME), made inert."""
    lines = []
    for node in config.nodes:
        if node.home and not node.local:
            lines.append(inert(f"detected {node.name}.home = {node.home} ({node.home_source})"))
        for key in DETECTED_KEYS:
            value = node.values[key]
            if value.source.layer == "detected":
                lines.append(
                    inert(
                        f"detected {node.name}.{key} = {value.setting.kind.show(value.value)} ({value.source.location})"
                    )
                )
    return lines


def unreachable_lines(snaps: list[NodeSnapshot]) -> list[str]:
    return [
        f"{s.node}: not reachable ({inert(s.error or '')}); its detected values and ~ are unknown"
        for s in snaps
        if not s.reachable
    ]


async def image_entrypoints(config: Config, nodes: Nodes) -> dict[str, str]:
    """Per node, what the image's own ENTRYPOINT is (which spark-tui's replaces), for `plan`."""

    async def one(name: str) -> tuple[str, str]:
        try:
            client = await nodes.engine(name)
            image = await asyncio.to_thread(client.images.get, config["image"])
        except docker.errors.ImageNotFound:
            return name, f"image {config['image']} is not on {name}"
        except ENGINE_ERRORS:
            return name, "the image could not be inspected"
        entrypoint = (image.attrs.get("Config") or {}).get("Entrypoint")
        if not entrypoint:
            return name, "the image has no ENTRYPOINT"
        return name, f"replaces the image's ENTRYPOINT {json.dumps(entrypoint)}"

    return dict(await asyncio.gather(*(one(n.name) for n in config.nodes)))
