"""The last `check --fabric` figures, kept so the panes can set a link's live traffic beside the
bandwidth last measured on it (`$XDG_STATE_HOME/spark-tui/fabric-<cluster>.json`).

Written whole (a temporary file renamed into place, 0600) after each fabric check; read as input
that may be damaged: anything that is not the expected shape is passed over, never a crash.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Mapping
from pathlib import Path

from spark_tui.paths import state_dir


def record_path(cluster: str, environ: Mapping[str, str] = os.environ) -> Path:
    return Path(state_dir(environ)) / f"fabric-{cluster}.json"


def save(cluster: str, rows: list[dict], environ: Mapping[str, str] = os.environ) -> None:
    """`rows`: one per measured link: sender, receiver, netdev, gbps, tool."""
    path = record_path(cluster, environ)
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        tmp = path.with_suffix(".tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
        with os.fdopen(fd, "w") as fh:
            json.dump({"at": time.time(), "links": rows}, fh)
        os.replace(tmp, path)
    except OSError:
        pass  # a record that cannot be kept costs the panes a hint, never the check


def last_measured(cluster: str, environ: Mapping[str, str] = os.environ) -> dict[tuple[str, str], str]:
    """(node, netdev) -> `measured 111.7 Gb/s by ib_write_bw to spark-2, 3h ago`, from the record."""
    try:
        doc = json.loads(record_path(cluster, environ).read_text())
    except (OSError, ValueError):
        return {}
    if not isinstance(doc, dict) or not isinstance(doc.get("links"), list):
        return {}
    at = doc.get("at")
    age = _age(time.time() - at) if isinstance(at, (int, float)) else "?"
    out: dict[tuple[str, str], str] = {}
    for row in doc["links"]:
        if not isinstance(row, dict):
            continue
        a, b, dev, tool, gbps = (row.get(k) for k in ("sender", "receiver", "netdev", "tool", "gbps"))
        if not (isinstance(a, str) and isinstance(b, str) and isinstance(dev, str) and isinstance(tool, str)):
            continue
        if isinstance(gbps, bool) or not isinstance(gbps, (int, float)):
            continue
        for node, peer in ((a, b), (b, a)):
            out[(node, dev)] = f"measured {gbps:.1f} Gb/s by {tool} with {peer}, {age} ago"
    return out


def _age(seconds: float) -> str:
    for unit, size in (("d", 86400), ("h", 3600), ("min", 60)):
        if seconds >= size:
            return f"{seconds / size:.0f}{unit}"
    return f"{max(seconds, 0):.0f}s"
