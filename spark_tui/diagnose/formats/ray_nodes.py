"""`ray list nodes` (every Ray 2.x table layout, `--detail` YAML), `ray get nodes` and what
`ray.nodes()` prints (a Python list of dicts, `'Alive': False` for a dead node; its JSON too):
each node's address, state and GPUs; a DEAD node named."""

from __future__ import annotations

import re

import yaml

from spark_tui.diagnose.formats.values import json_objects, number, verdict
from spark_tui.diagnose.paste import Cleaned


def ray_table_header(text: str) -> tuple[int, str] | None:
    """The `ray list nodes` table's header line (index, text without a glued backtick)."""
    for i, line in enumerate(text.splitlines()):
        if "NODE_ID" in line and "NODE_IP" in line and "STATE" in line:
            return i, line.lstrip("`")
    return None


# A node of `ray.nodes()`, printed (`[{'NodeID': ...`, pprint's `[{'Alive': True,`) or as JSON,
# each dict starting a line (after the list's `[`): a log quoting one in a sentence is no such paste.
PY_NODE = re.compile(r"""^[ \t`\[]*\{\s*['"](?:NodeID|Alive)['"]:\s*""", re.M)
PY_FIELD = {
    "node_id": re.compile(r"""['"]NodeID['"]:\s*['"]([0-9a-fA-F]+)['"]"""),
    "alive": re.compile(r"""['"]Alive['"]:\s*(True|False|true|false)\b"""),
    "node_ip": re.compile(r"""['"]NodeManagerAddress['"]:\s*['"]([^'"\s]+)['"]"""),
    "gpus": re.compile(r"""['"]GPU['"]:\s*(\d+(?:\.\d+)?)"""),
    "memory": re.compile(r"""['"]memory['"]:\s*(\d+(?:\.\d+)?)"""),
}

RESOURCES_SHOWN = re.compile(r"""['"]Resources['"]:\s*\{[^{}]*\}""")


def is_python_nodes(text: str) -> bool:
    """A `ray.nodes()` paste: a node dict starting a line, with its Alive and its NodeID or address."""
    m = PY_NODE.search(text)
    rest = text[m.start() :] if m else ""
    return bool(
        m
        and PY_FIELD["alive"].search(rest)
        and (PY_FIELD["node_id"].search(rest) or PY_FIELD["node_ip"].search(rest))
    )


def python_nodes(text: str) -> list[dict]:
    """The nodes of a pasted `ray.nodes()`, read field by field (a paste cut short keeps the
    nodes it shows; its values are never evaluated)."""
    starts = [m.start() for m in PY_NODE.finditer(text)]
    nodes: list[dict] = []
    if not starts:
        return nodes
    for a, b in zip(starts, starts[1:] + [len(text)], strict=True):
        chunk = text[a:b]
        found = {k: (m.group(1) if (m := rx.search(chunk)) else None) for k, rx in PY_FIELD.items()}
        if found["node_id"] is None and found["node_ip"] is None:
            continue
        alive = found["alive"]
        resources = _ray_resources({"GPU": found["gpus"], "memory": found["memory"]})
        if found["gpus"] is None and not RESOURCES_SHOWN.search(chunk):
            resources["gpus"] = None  # cut before its resources end: no GPU is not known
        nodes.append(
            {
                "node_id": found["node_id"],
                "node_ip": found["node_ip"],
                "is_head": True if re.search(r"node:__internal_head__", chunk) else None,
                "state": None if alive is None else "ALIVE" if alive.lower() == "true" else "DEAD",
                "state_message": None,
                **resources,
            }
        )
    return nodes


def _ray_resources(resources: dict) -> dict:
    memory = resources.get("memory")
    gib = number(memory)
    if gib is not None and not str(memory).strip().endswith("GiB"):
        gib = gib / 2**30  # bytes (ray get nodes)
    return {
        "gpus": number(resources.get("GPU")) or 0,
        "memory_gib": round(gib, 3) if gib is not None else None,
    }


def _ray_table(text: str) -> list[dict]:
    found = ray_table_header(text)
    if found is None:
        return []
    i, header = found
    cols = [(m.group(0), m.start()) for m in re.finditer(r"\S+", header)]
    starts = [s for _, s in cols] + [10**6]
    nodes: list[dict] = []
    resources: dict[str, str] = {}
    for line in text.splitlines()[i + 1 :]:
        if not line.strip():
            continue
        cells = {name: line[starts[j] : starts[j + 1]].strip() for j, (name, _) in enumerate(cols)}
        first = line[: starts[0]].strip()
        if first.isdigit() and cells.get("NODE_ID"):
            resources = {}
            nodes.append(
                {
                    "node_id": cells.get("NODE_ID"),
                    "node_ip": cells.get("NODE_IP"),
                    "is_head": cells.get("IS_HEAD_NODE") == "True",
                    "state": cells.get("STATE"),
                    "state_message": cells.get("STATE_MESSAGE") or None,
                    "resources": resources,
                }
            )
        elif not nodes or first:
            break  # past the table
        key, _, value = cells.get("RESOURCES_TOTAL", "").partition(": ")
        if key:
            resources[key] = value
    for n in nodes:
        n.update(_ray_resources(n.pop("resources")))
    return nodes


def _ray_node(data: dict) -> dict:
    resources: dict = data["resources_total"] if isinstance(data.get("resources_total"), dict) else {}
    return {
        "node_id": data.get("node_id"),
        "node_ip": data.get("node_ip"),
        "is_head": data.get("is_head_node"),
        "state": data.get("state"),
        "state_message": data.get("state_message") or None,
        **_ray_resources(resources),
    }


def read_ray_nodes(c: Cleaned) -> dict:
    nodes = _ray_table(c.text)
    if not nodes:
        docs = [d for d in json_objects(c.text) if "node_id" in d]
        if not docs:
            for doc in re.split(r"^---\s*$", c.text, flags=re.M):
                try:
                    data = yaml.safe_load(doc)
                except (yaml.YAMLError, RecursionError):
                    continue
                docs += [
                    d
                    for d in (data if isinstance(data, list) else [data])
                    if isinstance(d, dict) and "node_id" in d
                ]
        nodes = [_ray_node(d) for d in docs] or python_nodes(c.text)
    verdicts = []
    for n in nodes:
        if n["state"] == "DEAD":
            verdicts.append(
                verdict(
                    "error",
                    f"Ray node {n['node_ip']} is DEAD: its raylet stopped (container ended, OOM, network)"
                    + (f": {n['state_message']}" if n["state_message"] else ""),
                    "ray.node_dead",
                )
            )
        else:
            gpus = f", {n['gpus']:g} GPU" if isinstance(n.get("gpus"), (int, float)) else ""
            verdicts.append(
                verdict(
                    "ok", f"Ray node {n['node_ip']}{' (head)' if n['is_head'] else ''}: {n['state']}{gpus}"
                )
            )
            if n.get("gpus") == 0:
                verdicts.append(
                    verdict(
                        "warn", f"Ray node {n['node_ip']} has no GPU: start Ray there with the GPU visible"
                    )
                )
    return {"summary": {"nodes": nodes}, "verdicts": verdicts}
