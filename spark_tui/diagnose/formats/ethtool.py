"""`ethtool` (speed, modes, link) and `ethtool -i` (driver, firmware): a link below the port's best
mode or down is told with the failure table's words."""

from __future__ import annotations

import re

from spark_tui.diagnose.formats.values import finding_verdict, verdict
from spark_tui.diagnose.paste import Cleaned
from spark_tui.knowledge import default_matcher

MODE = re.compile(r"\b(\d+)base[A-Za-z0-9]*(?:/\w+)?")
SPEED = re.compile(r"^\s*Speed:\s*(?:(?P<mbps>\d+)Mb/s|(?P<other>\S+))", re.M)
# `Settings for eth0:` opens an ethtool output, also glued to what the reporter pasted before it
SETTINGS = re.compile(r"Settings for (?P<netdev>[\w.:@-]+):[ \t]*$", re.M)


def _modes(block: str, label: str) -> list[str]:
    m = re.search(rf"^\s*{label}:\s*(.*(?:\n[ \t]{{8,}}[^:\n]+(?=\n|$))*)", block, re.M)
    return [x for x in m.group(1).split() if MODE.match(x)] if m else []


def read_ethtool(c: Cleaned) -> dict:
    matcher = default_matcher()
    ports = []
    verdicts = []
    findings = []
    # A port's fields are indented; ethtool's own refusals ("Cannot get wake-on-lan settings:
    # Operation not permitted" for a non-root user, "netlink error: ...") sit among them unindented.
    for m in re.finditer(
        r"Settings for (?P<netdev>[\w.:@-]+):[ \t]*\n(?P<body>(?:(?:[ \t]|Cannot |netlink error).*\n?|\n)*)",
        c.text,
    ):
        netdev, body = m.group("netdev"), m.group("body")
        supported = _modes(body, "Supported link modes")
        advertised = _modes(body, "Advertised link modes")
        speeds = [int(x.group(1)) for x in map(MODE.match, supported) if x]
        sp = SPEED.search(body)
        speed = int(sp.group("mbps")) if sp and sp.group("mbps") else None
        link = re.search(r"Link detected:\s*(\w+)", body)
        duplex = (re.search(r"Duplex:\s*(\S+)", body) or [None, None])[1]
        port = {
            "netdev": netdev,
            "speed_mbps": speed,
            "max_supported_mbps": max(speeds) if speeds else None,
            "supported_modes": supported,
            "advertised_modes": advertised,
            "duplex": None if duplex is None or duplex.startswith("Unknown") else duplex,
            "link_detected": link.group(1) == "yes" if link else None,
        }
        ports.append(port)
        line = f"ethtool {netdev}: Speed {sp.group(0).split(':', 1)[1].strip() if sp else '?'}"
        if port["link_detected"] is False:
            findings.append(matcher.named("link.down", {"netdev": netdev}, line))
        elif speed and speeds and speed < max(speeds):
            figures = {"netdev": netdev, "speed_gbps": speed / 1000, "max_gbps": max(speeds) / 1000}
            findings.append(matcher.named("link.speed_below_rate", figures, line))
        elif speed and speeds and speed > max(speeds):
            verdicts.append(
                verdict(
                    "ok",
                    f"{netdev}: {speed / 1000:g} Gb/s, above the modes the driver lists (up to {max(speeds) / 1000:g} Gb/s)",
                )
            )
        elif speed and speeds:
            verdicts.append(verdict("ok", f"{netdev}: {speed / 1000:g} Gb/s, the port's best supported mode"))
        elif speed:
            verdicts.append(
                verdict(
                    "ok",
                    f"{netdev}: {speed / 1000:g} Gb/s; the port lists no link modes (a virtual port, or a driver that reports none)",
                )
            )
        elif port["link_detected"]:
            verdicts.append(
                verdict(
                    "ok",
                    f"{netdev}: link detected; no speed in this output (the driver reports none, or not run as root)",
                )
            )
        elif speeds:
            verdicts.append(
                verdict(
                    "ok",
                    f"{netdev}: modes up to {max(speeds) / 1000:g} Gb/s; no speed or link state in this part of the output",
                )
            )
    verdicts = [finding_verdict(f) for f in findings] + verdicts
    summary: dict[str, object] = {"ports": ports}
    found = [f.as_dict() for f in findings]
    if re.search(r"^driver: \S+", c.text, re.M) and "bus-info:" in c.text:
        # `ethtool -i` in the same paste (VyOS' `show interfaces ethernet X physical` prints both):
        # the driver and firmware of the port, named by the one port shown
        info = read_ethtool_i(c, str(ports[0]["netdev"]) if len(ports) == 1 else "this port")
        summary["driver"] = info["summary"]
        verdicts += info["verdicts"]
        found += info["findings"]
    return {"summary": summary, "verdicts": verdicts, "findings": found}


def read_ethtool_i(c: Cleaned, unnamed: str = "this port") -> dict:
    # Several `ethtool -i` runs in one paste: a port per `driver:` line, named by the run before it
    names = [m.group(1) for m in re.finditer(r"ethtool -i (\S+)", "\n".join(c.commands) + "\n" + c.text)]
    blocks = re.split(r"^(?=driver:)", c.text, flags=re.M)[1:]
    matcher = default_matcher()
    ports, verdicts, findings = [], [], []
    for i, block in enumerate(blocks):
        fields = dict(re.findall(r"^([\w-]+):[ \t]*(.*?)\s*$", block, re.M))
        figures = {
            "netdev": names[i] if i < len(names) else unnamed,
            "driver": fields.get("driver") or None,
            "version": fields.get("version") or None,
            "firmware": fields.get("firmware-version") or None,
            "bus": fields.get("bus-info") or None,
        }
        ports.append(figures)
        f = matcher.named("link.driver_firmware", figures, f"driver: {figures['driver']}")
        findings.append(f.as_dict())
        verdicts.append(verdict("ok", f.title))
    summary: dict[str, object] = dict(ports[0]) if ports else {}
    if len(ports) > 1:
        summary["ports"] = ports
    return {"summary": summary, "verdicts": verdicts, "findings": findings}
