"""Per node while serving: heat, power, SM clock and clock-event reasons; bytes/s per data link and
per twin (interface counters, and RDMA port counters where the HCA exposes them); kernel messages
that matter; swap-outs and MemAvailable. One script per node per `metrics_interval`, separate from
the pane's probe so nodes that are not serving pay nothing for it.

The kernel counts here are figures (`status`, `report`, the serving JSON). Naming a kernel fault
while serving, once, for its node, is the kernel log's follow (core/launch/kernel_watch.py: every
line as it comes, by its stamp, through the failure table, dmesg or journalctl), not this poll."""

from __future__ import annotations

import time
from collections import deque
from dataclasses import dataclass, field

from spark_tui.core.node.errors import NodeError, why
from spark_tui.core.node.probes import new_marker, split_sections
from spark_tui.parsers import gpu, node_load
from spark_tui.parsers.netif import twin_of

NEW, OLD = "clocks_event_reasons", "clocks_throttle_reasons"

# Shell builtins for the counters (no fork per file); dmesg's output is filtered on the node, so
# only the lines that matter cross the link. Runs in the node's long-lived `sh`. Interface bytes
# come from /proc/net/dev, which shows the reader's network namespace (a container's or a test
# node's own); /sys/class/net shows the namespace sysfs was mounted in.
# Sections start with a marker random for each call ($1), as the pane's probe does: a kernel line
# or an nvidia-smi error is text anyone on the node can shape, and must never open a section.
LOAD_SCRIPT = f"""
_spt_mark=$1
m() {{ echo "$_spt_mark $1"; }}
_spt_l=$(
if command -v nvidia-smi >/dev/null 2>&1; then
  _spt_o=$(nvidia-smi --query-gpu={",".join(node_load.clock_fields(NEW))} --format=csv,noheader,nounits 2>&1)
  case "$_spt_o" in
    *"is not a valid field"*) m {OLD}; nvidia-smi --query-gpu={",".join(node_load.clock_fields(OLD))} --format=csv,noheader,nounits 2>&1 ;;
    *) m {NEW}; printf '%s\\n' "$_spt_o" ;;
  esac
else m {NEW}; echo NO_NVIDIA_SMI; fi
m net; while read -r l; do case $l in *:*) n=${{l%%:*}}; set -- ${{l#*:}}; echo "$n $1 $9";; esac; done </proc/net/dev
m rdma; for c in /sys/class/infiniband/*/ports/*/counters; do [ -e "$c/port_rcv_data" ] || continue;
  p=${{c%/counters}}; port=${{p##*/}}; dev=${{p%/ports/*}}; dev=${{dev##*/}}; r=; t=;
  read -r r <"$c/port_rcv_data" && read -r t <"$c/port_xmit_data" && echo "$dev/$port $r $t"; done
m vmstat; while read -r k v; do case $k in pswpout) echo "$k $v";; esac; done </proc/vmstat
m meminfo; {{ read -r a; read -r b; read -r c; }} </proc/meminfo; printf '%s\\n' "$a" "$b" "$c"
m kmsg; if _spt_k=$(dmesg 2>&1); then printf '%s\\n' "$_spt_k" | grep -E 'NV_ERR_NO_MEMORY|NVRM: Xid' | tail -n 2000;
  else echo "UNREADABLE $(printf '%s\\n' "$_spt_k" | head -n 1)"; fi
)
printf '%s\\n' "$_spt_l"
"""


@dataclass
class LinkRate:
    name: str  # interface, or HCA device/port
    rx_bps: float | None  # bytes/s; None on the first sample
    tx_bps: float | None
    twin: str | None = None  # the other PCIe half of the same ConnectX-7 port, if any
    rdma: bool = False
    measured: str = ""  # what check --fabric last measured on this link (core/fabric/fabric_record.py)

    @property
    def total_bps(self) -> float | None:
        return None if self.rx_bps is None or self.tx_bps is None else self.rx_bps + self.tx_bps


@dataclass
class NodeLoad:
    node: str
    at: float
    error: str = ""  # the node did not answer the script
    gpus: list[node_load.GpuLoad] = field(default_factory=list)
    gpu_problem: str = ""  # "no nvidia-smi", nvidia-smi's own error line
    links: list[LinkRate] = field(default_factory=list)
    kernel: node_load.KernelLog | None = None
    kernel_new: dict[str, int] = field(default_factory=dict)  # lines since spark-tui began watching
    swap_out_ps: float | None = None  # pages/s (pswpout)
    mem_available_gib: float | None = None

    def line(self) -> str:
        """The pane's serving line: temperature, power, clock, link traffic."""
        if self.error:
            return f"serving: {self.error}"
        parts = []
        for g in self.gpus:
            temp = f"{g.temperature_c:.0f}°C" if g.temperature_c is not None else "temp N/A"
            power = f"{g.power_w:.1f} W" if g.power_w is not None else "power N/A"
            clock = f"SM {g.sm_mhz:.0f} MHz" if g.sm_mhz is not None else "SM N/A"
            slow = f" SLOWED: {', '.join(g.active)}" if g.active else ""
            parts.append(f"{temp} {power} {clock}{slow}")
        if self.gpu_problem:
            parts.append(self.gpu_problem)
        for link in self.links:
            if link.total_bps is not None:
                was = f" ({link.measured})" if link.measured else ""
                parts.append(f"{link.name} {_rate(link.rx_bps)}↓ {_rate(link.tx_bps)}↑{was}")
        return " | ".join(parts) or "no figures yet"


def _rate(bps: float | None) -> str:
    if bps is None:
        return "-"
    for unit, size in (("GB/s", 1e9), ("MB/s", 1e6), ("kB/s", 1e3)):
        if bps >= size:
            return f"{bps / size:.1f} {unit}"
    return f"{bps:.0f} B/s"


def is_data_link(name: str, data_netdev: str | None) -> bool:
    """A ConnectX-7 port half (by its name) or the configured data interface."""
    return name == data_netdev or twin_of(name) is not None


@dataclass
class _Prev:
    at: float
    counters: dict[str, tuple[int, ...]]
    swap: int | None


class NodeLoadTracker:
    """Samples of one node; rates come from consecutive samples."""

    HISTORY = 60

    def __init__(self, node: str, data_netdev: str | None = None):
        self.node, self.data_netdev = node, data_netdev
        self._prev: _Prev | None = None
        self._kernel_base: dict[str, int] | None = None
        self.history: deque[NodeLoad] = deque(maxlen=self.HISTORY)

    async def sample(self, transport) -> NodeLoad:
        mark = new_marker()
        try:
            text = await transport.run_script(LOAD_SCRIPT, (mark,), timeout=20)
        except NodeError as exc:
            return NodeLoad(self.node, time.monotonic(), error=why(exc)[:160])
        except TimeoutError:
            return NodeLoad(self.node, time.monotonic(), error="node load script timed out")
        load = self.read(text, time.monotonic(), mark)
        self.history.append(load)
        return load

    def read(self, text: str, at: float, mark: str) -> NodeLoad:
        sec = split_sections(text, mark)
        load = NodeLoad(self.node, at)
        prefix = OLD if OLD in sec else NEW
        smi = sec.get(prefix, "")
        if "NO_NVIDIA_SMI" in smi:
            load.gpu_problem = "no nvidia-smi on this node"
        else:
            failed = gpu.driver_failure(smi)
            load.gpus, problem = node_load.parse_clocks(smi, prefix)
            if failed or problem:
                load.gpu_problem = f"nvidia-smi: {(failed or problem)[:140]}"
        counters = {f"if {k}": v for k, v in node_load.parse_counters(sec.get("net", ""), 2).items()}
        # RDMA data counters count 4-byte words (port_rcv_data / port_xmit_data, IB spec).
        counters.update(
            {
                f"rdma {k}": (r * 4, t * 4)
                for k, (r, t) in node_load.parse_counters(sec.get("rdma", ""), 2).items()
            }
        )
        swap = node_load.parse_counters(sec.get("vmstat", ""), 1).get("pswpout")
        mem = gpu.parse_meminfo(sec.get("meminfo", ""))
        load.mem_available_gib = mem.available_mib / 1024 if mem else None
        prev = self._prev
        dt = at - prev.at if prev else 0.0
        for key, (rx, tx) in sorted(counters.items()):
            kind, name = key.split(" ", 1)
            if kind == "if" and not is_data_link(name, self.data_netdev):
                continue
            old = prev.counters.get(key) if prev and dt > 0 else None
            rx_bps = tx_bps = None
            if old is not None and rx >= old[0] and tx >= old[1]:
                rx_bps, tx_bps = (rx - old[0]) / dt, (tx - old[1]) / dt
            twin = twin_of(name.split("/")[0]) if kind == "rdma" else twin_of(name)
            load.links.append(LinkRate(name, rx_bps, tx_bps, twin, kind == "rdma"))
        if swap is not None and prev and prev.swap is not None and dt > 0 and swap[0] >= prev.swap:
            load.swap_out_ps = (swap[0] - prev.swap) / dt
        load.kernel = node_load.parse_kmsg(sec.get("kmsg", ""))
        if load.kernel.readable:
            if self._kernel_base is None:
                self._kernel_base = dict(load.kernel.counts)
            load.kernel_new = {
                k: max(0, v - self._kernel_base.get(k, 0)) for k, v in load.kernel.counts.items()
            }
        self._prev = _Prev(at, counters, swap[0] if swap else None)
        return load
