"""Outputs `diagnose` reads besides logs and tables: `nvidia-smi -q`, `ethtool`, `ethtool -i`,
`docker inspect`, `docker ps --format '{{json .}}'`, `ray list nodes` / `ray get nodes` /
`ray.nodes()` and `ip -j addr`. `detect_format` tells which one a paste is (its command line first, then its text);
each reader (a module a format) returns figures as values (addresses, versions, speeds) and
verdicts; failures the knowledge base knows (a link below its rate) are told with the table's words.
"""

from __future__ import annotations

import re

from spark_tui.diagnose.formats.docker import (
    cut_inspect,
    is_health,
    is_ps_row,
    is_state,
    loose_state,
    read_docker_inspect,
    read_docker_ps_json,
)
from spark_tui.diagnose.formats.ethtool import SETTINGS, read_ethtool, read_ethtool_i
from spark_tui.diagnose.formats.gpu_q import gpu_section_lines, read_gpu_q
from spark_tui.diagnose.formats.ip_json import read_ip_json
from spark_tui.diagnose.formats.ray_nodes import is_python_nodes, ray_table_header, read_ray_nodes
from spark_tui.diagnose.formats.values import json_objects, unmarked
from spark_tui.diagnose.paste import Cleaned

FORMAT_KINDS = ("gpu-q", "ethtool", "ethtool-i", "docker-inspect", "docker-ps-json", "ray-nodes", "ip-json")
COMMANDS = (
    ("ethtool -i", "ethtool-i"),
    ("ethtool", "ethtool"),
    ("nvidia-smi -q", "gpu-q"),
    ("nvidia-smi -a", "gpu-q"),
    ("docker inspect", "docker-inspect"),
    ("docker container inspect", "docker-inspect"),
    ("podman inspect", "docker-inspect"),
    ("podman container inspect", "docker-inspect"),
    ("ray list nodes", "ray-nodes"),
    ("ray get nodes", "ray-nodes"),
)
# `ip -j addr`, `ip -d -j link`, `ip -6 -j -p addr`, `ip --json a`: the JSON option among the others
IP_JSON = re.compile(r"^ip(?:\s+-[\w-]+)*?\s+-(?:j|json|-json)\b")
# `docker ps`, `docker container ls`, `docker compose ps`, `podman ps` asked for JSON
PS_COMMAND = re.compile(r"^(?:docker|podman)(?:[ -]compose)?\s+(?:container\s+)?(?:ps|ls|list)\b.*\bjson\b")


def detect_format(c: Cleaned) -> str | None:
    # A prompted command says what the output is; a bare command line is only a hint for the
    # readers (a paste headed `nvidia-smi -a` may hold nothing but its error), the text decides.
    cmd = c.command.removeprefix("sudo ").strip()
    for prefix, kind in COMMANDS:
        if cmd.startswith(prefix):
            return kind
    if IP_JSON.match(cmd):
        return "ip-json"
    if PS_COMMAND.match(cmd):
        return "docker-ps-json"
    head = unmarked(c.text.strip()[:20_000])
    if "==============NVSMI LOG==============" in head:
        return "gpu-q"
    settings = SETTINGS.search(head)
    if settings and re.search(
        r"^\s+(?:Speed|Link detected|Supported link modes):", head[settings.end() :], re.M
    ):
        return "ethtool"
    if re.search(r"^driver: \S+", head, re.M) and "bus-info:" in head:
        return "ethtool-i"
    if (
        ray_table_header(head) is not None
        or re.search(r"^[-\s]*node_id: [0-9a-f]{16,}", head, re.M)
        or is_python_nodes(head)
    ):
        return "ray-nodes"
    values = json_objects(head)
    if values:
        if any("State" in r and isinstance(r["State"], dict) or is_state(r) or is_health(r) for r in values):
            return "docker-inspect"
        if any("ifname" in r for r in values):
            return "ip-json"
        if any(is_ps_row(r) for r in values):
            return "docker-ps-json"
    if cut_inspect(head) or loose_state(head):  # pasted in part (a window, an author's "...")
        return "docker-inspect"
    if re.search(r'"ifindex":\s*\d+', head) and re.search(r'"ifname":\s*"', head):
        return "ip-json"  # an ip -j output cut short
    if gpu_section_lines(head) >= 2:
        return "gpu-q"  # sections of nvidia-smi -q without its header (a window, a grep)
    return None


FORMAT_READERS = {
    "gpu-q": read_gpu_q,
    "ethtool": read_ethtool,
    "ethtool-i": read_ethtool_i,
    "docker-inspect": read_docker_inspect,
    "docker-ps-json": read_docker_ps_json,
    "ray-nodes": read_ray_nodes,
    "ip-json": read_ip_json,
}
