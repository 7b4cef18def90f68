"""Drift: what runs on the nodes compared with the plan `up` would run now (detected values included)."""

from __future__ import annotations

import shlex

import docker

from spark_tui.core.launch import plan as planmod
from spark_tui.core.launch.events import DriftItem
from spark_tui.core.launch.live import with_detected
from spark_tui.core.node import engines, labels
from spark_tui.core.node.errors import NodeError, why
from spark_tui.core.node.nodes import Nodes
from spark_tui.core.node.redact import Redactor
from spark_tui.secret_names import SECRET_MASK, mask_args
from spark_tui.settings.resolve import Config


async def drift(config: Config, nodes: Nodes, live: bool = False) -> list[DriftItem]:
    """Compare what runs with the plan: image (reference and layers), env, command, config hash.
    Like with like: the plan holds what the nodes show for values left to detection, as `up` did.
    `live`: `config` was just resolved with what the nodes show (core/launch/live.py), no need to look again."""
    if not live:
        config, _ = await with_detected(config, nodes)
    specs = planmod.build(config)
    items: list[DriftItem] = []
    layers: dict[str, tuple] = {}  # node -> layer digests of the image its container runs

    async def compare(spec: planmod.ContainerSpec):
        c = await nodes.docker(spec.node, lambda client: engines.exact_container(client, spec.name))
        if c is None:
            items.append(DriftItem(spec.node, "missing", spec.name, "no container"))
            return
        cfg = c.attrs["Config"]
        if cfg.get("Image") != spec.image:
            items.append(DriftItem(spec.node, "image", spec.image, cfg.get("Image", "")))
        try:
            image_id = c.attrs["Image"]
            running = await nodes.docker(spec.node, lambda client: client.images.get(image_id))
            layers[spec.node] = tuple((running.attrs.get("RootFS") or {}).get("Layers") or [])
        except docker.errors.ImageNotFound:
            layers[spec.node] = ()
        actual_env = dict(e.split("=", 1) for e in cfg.get("Env") or [] if "=" in e)
        for e in spec.env:
            if actual_env.get(e.name) != e.value:
                items.append(
                    DriftItem(
                        spec.node,
                        f"env {e.name}",
                        e.shown(),
                        SECRET_MASK if e.secret else actual_env.get(e.name, "(unset)"),
                    )
                )
        command = (cfg.get("Entrypoint") or []) + (cfg.get("Cmd") or [])
        if command != spec.command:
            items.append(
                DriftItem(
                    spec.node, "command", shlex.join(mask_args(spec.command)), shlex.join(mask_args(command))
                )
            )
        mounts = sorted(
            f"{m.get('Source')}:{m.get('Destination')}"
            for m in c.attrs.get("Mounts") or []
            if m.get("Type") == "bind"
        )
        wanted = sorted(":".join(v.split(":")[:2]) for v in spec.volumes)
        if not spec.unexpanded and wanted != mounts:
            items.append(
                DriftItem(spec.node, "mounts", ", ".join(wanted) or "none", ", ".join(mounts) or "none")
            )
        found = cfg.get("Labels") or {}
        want_hash = spec.labels[labels.CONFIG_HASH]
        if found.get(labels.CONFIG_HASH) != want_hash:
            items.append(
                DriftItem(
                    spec.node,
                    "config-hash",
                    want_hash,
                    found.get(labels.CONFIG_HASH, "(none: not started by spark-tui)"),
                )
            )

    by_node = {s.node: s for s in specs}
    for node, result in (await nodes.each(lambda node: compare(by_node[node]), by_node)).items():
        if isinstance(result, NodeError):
            # Not a difference: the node could not be asked (its state is reported where it is shown).
            items.append(DriftItem(node, "unreachable", by_node[node].name, why(result)[:200]))
    # The same tag can name different images on different nodes: compare layers (image IDs
    # differ between storage drivers), against the head's.
    head = config.head.name
    for node, node_layers in layers.items():
        if node != head and head in layers and node_layers != layers[head]:
            items.append(
                DriftItem(
                    node,
                    "image",
                    f"{config['image']} as on {head} (layers {_short_layers(layers[head])})",
                    f"another image under the same tag (layers {_short_layers(node_layers)})",
                )
            )
    show = Redactor(lambda: config).show
    return [item.shown(show) for item in items]  # the core emits shown text


def _short_layers(layers: tuple) -> str:
    return ",".join(layer.split(":")[-1][:12] for layer in layers[-2:]) or "none"
