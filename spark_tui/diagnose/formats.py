"""Outputs `diagnose` reads besides logs and tables: `nvidia-smi -q`, `ethtool`, `ethtool -i`,
`docker inspect`, `docker ps --format '{{json .}}'`, `ray list nodes` / `ray get nodes` and
`ip -j addr`. Each reader returns figures as values (addresses, versions, speeds) and verdicts;
failures the knowledge base knows (a link below its rate) are told with the table's words.
"""

from __future__ import annotations

import json
import re

import yaml

from spark_tui.diagnose.paste import Cleaned
from spark_tui.knowledge import Matcher

FORMAT_KINDS = ("gpu-q", "ethtool", "ethtool-i", "docker-inspect", "docker-ps-json", "ray-nodes", "ip-json")
COMMANDS = (
    ("ethtool -i", "ethtool-i"),
    ("ethtool", "ethtool"),
    ("nvidia-smi -q", "gpu-q"),
    ("docker inspect", "docker-inspect"),
    ("ray list nodes", "ray-nodes"),
    ("ray get nodes", "ray-nodes"),
    ("ip -j", "ip-json"),
    ("ip --json", "ip-json"),
)
MODE = re.compile(r"\b(\d+)base[A-Za-z0-9]*(?:/\w+)?")
SPEED = re.compile(r"^\s*Speed:\s*(?:(?P<mbps>\d+)Mb/s|(?P<other>\S+))", re.M)


def detect_format(c: Cleaned) -> str | None:
    cmd = c.command
    for prefix, kind in COMMANDS:
        if cmd.startswith(prefix):
            return kind
    if cmd.startswith("docker ps") and "json" in cmd:
        return "docker-ps-json"
    text = c.text.strip()
    head = text[:20_000]
    if "==============NVSMI LOG==============" in head:
        return "gpu-q"
    if re.search(r"^Settings for \S+:", head, re.M) and ("Speed:" in head or "Link detected:" in head):
        return "ethtool"
    if re.search(r"^driver: \S+", head, re.M) and "bus-info:" in head:
        return "ethtool-i"
    if "======== List:" in head and "NODE_ID" in head or re.search(r"^node_id: \w+", head, re.M):
        return "ray-nodes"
    if text.startswith(("[", "{")):
        data = _json(text)
        rows = data if isinstance(data, list) else [data]
        if rows and all(isinstance(r, dict) for r in rows):
            if all("State" in r and "Config" in r for r in rows):
                return "docker-inspect"
            if all("ifname" in r for r in rows):
                return "ip-json"
        if _ps_rows(text):
            return "docker-ps-json"
    if _cut_inspect(text[:20_000]):  # a docker inspect pasted in part (a window, an author's "...")
        return "docker-inspect"
    return None


INSPECT_ID = re.compile(r'^\s*"Id": "(?P<id>[0-9a-f]{12,64})"', re.M)
INSPECT_STATE = re.compile(r'^\s*"State": \{', re.M)
STATE_FIELD = re.compile(r'^\s*"(\w+)": ("[^"\n]*"|-?\d+|true|false|null),?\s*$', re.M)


def _cut_inspect(text: str) -> list[dict]:
    """The containers of a `docker inspect` output that is not whole JSON (a paste cut short):
    each one's Id, Name and its State object, which is read as JSON on its own."""
    rows = []
    ids = list(INSPECT_ID.finditer(text))
    for i, m in enumerate(ids):
        end = ids[i + 1].start() if i + 1 < len(ids) else len(text)
        part = text[m.start() : end]
        st = INSPECT_STATE.search(part)
        if st is None:
            continue
        state = _json(_braced(part, st.end() - 1))
        if not isinstance(state, dict):  # the paste ends inside State (a long Health log): its fields
            state = {
                k: _json(v)
                for k, v in STATE_FIELD.findall(part[st.end() : st.end() + 2000].split('"Health"')[0])
            }
            if "Status" not in state:
                continue
        name = re.search(r'^\s*"Name": "(?P<name>[^"]*)"', part, re.M)
        rows.append({"Id": m.group("id"), "Name": name.group("name") if name else "", "State": state})
    return rows


def _braced(text: str, start: int) -> str:
    """The JSON object opening at text[start] ('{'), to its matching brace (strings respected)."""
    depth, quoted, escaped = 0, False, False
    for i in range(start, len(text)):
        ch = text[i]
        if quoted:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                quoted = False
            continue
        if ch == '"':
            quoted = True
        elif ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0:
                return text[start : i + 1]
    return ""


def _json(text: str):
    try:
        return json.loads(text)
    except ValueError:
        return None


def _v(level: str, text: str, code: str = "") -> dict:
    return {"level": level, "text": text, **({"code": code} if code else {})}


def _finding_verdict(f) -> dict:
    level = {"error": "error", "warn": "warn"}.get(f.severity, "ok")
    return _v(level, f"{f.title}: {f.means} Fix: {f.fix}", f.id)


# --- nvidia-smi -q ---------------------------------------------------------------------------


def _key_values(text: str) -> list[tuple[int, str, str]]:
    """(indent, key, value) of `Key : Value` lines; a section header has an empty value."""
    out = []
    for line in text.splitlines():
        if not line.strip() or line.startswith("="):
            continue
        indent = len(line) - len(line.lstrip())
        if GPU_SECTION.fullmatch(line.strip()):
            out.append((indent, line.strip(), ""))
            continue
        key, _, value = line.partition(" : ") if " : " in line else line.partition(":")
        out.append((indent, key.strip(), value.strip()))
    return out


GPU_SECTION = re.compile(r"GPU [0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.\d")


def read_gpu_q(c: Cleaned) -> dict:
    top: dict[str, str] = {}
    gpus: list[dict] = []
    section: list[str] = []
    for indent, key, value in _key_values(c.text):
        if GPU_SECTION.fullmatch(key):
            gpus.append({"bus_id": key.split(" ", 1)[1]})
            section = []
            continue
        depth = indent // 4
        section = section[: max(depth - 1, 0)]
        if not value:
            section.append(key)
            continue
        name = "/".join(section + [key])
        (gpus[-1] if gpus and indent else top)[name] = value
    summary: dict[str, object] = {
        "driver_version": top.get("Driver Version"),
        "cuda_version": top.get("CUDA Version"),
        "attached_gpus": int(top["Attached GPUs"]) if top.get("Attached GPUs", "").isdigit() else None,
        "gpus": gpus,
    }
    verdicts = []
    for g in gpus:
        name = g.get("Product Name", "GPU")
        total = g.get("FB Memory Usage/Total", "")
        if name.endswith("GB10") or total.strip("[]") in ("N/A", "Not Supported"):
            memory = "memory fields N/A (GB10: unified memory, read /proc/meminfo)"
        elif total:
            memory = f"memory {g.get('FB Memory Usage/Used', '?')} used of {total}"
        else:
            memory = "memory not in this output"
        verdicts.append(
            _v(
                "ok",
                f"{name} at {g['bus_id']}: driver {summary['driver_version']}, CUDA {summary['cuda_version']}, {memory}",
            )
        )
        pending = g.get("Retired Pages/Pending Page Blacklist") or g.get("Remapped Rows/Pending")
        if pending in ("Yes", "1"):
            verdicts.append(_v("warn", f"{name} at {g['bus_id']}: memory retirement pending: reset the GPU"))
    return {"summary": summary, "verdicts": verdicts}


# --- ethtool and ethtool -i -------------------------------------------------------------------


def _modes(block: str, label: str) -> list[str]:
    m = re.search(rf"^\s*{label}:\s*(.*(?:\n[ \t]{{8,}}[^:\n]+(?=\n|$))*)", block, re.M)
    return m.group(1).split() if m else []


def read_ethtool(c: Cleaned) -> dict:
    matcher = Matcher()
    ports = []
    verdicts = []
    findings = []
    # A port's fields are indented; ethtool's own refusals ("Cannot get wake-on-lan settings:
    # Operation not permitted" for a non-root user, "netlink error: ...") sit among them unindented.
    for m in re.finditer(
        r"^Settings for (?P<netdev>\S+):\n(?P<body>(?:(?:[ \t]|Cannot |netlink error).*\n?|\n)*)",
        c.text,
        re.M,
    ):
        netdev, body = m.group("netdev"), m.group("body")
        supported = _modes(body, "Supported link modes")
        advertised = _modes(body, "Advertised link modes")
        speeds = [int(x.group(1)) for x in map(MODE.match, supported) if x]
        sp = SPEED.search(body)
        speed = int(sp.group("mbps")) if sp and sp.group("mbps") else None
        link = re.search(r"Link detected:\s*(\w+)", body)
        port = {
            "netdev": netdev,
            "speed_mbps": speed,
            "max_supported_mbps": max(speeds) if speeds else None,
            "supported_modes": supported,
            "advertised_modes": advertised,
            "duplex": (re.search(r"Duplex:\s*(\S+)", body) or [None, None])[1],
            "link_detected": link.group(1) == "yes" if link else None,
        }
        ports.append(port)
        line = f"ethtool {netdev}: Speed {sp.group(0).split(':', 1)[1].strip() if sp else '?'}"
        if port["link_detected"] is False:
            findings.append(matcher.named("link.down", {"netdev": netdev}, line))
        elif speed and speeds and speed < max(speeds):
            figures = {"netdev": netdev, "speed_gbps": speed / 1000, "max_gbps": max(speeds) / 1000}
            findings.append(matcher.named("link.speed_below_rate", figures, line))
        elif speed:
            verdicts.append(_v("ok", f"{netdev}: {speed / 1000:g} Gb/s, the port's best supported mode"))
        elif port["link_detected"]:
            verdicts.append(
                _v(
                    "ok",
                    f"{netdev}: link detected; no speed in this output (the driver reports none, or not run as root)",
                )
            )
    verdicts = [_finding_verdict(f) for f in findings] + verdicts
    return {"summary": {"ports": ports}, "verdicts": verdicts, "findings": [f.as_dict() for f in findings]}


def read_ethtool_i(c: Cleaned) -> dict:
    fields = dict(re.findall(r"^([\w-]+):[ \t]*(.*?)\s*$", c.text, re.M))
    netdev = re.search(r"ethtool -i (\S+)", c.command + "\n" + c.text)
    figures = {
        "netdev": netdev.group(1) if netdev else "this port",
        "driver": fields.get("driver"),
        "version": fields.get("version"),
        "firmware": fields.get("firmware-version"),
        "bus": fields.get("bus-info"),
    }
    f = Matcher().named("link.driver_firmware", figures, f"driver: {fields.get('driver')}")
    return {"summary": figures, "verdicts": [_v("ok", f.title)], "findings": [f.as_dict()]}


# --- docker ---------------------------------------------------------------------------------


def read_docker_inspect(c: Cleaned) -> dict:
    data = _json(c.text.strip())
    rows = data if isinstance(data, list) else [data] if isinstance(data, dict) else []
    if data is None:
        rows = _cut_inspect(c.text)
    containers = []
    verdicts = []
    for r in rows:
        state = r.get("State") or {}
        name = str(r.get("Name", "")).lstrip("/") or str(r.get("Id", ""))[:12]
        item = {
            "name": name,
            "image": (r.get("Config") or {}).get("Image"),
            "status": state.get("Status"),
            "exit_code": state.get("ExitCode"),
            "oom_killed": state.get("OOMKilled"),
            "error": state.get("Error") or None,
            "started_at": state.get("StartedAt"),
            "finished_at": state.get("FinishedAt"),
        }
        containers.append(item)
        code = item["exit_code"]
        if item["oom_killed"]:
            verdicts.append(
                _v(
                    "error",
                    f"{name}: killed by Docker's OOM accounting (OOMKilled, exit {code}): the memory limit or the node's memory ran out",
                    "docker.oom_killed",
                )
            )
        elif code == 137:
            verdicts.append(
                _v(
                    "error",
                    f"{name}: exit 137 (SIGKILL) without OOMKilled: the kernel's OOM killer on the host (dmesg) or `docker kill`",
                    "docker.oom_killed",
                )
            )
        elif item["status"] == "exited" and code:
            verdicts.append(
                _v(
                    "error",
                    f"{name}: exited with code {code}" + (f": {item['error']}" if item["error"] else ""),
                )
            )
        else:
            verdicts.append(
                _v(
                    "ok",
                    f"{name}: {item['status']}"
                    + (f", exit code {code}" if item["status"] == "exited" else ""),
                )
            )
    return {"summary": {"containers": containers}, "verdicts": verdicts}


def _ps_rows(text: str) -> list[dict]:
    rows = []
    for line in text.splitlines():
        if not line.strip():
            continue
        data = _json(line.strip())
        if not isinstance(data, dict) or not {"Names", "Image"} <= set(data):
            return []
        rows.append(data)
    return rows


def read_docker_ps_json(c: Cleaned) -> dict:
    rows = _ps_rows(c.text.strip())
    containers = [
        {
            "name": r.get("Names"),
            "image": r.get("Image"),
            "state": r.get("State"),
            "status": r.get("Status"),
            "exit_code": int(m.group(1))
            if (m := re.search(r"Exited \((\d+)\)", r.get("Status", "")))
            else None,
        }
        for r in rows
    ]
    verdicts = [
        _v("error" if c_["exit_code"] else "ok", f"{c_['name']} ({c_['image']}): {c_['status']}")
        for c_ in containers
    ]
    return {"summary": {"containers": containers}, "verdicts": verdicts}


# --- ray ------------------------------------------------------------------------------------


def read_ray_nodes(c: Cleaned) -> dict:
    nodes: list[dict] = []
    if "======== List:" in c.text:
        lines = c.text.splitlines()
        header = next((i for i, line in enumerate(lines) if "NODE_ID" in line and "NODE_IP" in line), None)
        if header is not None:
            cols = lines[header].split()
            for line in lines[header + 1 :]:
                cells = re.split(r"\s{2,}", line.strip())
                if len(cells) >= 5 and cells[0].isdigit():
                    row = dict(zip(cols, cells[1:], strict=False))
                    nodes.append(
                        {
                            "node_id": row.get("NODE_ID"),
                            "node_ip": row.get("NODE_IP"),
                            "is_head": row.get("IS_HEAD_NODE") == "True",
                            "state": row.get("STATE"),
                        }
                    )
    else:
        for doc in re.split(r"^---\s*$", c.text, flags=re.M):
            try:
                data = yaml.safe_load(doc)
            except yaml.YAMLError:
                continue
            if isinstance(data, dict) and "node_id" in data:
                nodes.append(
                    {
                        "node_id": data.get("node_id"),
                        "node_ip": data.get("node_ip"),
                        "is_head": data.get("is_head_node"),
                        "state": data.get("state"),
                        "gpus": (data.get("resources_total") or {}).get("GPU", 0),
                    }
                )
    verdicts = []
    for n in nodes:
        if n["state"] == "DEAD":
            verdicts.append(
                _v(
                    "error",
                    f"Ray node {n['node_ip']} is DEAD: its raylet stopped (container ended, OOM, network)",
                    "ray.node_dead",
                )
            )
        else:
            gpus = f", {n['gpus']:g} GPU" if isinstance(n.get("gpus"), (int, float)) else ""
            verdicts.append(
                _v("ok", f"Ray node {n['node_ip']}{' (head)' if n['is_head'] else ''}: {n['state']}{gpus}")
            )
            if n.get("gpus") == 0:
                verdicts.append(
                    _v("warn", f"Ray node {n['node_ip']} has no GPU: start Ray there with the GPU visible")
                )
    return {"summary": {"nodes": nodes}, "verdicts": verdicts}


# --- ip -j addr ------------------------------------------------------------------------------


def read_ip_json(c: Cleaned) -> dict:
    data = _json(c.text.strip())
    rows = data if isinstance(data, list) else []
    interfaces = [
        {
            "ifname": r.get("ifname"),
            "state": r.get("operstate"),
            "mtu": r.get("mtu"),
            "addresses": [
                f"{a.get('local')}/{a.get('prefixlen')}" for a in r.get("addr_info") or [] if a.get("local")
            ],
        }
        for r in rows
        if isinstance(r, dict)
    ]
    verdicts = [
        _v(
            "warn" if i["state"] == "DOWN" else "ok",
            f"{i['ifname']}: {i['state']}, mtu {i['mtu']}, {', '.join(map(str, i['addresses'] or [])) or 'no address'}",
        )
        for i in interfaces
    ]
    return {"summary": {"interfaces": interfaces}, "verdicts": verdicts}


FORMAT_READERS = {
    "gpu-q": read_gpu_q,
    "ethtool": read_ethtool,
    "ethtool-i": read_ethtool_i,
    "docker-inspect": read_docker_inspect,
    "docker-ps-json": read_docker_ps_json,
    "ray-nodes": read_ray_nodes,
    "ip-json": read_ip_json,
}
