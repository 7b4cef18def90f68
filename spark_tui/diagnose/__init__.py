"""Offline analysis of what operators paste: `spark-tui diagnose FILE... | - | DIR`.

Each input is cleaned of how it was pasted (diagnose/paste.py), its kind detected
(diagnose/kinds.py), read by that kind's parser, and summarised with verdicts that say what was
seen and what to do. Several inputs (one per node, say) are also compared with each other.
No input may raise: whatever the text, the answer is a summary.
"""

from __future__ import annotations

import dataclasses
import re

from spark_tui.diagnose.formats import FORMAT_READERS
from spark_tui.diagnose.kinds import KINDS, detect
from spark_tui.diagnose.paste import Cleaned, clean
from spark_tui.knowledge import Watch
from spark_tui.parsers import docker_text, gpu, nccl, netif, rdma, vllm
from spark_tui.parsers.docker_text import looks_like_inference

__all__ = ["KINDS", "analyse", "analyse_many", "as_text", "detect_kind"]


def detect_kind(text: str) -> str:
    return detect(clean(text))


def analyse(text: str, kind: str | None = None) -> dict:
    cleaned = clean(text)
    kind = kind or detect(cleaned)
    result = READERS[kind](cleaned)
    result["kind"] = kind
    _knowledge(cleaned, result)
    if cleaned.commands:
        result["command"] = cleaned.command
    if cleaned.repeated:
        result["summary"]["repeated_lines_folded_by_ray"] = cleaned.repeated
    if cleaned.services:  # which containers the lines came from, once their prefixes are gone
        result["compose_services"] = sorted(cleaned.services)
    return result


# A line that reads like a failure; when no entry of the table matches it, it is "not recognised"
# (listed as such, never taken for the nearest known failure).
ERRORISH = re.compile(
    r"\b(?:ERROR|Error|error|FAILED|Failed|failed|FATAL|fatal|WARN|Traceback|denied|refused|Killed)\b"
)
NOT_RECOGNISED_SHOWN = 10
# Outputs of fields a reader reads (`"Error": ""`, `Correctable Error : 0`): a field is no failure line.
FIELD_KINDS = ("docker-inspect", "docker-ps-json", "ip-json", "gpu-q")
# A traceback's frames and carets say where, not what: never listed as not recognised. So does
# torch.multiprocessing.spawn's header of a child's traceback (`-- Process 3 terminated with the
# following error:`): the error is the traceback after it.
FRAME = re.compile(
    r'File "|Traceback \(most recent call last\)|\^\^\^|\]\s{2,}\S'
    r"|^-- Process \d+ terminated with the following error:"
)
# A column header of nccl-tests' results table (`#  size  count  type  redop  time  algbw  busbw  error`,
# `#wrong` in newer releases): `error` names a column there, the run's own lines come after it.
TABLE_HEADER = re.compile(r"^#.*\balgbw\s+busbw\b")


def _knowledge(c: Cleaned, result: dict) -> None:
    """The failure table over the input: each failure named once with its figures and fix, first
    among the verdicts; error-like lines it does not know are listed as not recognised."""
    w = Watch()
    unknown: list[str] = []
    # an output of fields (FIELD_KINDS) was read by its reader
    fields = result.get("kind") in FIELD_KINDS
    gpu_rows = result.get("kind") == "gpu"
    for line in c.text.splitlines():
        w.feed(line)
        if (
            not fields
            and not w.matched
            and ERRORISH.search(_without_unreadable_cells(line) if gpu_rows else line)
            and not FRAME.search(line)
            and not TABLE_HEADER.search(line)
            and line.strip() not in unknown
        ):
            unknown.append(line.strip())
    findings = w.ranked()
    shown = {v.get("code") for v in result["verdicts"]}
    named = [_finding_verdict(f) for f in findings if f.id not in shown]
    result["verdicts"] = named + result["verdicts"]
    result["findings"] = result.get("findings", []) + [f.as_dict() for f in findings]
    if unknown:
        result["not_recognised"] = unknown[:NOT_RECOGNISED_SHOWN]
        if not findings:
            result["verdicts"].append(
                _v(
                    "warn",
                    f"{len(unknown)} line(s) read like a failure that spark-tui does not recognise; "
                    f"first: {unknown[0][:200]}",
                )
            )


def _without_unreadable_cells(line: str) -> str:
    """A row of nvidia-smi's output without the cells it could not read (`[Unknown Error]`): the GPU
    reader tells those per row and field, so a row whose only error word is such a cell is no unknown
    failure line."""
    for cell in gpu.UNREADABLE_CELLS:
        line = line.replace(cell, "")
    return line


def _finding_verdict(f) -> dict:
    level = {"error": "error", "warn": "warn"}.get(f.severity, "ok")
    return {"level": level, "code": f.id, "text": f"{f.title}: {f.means} Fix: {f.fix}"}


def analyse_many(inputs: list[tuple[str, str]], kind: str | None = None) -> dict:
    """(name, text) pairs: one result per input, then what differs between them."""
    results = [{"input": name, **analyse(text, kind)} for name, text in inputs]
    return {"inputs": results, "across": across(results)}


def across(results: list[dict]) -> list[dict]:
    """Verdicts that need several inputs: GID indexes and NCCL transports that differ by node."""
    out = []
    gids = {r["input"]: r["summary"].get("roce_v2_index") for r in results if r["kind"] == "gids"}
    indexes = {name: idx for name, idx in gids.items() if idx}
    values = {i for idx in indexes.values() for i in idx.values()}
    if len(values) > 1:
        shown = "; ".join(f"{name}: {idx}" for name, idx in indexes.items())
        out.append(
            _v(
                "error",
                f"RoCE v2 GID index differs between inputs ({shown}): NCCL uses one index everywhere and fails "
                "with 'unhandled system error'; set NCCL_IB_GID_INDEX per node (env in spark-tui) or align the GID tables",
            )
        )
    nets = {r["input"]: r["summary"].get("transport") for r in results if r["kind"] == "nccl"}
    if len({t for t in nets.values() if t}) > 1:
        out.append(
            _v(
                "warn",
                "NCCL transport differs between inputs: " + ", ".join(f"{k}: {v}" for k, v in nets.items()),
            )
        )
    return out


def _v(level: str, text: str) -> dict:
    return {"level": level, "text": text}


def _port(up: bool, any_up: bool, text: str) -> dict:
    """A port without link is a warning only when no port of the output has one: a DGX Spark shows four
    RoCE ports (two per ConnectX-7 function) and most clusters cable one or two, so the rest are down."""
    if up:
        return _v("ok", text)
    if any_up:
        return _v("info", text + " (another port is up: an uncabled port, normal on a Spark)")
    return _v("warn", text)


# --- one reader per kind ------------------------------------------------------------------


def _nccl(c: Cleaned) -> dict:
    summary = nccl.parse_text(c.text)
    data = dataclasses.asdict(summary)
    data.pop("by_origin", None)
    data["per_host"] = {
        origin: {"transport": net.transport, "hcas": net.hcas, "bootstrap": net.bootstrap}
        for origin, net in summary.by_origin.items()
        if net.transport or net.hcas or net.bootstrap
    }
    verdicts = [dataclasses.asdict(v) for v in summary.verdicts(stream_ended=True)]
    # A vLLM log with NCCL lines: its own verdicts (OOM, start-up memory) count too.
    v = vllm.parse_text(c.text)
    verdicts += [dataclasses.asdict(x) for x in v.verdicts() if x.code not in ("api_started",)]
    return {"summary": data, "verdicts": verdicts}


def _vllm(c: Cleaned) -> dict:
    s = vllm.parse_text(c.text)
    data: dict[str, object] = dataclasses.asdict(s)
    verdicts = [dataclasses.asdict(v) for v in s.verdicts()]
    if "Autoscaler status" in c.text or "Node status" in c.text:
        st = vllm.parse_ray_status(c.text)
        data["ray_status"] = dataclasses.asdict(st)
        verdicts.append(
            _v(
                "ok" if st.active_nodes and st.gpus_total else "warn",
                f"ray status: {st.active_nodes} node(s) joined, {st.pending_nodes} pending, "
                f"{st.gpus_total:g} GPU(s) ({st.gpus_used:g} in use), {st.cpus_total:g} CPU(s)",
            )
        )
    n = nccl.parse_text(c.text)
    if n.nccl_lines or n.errors:
        data["nccl"] = {"transport": n.transport, "hcas": n.hcas, "version": n.version}
        verdicts += [dataclasses.asdict(x) for x in n.verdicts(stream_ended=True)]
    return {"summary": data, "verdicts": verdicts}


QUERY = re.compile(r"--query-(?P<what>gpu|compute-apps)=(?P<fields>[\w.,]+)")


def _gpu(c: Cleaned) -> dict:
    table = gpu.parse_table(c.text)
    verdicts: list[dict] = []
    data: dict[str, object] = dataclasses.asdict(table)
    if gpu.driver_failure(c.text):
        verdicts.append(
            _v(
                "error",
                f"GPU driver not answering: {gpu.driver_failure(c.text)}; reboot into the kernel the driver was built for, or reinstall the driver",
            )
        )
    if not table.gpus:
        fields, what = _csv_fields(c)
        rows = gpu.parse_csv(c.text, fields)
        data["csv"] = rows
        if what == "compute-apps" or (rows and "pid" in rows[0]):
            for r in rows:
                mem = r.get("used_memory")
                held = f"{mem:g} MiB" if isinstance(mem, float) else "memory not reported"
                verdicts.append(
                    _v("ok", f"process {r.get('pid') and int(r['pid'])} {r.get('process_name')}: {held}")
                )
            if not rows:
                verdicts.append(_v("ok", "no process holds GPU memory"))
        elif rows:
            verdicts.append(_v("ok", f"{len(rows)} GPU row(s)"))
            unreadable = gpu.unreadable_csv_cells(c.text, fields)
            for i, field, cell in unreadable:
                verdicts.append(_unreadable(f"row {i + 1}", field, cell))
            failed = {(i, field) for i, field, _ in unreadable}
            if any(
                ("memory" in k or k.startswith("field")) and v is None and (i, k) not in failed
                for i, r in enumerate(rows)
                for k, v in r.items()
            ):
                verdicts.append(
                    _v(
                        "ok",
                        "memory fields [N/A]: normal on GB10 (unified memory): read /proc/meminfo for what is used and free",
                    )
                )
    for g in table.gpus:
        for field in g.unreadable:
            verdicts.append(_unreadable(f"GPU {g.index} {g.name}", field, "ERR!"))
        if not g.memory_supported:
            verdicts.append(
                _v(
                    "ok",
                    f"GPU {g.index} {g.name}: memory fields Not Supported (normal on GB10: unified memory, read /proc/meminfo)",
                )
            )
    for p in table.processes:
        if p.partial:
            verdicts.append(
                _v(
                    "warn",
                    f"process {p.pid} {p.name}: memory value cut off by nvidia-smi; use --query-compute-apps",
                )
            )
    return {"summary": data, "verdicts": verdicts}


def _unreadable(gpu_: str, field: str, cell: str) -> dict:
    return _v(
        "warn",
        f"{gpu_}: nvidia-smi could not read its {field} ({cell}): a sensor or the GPU itself does not answer the driver; look for Xid lines in dmesg (a GPU falling off the bus), reseat or service it if they repeat",
    )


def _csv_fields(c: Cleaned) -> tuple[list[str] | None, str]:
    m = QUERY.search(c.command)
    if m:
        return m.group("fields").split(","), m.group("what")
    first = c.text.strip().splitlines()[0] if c.text.strip() else ""
    if re.search(r"[a-z]+\.[a-z]+|name|pid", first):
        return None, ""  # a header row
    cells = [x.strip() for x in first.split(",")]
    if cells and cells[0].startswith("GPU-"):
        return ["gpu_uuid", "pid", "process_name", "used_memory"], "compute-apps"
    if len(cells) == 3 and cells[0].isdigit() and not cells[1].replace(".", "").isdigit():
        return ["pid", "process_name", "used_memory"], "compute-apps"
    return [f"field{i + 1}" if i else "field1" for i in range(len(cells))], "gpu"


def _netif(c: Cleaned) -> dict:
    text = c.text
    interfaces = {}
    for parse in (netif.parse_ip_addr, netif.parse_ip_brief):
        interfaces = parse(text)
        if interfaces and " ==> " not in text:
            break
    mappings = netif.parse_ibdev2netdev(text)
    ports = netif.parse_ibv_devinfo(text)
    any_up = any(m.state == "Up" for m in mappings)
    verdicts = [_port(m.state == "Up", any_up, f"{m.device} -> {m.netdev} ({m.state})") for m in mappings]
    any_up = any(p.state == "PORT_ACTIVE" for p in ports)
    verdicts += [
        _port(
            p.state == "PORT_ACTIVE",
            any_up,
            f"{p.device} port {p.port}: {p.state}, active MTU {p.active_mtu}",
        )
        for p in ports
    ]
    data = {
        "interfaces": [dataclasses.asdict(i) for i in interfaces.values()]
        if not mappings and not ports
        else [],
        "roce": [dataclasses.asdict(m) for m in mappings],
        "hca_ports": [dataclasses.asdict(p) for p in ports],
    }
    return {"summary": data, "verdicts": verdicts}


def _ibstat(c: Cleaned) -> dict:
    ports = rdma.parse_ibstat(c.text)
    verdicts = []
    any_up = any(p.up for p in ports)
    for p in ports:
        layer = {"Ethernet": "Ethernet (RoCE)", "InfiniBand": "InfiniBand"}.get(
            p.link_layer, "link layer not shown"
        )
        rate = f"{p.rate} Gb/s" if p.rate else "rate not shown"
        text = f"{p.ca} port {p.port}: {p.state or '?'} / {p.physical_state or '?'}, {rate}, {layer}"
        verdicts.append(
            _port(p.up, any_up, text + ("" if p.up else ": not usable by NCCL until it is Active / LinkUp"))
        )
    return {"summary": {"ports": [dataclasses.asdict(p) for p in ports]}, "verdicts": verdicts}


def _gids(c: Cleaned) -> dict:
    gids = rdma.parse_show_gids(c.text)
    index = rdma.roce_v2_indexes(gids)
    verdicts = [
        _v("ok", f"{dev}: RoCE v2 GID with IPv4 at index {i} (NCCL_IB_GID_INDEX={i} selects it)")
        for dev, i in index.items()
    ]
    if not gids:
        verdicts.append(
            _v(
                "warn",
                "show_gids lists no GID: no RDMA device is visible here (in a container: /dev/infiniband and the host's network not passed in), so NCCL cannot use RoCE and falls back to sockets",
            )
        )
    elif not index:
        verdicts.append(
            _v(
                "warn",
                "no RoCE v2 GID carries an IPv4 address: assign the data address to the RoCE interface",
            )
        )
    return {
        "summary": {"gids": [dataclasses.asdict(g) for g in gids], "roce_v2_index": index},
        "verdicts": verdicts,
    }


def _docker_ps(c: Cleaned) -> dict:
    rows = docker_text.parse_ps_table(c.text)
    verdicts = []
    for r in rows:
        name = r.get("NAMES", "?")
        image = r.get("IMAGE", "?")
        status = r.get("STATUS", "")
        if looks_like_inference(f"{name} {image} {r.get('COMMAND', '')}"):
            verdicts.append(
                _v(
                    "warn" if status.startswith("Up") else "ok",
                    f"{name} ({image}, {status or 'status unknown'}) looks like vLLM/Ray: on a Spark it shares the unified memory with a new load",
                )
            )
        if status.startswith("Restarting"):
            verdicts.append(
                _v(
                    "warn",
                    f"{name} ({image}) is restarting: a crash loop; `docker logs {name}` shows why it exits",
                )
            )
    if any(r.get("COMMAND", "").rstrip('"').endswith("…") for r in rows):
        verdicts.append(
            _v("ok", "commands are truncated in this table: docker ps --no-trunc shows them whole")
        )
    return {"summary": {"containers": rows}, "verdicts": verdicts}


READERS = {
    **FORMAT_READERS,
    "nccl": _nccl,
    "vllm": _vllm,
    "gpu": _gpu,
    "netif": _netif,
    "ibstat": _ibstat,
    "gids": _gids,
    "docker-ps": _docker_ps,
}


def as_text(result: dict) -> str:
    if "inputs" in result:
        parts = [as_text(r) for r in result["inputs"]]
        if result["across"]:
            parts.append("across inputs:\n" + "\n".join(_line(v) for v in result["across"]))
        return "\n\n".join(parts)
    head = f"== {result['input']} ==\n" if "input" in result else ""
    lines = [
        f"{head}kind: {result['kind']}"
        + (f" (pasted command: {result['command']})" if "command" in result else "")
        + (
            f" (compose services: {', '.join(result['compose_services'])})"
            if "compose_services" in result
            else ""
        )
    ]
    for key, value in result["summary"].items():
        if value in (None, [], {}, 0, False, ""):
            continue
        lines.append(f"  {key}: {value}")
    lines.append("verdicts:")
    for v in result["verdicts"] or [_v("warn", "nothing conclusive in this input")]:
        lines.append(_line(v))
    if result.get("not_recognised"):
        lines.append("not recognised (no known failure matches these lines):")
        lines += [f"  {line[:200]}" for line in result["not_recognised"]]
    return "\n".join(lines)


def _line(v: dict) -> str:
    marks = {"ok": "OK  ", "info": "INFO", "warn": "WARN", "error": "FAIL"}
    return f"  [{marks.get(v['level'], v['level'])}] {v['text']}"
