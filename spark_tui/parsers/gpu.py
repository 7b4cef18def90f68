"""nvidia-smi parsing (summary table and CSV queries) and GB10 unified memory from /proc/meminfo.

On GB10 the memory fields read `Not Supported` / `[N/A]`: that is normal there, and memory is
reported from /proc/meminfo instead (used = MemTotal - MemAvailable), labelled as unified.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from spark_tui.parsers.text import count

DRIVER = re.compile(
    r"(?:Driver|KMD) Version: (?P<driver>[\d.]+)\s+(?:CUDA|CUDA UMD) Version: (?P<cuda>[\d.]+)"
)
GPU_ROW = re.compile(r"^\|\s+(?P<index>\d+)\s+(?P<name>.+?)\s+(?:On|Off)\s+\|")
STATS_ROW = re.compile(
    r"^\|\s*(?P<fan>\S+)\s+(?:(?P<temp>\d+)C|(?P<temp_err>ERR!|N/A))\s+(?P<perf>P\d+|ERR!)\s+"
    r"(?:(?P<power>\d+)W|(?P<power_err>ERR!|N/A))\s*/\s*(?P<cap>\S+)\s*\|\s*"
    r"(?P<mem>(?P<used>\d+)MiB\s*/\s*(?P<total>\d+)MiB|Not Supported|N/A)\s*\|\s*(?P<util>\d+)%"
)
PROC_ROW = re.compile(
    r"^\|\s+(?P<gpu>\d+)\s+\S+\s+\S+\s+(?P<pid>\d+)\s+(?P<type>[CGM+]+)\s+(?P<name>.+?)\s+(?P<mem>\d+MiB|\d+\.\.\.|N/A)\s*\|"
)


@dataclass
class GpuProcess:
    pid: int
    name: str
    used_mib: int | None  # None: not reported or cut off by nvidia-smi
    partial: bool = False  # nvidia-smi truncated the value (`10707...`)
    gpu: int = 0
    type: str = "C"


@dataclass
class Gpu:
    index: int
    name: str
    temperature_c: float | None = None
    power_w: float | None = None
    power_cap_w: float | None = None
    utilization_pct: float | None = None
    memory_used_mib: float | None = None
    memory_total_mib: float | None = None
    memory_supported: bool = True
    # what nvidia-smi printed as ERR! (fan, temperature, performance state, power draw): its read failed
    unreadable: list[str] = field(default_factory=list)

    @property
    def is_gb10(self) -> bool:
        return "GB10" in self.name


@dataclass
class GpuTable:
    driver: str | None = None
    cuda: str | None = None
    gpus: list[Gpu] = field(default_factory=list)
    processes: list[GpuProcess] = field(default_factory=list)


def parse_table(text: str) -> GpuTable:
    table = GpuTable()
    pending: Gpu | None = None
    in_procs = False
    for line in text.splitlines():
        if "Processes:" in line:
            in_procs = True
            continue
        if table.driver is None:
            m = DRIVER.search(line)
            if m:
                table.driver, table.cuda = m.group("driver"), m.group("cuda")
                continue
        if in_procs:
            m = PROC_ROW.match(line)
            if m:
                mem = m.group("mem")
                partial = mem.endswith("...")
                used = count(mem[:-3]) if mem.endswith("MiB") else None
                table.processes.append(
                    GpuProcess(
                        count(m.group("pid")) or 0,
                        m.group("name"),
                        used,
                        partial,
                        count(m.group("gpu")) or 0,
                        m.group("type"),
                    )
                )
            continue
        m = GPU_ROW.match(line)
        if m and "Name" not in line:
            pending = Gpu(count(m.group("index")) or 0, m.group("name").strip())
            table.gpus.append(pending)
            continue
        m = STATS_ROW.match(line)
        if m and pending is not None:
            pending.temperature_c = float(m.group("temp")) if m.group("temp") else None
            pending.power_w = float(m.group("power")) if m.group("power") else None
            pending.unreadable = [
                what
                for what, cell in (
                    ("fan", m.group("fan")),
                    ("temperature", m.group("temp_err")),
                    ("performance state", m.group("perf")),
                    ("power draw", m.group("power_err")),
                )
                if cell == "ERR!"
            ]
            cap = m.group("cap").rstrip("W")
            pending.power_cap_w = _number(cap) if cap else None
            pending.utilization_pct = float(m.group("util"))
            if m.group("used"):
                pending.memory_used_mib, pending.memory_total_mib = (
                    float(m.group("used")),
                    float(m.group("total")),
                )
            else:
                pending.memory_supported = False
            pending = None
    return table


def _number(cell: str) -> float | None:
    cell = cell.strip()
    if cell in ("[N/A]", "N/A", "[Not Supported]", "Not Supported", "[Not Found]", ""):
        return None
    m = re.match(r"^-?(?:\d+\.?\d*|\.\d+)", cell)  # never a lone "." or "-"
    return float(m.group()) if m else None


DRIVER_FAILED = re.compile(
    r"NVIDIA-SMI has failed[^\n]*|couldn't communicate with the NVIDIA driver[^\n]*|Failed to initialize NVML[^\n]*"
)


def driver_failure(text: str) -> str | None:
    """nvidia-smi's own words when the driver does not answer (module not loaded after a kernel
    update, NVML/driver version mismatch), or None."""
    m = DRIVER_FAILED.search(text)
    return m.group(0).strip() if m else None


COMMAND_LINE = re.compile(r"^\s*(?:\S*[$#>]\s*)?(?:\S*/)?nvidia-smi(?:\.exe)?\s")
UNREADABLE_CELLS = ("[Unknown Error]", "ERR!", "[GPU is lost]")
TEXTUAL = ("name", "uuid", "gpu_uuid", "process_name", "driver_version", "compute_cap", "pci.bus_id")


def _csv_cells(text: str, fields: list[str] | None) -> tuple[list[str], list[list[str]]]:
    """(the field names, each row's cells) of `--query-*` CSV: rows of the query only."""
    # The command line pasted without a prompt (`nvidia-smi.exe --query-gpu=... --format=csv`) is no row.
    lines = [line for line in text.splitlines() if line.strip() and not COMMAND_LINE.match(line)]
    if not lines:
        return fields or [], []
    if fields is None:
        fields = [re.sub(r"\s*\[.*\]$", "", h.strip()) for h in lines[0].split(",")]
        lines = lines[1:]
    rows = [[c.strip() for c in line.split(",", len(fields) - 1)] for line in lines]
    # Not a row of the query (an error message, a banner): never a half-filled GPU.
    return fields, [cells for cells in rows if len(cells) == len(fields)]


def parse_csv(text: str, fields: list[str] | None = None) -> list[dict[str, Any]]:
    """`--query-gpu` / `--query-compute-apps` CSV, with or without header and units.

    Without a header the caller passes the queried field names. Numeric cells become
    floats; `[N/A]`/`Not Supported` become None; other cells stay strings.
    """
    names, rows = _csv_cells(text, fields)
    return [
        {name: cell if name in TEXTUAL else _number(cell) for name, cell in zip(names, cells, strict=True)}
        for cells in rows
    ]


def unreadable_csv_cells(text: str, fields: list[str] | None = None) -> list[tuple[int, str, str]]:
    """(row, field, cell) of every cell nvidia-smi could not read (`[Unknown Error]`, `ERR!`): parse_csv
    reads them as no value, like `[N/A]`, but a sensor that fails to answer is no field a GPU lacks."""
    names, rows = _csv_cells(text, fields)
    return [
        (i, name, cell)
        for i, cells in enumerate(rows)
        for name, cell in zip(names, cells, strict=True)
        if cell in UNREADABLE_CELLS
    ]


@dataclass
class UnifiedMemory:
    total_mib: float
    used_mib: float
    available_mib: float
    source: str = "/proc/meminfo (unified memory: used = MemTotal - MemAvailable)"
    cached_mib: float | None = None  # page cache (Cached): reclaimable, counted as available


def parse_meminfo(text: str) -> UnifiedMemory | None:
    values = {}
    for line in text.splitlines():
        key, _, rest = line.partition(":")
        if key in ("MemTotal", "MemAvailable", "Cached"):
            fields = rest.split()
            kib = count(fields[0]) if fields else None
            if kib is not None:
                values[key] = kib / 1024
    if "MemTotal" not in values or "MemAvailable" not in values:
        return None
    total, avail = values["MemTotal"], values["MemAvailable"]
    return UnifiedMemory(total, total - avail, avail, cached_mib=values.get("Cached"))
