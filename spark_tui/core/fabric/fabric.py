"""`check --fabric`: the data network measured, not assumed.

For the head and each worker, and for each twin of the data link (a Spark's 200G QSFP port is two
PCIe x4 halves of ~100 Gb/s each, `enp1s0f1np1` and `enP2p1s0f1np1`), one bounded measurement
with the best tool both nodes have: perftest's `ib_write_bw` on the RoCE devices (the real test
for RDMA), else `iperf3`, else a built-in TCP copy (core/fabric/fabric_programs.py). Every row says
which tool measured it, and is judged against what owners of two Sparks measured
(shared field numbers, each band with its source). TCP is judged as TCP: one stream is not the
RDMA rate. Traffic goes only between the data addresses of the cluster's own nodes; every program
is bounded in time and nothing is left listening.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass

from spark_tui.core.fabric import fabric_record
from spark_tui.core.fabric.fabric_programs import TCP_SINK, TCP_SOURCE
from spark_tui.core.node.connection import Result
from spark_tui.core.node.errors import NodeError
from spark_tui.core.node.nodes import Nodes
from spark_tui.core.node.probes import NodeSnapshot
from spark_tui.parsers import netif
from spark_tui.parsers.perftest import ib_write_bw_gbps, iperf3_gbps
from spark_tui.settings.resolve import Config, NodeConfig

# Bands (Gb/s), from what owners of two Sparks measured.
RDMA_HEALTHY = 90.0
DEGRADED = 20.0  # the degraded-initialisation signature is ~13 Gb/s, on TCP and RDMA alike
TCP_GOOD = 40.0
TWIN_RATIO = 0.6  # one twin below this share of the other: traffic is not spread over both
PORT_MBPS = 200_000
SOURCES = {
    "rdma": "healthy: 92.6 / 97.3 Gb/s per logical interface (NVIDIA/dgx-spark-playbooks PR #108), "
    "ib_write_bw 111.7 Gb/s per twin with 4 QPs (eugr docs/NETWORKING.md)",
    "degraded": "a ConnectX-7 that initialised degraded ran ~13 Gb/s, TCP and RDMA, while the link "
    "said 200G (NVIDIA/dgx-spark-playbooks PR #108)",
    "tcp": "one TCP stream is not the RDMA rate; untuned iperf3 reached 96 Gb/s at MTU 1500 "
    "(catharsis.net.au)",
    "twins": "both HCAs vs one: 98 -> 161 Gb/s NCCL busbw (tonyd2wild 2x-DGX-Spark PR #35)",
    "port": "a Spark's QSFP port is 200G; a switch port negotiating 100G halves it",
    "mtu": "MTU 1500 cost a tenth: all_gather 18.94-20.95 vs 23.74 GB/s at 9000 "
    "(dgx-spark-playbooks #25, PR #103)",
}
TOOLS = ("ib_write_bw", "iperf3", "python3", "timeout")
TOOL_NAMES = {"ib_write_bw": "ib_write_bw (perftest)", "iperf3": "iperf3", "tcp": "built-in TCP"}
SETUP = 10.0  # seconds a measurement may take beyond its sending time (connect, start, report)

Add = Callable[..., None]


@dataclass(frozen=True)
class Link:
    """One twin between two nodes: sender's and receiver's interface, addresses and RoCE devices."""

    sender: str
    receiver: str
    netdev: str
    src_ip: str
    dst_ip: str
    src_dev: str | None
    dst_dev: str | None

    @property
    def where(self) -> str:
        return f"{self.sender}->{self.receiver}"


@dataclass
class Measure:
    gbps: float | None
    tool: str
    error: str = ""


async def fabric_checks(config: Config, nodes: Nodes, snaps: dict[str, NodeSnapshot], add: Add) -> None:
    head = config.head
    workers = [n for n in config.nodes if not n.is_head]
    if not workers:
        add("fabric.link", head.name, "skipped", "one node: there is no data link between nodes to measure")
        return
    for node in config.nodes:
        _port_rows(node, snaps.get(node.name), add)
    reachable = [n.name for n in config.nodes if snaps.get(n.name) and snaps[n.name].reachable]
    have = {
        n: () if isinstance(tools, NodeError) else tools
        for n, tools in (await nodes.each(lambda n: _tools(nodes, n), reachable)).items()
    }
    seconds, deadline = config["fabric_seconds"], time.monotonic() + config["fabric_timeout"]
    kept: list[dict] = []
    for worker in workers:
        measured: dict[str, Measure] = {}
        for link in _links(head, worker, snaps, add):
            tool = _choose(config["fabric_tool"], link, have)
            if tool not in TOOL_NAMES:
                add("fabric.link", link.where, "skipped", f"{link.netdev}: {tool}", _INSTALL_HINT)
                continue
            left = deadline - time.monotonic()
            if left < seconds + 1:
                add(
                    "fabric.link",
                    link.where,
                    "skipped",
                    f"{link.netdev}: not measured, fabric_timeout ({config['fabric_timeout']:g} s) reached",
                    "raise fabric_timeout or lower fabric_seconds",
                )
                continue
            m = await _measure(nodes, tool, link, seconds, "timeout" in have.get(link.receiver, ()), left)
            measured[link.netdev] = m
            _judge(link, m, add)
            if m.gbps is not None:
                kept.append(
                    {"sender": link.sender, "receiver": link.receiver, "netdev": link.netdev}
                    | {"gbps": round(m.gbps, 2), "tool": TOOL_NAMES[m.tool]}
                )
        _judge_twins(head.name, worker.name, measured, add)
    if kept:
        fabric_record.save(config["name"], kept)


_INSTALL_HINT = "install perftest (ib_write_bw) or iperf3 on the nodes, or give them python3"


def _port_rows(node: NodeConfig, snap: NodeSnapshot | None, add: Add) -> None:
    """The negotiated speed and MTU of the data interface and its twin, as the node shows them."""
    iface = snap.data_interface if snap and snap.reachable else None
    if snap is None or iface is None:
        return
    twin_name = netif.twin_of(iface.name)
    for it in [iface] + ([snap.interfaces[twin_name]] if twin_name and twin_name in snap.interfaces else []):
        speed = it.speed_mbps
        values = {"interface": it.name, "speed_mbps": speed, "mtu": it.mtu}
        if speed is None:
            add(
                "fabric.port", node.name, "skipped", f"{it.name}: the node shows no link speed", values=values
            )
        elif speed < PORT_MBPS:
            add(
                "fabric.port",
                node.name,
                "warn",
                f"{it.name} negotiated {speed / 1000:g} Gb/s, below a Spark port's 200G ({SOURCES['port']})",
                "check the cable, the switch port's speed setting and `ethtool " + it.name + "`",
                values=values,
            )
        else:
            add("fabric.port", node.name, "pass", f"{it.name} at {speed / 1000:g} Gb/s", values=values)
        if it.mtu is not None and it.mtu < 9000:
            add(
                "fabric.mtu",
                node.name,
                "warn",
                f"{it.name} MTU {it.mtu}: {SOURCES['mtu']}",
                f"ip link set {it.name} mtu 9000 on every node",
                values=values,
            )


def _links(head: NodeConfig, worker: NodeConfig, snaps: dict[str, NodeSnapshot], add: Add) -> list[Link]:
    """The data interface and its twin between head and worker; rows saying why one is not measured."""
    where = f"{head.name}->{worker.name}"
    a, b = snaps.get(head.name), snaps.get(worker.name)
    for snap, name in ((a, head.name), (b, worker.name)):
        if snap is None or not snap.reachable:
            add("fabric.link", where, "skipped", f"{name} unreachable")
            return []
    assert a is not None and b is not None
    data = a.data_interface
    if data is None or b.data_interface is None:
        add("fabric.link", where, "skipped", "no data interface known on both nodes (net.data_interface)")
        return []
    out = []
    twin = netif.twin_of(data.name)
    for netdev in [data.name] + ([twin] if twin else []):
        src, dst = a.interfaces.get(netdev), b.interfaces.get(netdev)
        if netdev != data.name and src is dst is None:
            add(
                "fabric.twin",
                where,
                "skipped",
                f"no twin interface {netdev} on either node: only {data.name} measured "
                f"(a Spark's port is two ~100 Gb/s twins)",
            )
            continue
        missing = [n for n, it in ((head.name, src), (worker.name, dst)) if it is None or not it.ipv4]
        if missing or src is None or dst is None:
            add(
                "fabric.link",
                where,
                "fail" if netdev != data.name else "skipped",
                f"{netdev}: no IPv4 address on {', '.join(missing)}: this twin carries no traffic between them",
                f"give {netdev} an address on both nodes (a twin without one halves the bandwidth)",
            )
            continue
        out.append(
            Link(
                head.name,
                worker.name,
                netdev,
                src.ipv4[0].split("/")[0],
                dst.ipv4[0].split("/")[0],
                src.roce_device if src.roce_state == "Up" else None,
                dst.roce_device if dst.roce_state == "Up" else None,
            )
        )
    return out


async def _tools(nodes: Nodes, name: str) -> tuple[str, ...]:
    script = 'for t in "$@"; do command -v "$t" >/dev/null 2>&1 && echo "$t"; done; :'
    try:
        out = await nodes.transports[name].run_script(script, TOOLS, timeout=15)
    except TimeoutError:
        return ()
    return tuple(t for t in out.split() if t in TOOLS)


def _choose(wanted: str, link: Link, have: dict[str, tuple[str, ...]]) -> str:
    """The tool for this link, or why there is none."""
    on_both = [t for t in TOOLS if all(t in have.get(n, ()) for n in (link.sender, link.receiver))]
    rdma = link.src_dev is not None and link.dst_dev is not None
    usable = {"ib_write_bw": "ib_write_bw" in on_both and rdma, "iperf3": "iperf3" in on_both}
    usable["tcp"] = "python3" in on_both
    if wanted != "auto":
        if usable[wanted]:
            return wanted
        if wanted == "ib_write_bw" and "ib_write_bw" in on_both:
            return "fabric_tool ib_write_bw: no RoCE device Up on both nodes for this interface"
        return f"fabric_tool {wanted}: {_lacking(wanted, link, have)}"
    tool = next((t for t in ("ib_write_bw", "iperf3", "tcp") if usable[t]), None)
    return tool or "no tool: " + _lacking("tcp", link, have) + " (nor ib_write_bw or iperf3)"


def _lacking(tool: str, link: Link, have: dict[str, tuple[str, ...]]) -> str:
    program = "python3" if tool == "tcp" else tool
    nodes = [n for n in (link.sender, link.receiver) if program not in have.get(n, ())]
    return f"no {program} on {', '.join(nodes)}"


async def _measure(
    nodes: Nodes, tool: str, link: Link, seconds: float, timeout: bool, left: float
) -> Measure:
    run = {"ib_write_bw": _perftest, "iperf3": _iperf3, "tcp": _tcp}[tool]
    try:
        return await asyncio.wait_for(run(nodes, link, seconds, timeout), min(left, seconds + SETUP))
    except TimeoutError:
        return Measure(None, tool, f"no result within {min(left, seconds + SETUP):.0f} s")
    except NodeError as exc:
        return Measure(None, tool, str(exc))


def _bounded(argv: list[str], seconds: float, timeout: bool) -> list[str]:
    """A server-side program ends by itself even when its peer never comes (coreutils timeout)."""
    return ["timeout", str(int(seconds + SETUP))] + argv if timeout else argv


async def _pair(
    nodes: Nodes, link: Link, server: list[str], client: list[str]
) -> tuple[Result, Result | None]:
    """Start `server` on the receiver, then `client` on the sender (retried while the server is
    not yet listening); the client's result and the server's, if it ended."""
    srv = asyncio.ensure_future(nodes.transports[link.receiver].run(server, timeout=None))
    try:
        for attempt in range(6):
            await asyncio.sleep(0.3 * (attempt + 1))
            if srv.done():
                return srv.result(), srv.result()
            res = await nodes.transports[link.sender].run(client, timeout=None)
            if not _refused(res):
                break
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.shield(srv), 3)
        return res, srv.result() if srv.done() and not srv.cancelled() else None
    finally:
        if not srv.done():
            srv.cancel()  # its session closes, and `timeout` ends it on the node regardless
            with contextlib.suppress(asyncio.CancelledError, NodeError):
                await srv


def _refused(res: Result) -> bool:
    text = (res.stdout + res.stderr).lower()
    return res.exit_status != 0 and ("refused" in text or "couldn't connect" in text)


async def _perftest(nodes: Nodes, link: Link, seconds: float, timeout: bool) -> Measure:
    port = str(random.randint(20000, 40000))
    common = ["-F", "--report_gbits", "-D", str(max(1, round(seconds))), "-q", "4", "-p", port]
    server = _bounded(["ib_write_bw", "-d", str(link.dst_dev), *common], seconds, timeout)
    client = _bounded(["ib_write_bw", "-d", str(link.src_dev), *common, link.dst_ip], seconds, timeout)
    res, _ = await _pair(nodes, link, server, client)
    gbps = ib_write_bw_gbps(res.stdout)
    return Measure(gbps, "ib_write_bw", "" if gbps is not None else _said(res))


async def _iperf3(nodes: Nodes, link: Link, seconds: float, timeout: bool) -> Measure:
    port = str(random.randint(20000, 40000))
    server = _bounded(["iperf3", "-s", "-1", "-B", link.dst_ip, "-p", port], seconds, timeout)
    client = ["iperf3", "-c", link.dst_ip, "-B", link.src_ip, "-p", port, "-t", str(max(1, round(seconds)))]
    res, _ = await _pair(nodes, link, server, _bounded([*client, "-J"], seconds, timeout))
    gbps, error = iperf3_gbps(res.stdout)
    return Measure(gbps, "iperf3", "" if gbps is not None else (error or _said(res)))


async def _tcp(nodes: Nodes, link: Link, seconds: float, timeout: bool) -> Measure:
    token, check_id = secrets.token_hex(16), f"spark-tui-fabric-{secrets.token_hex(4)}"
    port: asyncio.Future[int] = asyncio.get_running_loop().create_future()

    def line(text: str) -> None:
        parts = text.split()
        if parts[:1] == ["PORT"] and len(parts) == 2 and parts[1].isascii() and parts[1].isdigit():
            if not port.done():
                port.set_result(int(parts[1]))

    sink_argv = ["python3", "-c", TCP_SINK, link.dst_ip, check_id, link.src_ip, f"{seconds:g}"]
    sink = asyncio.ensure_future(nodes.transports[link.receiver].stream(sink_argv, line, token + "\n"))
    try:
        waits: set[asyncio.Future] = {port, sink}
        done, _ = await asyncio.wait(waits, timeout=SETUP, return_when="FIRST_COMPLETED")
        if port not in done:
            why = _said(sink.result()) if sink in done else f"did not listen within {SETUP:.0f} s"
            return Measure(None, "tcp", f"the receiver on {link.receiver}: {why}")
        source_argv = ["python3", "-c", TCP_SOURCE, link.src_ip, f"{seconds:g}", check_id]
        sent = await nodes.transports[link.sender].stream(
            source_argv, lambda _: None, f"{token}\n{link.dst_ip}:{port.result()}\n"
        )
        got = await asyncio.wait_for(sink, SETUP)
    finally:
        if not sink.done():
            sink.cancel()
            with contextlib.suppress(asyncio.CancelledError, NodeError):
                await sink
            await _stop(nodes, (link.sender, link.receiver), check_id)
    return _tcp_result(got, sent)


def _tcp_result(got: Result, sent: Result) -> Measure:
    for text in reversed(got.stderr.splitlines()):
        parts = text.split()
        if parts[:1] == ["RECEIVED"] and len(parts) == 3:
            try:
                n, secs = int(parts[1]), float(parts[2])
            except ValueError:
                break
            if n > 0 and secs > 0:
                return Measure(n * 8 / secs / 1e9, "tcp")
            break
    return Measure(None, "tcp", _said(sent) if sent.exit_status else _said(got))


async def _stop(nodes: Nodes, names: tuple[str, ...], check_id: str) -> None:
    for name in names:
        with contextlib.suppress(NodeError, TimeoutError, OSError):
            await nodes.transports[name].run(["pkill", "-f", check_id], timeout=10)


def _said(res: Result) -> str:
    """What a node program said last (its error, as a rule), shortened."""
    lines = (res.stderr.strip() or res.stdout.strip()).splitlines()
    return (lines[-1][:200] if lines else f"exit {res.exit_status}, no output") or "no output"


def _judge(link: Link, m: Measure, add: Add) -> None:
    tool = TOOL_NAMES[m.tool]
    values = {
        "tool": m.tool,
        "gbps": None if m.gbps is None else round(m.gbps, 2),
        "interface": link.netdev,
        "from": f"{link.sender} {link.src_ip}",
        "to": f"{link.receiver} {link.dst_ip}",
    }
    head = f"{link.netdev} {link.src_ip} -> {link.dst_ip}"
    if m.gbps is None:
        add("fabric.link", link.where, "fail", f"{head}: {tool} gave no figure: {m.error}", values=values)
        return
    figure = f"{head}: {m.gbps:.1f} Gb/s by {tool}"
    rdma = m.tool == "ib_write_bw"
    if m.gbps <= DEGRADED:
        add(
            "fabric.link",
            link.where,
            "fail" if rdma else "warn",
            f"{figure}: at the degraded-initialisation level ({SOURCES['degraded']})"
            + ("" if rdma else f"; {SOURCES['tcp']}: confirm with ib_write_bw"),
            "reboot both nodes (the ConnectX-7 initialises again); if it stays, reseat the cable "
            "and update the firmware",
            values=values,
        )
    elif m.gbps < (RDMA_HEALTHY if rdma else TCP_GOOD):
        band = (
            f"below the healthy {RDMA_HEALTHY:g} Gb/s per twin ({SOURCES['rdma']})"
            if rdma
            else SOURCES["tcp"]
        )
        add("fabric.link", link.where, "warn", f"{figure}: {band}", _SLOW_HINT, values=values)
    else:
        band = SOURCES["rdma"] if rdma else SOURCES["tcp"]
        add("fabric.link", link.where, "pass", f"{figure} ({band})", values=values)


_SLOW_HINT = "check both nodes' MTU (9000), the port speed (ethtool) and that NCCL_IB_HCA lists both twins"


def _judge_twins(head: str, worker: str, measured: dict[str, Measure], add: Add) -> None:
    figures = {k: m.gbps for k, m in measured.items() if m.gbps is not None}
    if len(figures) < 2:
        return
    (low, lo), (high, hi) = (
        sorted(figures.items(), key=lambda kv: kv[1])[0],
        max(figures.items(), key=lambda kv: kv[1]),
    )
    values = {k: round(v, 2) for k, v in figures.items()}
    where = f"{head}->{worker}"
    if hi > 0 and lo < TWIN_RATIO * hi:
        add(
            "fabric.twins",
            where,
            "warn",
            f"{low} carries {lo:.1f} Gb/s against {high}'s {hi:.1f}: one twin does the work, about half "
            f"the bandwidth ({SOURCES['twins']})",
            f"check {low}'s link and address on both nodes",
            values=values,
        )
    else:
        add(
            "fabric.twins",
            where,
            "pass",
            f"both twins carry traffic: {lo:.1f} and {hi:.1f} Gb/s",
            values=values,
        )
