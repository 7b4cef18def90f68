"""Offline analysis of a pasted log or command output: `spark-tui diagnose FILE`."""

from __future__ import annotations

import dataclasses
import re

from spark_tui.parsers import gpu, nccl, netif, vllm

KINDS = ("nccl", "vllm", "gpu", "netif")


def detect_kind(text: str) -> str:
    head = text[:200_000]
    if (
        "NVIDIA-SMI" in head
        or re.search(r"^\|\s+\d+\s+NVIDIA", head, re.M)
        or "memory.used" in head
        or re.search(r"^GPU-[\w.-]+, \d+,", head, re.M)
    ):
        return "gpu"
    if (
        " ==> " in head
        or "hca_id:" in head
        or re.search(r"^\d+: \S+:? .*(mtu|inet)", head, re.M)
        or re.search(r"^\S+\s+(UP|DOWN|UNKNOWN)\s", head, re.M)
    ):
        if "NCCL INFO" not in head:
            return "netif"
    if "NCCL" in head or "nccl" in head:
        return "nccl"
    return "vllm"


def analyse(text: str, kind: str | None = None) -> dict:
    kind = kind or detect_kind(text)
    if kind == "nccl":
        summary = nccl.parse_text(text)
        verdicts = [dataclasses.asdict(v) for v in summary.verdicts(stream_ended=True)]
        return {"kind": kind, "summary": dataclasses.asdict(summary), "verdicts": verdicts}
    if kind == "vllm":
        s = vllm.parse_text(text)
        data: dict[str, object] = dataclasses.asdict(s)
        if "Autoscaler status" in text or "Node status" in text:
            data["ray_status"] = dataclasses.asdict(vllm.parse_ray_status(text))
        return {
            "kind": kind,
            "summary": data,
            "verdicts": [dataclasses.asdict(v) for v in s.verdicts()],
        }
    if kind == "gpu":
        table = gpu.parse_table(text)
        data = dataclasses.asdict(table)
        verdicts = []
        if not table.gpus:
            data["csv"] = gpu.parse_csv(
                text,
                None
                if re.search(r"[a-z]+\.[a-z]+|name|pid", text.splitlines()[0] if text else "")
                else _guess_fields(text),
            )
        for g in table.gpus:
            if not g.memory_supported:
                verdicts.append(
                    {
                        "level": "ok",
                        "text": f"GPU {g.index} {g.name}: memory fields Not Supported (normal on GB10: unified memory, read /proc/meminfo)",
                    }
                )
        for p in table.processes:
            if p.partial:
                verdicts.append(
                    {
                        "level": "warn",
                        "text": f"process {p.pid} {p.name}: memory value cut off by nvidia-smi; use --query-compute-apps",
                    }
                )
        return {"kind": kind, "summary": data, "verdicts": verdicts}
    interfaces = {}
    for parse in (netif.parse_ip_addr, netif.parse_ip_brief):
        interfaces = parse(text)
        if interfaces and " ==> " not in text:
            break
    mappings = netif.parse_ibdev2netdev(text)
    ports = netif.parse_ibv_devinfo(text)
    verdicts = [
        {"level": "ok" if m.state == "Up" else "warn", "text": f"{m.device} -> {m.netdev} ({m.state})"}
        for m in mappings
    ]
    verdicts += [
        {
            "level": "ok" if p.state == "PORT_ACTIVE" else "warn",
            "text": f"{p.device} port {p.port}: {p.state}, active MTU {p.active_mtu}",
        }
        for p in ports
    ]
    data = {
        "interfaces": [dataclasses.asdict(i) for i in interfaces.values()]
        if not mappings and not ports
        else [],
        "roce": [dataclasses.asdict(m) for m in mappings],
        "hca_ports": [dataclasses.asdict(p) for p in ports],
    }
    return {"kind": "netif", "summary": data, "verdicts": verdicts}


def _guess_fields(text: str) -> list[str] | None:
    first = text.splitlines()[0] if text else ""
    if first.startswith("GPU-"):
        return ["gpu_uuid", "pid", "process_name", "used_memory"]
    return None


def as_text(result: dict) -> str:
    lines = [f"kind: {result['kind']}"]
    for key, value in result["summary"].items():
        if value in (None, [], {}, 0, False, ""):
            continue
        lines.append(f"  {key}: {value}")
    lines.append("verdicts:")
    marks = {"ok": "OK  ", "warn": "WARN", "error": "FAIL"}
    for v in result["verdicts"] or [{"level": "warn", "text": "nothing conclusive in this input"}]:
        lines.append(f"  [{marks[v['level']]}] {v['text']}")
    return "\n".join(lines)
