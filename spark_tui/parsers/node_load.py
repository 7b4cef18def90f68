"""What a node does while serving, as its own programs print it: nvidia-smi's heat, power, SM clock
and clock-event reasons; interface and RDMA port byte counters; kernel messages that matter; swap.

nvidia-smi renamed `clocks_throttle_reasons.*` to `clocks_event_reasons.*` (drivers from 535 on
accept both; older ones only the first): the probe asks with the new names and, when nvidia-smi
says a field "is not a valid field to query", again with the old ones. GB10 prints `[N/A]` for
fields it does not support; those stay None and are shown as N/A, never as 0.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

# Reasons worth naming (idle, application clocks and sync boost are normal, not slowdowns).
REASONS = {
    "sw_power_cap": "power cap",
    "hw_slowdown": "HW slowdown",
    "hw_thermal_slowdown": "HW thermal slowdown",
    "hw_power_brake_slowdown": "HW power brake",
    "sw_thermal_slowdown": "thermal slowdown",
}
BASE_FIELDS = ["index", "temperature.gpu", "power.draw", "clocks.sm"]


def clock_fields(prefix: str) -> list[str]:
    """The query, with `clocks_event_reasons` (new) or `clocks_throttle_reasons` (old)."""
    return BASE_FIELDS + [f"{prefix}.active"] + [f"{prefix}.{r}" for r in REASONS]


NOT_VALID = re.compile(r'Field "(?P<field>[^"]+)" is not a valid field to query')
NA = ("[N/A]", "N/A", "[Not Supported]", "Not Supported", "")


@dataclass
class GpuLoad:
    index: int
    temperature_c: float | None
    power_w: float | None
    sm_mhz: float | None
    active: list[str] = field(default_factory=list)  # named reasons now slowing the clocks
    unsupported: list[str] = field(default_factory=list)  # fields nvidia-smi printed as [N/A]
    reasons_field: str = ""  # clocks_event_reasons or clocks_throttle_reasons, as asked


def _num(cell: str) -> float | None:
    cell = cell.strip()
    if cell in NA:
        return None
    m = re.match(r"^-?\d+(?:\.\d+)?", cell)
    return float(m.group()) if m else None


def parse_clocks(text: str, prefix: str) -> tuple[list[GpuLoad], str]:
    """Rows of the query (noheader, nounits) and an error line ('' when none)."""
    fields = clock_fields(prefix)
    out: list[GpuLoad] = []
    problem = ""
    for line in text.splitlines():
        if not line.strip():
            continue
        cells = [c.strip() for c in line.split(",")]
        if len(cells) != len(fields):
            problem = problem or line.strip()[:160]
            continue
        row = dict(zip(fields, cells, strict=True))
        idx = _num(row["index"])
        gpu = GpuLoad(
            int(idx) if idx is not None else len(out),
            _num(row["temperature.gpu"]),
            _num(row["power.draw"]),
            _num(row["clocks.sm"]),
            reasons_field=prefix,
        )
        gpu.unsupported = [f for f in fields[1:] if row[f] in NA]
        gpu.active = [label for r, label in REASONS.items() if row[f"{prefix}.{r}"] == "Active"]
        out.append(gpu)
    return out, ("" if out else problem)


@dataclass
class KernelLog:
    readable: bool
    reason: str = ""  # why not readable, in dmesg's own words
    counts: dict[str, int] = field(default_factory=dict)  # "NV_ERR_NO_MEMORY" / "Xid" -> lines
    last: str = ""  # the newest such line


KERNEL_PATTERNS = {"NV_ERR_NO_MEMORY": "NV_ERR_NO_MEMORY", "Xid": "NVRM: Xid"}


def parse_kmsg(text: str) -> KernelLog:
    """The probe's `kmsg` section: `UNREADABLE <dmesg's message>` or the matching lines."""
    lines = [x for x in text.splitlines() if x.strip()]
    if lines and lines[0].startswith("UNREADABLE"):
        reason = lines[0][len("UNREADABLE") :].strip() or "dmesg failed without a message"
        return KernelLog(False, reason[:160])
    log = KernelLog(True, counts=dict.fromkeys(KERNEL_PATTERNS, 0))
    for line in lines:
        for name, pattern in KERNEL_PATTERNS.items():
            if pattern in line:
                log.counts[name] += 1
                log.last = line.strip()[:200]
    return log


def parse_counters(text: str, fields: int) -> dict[str, tuple[int, ...]]:
    """`name v1 v2 …` lines (interface or `dev port` keys) with integer values."""
    out: dict[str, tuple[int, ...]] = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) < fields + 1:
            continue
        key, values = " ".join(parts[:-fields]), parts[-fields:]
        if all(v.isdigit() for v in values):
            out[key] = tuple(int(v) for v in values)
    return out
