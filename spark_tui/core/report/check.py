"""`spark-tui check`: everything a launch depends on, per node, in parallel.

Each result has an id, the node, a status (pass / warn / fail / skipped with reason), a
message and a fix hint. The wizard runs the same `run_checks`, showing results as they come.
"""

from __future__ import annotations

import asyncio
import ipaddress
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

import docker

from spark_tui.core.fabric.fabric import fabric_checks
from spark_tui.core.images.image_checks import image_checks, platform
from spark_tui.core.launch.live import with_detected
from spark_tui.core.models.memory_fit import model_checks
from spark_tui.core.models.model_cache import cache_dir, first_model_config, repo_folder
from spark_tui.core.node.errors import NodeError, engine_said
from spark_tui.core.node.nodes import Nodes
from spark_tui.core.node.probes import NodeSnapshot
from spark_tui.parsers import netif
from spark_tui.parsers.text import count
from spark_tui.settings.kinds import size_bytes
from spark_tui.settings.registry import HEAD_PORT_KEYS
from spark_tui.settings.resolve import Config, NodeConfig

# Prints present|missing, then df's table (its last line is the filesystem holding the cache).
CACHE_SCRIPT = 'case "$1" in "~/"*) p="$HOME/${1#??}";; *) p="$1";; esac; if [ -d "$p/hub/$2" ] || [ -e "$3" ]; then echo present; else echo missing; fi; df -Pk "$p" 2>/dev/null || df -Pk "$HOME"'

HEX_PORT = re.compile(r"[0-9A-Fa-f]{1,4}")  # a port in /proc/net/tcp


CheckStatus = Literal["pass", "warn", "fail", "skipped"]

# Executor solo: checks that only mean something between nodes, skipped with this reason.
SOLO_SKIPPED = ("net.data_interface", "roce.twins", "net.reach")
SOLO_WHY = "executor solo: one node, nothing travels between nodes"


@dataclass
class CheckResult:
    id: str
    node: str
    status: CheckStatus
    message: str
    fix: str = ""
    values: dict[str, object] = field(default_factory=dict)  # the figures, for --json


Emit = Callable[[CheckResult], object]


async def run_checks(
    config: Config, nodes: Nodes, emit: Emit | None = None, fabric: bool = False
) -> list[CheckResult]:
    """Every check; with `fabric`, the data links measured too (core/fabric/fabric.py), after the rest."""
    results: list[CheckResult] = []

    def add(
        id_: str, node: str, status: CheckStatus, message: str, fix: str = "", values: dict | None = None
    ) -> None:
        r = CheckResult(id_, node, status, message, fix, values or {})
        results.append(r)
        if emit:
            emit(r)

    for w in config.warnings:
        add(
            "config.lookalike_env",
            "cluster",
            "warn",
            w,
            "set the spark-tui setting it names, or unset the variable",
        )

    # What the nodes show for values left to detection (netdev, hca, ~), as `up` will use them;
    # the same snapshots then feed the checks.
    config, snaps = await with_detected(config, nodes)
    snap_of = {s.node: s for s in snaps}

    node_of = {n.name: n for n in config.nodes}

    async def node_layers(name: str) -> tuple | None:
        # Each node goes through its own checks and then its reachability probes without waiting
        # for the others: a barrier between the phases would make every phase wait for the slowest.
        snap = snap_of[name]
        layers = await _node_checks(config, node_of[name], snap, nodes, add)
        await _reach(config, node_of[name], snap, nodes, add)
        return layers

    # What the image can run (Ray, native flags, the model's architecture), alongside the nodes.
    # And the model: complete on every node, fitting each node's live memory.
    unusable = {s.node for s in snaps if not s.reachable or s.docker_error}
    usable = [n for n in config.nodes if n.name not in unusable]
    model = asyncio.ensure_future(first_model_config(nodes, usable, config["model"]))
    done, _, _ = await asyncio.gather(
        nodes.each(node_layers),
        image_checks(config, nodes, add, unusable, model),
        model_checks(config, nodes, add, snaps, model),
    )
    # A node's checks report its own failures: a NodeError here is one they did not foresee.
    layers = {n: None if isinstance(found, NodeError) else found for n, found in done.items()}
    _cluster_checks(config, {n: snap_of[n] for n in done}, layers, add)
    if fabric:
        await fabric_checks(config, nodes, snap_of, add)
    return results


async def _node_checks(
    config: Config, node: NodeConfig, snap: NodeSnapshot, nodes: Nodes, add
) -> tuple | None:
    name = node.name
    if not snap.reachable:
        add(
            "ssh.reachable",
            name,
            "fail",
            f"cannot reach {node['host']}: {snap.error}",
            "check the address, sshd, the key (identity_file) and known_hosts",
        )
        for cid in (
            "docker.engine",
            "image.present",
            "container.absent",
            "gpu.present",
            "net.data_interface",
        ):
            add(cid, name, "skipped", "node unreachable")
        return None
    add(
        "ssh.reachable",
        name,
        "pass",
        "local transport" if node.local else f"SSH to {node['host']} authenticated, host key verified",
    )
    if snap.docker_error:
        add(
            "docker.engine",
            name,
            "fail",
            snap.docker_error,
            f"start dockerd on {name} or fix docker_socket / the user's docker group",
        )
        for cid in ("image.present", "container.absent"):
            add(cid, name, "skipped", "docker engine unreachable")
        found_layers = None
    else:
        h = snap.host
        add(
            "docker.engine",
            name,
            "pass",
            f"Docker {h.docker_version}, storage {h.storage_driver}{' / ' + h.snapshotter if h.snapshotter else ''}",
        )
        found_layers = await _image_and_container(config, name, snap, nodes, add)
        _foreign_containers(config, name, snap, add)
    _gpu(node, snap, add)
    _gpu_processes(name, snap, add)
    if config["executor"] == "solo":
        for cid in SOLO_SKIPPED:
            add(cid, name, "skipped", SOLO_WHY)
    else:
        _network(config, node, snap, add)
    await _model_cache(config, node, nodes, add)
    if node.is_head:
        await _ports(config, node, nodes, add)
    return found_layers


async def _image_and_container(
    config: Config, name: str, snap: NodeSnapshot, nodes: Nodes, add
) -> tuple | None:
    image, cname = config["image"], config["container_name"]
    # The snapshot just listed every container on the node: an exact name match needs no second call.
    existing = next((c for c in snap.containers if c.name == cname), None)
    try:
        img = await nodes.docker(name, lambda client: client.images.get(image))
    except docker.errors.ImageNotFound:
        img = None
    except (NodeError, docker.errors.APIError) as exc:
        add("image.present", name, "fail", f"docker API failed: {engine_said(exc)}")
        return None
    layers = None
    if img is None:
        add(
            "image.present",
            name,
            "fail",
            f"image {image} is missing on {name}",
            f"spark-tui sync image --to {name}   (node to node over the data network; or docker pull {image} on {name})",
        )
    else:
        layers = tuple((img.attrs.get("RootFS") or {}).get("Layers") or [])
        digests = img.attrs.get("RepoDigests") or []
        add(
            "image.present",
            name,
            "pass",
            f"{image} present ({img.id[7:19]}{', ' + digests[0] if digests else ''})",
        )
        platform(image, name, img.attrs, snap.host.arch, add)
    if existing is not None:
        add(
            "container.absent",
            name,
            "fail",
            f"a container named {cname} already exists ({existing.state}, image {existing.image_ref}); a launch never reuses it",
            "spark-tui down, or docker rm -f it on that node",
        )
    else:
        add("container.absent", name, "pass", f"no container named {cname}")
    return layers


def _gpu(node: NodeConfig, snap: NodeSnapshot, add) -> None:
    g, setting = snap.gpu, node["gpus"]
    if g is not None and g.driver_failed:
        add(
            "gpu.present",
            node.name,
            "fail",
            f"{g.reason} (on {node.name})",
            "the NVIDIA kernel module is not loaded, often after a kernel update: reboot, or rebuild the driver "
            "for the running kernel (dkms); `nvidia-smi` on the node must answer before a launch",
        )
        return
    if g is None or not g.present:
        reason = g.reason if g else "not probed"
        status: CheckStatus = "fail" if setting == "all" else "warn" if setting == "auto" else "pass"
        add(
            "gpu.present",
            node.name,
            status,
            f"no GPU ({reason}); gpus: {setting}",
            "set gpus: none to run without a GPU" if status != "pass" else "",
        )
        return
    names = ", ".join(c.name for c in g.gpus)
    label = " (GB10: unified memory)" if g.is_gb10 else ""
    if setting == "none":
        add(
            "gpu.present",
            node.name,
            "warn",
            f"{names}{label} present but gpus: none",
            "set gpus: auto to use it",
        )
    else:
        add("gpu.present", node.name, "pass", f"{len(g.gpus)} GPU(s): {names}{label}")


def _foreign_containers(config: Config, name: str, snap: NodeSnapshot, add) -> None:
    """Running containers that are not this cluster's: on unified memory they hold what the load needs."""
    foreign = [c for c in snap.containers if c.state == "running" and c.cluster != config["name"]]
    if not foreign:
        add("containers.foreign", name, "pass", "no other running containers")
        return
    described = [
        f"{c.name} ({c.image_ref}, {c.uptime or 'running'}){' - looks like vLLM/Ray' if c.looks_like_inference else ''}"
        for c in foreign
    ]
    add(
        "containers.foreign",
        name,
        "warn",
        f"{len(foreign)} running container(s) not of this cluster: " + "; ".join(described),
        "they share the node's unified memory with the load: docker stop them if they are not needed",
    )


def _gpu_processes(name: str, snap: NodeSnapshot, add) -> None:
    """Every process holding GPU memory (nvidia-smi --query-compute-apps), with its MiB."""
    g = snap.gpu
    if g is None or not g.present:
        return
    if not g.processes:
        add("gpu.processes", name, "pass", "no process holds GPU memory")
        return
    procs = [f"pid {p.pid} {p.name} {p.used_mib if p.used_mib is not None else '?'} MiB" for p in g.processes]
    add(
        "gpu.processes",
        name,
        "warn",
        f"{len(procs)} process(es) hold GPU memory on {name}: " + ", ".join(procs),
        "on a Spark's unified memory they decide whether the model fits: stop them before the launch",
    )


def _network(config: Config, node: NodeConfig, snap: NodeSnapshot, add) -> None:
    name = node.name
    iface = snap.data_interface
    wanted = node["netdev"] or f"the interface holding {node['data_ip']}"
    if iface is None:
        add(
            "net.data_interface",
            name,
            "fail",
            f"data interface {wanted} not found on {name}",
            f"set netdev for node {name} (interfaces: {', '.join(i for i in snap.interfaces if i != 'lo')})",
        )
        return
    problems = []
    if iface.state != "UP":
        problems.append(f"state {iface.state}")
    if not iface.ipv4:
        problems.append("no IPv4 address")
    if node["data_ip"] and not any(str(ipaddress.ip_interface(c).ip) == node["data_ip"] for c in iface.ipv4):
        problems.append(f"does not hold data_ip {node['data_ip']} (has {', '.join(iface.ipv4) or 'none'})")
    if problems:
        add(
            "net.data_interface",
            name,
            "fail",
            f"{iface.name}: " + "; ".join(problems),
            f"ip link set {iface.name} up / assign the address",
        )
    else:
        add("net.data_interface", name, "pass", f"{iface.name} UP, {', '.join(iface.ipv4)}, MTU {iface.mtu}")
    if iface.mtu is not None and iface.mtu < 9000:
        add(
            "net.mtu",
            name,
            "warn",
            f"{iface.name} MTU {iface.mtu} (below 9000: NCCL over RoCE runs slower)",
            f"ip link set {iface.name} mtu 9000 on every node",
        )
    dev = iface.roce_device
    if dev is None:
        add(
            "roce.device",
            name,
            "warn",
            f"no RoCE device mapped to {iface.name} (ibdev2netdev / sysfs)",
            "NCCL will fall back to TCP sockets",
        )
    elif iface.roce_state != "Up":
        add(
            "roce.device",
            name,
            "fail",
            f"{dev} -> {iface.name} is {iface.roce_state}",
            "check the cable and ibdev2netdev",
        )
    else:
        add("roce.device", name, "pass", f"{dev} -> {iface.name} Up")
    hca = node["hca"]
    if dev is not None:
        twin = netif.twin_of(dev)
        missing = [d for d in (dev, twin) if d and d not in hca]
        if hca and missing:
            add(
                "roce.twins",
                name,
                "warn",
                f"NCCL_IB_HCA ({','.join(hca)}) lacks {', '.join(missing)}: one ConnectX-7 twin only",
                f"hca: [{dev}, {twin}] for full bandwidth",
            )
        elif hca:
            add("roce.twins", name, "pass", f"both twins in NCCL_IB_HCA: {','.join(hca)}")
    if not node["privileged"]:
        if snap.host.infiniband_dir:
            add("roce.dev_infiniband", name, "pass", "/dev/infiniband present (non-privileged mode)")
        else:
            add(
                "roce.dev_infiniband",
                name,
                "fail",
                "/dev/infiniband missing: a non-privileged container would stay Created",
                "load the RDMA drivers, or set privileged: true",
            )


async def _run(nodes: Nodes, node: str, script: str, *args: str) -> str | None:
    """Run `script` with positional args in the node's persistent shell (args quoted, never interpolated)."""
    try:
        return await nodes.transports[node].run_script(script, args, timeout=20)
    except (TimeoutError, NodeError):
        return None


async def _model_cache(config: Config, node: NodeConfig, nodes: Nodes, add) -> None:
    model = config["model"]
    cache = cache_dir(node)  # as the node resolves it: `~` is the node's home, not this machine's
    out = await _run(nodes, node.name, CACHE_SCRIPT, cache, repo_folder(model or ""), model or "")
    lines = (out or "").strip().splitlines()
    fields = lines[-1].split() if len(lines) > 1 else []
    free_kib = count(fields[3]) if len(fields) >= 4 else None
    if out is None or free_kib is None:
        add("disk.free", node.name, "skipped", "could not look at the cache's filesystem")
    else:
        want = node["min_free_disk"]
        text = f"{free_kib / 1024**2:.0f} GiB free on the filesystem of {cache}"
        if free_kib * 1024 < size_bytes(want):
            add(
                "disk.free",
                node.name,
                "warn",
                f"{text} on {node.name}, below min_free_disk {want}",
                "free space there (docker image prune, old models) or set min_free_disk",
            )
        else:
            add("disk.free", node.name, "pass", text)
    if not model:
        add("model.cached", node.name, "skipped", "no model set")
    elif out is None:
        add("model.cached", node.name, "skipped", "could not look at the cache")
    elif lines[0] == "present":
        add("model.cached", node.name, "pass", f"{model} in {cache}")
    else:
        add(
            "model.cached",
            node.name,
            "warn",
            f"{model} not in {cache} on {node.name}",
            f"download it there first (huggingface-cli download {model})",
        )


# Who listens on a port: the process (ss -p, as far as this user may see it) and, when that
# process is in a container, the container (its cgroup names the container ID).
HOLDER_SCRIPT = r"""
ss -Hltnp "sport = :$1" 2>/dev/null | sed -n 's/.*users:((\("[^"]*"\),pid=\([0-9]*\).*/\1 \2/p' | head -n 1 | {
  read -r name pid || exit 0
  cid=$(grep -o '[0-9a-f]\{64\}' "/proc/$pid/cgroup" 2>/dev/null | head -n 1)
  printf 'PROC %s %s\n' "$name" "$pid"
  [ -n "$cid" ] && docker ps --no-trunc --filter "id=$cid" --format 'CONTAINER {{.Names}} {{.Image}}' 2>/dev/null
}
"""


async def _port_holder(nodes: Nodes, node: str, port: int) -> str:
    """`gcs_server (pid 123) in container rayhead (image X)`, or "" when the node does not say."""
    out = await _run(nodes, node, HOLDER_SCRIPT, str(port))
    proc = container = ""
    for line in (out or "").splitlines():
        words = line.split()
        if words[:1] == ["PROC"] and len(words) == 3:
            proc = f"{words[1].strip(chr(34))} (pid {words[2]})"
        elif words[:1] == ["CONTAINER"] and len(words) == 3:
            container = f" in container {words[1]} (image {words[2]})"
    return f"held by {proc}{container}" if proc else ""


async def _ports(config: Config, node: NodeConfig, nodes: Nodes, add) -> None:
    out = await _run(nodes, node.name, "cat /proc/net/tcp /proc/net/tcp6 2>/dev/null")
    listening = set()
    for line in (out or "").splitlines()[1:]:
        parts = line.split()
        if len(parts) > 3 and parts[3] == "0A" and ":" in parts[1]:
            port = parts[1].rsplit(":", 1)[1]
            if HEX_PORT.fullmatch(port):  # the node's text: never int() on what is not a port
                listening.add(int(port, 16))
    for key in sorted(HEAD_PORT_KEYS):  # master_port, vllm_port: the order check has always shown
        port = config[key]
        if key == "master_port" and config["executor"] == "solo":
            add(f"port.{key}", node.name, "skipped", f"{SOLO_WHY}: no Ray GCS, no rendezvous port")
        elif out is None:
            add(f"port.{key}", node.name, "skipped", "could not read /proc/net/tcp")
        elif port in listening:
            holder = await _port_holder(nodes, node.name, port)
            add(
                f"port.{key}",
                node.name,
                "fail",
                f"{key} {port} is already in use on the head {node.name}" + (f": {holder}" if holder else ""),
                f"stop what listens there or set {key}",
            )
        else:
            add(f"port.{key}", node.name, "pass", f"{key} {port} free")


def _cluster_checks(
    config: Config, snaps: dict[str, NodeSnapshot], layers: dict[str, tuple | None], add
) -> None:
    present = {n: found for n, found in layers.items() if found is not None}
    if len(set(present.values())) > 1:
        head = config.head.name
        differ = [
            n for n, found in present.items() if found != present.get(head, next(iter(present.values())))
        ]
        add(
            "image.same",
            "cluster",
            "fail",
            f"{config['image']} is a different image on {', '.join(differ)} than on {head} (layer digests differ)",
            f"spark-tui sync image --from {head}   (copies it to those nodes over the data network)",
        )
    elif len(present) == len(config.nodes) and present:
        add("image.same", "cluster", "pass", "same image layers on every node")
    datas = {
        n: s.data_interface
        for n, s in snaps.items()
        if s.reachable and s.data_interface and s.data_interface.ipv4 and config["executor"] != "solo"
    }
    nets = {n: ipaddress.ip_interface(i.ipv4[0]).network for n, i in datas.items()}
    if len(set(nets.values())) > 1:
        add(
            "net.subnet",
            "cluster",
            "warn",
            "data addresses in different subnets: " + ", ".join(f"{n} {net}" for n, net in nets.items()),
            "the community layout uses one subnet per cable; check it is what you meant",
        )
    elif nets:
        add("net.subnet", "cluster", "pass", f"data addresses in {next(iter(nets.values()))}")
    mtus = {n: i.mtu for n, i in datas.items()}
    if len(set(mtus.values())) > 1:
        add(
            "net.mtu_equal",
            "cluster",
            "fail",
            "MTU differs: " + ", ".join(f"{n} {m}" for n, m in mtus.items()),
            "set the same MTU (9000) everywhere",
        )
    gpus = sum(len(s.gpu.gpus) for s in snaps.values() if s.gpu and s.gpu.present)
    want = config["tensor_parallel_size"] * config["pipeline_parallel_size"]
    if all(s.reachable for s in snaps.values()):
        if want == gpus:
            add("parallel.size", "cluster", "pass", f"tensor x pipeline = {want} = GPUs across the nodes")
        else:
            add(
                "parallel.size",
                "cluster",
                "fail",
                f"tensor x pipeline = {want}, but the nodes have {gpus} GPU(s)",
                "set tensor_parallel_size / pipeline_parallel_size",
            )


async def _reach(config: Config, node: NodeConfig, snap: NodeSnapshot, nodes: Nodes, add) -> None:
    if not snap.reachable:
        return
    others = {o["data_ip"]: o for o in config.nodes if o.name != node.name and o["data_ip"]}
    if not others:
        return
    ok = await nodes.reaches(node.name, *others) or set()
    for ip, other in others.items():
        if ip in ok:
            add("net.reach", node.name, "pass", f"reaches {other.name} at {ip}")
        else:
            add(
                "net.reach",
                node.name,
                "fail",
                f"cannot reach {other.name} at {ip} over the data network",
                "check cabling, addresses and routes",
            )
