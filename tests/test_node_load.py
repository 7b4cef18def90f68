"""A node while serving: nvidia-smi's clocks and reasons (GB10 shape, old and new field names),
kernel lines, link counters turned into rates. Parsing tests here; the namespace cluster test runs
the real script against the stand-in nvidia-smi and the namespace interfaces' own counters."""

from __future__ import annotations

import asyncio

import pytest

from spark_tui.core.node.probes import new_marker
from spark_tui.core.serving.node_load import LOAD_SCRIPT, NEW, OLD, NodeLoadTracker
from spark_tui.parsers import node_load

# The real GB10 line from NVIDIA/open-gpu-kernel-modules#1358 and vllm#56824, as dmesg prints it.
NO_MEMORY = (
    "[ 8127.441905] NVRM: nvCheckOkFailedNoLog: Check failed: Out of memory [NV_ERR_NO_MEMORY] (0x00000051) "
    "returned from _memdescAllocInternal(pMemDesc) @ mem_desc.c:1359"
)
XID = "[ 9012.004211] NVRM: Xid (PCI:000f:01:00): 79, pid=4412, name=python3, GPU has fallen off the bus."


MARK = new_marker()


def probe_text(
    smi: str, prefix: str = NEW, net: str = "", rdma: str = "", kmsg: str = "", swap: int = 0
) -> str:
    return "\n".join(
        [
            f"{MARK} {prefix}",
            smi,
            f"{MARK} net",
            net,
            f"{MARK} rdma",
            rdma,
            f"{MARK} vmstat",
            f"pswpout {swap}",
            f"{MARK} meminfo",
            "MemTotal:       128501256 kB",
            "MemFree:         1000000 kB",
            "MemAvailable:   20971520 kB",
            f"{MARK} kmsg",
            kmsg,
        ]
    )


GB10_ROW = "0, 71, 38.52, 1113, 0x0000000000000020, Not Active, Not Active, Not Active, [N/A], Active"


def test_gb10_row_names_the_active_reason_and_keeps_na_as_na():
    gpus, problem = node_load.parse_clocks(GB10_ROW, NEW)
    assert problem == ""
    g = gpus[0]
    assert (g.temperature_c, g.power_w, g.sm_mhz) == (71.0, 38.52, 1113.0)
    assert g.active == ["thermal slowdown"]
    assert g.unsupported == ["clocks_event_reasons.hw_power_brake_slowdown"]


def test_a_row_of_na_is_not_zero():
    gpus, _ = node_load.parse_clocks("0, [N/A], [N/A], [N/A], [N/A], [N/A], [N/A], [N/A], [N/A], [N/A]", OLD)
    assert (gpus[0].temperature_c, gpus[0].power_w, gpus[0].sm_mhz) == (None, None, None)
    assert gpus[0].active == []


def test_old_driver_fields_and_the_error_line():
    tracker = NodeLoadTracker("spark-1")
    load = tracker.read(probe_text(GB10_ROW.replace("Active", "Active"), prefix=OLD), 0.0, MARK)
    assert load.gpus[0].reasons_field == OLD and load.gpus[0].active == ["thermal slowdown"]
    bad = tracker.read(
        probe_text('Field "clocks_event_reasons.active" is not a valid field to query.'), 1.0, MARK
    )
    assert bad.gpus == [] and bad.gpu_problem.startswith('nvidia-smi: Field "clocks_event_reasons.active"')
    none = tracker.read(probe_text("NO_NVIDIA_SMI"), 2.0, MARK)
    assert none.gpu_problem == "no nvidia-smi on this node"


def test_kernel_lines_are_counted_from_when_watching_began():
    tracker = NodeLoadTracker("spark-1")
    first = tracker.read(probe_text(GB10_ROW, kmsg=NO_MEMORY), 0.0, MARK)
    assert first.kernel.counts == {"NV_ERR_NO_MEMORY": 1, "Xid": 0} and first.kernel_new == {
        "NV_ERR_NO_MEMORY": 0,
        "Xid": 0,
    }
    later = tracker.read(probe_text(GB10_ROW, kmsg="\n".join([NO_MEMORY, NO_MEMORY, XID])), 5.0, MARK)
    assert later.kernel_new == {"NV_ERR_NO_MEMORY": 1, "Xid": 1}
    assert later.kernel.last == XID[:200]
    locked = tracker.read(
        probe_text(GB10_ROW, kmsg="UNREADABLE dmesg: read kernel buffer failed: Operation not permitted"),
        6.0,
        MARK,
    )
    assert (
        not locked.kernel.readable
        and locked.kernel.reason == "dmesg: read kernel buffer failed: Operation not permitted"
    )


def test_link_rates_per_twin_and_rdma_words():
    tracker = NodeLoadTracker("spark-1", "enp1s0f1np1")
    net0 = "lo 5 5\nenp1s0f1np1 1000 2000\nenP2p1s0f1np1 1000 2000\nwlP9s9 10 10"
    net1 = "lo 9 9\nenp1s0f1np1 5001000 2000\nenP2p1s0f1np1 1000 2000\nwlP9s9 99 99"
    tracker.read(probe_text(GB10_ROW, net=net0, rdma="rocep1s0f1/1 100 100", swap=10), 0.0, MARK)
    load = tracker.read(probe_text(GB10_ROW, net=net1, rdma="rocep1s0f1/1 250100 100", swap=510), 5.0, MARK)
    by = {link.name: link for link in load.links}
    assert set(by) == {"enp1s0f1np1", "enP2p1s0f1np1", "rocep1s0f1/1"}  # lo and Wi-Fi are not data links
    assert (
        by["enp1s0f1np1"].rx_bps == pytest.approx(1_000_000.0) and by["enp1s0f1np1"].twin == "enP2p1s0f1np1"
    )
    assert by["enP2p1s0f1np1"].total_bps == 0.0
    assert by["rocep1s0f1/1"].rx_bps == pytest.approx(250_000 * 4 / 5) and by["rocep1s0f1/1"].rdma
    assert load.swap_out_ps == pytest.approx(100.0)
    assert load.mem_available_gib == pytest.approx(20.0)
    assert "SLOWED: thermal slowdown" in load.line() and "enp1s0f1np1 1.0 MB/s↓" in load.line()


@pytest.mark.cluster
def test_load_script_on_a_namespace_node(cluster, tmp_path):
    """The script in a node's own shell: the stand-in nvidia-smi's GB10 row, then its throttle knob and
    an old driver; the namespace interface's real counters move when traffic crosses it."""
    from spark_tui.core.node.nodes import Nodes
    from spark_tui.settings.resolve import Inputs, resolve
    from tests.cluster import cluster as tc

    node = cluster.nodes[0]
    config = resolve(
        Inputs(cluster_file=cluster.cluster_file(2, tmp_path / "c.yaml"), user_config="", environ={})
    )
    nodes = Nodes(config)

    async def run():
        tracker = NodeLoadTracker(config.nodes[0].name, "enp1s0f1np1")
        transport = nodes.transports[config.nodes[0].name]
        first = await tracker.sample(transport)
        tc.run(cluster.nodes[1].nsenter("ping", "-c", "20", "-i", "0.01", "-s", "8000", "-q", node.ip))
        cluster.set_standin(node, SMI_THROTTLE="power")
        second = await tracker.sample(transport)
        cluster.set_standin(node, SMI_THROTTLE="", SMI_OLD_DRIVER="1")
        third = await tracker.sample(transport)
        cluster.set_standin(node, SMI_OLD_DRIVER="")
        await nodes.close()
        return first, second, third

    first, second, third = asyncio.run(run())
    assert first.gpus[0].sm_mhz == 2405.0 and first.gpus[0].active == [] and first.kernel is not None
    assert second.gpus[0].active == ["power cap"] and second.gpus[0].sm_mhz == 1113.0
    link = next(x for x in second.links if x.name == "enp1s0f1np1")
    assert link.rx_bps and link.rx_bps > 20 * 8000 / 60  # the pings arrived, counted by the kernel
    assert third.gpus[0].reasons_field == OLD  # asked again with clocks_throttle_reasons
    assert LOAD_SCRIPT.count("nvidia-smi --query-gpu") == 2
