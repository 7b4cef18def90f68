"""Interface listings: `ip addr` (full, -o, -br), `ip -br link`, `ibdev2netdev`, `ibv_devinfo`, `ip -j addr`."""

from __future__ import annotations

import ipaddress
import json
import re
from dataclasses import dataclass, field

from spark_tui.parsers.text import count


@dataclass
class Interface:
    name: str
    state: str = "UNKNOWN"
    mtu: int | None = None
    ipv4: list[str] = field(default_factory=list)  # CIDR
    ipv6: list[str] = field(default_factory=list)
    altnames: list[str] = field(default_factory=list)
    speed_mbps: int | None = None
    roce_device: str | None = None
    roce_state: str | None = None
    is_data: bool = False


@dataclass
class RoceMapping:
    device: str
    port: int
    netdev: str
    state: str  # Up / Down


@dataclass
class HcaPort:
    device: str
    port: int
    state: str  # PORT_ACTIVE / PORT_DOWN
    active_mtu: int | None
    link_layer: str | None


LINK_HEAD = re.compile(
    r"^(?P<idx>\d+): (?P<name>[^:@\s]+)(?:@\S+)?: <(?P<flags>[^>]*)> mtu (?P<mtu>\d+)(?:.* state (?P<state>\S+))?"
)
ADDR_LINE = re.compile(r"^\s+(?P<fam>inet6?) (?P<cidr>\S+)")
ONE_LINE = re.compile(r"^(?P<idx>\d+): (?P<name>\S+?)\s+(?P<fam>inet6?) (?P<cidr>\S+)")
IBDEV = re.compile(r"^(?P<dev>\S+) port (?P<port>\d+) ==> (?P<netdev>\S+) \((?P<state>\w+)\)\s*$")
PROMPT = re.compile(r"^\S+@\S+:.*[$#]\s*")


def parse_ip_addr(text: str) -> dict[str, Interface]:
    """`ip addr show` (block form) or `ip -o addr` (one line per address)."""
    out: dict[str, Interface] = {}
    current: Interface | None = None
    for line in text.splitlines():
        m = LINK_HEAD.match(line)
        if m:
            current = out.setdefault(m.group("name"), Interface(m.group("name")))
            current.mtu = count(m.group("mtu"))
            current.state = m.group("state") or ("UP" if "UP" in m.group("flags").split(",") else "DOWN")
            continue
        m = ONE_LINE.match(line)
        if m:
            iface = out.setdefault(m.group("name"), Interface(m.group("name")))
            (iface.ipv4 if m.group("fam") == "inet" else iface.ipv6).append(m.group("cidr"))
            continue
        if current is None:
            continue
        m = ADDR_LINE.match(line)
        if m:
            (current.ipv4 if m.group("fam") == "inet" else current.ipv6).append(m.group("cidr"))
        elif line.strip().startswith("altname "):
            current.altnames.append(line.split()[1])
    return out


def parse_ip_brief(text: str) -> dict[str, Interface]:
    """`ip -br addr` (addresses) or `ip -br link` (MAC and flags)."""
    out: dict[str, Interface] = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) < 2:
            continue
        name = parts[0].split("@")[0]
        iface = out.setdefault(name, Interface(name, state=parts[1]))
        for word in parts[2:]:
            if "/" in word and ":" in word and not word.startswith("<"):
                iface.ipv6.append(word)
            elif "/" in word and word[0].isdigit():
                iface.ipv4.append(word)
    return out


def parse_ip_json(text: str) -> dict[str, Interface]:
    """`ip -j addr`: what the live probe uses. What a node prints is input: anything that is not
    the JSON `ip` writes (an old iproute2 without -j, an error message) yields no interfaces."""
    try:
        items = json.loads(text or "[]")
    except ValueError:
        return {}
    out: dict[str, Interface] = {}
    for item in items if isinstance(items, list) else []:
        if not isinstance(item, dict) or not isinstance(item.get("ifname"), str):
            continue
        mtu = item.get("mtu")
        iface = Interface(
            item["ifname"], str(item.get("operstate", "UNKNOWN")), mtu if isinstance(mtu, int) else None
        )
        altnames = item.get("altnames")
        iface.altnames = [str(a) for a in altnames] if isinstance(altnames, list) else []
        addrs = item.get("addr_info")
        for a in addrs if isinstance(addrs, list) else []:
            if isinstance(a, dict) and "local" in a and "prefixlen" in a:
                cidr = f"{a['local']}/{a['prefixlen']}"
                try:
                    ipaddress.ip_interface(cidr)  # later steps compute with it
                except ValueError:
                    continue
                (iface.ipv4 if a.get("family") == "inet" else iface.ipv6).append(cidr)
        out[iface.name] = iface
    return out


def parse_ibdev2netdev(text: str) -> list[RoceMapping]:
    """Lines like `rocep1s0f1 port 1 ==> enp1s0f1np1 (Up)`, in any order, ignoring shell prompts."""
    out = []
    for line in text.splitlines():
        line = PROMPT.sub("", line).strip()
        m = IBDEV.match(line)
        if m:
            out.append(
                RoceMapping(m.group("dev"), count(m.group("port")) or 0, m.group("netdev"), m.group("state"))
            )
    return out


def parse_ibv_devinfo(text: str) -> list[HcaPort]:
    out: list[HcaPort] = []
    device = None
    port = None
    for raw in text.splitlines():
        line = raw.strip()
        key, _, value = line.partition(":")
        value = value.strip()
        if key == "hca_id":
            device = value
        elif key == "port" and device:
            number = count(value)
            port = HcaPort(device, number, "", None, None) if number is not None else None
            if port is not None:  # `port:\tabc` is no port: its fields are not read
                out.append(port)
        elif port is not None and key == "state":
            port.state = value.split()[0] if value else ""
        elif port is not None and key == "active_mtu":
            port.active_mtu = count(value.split()[0]) if value else None
        elif port is not None and key == "link_layer":
            port.link_layer = value
    return out


def twin_of(netdev_or_dev: str) -> str | None:
    """ConnectX-7 on Spark shows each port as two PCIe twins: rocep1s0f1 <-> roceP2p1s0f1, enp1s0f1np1 <-> enP2p1s0f1np1."""
    for a, b in (("rocep1s0f", "roceP2p1s0f"), ("enp1s0f", "enP2p1s0f")):
        if netdev_or_dev.startswith(a):
            return b + netdev_or_dev[len(a) :]
        if netdev_or_dev.startswith(b):
            return a + netdev_or_dev[len(b) :]
    return None


def attach_roce(interfaces: dict[str, Interface], mappings: list[RoceMapping]) -> None:
    for m in mappings:
        if m.netdev in interfaces:
            interfaces[m.netdev].roce_device = m.device
            interfaces[m.netdev].roce_state = m.state
