"""RDMA device listings operators paste: `ibstat` and Mellanox's `show_gids`.

On a DGX Spark both ConnectX-7 ports show `Link layer: Ethernet` (RoCE) at Rate 200. NCCL picks
the RoCE v2 GID of each HCA by index (NCCL_IB_GID_INDEX, or its own choice); a GID index that
differs between nodes is a classic cause of NCCL's "unhandled system error".
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from spark_tui.parsers.text import count

CA = re.compile(r"^\s*CA '(?P<ca>[^']+)'")
PORT = re.compile(r"^\s*Port (?P<port>\d+):\s*$")
FIELD = re.compile(
    r"^\s*(?P<key>State|Physical state|Rate|Link layer|CA type|Firmware version):\s*(?P<value>.*?)\s*$"
)
GID_ROW = re.compile(
    r"^(?P<dev>[\w.-]+)\s+(?P<port>\d+)\s+(?P<index>\d+)\s+(?P<gid>[0-9a-fA-F:]{20,})\s+"
    r"(?:(?P<ipv4>\d{1,3}(?:\.\d{1,3}){3})\s+)?(?P<ver>v[12])\s*(?P<netdev>\S+)?\s*$"
)


@dataclass
class IbPort:
    ca: str
    port: int
    ca_type: str = ""
    firmware: str = ""
    state: str = ""
    physical_state: str = ""
    rate: str = ""
    link_layer: str = ""

    @property
    def up(self) -> bool:
        return self.state == "Active" and self.physical_state == "LinkUp"


def parse_ibstat(text: str) -> list[IbPort]:
    ports: list[IbPort] = []
    ca, ca_type, firmware = "", "", ""
    current: IbPort | None = None
    for line in text.splitlines():
        m = CA.match(line)
        if m:
            ca, ca_type, firmware, current = m.group("ca"), "", "", None
            continue
        m = PORT.match(line)
        if m and ca:
            current = IbPort(ca, count(m.group("port")) or 0, ca_type, firmware)
            ports.append(current)
            continue
        m = FIELD.match(line)
        if not m:
            continue
        key, value = m.group("key"), m.group("value")
        if key == "CA type":
            ca_type = value
        elif key == "Firmware version":
            firmware = value
        elif current is not None:
            attr = {
                "State": "state",
                "Physical state": "physical_state",
                "Rate": "rate",
                "Link layer": "link_layer",
            }
            setattr(current, attr[key], value)
    return ports


@dataclass
class Gid:
    device: str
    port: int
    index: int
    gid: str
    ipv4: str
    version: str  # v1 | v2
    netdev: str


def parse_show_gids(text: str) -> list[Gid]:
    out = []
    for line in text.splitlines():
        m = GID_ROW.match(line.strip())
        if m:
            out.append(
                Gid(
                    m.group("dev"),
                    count(m.group("port")) or 0,
                    count(m.group("index")) or 0,
                    m.group("gid").lower(),
                    m.group("ipv4") or "",
                    m.group("ver"),
                    m.group("netdev") or "",
                )
            )
    return out


def roce_v2_indexes(gids: list[Gid]) -> dict[str, int]:
    """Per device, the index of its RoCE v2 GID carrying an IPv4 address (what NCCL should use)."""
    out: dict[str, int] = {}
    for g in gids:
        if g.version == "v2" and g.ipv4 and g.device not in out:
            out[g.device] = g.index
    return out
