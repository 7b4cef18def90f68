"""`ip -j addr` / `ip -j link` (one line or pretty, cut short too): interfaces, state, MTU and
addresses as values."""

from __future__ import annotations

import re

from spark_tui.diagnose.formats.values import json_objects, verdict
from spark_tui.diagnose.paste import Cleaned


def _interface(r: dict, cut: bool = False) -> dict:
    addrs = [a for a in r.get("addr_info") or [] if isinstance(a, dict) and a.get("local")]
    return {
        "ifname": r.get("ifname"),
        "state": r.get("operstate"),
        "mtu": r.get("mtu"),
        "mac": r.get("address"),
        "addresses": [f"{a.get('local')}/{a.get('prefixlen')}" for a in addrs],
        "ipv4": [a["local"] for a in addrs if a.get("family") == "inet"],
        "ipv6": [a["local"] for a in addrs if a.get("family") == "inet6"],
        **({"cut": True} if cut else {}),
    }


def _cut_interfaces(text: str, known: set) -> list[dict]:
    """Interfaces of an ip -j output cut short, read field by field up to the next interface."""
    marks = list(re.finditer(r'"ifname":\s*"([^"\n]+)"', text))
    out = []
    for i, m in enumerate(marks):
        if m.group(1) in known:
            continue
        part = text[m.start() : marks[i + 1].start() if i + 1 < len(marks) else len(text)]
        state = re.search(r'"operstate":\s*"(\w+)"', part)
        mtu = re.search(r'"mtu":\s*(\d+)', part)
        mac = re.search(r'"address":\s*"([0-9a-f:]{17})"', part)
        addrs = [
            {"family": "inet6" if ":" in a else "inet", "local": a, "prefixlen": int(n)}
            for a, n in re.findall(r'"local":\s*"([^"\n]+)",\s*"prefixlen":\s*(\d+)', part)
        ]
        r = {
            "ifname": m.group(1),
            "operstate": state.group(1) if state else None,
            "mtu": int(mtu.group(1)) if mtu else None,
            "address": mac.group(1) if mac else None,
            "addr_info": addrs,
        }
        out.append(_interface(r, cut=True))
    return out


def read_ip_json(c: Cleaned) -> dict:
    interfaces = [_interface(r) for r in json_objects(c.text) if "ifname" in r]
    interfaces += _cut_interfaces(c.text, {i["ifname"] for i in interfaces})
    verdicts = [
        verdict(
            "warn" if i["state"] == "DOWN" else "ok",
            f"{i['ifname']}: {i['state']}, mtu {i['mtu']}, {', '.join(map(str, i['addresses'] or [])) or 'no address'}",
        )
        for i in interfaces
    ]
    return {"summary": {"interfaces": interfaces}, "verdicts": verdicts}
