"""The configuration as the nodes make it: resolved again with what they show (the detected layer).

Unset per-node values (netdev, hca) and the node's home (where `~` in a volume points) are read
from a snapshot of each node. `plan`, `up`, `check`, `status` and the cockpit all go through here,
so what `plan` shows, what `up` creates and what drift compares against are one and the same.
"""

from __future__ import annotations

import dataclasses
import json

import docker

from spark_tui.core.models import model_files
from spark_tui.core.node.errors import NodeError
from spark_tui.core.node.nodes import Nodes
from spark_tui.core.node.probes import NodeSnapshot, detected_values
from spark_tui.parsers.text import inert
from spark_tui.settings.model import NOTHING_DETECTED
from spark_tui.settings.registry import DETECTED_KEYS
from spark_tui.settings.resolve import Config, relayer


async def with_detected(config: Config, nodes: Nodes) -> tuple[Config, list[NodeSnapshot]]:
    """Snapshot every node, then the configuration with what they showed, re-layered without
    reading any file (resolve.relayer; interactive edits kept). `nodes` holds the result."""
    snaps = await nodes.snapshot_all()
    detected = detected_values(config, snaps)
    for name, found in (await model_complete(config, nodes, snaps)).items():
        detected[name] = dataclasses.replace(detected.get(name, NOTHING_DETECTED), model_complete=found)
    if detected:
        config = relayer(config, detected=detected)
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
    reachable = [s.node for s in snaps if s.reachable]
    found = list((await model_files.manifests(config, nodes, reachable, hashes=False)).values())
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
    image = config["image"]

    async def entrypoint_on(name: str) -> str:
        try:
            found = await nodes.docker(name, lambda c: c.images.get(image))
        except docker.errors.ImageNotFound:
            return f"image {image} is not on {name}"
        entrypoint = (found.attrs.get("Config") or {}).get("Entrypoint")
        if not entrypoint:
            return "the image has no ENTRYPOINT"
        return f"replaces the image's ENTRYPOINT {json.dumps(entrypoint)}"

    found = await nodes.each(entrypoint_on)
    return {
        name: "the image could not be inspected" if isinstance(said, NodeError) else said
        for name, said in found.items()
    }
