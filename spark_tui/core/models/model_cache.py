"""The model as a node's Hugging Face cache holds it: `hub/models--ORG--NAME/`, `refs/main`
naming the snapshot, `snapshots/REV/config.json`. Read over the node's shell; nothing here
downloads. The cache is the host side of the first volume (the Hugging Face cache by default)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from spark_tui.core.node.errors import NodeError
from spark_tui.core.node.nodes import Nodes
from spark_tui.settings.model import NodeConfig

# $1 cache dir (may start with ~/), $2 the repo folder. Prints `absent`, `noconfig`, or
# `config PATH` followed by config.json (capped: a config is a few kB). It runs as a function in
# the node's persistent shell: no `exit`, which would end that shell.
CONFIG_SCRIPT = r"""case "$1" in "~/"*) p="$HOME/${1#??}";; *) p="$1";; esac
d="$p/hub/$2"
rev=$(cat "$d/refs/main" 2>/dev/null)
f="$d/snapshots/$rev/config.json"
if [ -z "$rev" ] || [ ! -f "$f" ]; then f=$(ls "$d"/snapshots/*/config.json 2>/dev/null | head -n 1); fi
if [ ! -d "$d" ]; then echo absent
elif [ -z "$f" ] || [ ! -f "$f" ]; then echo noconfig
else echo "config $f"; head -c 1000000 "$f"
fi"""


@dataclass
class ModelConfig:
    node: str
    found: bool
    reason: str = ""  # why there is no answer, when found is False
    path: str = ""  # config.json on the node
    architectures: list[str] = field(default_factory=list)
    data: dict = field(default_factory=dict)


def cache_dir(node: NodeConfig) -> str:
    """The node's Hugging Face cache as the node resolves it (`~` is the node's home)."""
    volumes = node["volumes"]
    requested = volumes[0].split(":")[0] if volumes else "~/.cache/huggingface"
    return node.expand_home(requested) or requested


def repo_folder(model: str) -> str:
    return "models--" + model.replace("/", "--")


async def model_config(nodes: Nodes, node: NodeConfig, model: str | None) -> ModelConfig:
    """The model's config.json in the node's cache, with its architectures."""
    if not model:
        return ModelConfig(node.name, False, "no model set")
    if model.startswith(("/", ".")):
        return ModelConfig(node.name, False, f"model {model} is a path in the container, not a cache entry")
    cache = cache_dir(node)
    try:
        out = await nodes.transports[node.name].run_script(
            CONFIG_SCRIPT, (cache, repo_folder(model)), timeout=20
        )
    except (TimeoutError, NodeError) as exc:
        return ModelConfig(node.name, False, f"could not look at {cache} on {node.name}: {exc}")
    head, _, body = out.partition("\n")
    if head == "absent":
        return ModelConfig(node.name, False, f"{model} is not in {cache} on {node.name} yet")
    if not head.startswith("config "):
        return ModelConfig(node.name, False, f"{model} in {cache} on {node.name} has no config.json")
    path = head[len("config ") :]
    try:
        data = json.loads(body)
    except ValueError as exc:
        return ModelConfig(node.name, False, f"{path} on {node.name} is not JSON: {exc}", path)
    if not isinstance(data, dict):
        return ModelConfig(node.name, False, f"{path} on {node.name} is not a JSON object", path)
    archs = data.get("architectures")
    archs = [str(a) for a in archs] if isinstance(archs, list) else []
    if not archs:
        return ModelConfig(node.name, False, f"{path} on {node.name} names no architectures", path, [], data)
    return ModelConfig(node.name, True, "", path, archs, data)


async def first_model_config(nodes: Nodes, node_list: list[NodeConfig], model: str | None) -> ModelConfig:
    """The model's config from the first node whose cache has it (the head first)."""
    first = None
    for node in sorted(node_list, key=lambda n: not n.is_head):
        found = await model_config(nodes, node, model)
        if found.found:
            return found
        first = first or found
    return first or ModelConfig("", False, "no nodes")
