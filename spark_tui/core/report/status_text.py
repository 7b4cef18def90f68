"""Plain-text rendering of node snapshots for `spark-tui status`."""

from __future__ import annotations

from spark_tui.core.node.probes import NodeSnapshot
from spark_tui.parsers.text import inert
from spark_tui.settings.resolve import Config


def render(snaps: list[NodeSnapshot], config: Config) -> str:
    lines = []
    i = inert  # every field below but the config's own comes from the node: shown inert
    for snap in snaps:
        node = config.node(snap.node)
        role = "head" if node.is_head else "worker"
        if not snap.reachable:
            lines.append(f"{snap.node} ({role}, {node['host']}): UNREACHABLE - {i(snap.error or '')}")
            lines.append("")
            continue
        h = snap.host
        rtt = f"{snap.rtt_ms:.0f} ms" if snap.rtt_ms is not None else "-"
        lines.append(
            f"{snap.node} ({role}, {node['host']}): up, probe {rtt}; {i(h.hostname)} {i(h.arch)} kernel {i(h.kernel)}"
        )
        if snap.docker_error:
            lines.append(f"  docker: ERROR {i(snap.docker_error)}")
        else:
            lines.append(
                i(
                    f"  docker: {h.docker_version}, storage {h.storage_driver}{' / ' + h.snapshotter if h.snapshotter else ''}"
                )
            )
        for iface in snap.interfaces.values():
            if iface.name == "lo":
                continue
            mark = "*" if iface.is_data else " "
            roce = f" roce={iface.roce_device}({iface.roce_state})" if iface.roce_device else ""
            speed = f" {iface.speed_mbps}Mb/s" if iface.speed_mbps else ""
            lines.append(
                i(
                    f" {mark}{iface.name:<16} {iface.state:<7} mtu {iface.mtu} {' '.join(iface.ipv4 + iface.ipv6)}{speed}{roce}"
                )
            )
        g = snap.gpu
        if g is None or not g.present:
            lines.append(f"  gpu: none ({i(g.reason) if g else 'not probed'})")
        else:
            for card in g.gpus:
                if card.memory_supported:
                    mem = f"{card.memory_used_mib:.0f}/{card.memory_total_mib:.0f} MiB"
                elif g.unified:
                    mem = f"unified memory {g.unified.used_mib / 1024:.1f}/{g.unified.total_mib / 1024:.1f} GiB (from /proc/meminfo)"
                else:
                    mem = "memory not reported"
                lines.append(
                    f"  gpu {card.index}: {i(card.name)} util {card.utilization_pct}% temp {card.temperature_c}C power {card.power_w}W, {mem}"
                )
            for p in g.processes:
                lines.append(
                    f"    pid {p.pid} {inert(p.name)} {p.used_mib if p.used_mib is not None else '?'} MiB"
                )
        for c in snap.containers:
            mine = c.cluster == config["name"]
            lines.append(
                i(
                    f"  container {c.name}: {c.state}{' (' + c.health + ')' if c.health else ''} image {c.image_ref} [{c.image_id[7:19]}]"
                )
                + ("" if mine else "  FOREIGN (not this cluster's)")
            )
        lines.append("")
    return "\n".join(lines).rstrip()
