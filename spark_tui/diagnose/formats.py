"""Outputs `diagnose` reads besides logs and tables: `nvidia-smi -q`, `ethtool`, `ethtool -i`,
`docker inspect`, `docker ps --format '{{json .}}'`, `ray list nodes` / `ray get nodes` and
`ip -j addr`. Each reader returns figures as values (addresses, versions, speeds) and verdicts;
failures the knowledge base knows (a link below its rate) are told with the table's words.
"""

from __future__ import annotations

import json
import re
import shlex

import yaml

from spark_tui.diagnose.paste import Cleaned
from spark_tui.knowledge import Matcher

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
MODE = re.compile(r"\b(\d+)base[A-Za-z0-9]*(?:/\w+)?")
SPEED = re.compile(r"^\s*Speed:\s*(?:(?P<mbps>\d+)Mb/s|(?P<other>\S+))", re.M)
# `Settings for eth0:` opens an ethtool output, also glued to what the reporter pasted before it
SETTINGS = re.compile(r"Settings for (?P<netdev>[\w.:@-]+):[ \t]*$", re.M)
BARE_COMMAND = re.compile(
    r"^[`\s]*(?:sudo\s+)?(?P<cmd>(?:docker|podman|ip|ethtool|nvidia-smi|ray)\s.*?)`?\s*$"
)


def _command(c: Cleaned) -> str:
    """The pasted command: its `$ ` line, or a first line that is a bare command (pasted
    without a prompt, inside backticks or indented as a markdown code block)."""
    if c.command:
        return c.command.removeprefix("sudo ").strip()
    for line in c.text.splitlines()[:3]:
        if line.strip() in ("", "`"):
            continue
        m = BARE_COMMAND.match(line)
        return m.group("cmd").strip() if m else ""
    return ""


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
    text = c.text.strip()
    head = text[:20_000]
    if "==============NVSMI LOG==============" in head:
        return "gpu-q"
    settings = SETTINGS.search(head)
    if settings and re.search(
        r"^\s+(?:Speed|Link detected|Supported link modes):", head[settings.end() :], re.M
    ):
        return "ethtool"
    if re.search(r"^driver: \S+", head, re.M) and "bus-info:" in head:
        return "ethtool-i"
    if _ray_table_header(head) is not None or re.search(r"^[-\s]*node_id: [0-9a-f]{16,}", head, re.M):
        return "ray-nodes"
    values = _dicts(head)
    if values:
        if any(
            "State" in r and isinstance(r["State"], dict) or _is_state(r) or _is_health(r) for r in values
        ):
            return "docker-inspect"
        if any("ifname" in r for r in values):
            return "ip-json"
        if any(_is_ps_row(r) for r in values):
            return "docker-ps-json"
    if _cut_inspect(head) or _loose_state(
        head
    ):  # a docker inspect pasted in part (a window, an author's "...")
        return "docker-inspect"
    if re.search(r'"ifindex":\s*\d+', head) and re.search(r'"ifname":\s*"', head):
        return "ip-json"  # an ip -j output cut short
    if _gpu_section_lines(head) >= 2:
        return "gpu-q"  # sections of nvidia-smi -q without its header (a window, a grep)
    return None


def _json_values(text: str) -> list:
    """Every JSON value a paste holds, each starting a line (after a prompt, a sentence or a
    backtick the reporter wrote): a whole output, JSON lines, a value followed by prose."""
    decoder = json.JSONDecoder()
    values = []
    pos = 0
    for m in re.finditer(r"^[ \t`]*(?=[\[{])", text, re.M):
        start = m.end()
        if start < pos:
            continue
        try:
            value, end = decoder.raw_decode(text, start)
        except (ValueError, RecursionError):  # not JSON, or nested deeper than Python recurses
            continue
        values.append(value)
        pos = end
    return values


def _dicts(text: str) -> list[dict]:
    out: list[dict] = []
    for v in _json_values(text):
        out += (
            [r for r in v if isinstance(r, dict)]
            if isinstance(v, list)
            else [v]
            if isinstance(v, dict)
            else []
        )
    return out


STATE_KEYS = {
    "Status",
    "Running",
    "Paused",
    "Restarting",
    "OOMKilled",
    "Dead",
    "Pid",
    "ExitCode",
    "Error",
    "StartedAt",
    "FinishedAt",
}


def _is_state(d: dict) -> bool:
    """A container's State object on its own (`docker inspect --format '{{json .State}}'`)."""
    return len(STATE_KEYS & set(d)) >= 5 and "ExitCode" in d


def _is_health(d: dict) -> bool:
    """A container's Health object on its own (`--format '{{json .State.Health}}'`, jq)."""
    return {"Status", "FailingStreak"} <= set(d)


def _is_ps_row(d: dict) -> bool:
    """A row of `docker ps --format '{{json .}}'` (any version), of `docker compose ps --format
    json` or of a compose-cli context: a container's name or ID, its image or service, a status."""
    return (
        bool({"Names", "Name", "ID", "Id"} & set(d))
        and bool({"Image", "Service"} & set(d))
        and bool({"Status", "State"} & set(d))
        and not isinstance(d.get("State"), dict)
        and "Config" not in d
    )


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
            state = _state_fields(part[st.end() :])
            if "Status" not in state:
                continue
        name = re.search(r'^\s*"Name": "(?P<name>[^"]*)"', part, re.M)
        rows.append({"Id": m.group("id"), "Name": name.group("name") if name else "", "State": state})
    return rows


def _state_fields(text: str) -> dict:
    """A State's own fields read line by line (the paste ends inside it, or is a window of it),
    with its Health's status when the window holds it."""
    before, _, health = text[:4000].partition('"Health"')
    state: dict[str, object] = {
        k: _json(v) for k, v in STATE_FIELD.findall(before) if k in STATE_KEYS | {"ConmonPid"}
    }
    if health:
        status = re.search(r'"Status":\s*"([^"\n]*)"', health[:300])
        streak = re.search(r'"FailingStreak":\s*(\d+)', health[:300])
        state["Health"] = {
            "Status": status.group(1) if status else None,
            "FailingStreak": int(streak.group(1)) if streak else None,
        }
    return state


def _loose_state(text: str) -> dict:
    """A State object without its container around it: after an author's '...', or a window of
    its fields (podman inspect): at least five of State's own fields, ExitCode among them."""
    st = INSPECT_STATE.search(text)
    if st is not None:
        state = _json(_braced(text, st.end() - 1))
        if isinstance(state, dict) and _is_state(state):
            return state
    state = _state_fields(text[st.end() :] if st else text)
    return state if len(STATE_KEYS & set(state)) >= 5 and "ExitCode" in state else {}


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
    except (ValueError, RecursionError):
        return None


def _v(level: str, text: str, code: str = "") -> dict:
    return {"level": level, "text": text, **({"code": code} if code else {})}


def _finding_verdict(f) -> dict:
    level = {"error": "error", "warn": "warn"}.get(f.severity, "ok")
    return _v(level, f"{f.title}: {f.means} Fix: {f.fix}", f.id)


def _number(value: object) -> float | None:
    """The number that starts a figure's text ('56 C', '250.00 W', '81920 MiB', '4'), if any."""
    m = re.match(r"\s*(-?\d+(?:\.\d+)?)", str(value)) if value is not None else None
    return float(m.group(1)) if m else None


def _int(value: object) -> int | None:
    n = _number(value)
    return int(n) if n is not None else None


# --- nvidia-smi -q ---------------------------------------------------------------------------


def _key_values(text: str) -> list[tuple[int, str, str]]:
    """(indent, key, value) of `Key : Value` lines; a section header has an empty value."""
    out = []
    for line in text.expandtabs(4).splitlines():
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
# Keys only nvidia-smi -q prints: a window or a grep of its sections is read without its header
GPU_Q_KEYS = (
    "Remapped Rows",
    "Retired Pages",
    "Pending Page Blacklist",
    "Pending Page Retirement",
    "Single Bit ECC",
    "Double Bit ECC",
    "Correctable Error",
    "Uncorrectable Error",
    "GPU Current Temp",
    "GPU Shutdown Temp",
    "GPU Slowdown Temp",
    "GPU Max Operating Temp",
    "Power Draw",
    "Power Limit",
    "Clocks Throttle Reasons",
    "Clocks Event Reasons",
    "HW Slowdown",
    "SW Thermal Slowdown",
    "HW Thermal Slowdown",
    "FB Memory Usage",
    "BAR1 Memory Usage",
    "Max Clocks",
    "Applications Clocks",
    "Performance State",
    "Persistence Mode",
    "GPU UUID",
    "VBIOS Version",
)
GPU_Q_LINE = re.compile(r"^[ \t]+(" + "|".join(GPU_Q_KEYS) + r")[ \t]*(?::|$)", re.M)


def _gpu_section_lines(text: str) -> int:
    """How many distinct nvidia-smi -q keys, each on its own indented `Key : value` line."""
    return len({m.group(1) for m in GPU_Q_LINE.finditer(text)})


# thermal clock-event reasons: the GPU slows its clocks because it is hot
THERMAL_REASONS = ("HW Slowdown", "HW Thermal Slowdown", "SW Thermal Slowdown")


def _gpu_figures(g: dict) -> dict:
    """A GPU's figures as values, from nvidia-smi -q's sections (any driver's wording)."""

    def get(*names: str) -> str | None:
        for name in names:  # a window without the section's header has the bare key
            for key in (name, name.rpartition("/")[2]):
                if g.get(key) is not None:
                    return g[key]
        return None

    def reasons_active() -> list[str]:
        out = []
        for key, value in g.items():
            head, _, reason = key.rpartition("/")
            if head.startswith(("Clocks Throttle Reasons", "Clocks Event Reasons")) and value == "Active":
                out.append(reason)
        return out

    def pending(value: str | None) -> bool | None:
        return None if value in (None, "N/A") else value in ("Yes", "1")

    memory_total = get("FB Memory Usage/Total")
    return {
        "name": g.get("Product Name"),
        "temperature_c": _number(get("Temperature/GPU Current Temp")),
        "slowdown_temp_c": _number(get("Temperature/GPU Slowdown Temp")),
        "shutdown_temp_c": _number(get("Temperature/GPU Shutdown Temp")),
        "max_operating_temp_c": _number(get("Temperature/GPU Max Operating Temp")),
        "power_draw_w": _number(
            get(
                "Power Readings/Power Draw",
                "GPU Power Readings/Power Draw",
                "GPU Power Readings/Average Power Draw",
            )
        ),
        "power_limit_w": _number(get("Power Readings/Power Limit", "GPU Power Readings/Current Power Limit")),
        "memory_total_mib": _number(memory_total),
        "memory_used_mib": _number(get("FB Memory Usage/Used")),
        "retired_pages_pending": pending(
            get(
                "Retired Pages/Pending Page Blacklist",
                "Retired Pages/Pending Page Retirement",
                "Pending Page Blacklist",
            )
        ),
        "retired_pages_double_bit": _int(get("Retired Pages/Double Bit ECC")),
        "remapped_rows_pending": pending(get("Remapped Rows/Pending")),
        "remapped_rows_uncorrectable": _int(get("Remapped Rows/Uncorrectable Error")),
        "clock_event_reasons_active": reasons_active(),
    }


def read_gpu_q(c: Cleaned) -> dict:
    top: dict[str, str] = {}
    gpus: list[dict] = []
    section: list[str] = []
    headless = "NVSMI LOG" not in c.text  # a window or a grep: its sections belong to one GPU
    for indent, key, value in _key_values(c.text):
        if GPU_SECTION.fullmatch(key):
            gpus.append({"bus_id": key.split(" ", 1)[1]})
            section = []
            continue
        if headless and indent and not gpus:
            gpus.append({"bus_id": None})
        depth = indent // 4
        section = section[: max(depth - 1, 0)]
        if not value:
            section.append(key)
            continue
        name = "/".join(section + [key])
        (gpus[-1] if gpus and indent else top)[name] = value
    for g in gpus:
        g.update(_gpu_figures(g))
    summary: dict[str, object] = {
        "driver_version": top.get("Driver Version"),
        "cuda_version": top.get("CUDA Version"),
        "attached_gpus": int(top["Attached GPUs"]) if top.get("Attached GPUs", "").isdigit() else None,
        "gpus": gpus,
    }
    verdicts: list[dict] = []
    for g in gpus:
        before = len(verdicts)
        name = g.get("Product Name") or "GPU"
        where = f"{name} at {g['bus_id']}" if g["bus_id"] else name
        total = g.get("FB Memory Usage/Total", "")
        if name.endswith("GB10") or total.strip("[]") in ("N/A", "Not Supported"):
            memory = "memory fields N/A (GB10: unified memory, read /proc/meminfo)"
        elif total:
            memory = f"memory {g.get('FB Memory Usage/Used', '?')} used of {total}"
        else:
            memory = "memory not in this output"
        if summary["driver_version"] or g["bus_id"]:
            verdicts.append(
                _v(
                    "ok",
                    f"{where}: driver {summary['driver_version']}, CUDA {summary['cuda_version']}, {memory}",
                )
            )
        if g["retired_pages_pending"] or g["remapped_rows_pending"]:
            what = "row remapping" if g["remapped_rows_pending"] else "page retirement"
            verdicts.append(
                _v(
                    "warn",
                    f"{where}: memory {what} pending (uncorrectable ECC errors): reset the GPU (or reboot) to apply it; replace the GPU if it keeps coming back",
                )
            )
        thermal = [r for r in g["clock_event_reasons_active"] if r in THERMAL_REASONS]
        temp, slowdown, max_op = g["temperature_c"], g["slowdown_temp_c"], g["max_operating_temp_c"]
        if thermal:
            verdicts.append(
                _v(
                    "warn",
                    f"{where}: clocks held down by {', '.join(thermal)}: the GPU is too hot or its power brake is on; check cooling",
                )
            )
        elif temp is not None and (
            (slowdown is not None and temp >= slowdown) or (max_op is not None and temp >= max_op)
        ):
            limit = slowdown if slowdown is not None and temp >= slowdown else max_op
            verdicts.append(
                _v(
                    "warn",
                    f"{where}: {temp:g} C, at its thermal limit ({limit:g} C): clocks slow down; check cooling",
                )
            )
        if not (summary["driver_version"] or g["bus_id"]) and len(verdicts) == before:
            # a window or a grep of nvidia-smi -q with nothing to warn of: what it holds
            shown = [
                f"{label} {g[key]:g}{unit}"
                for key, label, unit in (
                    ("temperature_c", "temperature", " C"),
                    ("slowdown_temp_c", "slowdown at", " C"),
                    ("power_draw_w", "power", " W"),
                    ("power_limit_w", "limit", " W"),
                )
                if g[key] is not None
            ]
            if g["clock_event_reasons_active"]:
                shown.append("clock-event reasons active: " + ", ".join(g["clock_event_reasons_active"]))
            verdicts.append(
                _v("ok", f"{where} (part of nvidia-smi -q): " + ("; ".join(shown) or "no figure to judge"))
            )
    return {"summary": summary, "verdicts": verdicts}


# --- ethtool and ethtool -i -------------------------------------------------------------------


def _modes(block: str, label: str) -> list[str]:
    m = re.search(rf"^\s*{label}:\s*(.*(?:\n[ \t]{{8,}}[^:\n]+(?=\n|$))*)", block, re.M)
    return [x for x in m.group(1).split() if MODE.match(x)] if m else []


def read_ethtool(c: Cleaned) -> dict:
    matcher = Matcher()
    ports = []
    verdicts = []
    findings = []
    # A port's fields are indented; ethtool's own refusals ("Cannot get wake-on-lan settings:
    # Operation not permitted" for a non-root user, "netlink error: ...") sit among them unindented.
    for m in re.finditer(
        r"Settings for (?P<netdev>[\w.:@-]+):[ \t]*\n(?P<body>(?:(?:[ \t]|Cannot |netlink error).*\n?|\n)*)",
        c.text,
    ):
        netdev, body = m.group("netdev"), m.group("body")
        supported = _modes(body, "Supported link modes")
        advertised = _modes(body, "Advertised link modes")
        speeds = [int(x.group(1)) for x in map(MODE.match, supported) if x]
        sp = SPEED.search(body)
        speed = int(sp.group("mbps")) if sp and sp.group("mbps") else None
        link = re.search(r"Link detected:\s*(\w+)", body)
        duplex = (re.search(r"Duplex:\s*(\S+)", body) or [None, None])[1]
        port = {
            "netdev": netdev,
            "speed_mbps": speed,
            "max_supported_mbps": max(speeds) if speeds else None,
            "supported_modes": supported,
            "advertised_modes": advertised,
            "duplex": None if duplex is None or duplex.startswith("Unknown") else duplex,
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
        elif speeds:
            verdicts.append(
                _v(
                    "ok",
                    f"{netdev}: modes up to {max(speeds) / 1000:g} Gb/s; no speed or link state in this part of the output",
                )
            )
    verdicts = [_finding_verdict(f) for f in findings] + verdicts
    return {"summary": {"ports": ports}, "verdicts": verdicts, "findings": [f.as_dict() for f in findings]}


def read_ethtool_i(c: Cleaned) -> dict:
    # Several `ethtool -i` runs in one paste: a port per `driver:` line, named by the run before it
    names = [m.group(1) for m in re.finditer(r"ethtool -i (\S+)", "\n".join(c.commands) + "\n" + c.text)]
    blocks = re.split(r"^(?=driver:)", c.text, flags=re.M)[1:]
    matcher = Matcher()
    ports, verdicts, findings = [], [], []
    for i, block in enumerate(blocks):
        fields = dict(re.findall(r"^([\w-]+):[ \t]*(.*?)\s*$", block, re.M))
        figures = {
            "netdev": names[i] if i < len(names) else "this port",
            "driver": fields.get("driver") or None,
            "version": fields.get("version") or None,
            "firmware": fields.get("firmware-version") or None,
            "bus": fields.get("bus-info") or None,
        }
        ports.append(figures)
        f = matcher.named("link.driver_firmware", figures, f"driver: {figures['driver']}")
        findings.append(f.as_dict())
        verdicts.append(_v("ok", f.title))
    summary: dict[str, object] = dict(ports[0]) if ports else {}
    if len(ports) > 1:
        summary["ports"] = ports
    return {"summary": summary, "verdicts": verdicts, "findings": findings}


# --- docker ---------------------------------------------------------------------------------


def _inspect_rows(text: str) -> list[dict]:
    """Containers of a docker/podman inspect paste: the whole output, a State or a Health object
    asked for with --format (or jq), a paste cut short, or a State without its container."""
    rows = []
    for d in _dicts(text):
        if isinstance(d.get("State"), dict):
            rows.append(d)
        elif _is_state(d):
            rows.append({"State": d})
        elif _is_health(d):
            rows.append({"State": {"Health": d}})
    if rows:
        return rows
    rows = _cut_inspect(text)
    if rows:
        return rows
    state = _loose_state(text)
    return [{"State": state}] if state else []


def _status(state: dict) -> str | None:
    """The container's status; derived from the flags when the paste lacks Status (old Docker,
    a podman window)."""
    if state.get("Status"):
        return str(state["Status"])
    if state.get("Restarting"):
        return "restarting"
    if state.get("Dead"):
        return "dead"
    if state.get("Running") or (isinstance(state.get("Pid"), int) and state["Pid"] > 0):
        return "running"
    if "ExitCode" in state and str(state.get("FinishedAt", "")).startswith("0001-"):
        return "created"
    return "exited" if "ExitCode" in state else None


def _inspected(cmd: str) -> str:
    """The container a `docker inspect [--format ...] NAME` command names, if it names one."""
    try:
        words = shlex.split(cmd.split("|")[0])
    except ValueError:
        return ""
    names, skip = [], False
    for w in words[2:]:
        if skip:
            skip = False
        elif w in ("-f", "--format", "--type"):
            skip = True
        elif not w.startswith("-"):
            names.append(w)
    return names[0] if len(names) == 1 and re.fullmatch(r"[\w.-]{1,128}", names[0]) else ""


def read_docker_inspect(c: Cleaned) -> dict:
    containers = []
    verdicts = []
    rows = _inspect_rows(c.text)
    named = _inspected(_command(c)) if len(rows) == 1 else ""
    for r in rows:
        state = r.get("State") or {}
        health: dict = state["Health"] if isinstance(state.get("Health"), dict) else {}
        name = str(r.get("Name", "")).lstrip("/") or str(r.get("Id", ""))[:12] or named or "this container"
        logs = [x for x in health.get("Log") or [] if isinstance(x, dict)]
        item = {
            "name": name,
            "image": (r.get("Config") or {}).get("Image") if isinstance(r.get("Config"), dict) else None,
            "status": _status(state),
            "exit_code": state.get("ExitCode"),
            "oom_killed": state.get("OOMKilled"),
            "error": state.get("Error") or None,
            "started_at": state.get("StartedAt"),
            "finished_at": state.get("FinishedAt"),
            "health": health.get("Status") or None,
            "failing_streak": health.get("FailingStreak"),
            "last_check_output": "; ".join(str(logs[-1].get("Output") or "").split("\n")).strip("; ")[:300]
            or None
            if logs
            else None,
            "last_check_exit_code": logs[-1].get("ExitCode") if logs else None,
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
        elif item["status"] == "dead":
            verdicts.append(
                _v(
                    "error",
                    f"{name}: dead (Docker could not stop or remove it cleanly): `docker rm -f` it, restart dockerd if it stays",
                )
            )
        elif item["status"] == "restarting":
            verdicts.append(
                _v(
                    "error",
                    f"{name}: restarting in a loop (its process exits, exit code {code}, and the restart policy starts it again): read `docker logs {name}`",
                )
            )
        elif item["status"] == "exited" and code:
            verdicts.append(
                _v(
                    "error",
                    f"{name}: exited with code {code}" + (f": {item['error']}" if item["error"] else ""),
                )
            )
        elif item["status"]:
            verdicts.append(
                _v(
                    "ok",
                    f"{name}: {item['status']}"
                    + (f", exit code {code}" if item["status"] == "exited" else ""),
                )
            )
        # a stopped container keeps its last health status: only a live one's is judged
        live = item["status"] in (None, "running", "restarting")
        if live and (
            item["health"] == "unhealthy"
            or (
                item["health"] == "starting"
                and isinstance(item["failing_streak"], int)
                and item["failing_streak"] > 0
            )
        ):
            last = item["last_check_output"]
            verdicts.append(
                _v(
                    "error" if item["health"] == "unhealthy" else "warn",
                    f"{name}: health check {item['health']}, failing {item['failing_streak']} time(s) in a row"
                    + (f"; last check (exit {item['last_check_exit_code']}): {last}" if last else ""),
                )
            )
        elif item["health"] and not item["status"]:
            verdicts.append(_v("ok", f"{name}: health check {item['health']}"))
    return {"summary": {"containers": containers}, "verdicts": verdicts}


def _ps_rows(text: str) -> list[dict]:
    return [d for d in _dicts(text) if _is_ps_row(d)]


def read_docker_ps_json(c: Cleaned) -> dict:
    containers = []
    for r in _ps_rows(c.text):
        status = str(r.get("Status") or "")
        code = r.get("ExitCode")
        m = re.search(r"Exited \((\d+)\)", status)
        health = (
            r.get("Health")
            or (re.search(r"\((healthy|unhealthy|health: starting)\)", status) or [None, None])[1]
        )
        containers.append(
            {
                "name": r.get("Names") or r.get("Name") or r.get("ID") or r.get("Id"),
                "image": r.get("Image"),
                "service": r.get("Service"),
                "state": r.get("State"),
                "status": r.get("Status"),
                "exit_code": int(m.group(1))
                if m
                else code
                if isinstance(code, int) and str(r.get("State")) == "exited"
                else None,
                "health": health or None,
                "ports": r.get("Ports") if isinstance(r.get("Ports"), str) else None,
            }
        )
    verdicts = []
    for c_ in containers:
        what = c_["image"] or c_["service"]
        text = f"{c_['name']} ({what}): {c_['status'] or c_['state']}"
        level = "error" if c_["exit_code"] or c_["health"] == "unhealthy" else "ok"
        verdicts.append(
            _v(
                level,
                text
                + (
                    f", {c_['health']}"
                    if c_["health"] and str(c_["health"]) not in str(c_["status"] or "")
                    else ""
                ),
            )
        )
    return {"summary": {"containers": containers}, "verdicts": verdicts}


# --- ray ------------------------------------------------------------------------------------


def _ray_table_header(text: str) -> tuple[int, str] | None:
    """The `ray list nodes` table's header line (index, text without a glued backtick)."""
    for i, line in enumerate(text.splitlines()):
        if "NODE_ID" in line and "NODE_IP" in line and "STATE" in line:
            return i, line.lstrip("`")
    return None


def _ray_resources(resources: dict) -> dict:
    memory = resources.get("memory")
    gib = _number(memory)
    if gib is not None and not str(memory).strip().endswith("GiB"):
        gib = gib / 2**30  # bytes (ray get nodes)
    return {
        "gpus": _number(resources.get("GPU")) or 0,
        "memory_gib": round(gib, 3) if gib is not None else None,
    }


def _ray_table(text: str) -> list[dict]:
    found = _ray_table_header(text)
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
        docs = [d for d in _dicts(c.text) if "node_id" in d]
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
        nodes = [_ray_node(d) for d in docs]
    verdicts = []
    for n in nodes:
        if n["state"] == "DEAD":
            verdicts.append(
                _v(
                    "error",
                    f"Ray node {n['node_ip']} is DEAD: its raylet stopped (container ended, OOM, network)"
                    + (f": {n['state_message']}" if n["state_message"] else ""),
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


def _interface(r: dict, cut: bool = False) -> dict:
    addrs = [a for a in r.get("addr_info") or [] if isinstance(a, dict) and a.get("local")]
    return {
        "ifname": r.get("ifname"),
        "state": r.get("operstate"),
        "mtu": r.get("mtu"),
        "mac": r.get("address"),
        "addresses": [f"{a.get('local')}/{a.get('prefixlen')}" for a in addrs],
        "ipv4": [a["local"] for a in addrs if a.get("family") == "inet"],
        "ipv6": [a["local"] for a in addrs if a.get("family") == "inet6"],
        **({"cut": True} if cut else {}),
    }


def _cut_interfaces(text: str, known: set) -> list[dict]:
    """Interfaces of an ip -j output cut short, read field by field up to the next interface."""
    marks = list(re.finditer(r'"ifname":\s*"([^"\n]+)"', text))
    out = []
    for i, m in enumerate(marks):
        if m.group(1) in known:
            continue
        part = text[m.start() : marks[i + 1].start() if i + 1 < len(marks) else len(text)]
        state = re.search(r'"operstate":\s*"(\w+)"', part)
        mtu = re.search(r'"mtu":\s*(\d+)', part)
        mac = re.search(r'"address":\s*"([0-9a-f:]{17})"', part)
        addrs = [
            {"family": "inet6" if ":" in a else "inet", "local": a, "prefixlen": int(n)}
            for a, n in re.findall(r'"local":\s*"([^"\n]+)",\s*"prefixlen":\s*(\d+)', part)
        ]
        r = {
            "ifname": m.group(1),
            "operstate": state.group(1) if state else None,
            "mtu": int(mtu.group(1)) if mtu else None,
            "address": mac.group(1) if mac else None,
            "addr_info": addrs,
        }
        out.append(_interface(r, cut=True))
    return out


def read_ip_json(c: Cleaned) -> dict:
    interfaces = [_interface(r) for r in _dicts(c.text) if "ifname" in r]
    interfaces += _cut_interfaces(c.text, {i["ifname"] for i in interfaces})
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
