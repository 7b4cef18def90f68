"""What the bandwidth tools print: perftest's `ib_write_bw` report and `iperf3 -J`.

Both come from a node, so both are hostile input: anything unexpected gives None, never raises.
"""

from __future__ import annotations

import json
import re

# perftest's table header, with the unit the figures are in (--report_gbits gives Gb/sec).
_HEADER = re.compile(r"#bytes\s+#iterations\s+BW peak\[(?P<unit>[GM]b/sec|MB/sec)\]\s+BW average\[")
_ROW = re.compile(r"^\s*\d+\s+\d+\s+(?P<peak>\d+(?:\.\d+)?)\s+(?P<avg>\d+(?:\.\d+)?)\b")
_TO_GBPS = {"Gb/sec": 1.0, "Mb/sec": 1e-3, "MB/sec": 8e-3}


def ib_write_bw_gbps(text: str) -> float | None:
    """The average bandwidth (Gb/s) of the last size perftest reports, or None."""
    unit, value = None, None
    for line in text.splitlines():
        head = _HEADER.search(line)
        if head:
            unit = head.group("unit")
            continue
        row = _ROW.match(line) if unit else None
        if row and unit:
            value = float(row.group("avg")) * _TO_GBPS[unit]
    return value


def iperf3_gbps(text: str) -> tuple[float | None, str]:
    """(`iperf3 -J`'s received bits/s in Gb/s, or None; iperf3's own error text, if any)."""
    try:
        doc = json.loads(text)
    except ValueError:
        return None, ""  # not JSON: what the program printed says more
    if not isinstance(doc, dict):
        return None, ""
    error = doc.get("error")
    end = doc.get("end")
    total = end.get("sum_received") if isinstance(end, dict) else None
    bps = total.get("bits_per_second") if isinstance(total, dict) else None
    if isinstance(bps, (int, float)) and not isinstance(bps, bool) and bps >= 0:
        return bps / 1e9, str(error or "")
    return None, str(error or "no received total in iperf3's answer")
