"""Terminal escape injection: what a node or any host answering its address sends reaches no
terminal raw. The SSH DISCONNECT text arrives before any host key check, so any host that answers
on a node's address can send it; `status`, `plan` and `images` print it, the log screen shows it."""

from __future__ import annotations

import asyncio
import socket
import struct
import threading

import pytest

from spark_tui.core.node import probes
from spark_tui.core.node.logs import StreamState
from spark_tui.core.node.probes import ContainerState, GpuState, NodeSnapshot
from spark_tui.core.report.status_text import render
from spark_tui.parsers import gpu, netif
from spark_tui.parsers.text import inert
from tests.frozen import FrozenCore, cluster_config

# An OSC title write, a screen clear, an 8-bit CSI (C1) and other C1 controls (NEL, DCS, OSC).
EVIL = "\x1b]0;pwned\x07\x1b[2J\x9b31mred gone\x1b[0m \x85\x90\x9d"
RAW = ("\x1b", "\x07", "\x9b", "\x85", "\x90", "\x9d")

MARK = probes.new_marker()


def raw_controls(text: str) -> list[str]:
    return [c for c in RAW if c in text]


def _disconnect_packet(reason: str) -> bytes:
    """SSH_MSG_DISCONNECT as sent before key exchange: a plain binary packet (RFC 4253 6, 11.1)."""
    text = reason.encode()
    payload = bytes([1]) + struct.pack(">I", 11) + struct.pack(">I", len(text)) + text + struct.pack(">I", 0)
    padding = 8 - (len(payload) + 5) % 8
    padding += 8 if padding < 4 else 0
    return struct.pack(">IB", len(payload) + padding + 1, padding) + payload + bytes(padding)


@pytest.fixture
def hostile_sshd():
    """A host on loopback that answers SSH with a version line, then disconnects with EVIL."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    stop = threading.Event()

    def serve():
        server.settimeout(0.2)
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except TimeoutError:
                continue
            with conn:
                conn.sendall(b"SSH-2.0-OpenSSH_9.6\r\n")
                try:
                    conn.recv(256)  # the client's version line
                except OSError:
                    pass
                conn.sendall(_disconnect_packet(EVIL))

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield server.getsockname()[1]
    stop.set()
    thread.join()
    server.close()


def _cluster_file(tmp_path, port: int) -> str:
    (tmp_path / "known_hosts").write_text("")
    path = tmp_path / "evil.yaml"
    path.write_text(
        "name: evil\nimage: vllm-node:latest\nmodel: Qwen/Qwen3-0.6B\nnodes:\n"
        f"  - {{name: spark-1, host: 127.0.0.1, port: {port}, known_hosts: {tmp_path / 'known_hosts'}, connect_timeout: 3}}\n"
    )
    return str(path)


def test_a_disconnect_text_reaches_status_plan_and_images_inert(hostile_sshd, tmp_path, run_cli):
    cluster = _cluster_file(tmp_path, hostile_sshd)
    code, out, err = run_cli("status", "--cluster", cluster)
    assert code == 1 and "UNREACHABLE" in out and "red gone" in out, out
    assert raw_controls(out + err) == [], repr(out)
    code, out, err = run_cli("plan", "--cluster", cluster)
    assert "red gone" in err and raw_controls(out + err) == [], repr(err)
    code, out, err = run_cli("images", "--cluster", cluster)
    assert "red gone" in err and raw_controls(out + err) == [], repr(err)


def test_every_c1_control_is_made_visible():
    assert inert("".join(chr(c) for c in range(0x80, 0xA0))) == "?" * 32
    assert inert("a\x1b[31mb\x9b2Jc\x9d0;t\x9cd") == "ab?2Jc?0;t?d"


def test_status_prints_the_nodes_fields_inert():
    """Hostname and kernel from the probe; interface, GPU and container fields from the node."""
    output = (
        f"{MARK} hostname\nspark\x1b]0;pwned\x07-1\n"
        f"{MARK} uname\n6.11\x1b[2J-nvidia aarch64\x9b\n"
        f"{MARK} smi\n0, NVIDIA \x1b[5mGB10\x9d, 3, 41, 11.3, [N/A], [N/A]\n"
    )
    host, _, _, gpus = probes.parse_probe(output, None, None, MARK)
    assert raw_controls(host.hostname + host.kernel + host.arch + gpus.gpus[0].name) == []
    config, _ = cluster_config(1)
    iface = netif.Interface("enp1\x1b[2J", "UP\x9b", 9000, ["10.0.0.1/24"], roce_device="roce\x07")
    container = ContainerState(
        "vllm\x1b]0;x\x07", "img\x1b[8m", "sha256:" + "ab" * 32, [], [], "running\x9d", "ok\x1b[0m", "", 0, {}
    )
    snap = NodeSnapshot(
        "spark-1",
        True,
        host=host,
        interfaces={iface.name: iface},
        gpu=GpuState(True, gpus=gpus.gpus, processes=[gpu.GpuProcess(1, "evil\x1b[2J", None)]),
        containers=[container],
    )
    out = render([snap], config)
    assert raw_controls(out) == [] and "; spark-1 aarch64" in out and "GB10" in out, repr(out)
    down = NodeSnapshot("spark-1", False, error="cannot connect: " + EVIL)
    assert raw_controls(render([down], config)) == []


def test_the_log_screens_status_line_shows_a_disconnect_reason_inert():
    from spark_tui.ui.app import SparkApp
    from spark_tui.ui.screens.logs import LogsScreen

    config, reconfigure = cluster_config(2)
    app = SparkApp(FrozenCore(config, reconfigure), live_refresh=False)

    async def flow():
        async with app.run_test(size=(120, 40)) as pilot:
            app.open_logs("spark-1")
            await pilot.pause(0.2)
            screen = app.screen
            assert isinstance(screen, LogsScreen)
            screen.on_log_stream_event(
                type(
                    "M",
                    (),
                    {"prefix": "", "event": StreamState("spark-1", "vllm_node", "disconnected", EVIL, 4)},
                )()
            )
            await pilot.pause(0.1)
            return str(screen.query_one("#sources").render()), app.is_running

    shown, running = asyncio.run(flow())
    assert running and "red gone" in shown and raw_controls(shown) == [], repr(shown)
