"""The configuration as the nodes make it: resolved again with what they show (the detected layer).

Unset per-node values (netdev, hca) and the node's home (where `~` in a volume points) are read
from a snapshot of each node. `plan`, `up`, `check`, `status` and the cockpit all go through here,
so what `plan` shows, what `up` creates and what drift compares against are one and the same.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable

import docker

from spark_tui.core import model_files
from spark_tui.core.errors import ENGINE_ERRORS
from spark_tui.core.nodes import Nodes
from spark_tui.core.probes import NodeSnapshot, detected_values
from spark_tui.parsers.text import inert
from spark_tui.settings.resolve import Config, redetect

# Resolves the configuration again with the detected layer (default: the same inputs plus it).
Redetect = Callable[[dict], Config]


async def with_detected(
    config: Config, nodes: Nodes, redetect_with: Redetect | None = None
) -> tuple[Config, list[NodeSnapshot]]:
    """Snapshot every node, then the configuration with what they showed. `nodes` follows it."""
    snaps = await nodes.snapshot_all()
    detected = detected_values(config, snaps)
    for name, found in (await model_complete(config, nodes, snaps)).items():
        detected.setdefault(name, {})["model_complete"] = found
    if detected:
        config = redetect(config, detected) if redetect_with is None else redetect_with(detected)
        nodes.config = config
    return config, snaps


async def model_complete(
    config: Config, nodes: Nodes, snaps: list[NodeSnapshot]
) -> dict[str, tuple[bool, str]]:
    """`model.complete` per reachable node, as (passed, what it found): whether the containers may
    run offline (settings/container_env.py). Sizes only: hashing reads every weight (minutes),
    and is `check`'s to do when verify_hashes asks for it."""
    model = config["model"]
    if not model or model.startswith(("/", ".")):
        return {}
    reachable = [config.node(s.node) for s in snaps if s.reachable]
    found = await asyncio.gather(*(model_files.manifest(nodes, n, model) for n in reachable))
    out = {}
    for m in found:
        wrong = model_files.problems(m, [o for o in found if o is not m])
        if not m.error and not m.exists:
            wrong = [f"{model} not in the cache ({m.directory})"]
        said = f"revision {(m.ref or '')[:12]}" if not wrong else "; ".join(wrong)[:300]
        out[m.node] = (not wrong, inert(said))
    return out


def detected_lines(config: Config) -> list[str]:
    """One line per detected value, with the node's evidence (for stderr of plan and up); the
    values are the node's words (interface names, $HOME), made inert."""
    lines = []
    for node in config.nodes:
        if node.home and not node.local:
            lines.append(inert(f"detected {node.name}.home = {node.home} ({node.home_source})"))
        for key in ("netdev", "hca"):
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
