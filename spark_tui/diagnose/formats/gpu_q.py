"""`nvidia-smi -q` (and `-a`), whole or as a window or grep of its sections: every GPU's figures as
values (driver, CUDA, memory, temperatures, power, retired pages and remapped rows, clock-event
reasons) and what an operator must act on."""

from __future__ import annotations

import re

from spark_tui.diagnose.formats.values import integer, number, verdict
from spark_tui.diagnose.paste import Cleaned


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
    "Product Name",
    "Product Brand",
    "Minor Number",
    "Fan Speed",
    "Compute Mode",
    "Encoder Stats",
    "FBC Stats",
    "Conf Compute Protected Memory Usage",
)
GPU_Q_LINE = re.compile(r"^[ \t]+(" + "|".join(GPU_Q_KEYS) + r")[ \t]*(?::|$)", re.M)


def gpu_section_lines(text: str) -> int:
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
        "temperature_c": number(get("Temperature/GPU Current Temp")),
        "slowdown_temp_c": number(get("Temperature/GPU Slowdown Temp")),
        "shutdown_temp_c": number(get("Temperature/GPU Shutdown Temp")),
        "max_operating_temp_c": number(get("Temperature/GPU Max Operating Temp")),
        "power_draw_w": number(
            get(
                "Power Readings/Power Draw",
                "GPU Power Readings/Power Draw",
                "GPU Power Readings/Average Power Draw",
            )
        ),
        "power_limit_w": number(get("Power Readings/Power Limit", "GPU Power Readings/Current Power Limit")),
        "memory_total_mib": number(memory_total),
        "memory_used_mib": number(get("FB Memory Usage/Used")),
        "retired_pages_pending": pending(
            get(
                "Retired Pages/Pending Page Blacklist",
                "Retired Pages/Pending Page Retirement",
                "Pending Page Blacklist",
            )
        ),
        "retired_pages_double_bit": integer(get("Retired Pages/Double Bit ECC")),
        "remapped_rows_pending": pending(get("Remapped Rows/Pending")),
        "remapped_rows_uncorrectable": integer(get("Remapped Rows/Uncorrectable Error")),
        "clock_event_reasons_active": reasons_active(),
    }


def read_gpu_q(c: Cleaned) -> dict:
    top: dict[str, str] = {}
    gpus: list[dict] = []
    # the open sections, each with its indent: a key belongs to those indented less than it (a
    # window that starts deep inside a section, or a paste re-indented as a block, keeps its nesting)
    section: list[tuple[int, str]] = []
    headless = "NVSMI LOG" not in c.text  # a window or a grep: its sections belong to one GPU
    for indent, key, value in _key_values(c.text):
        if GPU_SECTION.fullmatch(key):
            gpus.append({"bus_id": key.split(" ", 1)[1]})
            section = []
            continue
        if headless and indent and not gpus:
            gpus.append({"bus_id": None})
        section = [(i, k) for i, k in section if i < indent]
        if not value:
            section.append((indent, key))
            continue
        name = "/".join([k for _, k in section] + [key])
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
                verdict(
                    "ok",
                    f"{where}: driver {summary['driver_version']}, CUDA {summary['cuda_version']}, {memory}",
                )
            )
        if g["retired_pages_pending"] or g["remapped_rows_pending"]:
            what = "row remapping" if g["remapped_rows_pending"] else "page retirement"
            verdicts.append(
                verdict(
                    "warn",
                    f"{where}: memory {what} pending (uncorrectable ECC errors): reset the GPU (or reboot) to apply it; replace the GPU if it keeps coming back",
                )
            )
        thermal = [r for r in g["clock_event_reasons_active"] if r in THERMAL_REASONS]
        temp, slowdown, max_op = g["temperature_c"], g["slowdown_temp_c"], g["max_operating_temp_c"]
        if thermal:
            verdicts.append(
                verdict(
                    "warn",
                    f"{where}: clocks held down by {', '.join(thermal)}: the GPU is too hot or its power brake is on; check cooling",
                )
            )
        elif temp is not None and (
            (slowdown is not None and temp >= slowdown) or (max_op is not None and temp >= max_op)
        ):
            limit = slowdown if slowdown is not None and temp >= slowdown else max_op
            verdicts.append(
                verdict(
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
            if g["memory_total_mib"] is not None:
                used = g["memory_used_mib"]
                shown.append(
                    f"memory {used:g} MiB used of {g['memory_total_mib']:g} MiB"
                    if used is not None
                    else f"memory {g['memory_total_mib']:g} MiB"
                )
            if g["clock_event_reasons_active"]:
                shown.append("clock-event reasons active: " + ", ".join(g["clock_event_reasons_active"]))
            verdicts.append(
                verdict(
                    "ok", f"{where} (part of nvidia-smi -q): " + ("; ".join(shown) or "no figure to judge")
                )
            )
    return {"summary": summary, "verdicts": verdicts}
