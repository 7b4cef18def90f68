"""Live probes: one remote script per node per refresh, plus Docker SDK calls over the node's tunnel.

The script prints sections separated by marker lines; each section goes to a pure parser.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import ipaddress
import secrets
import time
from dataclasses import dataclass, field

import docker

from spark_tui.core.node import engines
from spark_tui.core.node.errors import EngineError, NodeError, engine_said, why
from spark_tui.core.node.labels import CLUSTER as CLUSTER_LABEL
from spark_tui.parsers import gpu, netif
from spark_tui.parsers.docker_text import looks_like_inference
from spark_tui.parsers.text import count, inert, whole
from spark_tui.secret_names import SECRET_MASK, SECRET_NAME
from spark_tui.settings.model import Detected, Found

GPU_FIELDS = [
    "index",
    "name",
    "utilization.gpu",
    "temperature.gpu",
    "power.draw",
    "memory.used",
    "memory.total",
]
APP_FIELDS = ["pid", "process_name", "used_memory"]
APP_LINE = "|"  # each line of --query-compute-apps output starts with it: no line there is a marker

# Runs in the node's long-lived `sh`; every command tolerates its tool being absent. Costs that
# are paid on every node at every refresh are kept down on purpose:
# - files are read with the shell's own `read` (MemTotal, MemAvailable and Cached are among the
#   first five lines of /proc/meminfo), not with forked tools;
# - arch and kernel cannot change while the session lives, so `uname` runs once per shell (the
#   script runs as a shell function in the session, not in a subshell, so the variable stays);
# - the output is collected and written at once: line by line it became ~20 SSH packets per node,
#   each one paid by sshd and by the client.
# Sections start with a marker line. The marker is random for each call ($1, see snapshot()): a
# GPU process name is chosen by any user of the node and nvidia-smi prints its newlines raw, so a
# fixed marker let a name start a section of its own (`home`, where `~` points). Process lines are
# prefixed besides, and each section is taken once.
PROBE_SCRIPT = f"""
[ -n "$_spt_uname" ] || _spt_uname=$(uname -m -r)
_spt_mark=$1
_spt_nl='
'
m() {{ echo "$_spt_mark $1"; }}
_spt_out=$(
m hostname; read -r h </proc/sys/kernel/hostname && echo "$h"
m uname; echo "$_spt_uname"
m home; echo "$HOME"
m ip; ip -j addr 2>/dev/null
m ibdev; if command -v ibdev2netdev >/dev/null 2>&1; then ibdev2netdev; else
  for p in /sys/class/infiniband/*/device/net/*; do [ -e "$p" ] || continue;
    d=${{p#/sys/class/infiniband/}}; d=${{d%%/*}}; n=${{p##*/}}; s=;
    read -r s </sys/class/infiniband/$d/ports/1/state 2>/dev/null; case "$s" in *ACTIVE*) s=Up;; *) s=Down;; esac;
    echo "$d port 1 ==> $n ($s)"; done; fi
m speed; for f in /sys/class/net/*/speed; do v=; read -r v <"$f" && echo "${{f#/sys/class/net/}} $v"; done
m smi; if command -v nvidia-smi >/dev/null 2>&1; then
  nvidia-smi --query-gpu={",".join(GPU_FIELDS)} --format=csv,noheader,nounits;
  m apps; _a=$(nvidia-smi --query-compute-apps={",".join(APP_FIELDS)} --format=csv,noheader,nounits)
  while [ -n "$_a" ]; do _l=${{_a%%"$_spt_nl"*}}; printf '{APP_LINE}%s\\n' "$_l";
    [ "$_l" = "$_a" ] && break; _a=${{_a#*"$_spt_nl"}}; done; else echo NO_NVIDIA_SMI; fi
m meminfo; {{ read -r a; read -r b; read -r c; read -r d; read -r e; }} </proc/meminfo; printf '%s\\n' "$a" "$b" "$c" "$d" "$e"
m ibdir; [ -d /dev/infiniband ] && echo yes || echo no
)
printf '%s\\n' "$_spt_out"
"""


@dataclass
class GpuState:
    present: bool
    reason: str = ""  # why absent: "no nvidia-smi", "nvidia-smi found no GPU"
    gpus: list[gpu.Gpu] = field(default_factory=list)
    processes: list[gpu.GpuProcess] = field(default_factory=list)
    unified: gpu.UnifiedMemory | None = None  # GB10: memory from /proc/meminfo
    driver_failed: bool = False  # nvidia-smi present but the driver does not answer

    @property
    def is_gb10(self) -> bool:
        return any(g.is_gb10 for g in self.gpus)


@dataclass
class ContainerState:
    name: str
    image_ref: str
    image_id: str
    repo_digests: list[str]
    layers: list[str]
    state: str
    health: str | None
    started_at: str
    restart_count: int
    labels: dict[str, str]
    env: list[str] | None = None
    command: list[str] | None = None
    mounts: list[str] | None = None

    @property
    def cluster(self) -> str | None:
        """The spark-tui cluster that started this container (its label), None for others'."""
        return self.labels.get(CLUSTER_LABEL)

    @property
    def uptime(self) -> str:
        """`up 3h05m`, `up 4m10s`, or "" when not running or the start time is unreadable."""
        if self.state != "running":
            return ""
        try:
            start = dt.datetime.fromisoformat(self.started_at[:26].rstrip("Z") + "+00:00")
        except ValueError:
            return ""
        secs = int((dt.datetime.now(dt.UTC) - start).total_seconds())
        if secs < 0:
            return ""
        return (
            f"up {secs // 3600}h{secs % 3600 // 60:02d}m"
            if secs >= 3600
            else f"up {secs // 60}m{secs % 60:02d}s"
        )

    @property
    def looks_like_inference(self) -> bool:
        """vLLM, Ray or another model server by its name or image (a `vllm_node` left by the
        community launcher is the common case): on unified memory it decides whether a load fits."""
        return looks_like_inference(f"{self.name} {self.image_ref}")


@dataclass
class HostInfo:
    hostname: str = ""
    arch: str = ""
    kernel: str = ""
    docker_version: str | None = None
    storage_driver: str | None = None
    snapshotter: str | None = None
    infiniband_dir: bool = False
    home: str = ""  # the login user's $HOME: where `~` in a volume points on this node
    memory: gpu.UnifiedMemory | None = None  # the host's /proc/meminfo (on GB10 the GPU's memory too)


@dataclass
class NodeSnapshot:
    node: str
    reachable: bool
    error: str | None = None
    docker_error: str | None = None
    rtt_ms: float | None = None
    taken_at: float = 0.0
    host: HostInfo = field(default_factory=HostInfo)
    interfaces: dict[str, netif.Interface] = field(default_factory=dict)
    roce: list[netif.RoceMapping] = field(default_factory=list)
    gpu: GpuState | None = None
    containers: list[ContainerState] = field(default_factory=list)

    @property
    def data_interface(self) -> netif.Interface | None:
        return next((i for i in self.interfaces.values() if i.is_data), None)


def new_marker() -> str:
    """A section marker for one probe call: unguessable by whatever the node prints."""
    return f"@@spark-tui-{secrets.token_hex(8)}@@"


def split_sections(text: str, mark: str) -> dict[str, str]:
    """Sections under `mark` lines; a section seen twice keeps its first body (a second one, and
    what follows it up to the next marker, is dropped)."""
    out: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in text.splitlines():
        if line.startswith(mark + " "):
            name = line[len(mark) + 1 :].strip()
            current = None if name in out else out.setdefault(name, [])
        elif current is not None:
            current.append(line)
    return {k: "\n".join(v) for k, v in out.items()}


def parse_probe(
    text: str, data_ip: str | None, netdev: str | None, mark: str
) -> tuple[HostInfo, dict, list, GpuState]:
    sec = split_sections(text, mark)
    uname = inert(sec.get("uname", "")).split()
    host = HostInfo(
        inert(sec.get("hostname", "").strip()),
        uname[1] if len(uname) > 1 else "",
        uname[0] if uname else "",
    )
    host.infiniband_dir = sec.get("ibdir", "").strip() == "yes"
    host.memory = gpu.parse_meminfo(sec.get("meminfo", ""))
    home = sec.get("home", "").strip()
    host.home = home if home.startswith("/") and "\n" not in home else ""
    interfaces = netif.parse_ip_json(sec.get("ip", "").strip() or "[]")
    for line in sec.get("speed", "").splitlines():
        name, _, speed = line.partition("/speed ")
        mbps = count(speed)  # -1 (no link) and anything not a count are no speed
        if name in interfaces and mbps:
            interfaces[name].speed_mbps = mbps
    roce = netif.parse_ibdev2netdev(sec.get("ibdev", ""))
    netif.attach_roce(interfaces, roce)
    mark_data_interface(interfaces, data_ip, netdev)
    return host, interfaces, roce, parse_gpu_sections(sec)


def mark_data_interface(
    interfaces: dict[str, netif.Interface], data_ip: str | None, netdev: str | None
) -> None:
    """The configured netdev, else the interface holding data_ip."""
    for iface in interfaces.values():
        if netdev:
            iface.is_data = iface.name == netdev
        elif data_ip:
            iface.is_data = any(_ip_of(c) == data_ip for c in iface.ipv4)


def _ip_of(cidr: str) -> str:
    return str(ipaddress.ip_interface(cidr).ip)


def parse_gpu_sections(sec: dict[str, str]) -> GpuState:
    smi = sec.get("smi", "")
    if "NO_NVIDIA_SMI" in smi:
        return GpuState(False, "no nvidia-smi on this node")
    failed = gpu.driver_failure(smi)
    if failed:
        return GpuState(False, f"GPU driver not answering: {failed}", driver_failed=True)
    rows = gpu.parse_csv(smi, GPU_FIELDS)
    if not rows:
        return GpuState(False, "nvidia-smi found no GPU")
    gpus = []
    for r in rows:
        g = gpu.Gpu(
            whole(r["index"]) or 0,
            inert(str(r["name"])),
            r["temperature.gpu"],
            r["power.draw"],
            None,
            r["utilization.gpu"],
            r["memory.used"],
            r["memory.total"],
        )
        g.memory_supported = r["memory.used"] is not None
        gpus.append(g)
    procs = [
        gpu.GpuProcess(
            whole(a["pid"]) or 0,
            str(a["process_name"]),
            whole(a["used_memory"]),
        )
        for a in gpu.parse_csv(_app_lines(sec.get("apps", "")), APP_FIELDS)
    ]
    state = GpuState(True, gpus=gpus, processes=procs)
    if any(not g.memory_supported for g in gpus):
        state.unified = gpu.parse_meminfo(sec.get("meminfo", ""))
    return state


def _app_lines(text: str) -> str:
    """The --query-compute-apps lines the script prefixed, without their prefix."""
    return "\n".join(line[len(APP_LINE) :] for line in text.splitlines() if line.startswith(APP_LINE))


async def snapshot(transport, node_cfg, own_label: str = CLUSTER_LABEL) -> NodeSnapshot:
    """One refresh of one node: the probe script, then Docker over the tunnel. Never raises."""
    snap = NodeSnapshot(node_cfg.name, False, taken_at=time.time())
    mark = new_marker()
    try:
        output = await transport.run_script(
            PROBE_SCRIPT, args=(mark,), timeout=node_cfg["connect_timeout"] + 20
        )
    except NodeError as exc:
        snap.error = why(exc)
        return snap
    except TimeoutError:
        snap.error = "probe timed out"
        return snap
    snap.reachable = True
    snap.rtt_ms = transport.rtt_ms
    try:
        snap.host, snap.interfaces, snap.roce, snap.gpu = parse_probe(
            output, node_cfg["data_ip"], node_cfg["netdev"], mark
        )
    except Exception as exc:  # a parser's bug on odd output names itself, it never ends a refresh
        snap.reachable = False
        snap.error = f"probe output not understood ({not_understood(exc)})"
        return snap
    try:
        url = await transport.docker_url()
        info, containers = await asyncio.to_thread(_docker_state, node_cfg.name, url, own_label)
        snap.host.docker_version = _inert_or_none(info.get("ServerVersion"))
        snap.host.storage_driver = _inert_or_none(info.get("Driver"))
        snap.host.snapshotter = _inert_or_none(
            next((v for k, v in info.get("DriverStatus") or [] if k == "driver-type"), None)
        )
        snap.containers = containers
    except (EngineError, docker.errors.APIError) as exc:
        snap.docker_error = (
            f"docker engine at {node_cfg['docker_socket']} unreachable: {_short(engine_said(exc))}"
        )
    except NodeError as exc:
        snap.docker_error = why(exc)
    except Exception as exc:  # an engine's answer of an unexpected shape (the engine is the node's)
        snap.docker_error = f"docker engine's answer not understood ({not_understood(exc)})"
    return snap


def not_understood(exc: BaseException) -> str:
    """An unexpected exception, named for the operator: its type and first words, inert."""
    return inert(f"{type(exc).__name__}: {exc}"[:160])


def _inert_or_none(value) -> str | None:
    """An engine's free-text field, fit to print (None when absent)."""
    return None if value is None else inert(str(value))


def _short(text: str) -> str:
    for hint in (
        "Connection refused",
        "No such file or directory",
        "Connection aborted",
        "Permission denied",
    ):
        if hint in text:
            return hint
    return inert(text[:160])


def _docker_state(node: str, url: str, own_label: str) -> tuple[dict, list[ContainerState]]:
    # Through the door as `Nodes.docker` goes (a snapshot is taken from a transport, not a Nodes).
    return engines.call(node, url, lambda client: (engines.engine_info(url), _containers(client, own_label)))


def _containers(client: docker.DockerClient, own_label: str) -> list[ContainerState]:
    out = []
    # ignore_removed: a container removed between the list and its inspect (a teardown running
    # alongside) is simply gone, not an engine failure.
    for c in client.containers.list(all=True, ignore_removed=True):
        attrs = c.attrs
        image_ref = attrs["Config"].get("Image", "")
        try:
            img = client.images.get(attrs["Image"]).attrs
        except docker.errors.ImageNotFound:
            img = {}
        own = own_label in (attrs["Config"].get("Labels") or {})
        state = attrs["State"]
        out.append(
            ContainerState(
                name=attrs["Name"].lstrip("/"),
                image_ref=image_ref,
                image_id=attrs["Image"],
                repo_digests=img.get("RepoDigests") or [],
                layers=(img.get("RootFS") or {}).get("Layers") or [],
                state=state.get("Status", ""),
                health=(state.get("Health") or {}).get("Status"),
                started_at=state.get("StartedAt", ""),
                restart_count=attrs.get("RestartCount", 0),
                labels=attrs["Config"].get("Labels") or {},
                env=_masked_env(attrs["Config"].get("Env") or []) if own else None,
                command=(attrs["Config"].get("Entrypoint") or []) + (attrs["Config"].get("Cmd") or [])
                if own
                else None,
                mounts=[f"{m.get('Source')}:{m.get('Destination')}" for m in attrs.get("Mounts", [])]
                if own
                else None,
            )
        )
    return out


def _masked_env(env: list[str]) -> list[str]:
    """`NAME=value` with secret-named values masked: a container may hold a secret the current
    configuration no longer knows (an old token), which the redactor cannot mask by value."""
    out = []
    for item in env:
        name, sep, _ = item.partition("=")
        out.append(f"{name}={SECRET_MASK}" if sep and SECRET_NAME.search(name) else item)
    return out


def _unset(node, key: str) -> bool:
    """Left to detection: no layer above the default set it (a value detected earlier may be
    replaced by what the node shows now)."""
    return node.values[key].source.layer in ("default", "detected")


def detected_values(config, snaps: list[NodeSnapshot]) -> dict[str, Detected]:
    """Per-node values found on the nodes, for settings left unset: the `detected` layer.

    netdev: the interface holding data_ip; hca: its RoCE device and that device's twin;
    home (a fact, not a setting): the login user's $HOME, where `~` in a volume points.
    """
    from spark_tui.parsers.netif import twin_of

    out: dict[str, Detected] = {}
    for snap in snaps:
        node = config.node(snap.node)
        if not snap.reachable:
            continue
        home = netdev = hca = None
        if snap.host.home and not node.local:
            home = Found(snap.host.home, f"$HOME of the login user on {node.name}")
        iface = snap.data_interface
        if iface is not None and _unset(node, "netdev"):
            netdev = Found(iface.name, f"on {node.name}: the interface holding {node['data_ip']}")
        if iface is not None and _unset(node, "hca") and iface.roce_device:
            devices = [iface.roce_device]
            twin = twin_of(iface.roce_device)
            if twin and any(m.device == twin for m in snap.roce):
                devices.append(twin)
            hca = Found(
                devices,
                f"on {node.name}: RoCE device(s) of {iface.name}"
                + (" and its twin" if len(devices) > 1 else ""),
            )
        found = Detected(netdev=netdev, hca=hca, home=home)
        if found:
            out[node.name] = found
    return out
