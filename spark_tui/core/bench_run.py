"""`spark-tui bench`: measure what the running cluster serves, and keep it with its provenance.

The load goes to the head's endpoint through the head's own connection (the same SSH forward
`status` uses), so the figures do not depend on this machine's routes. What was served is read
from the nodes at the same time: the image's ID and layers, its vLLM version, the model and its
revision, the configuration's hash and the settings that differ from the defaults (secrets
never), nodes, executor and each node's NCCL transport. Results go to the SQLite store.
"""

from __future__ import annotations

import asyncio
import json
import os
from dataclasses import dataclass, field

import docker

from spark_tui import __version__
from spark_tui.core.bench import loadgen
from spark_tui.core.bench.bench_store import Run, Store, provenance_diff
from spark_tui.core.images.image_checks import default_cache, effective_facts
from spark_tui.core.launch.live import with_detected
from spark_tui.core.launch.plan import config_hash
from spark_tui.core.models.model_files import manifests
from spark_tui.core.node.errors import NodeError
from spark_tui.core.node.nodes import Nodes
from spark_tui.core.report.cluster_state import cluster_state
from spark_tui.errors import BenchError
from spark_tui.paths import state_dir
from spark_tui.settings.resolve import Config


@dataclass
class Outcome:
    run: Run
    levels: list[loadgen.Level]
    previous: Run | None = None  # same setup and load
    other: Run | None = None  # same load and model, another image or configuration
    notes: list[str] = field(default_factory=list)


def store_path(environ=os.environ) -> str:
    return os.path.join(state_dir(environ), "bench.sqlite")


def params_for(config: Config, **asked) -> loadgen.Params:
    model = config["served_model_name"] or config["model"] or ""
    return loadgen.Params(model=model, **asked)


async def provenance(config: Config, nodes: Nodes) -> dict:
    """What is being served, as the nodes show it now."""
    config, snaps = await with_detected(config, nodes)
    unusable = {s.node for s in snaps if not s.reachable or s.docker_error}
    state, facts, files = await asyncio.gather(
        cluster_state(config, nodes, snaps),
        effective_facts(config, nodes, default_cache(), unusable),
        manifests(config, nodes, [config.head.name]),
    )
    _, image_facts, _ = facts
    head_manifest = files.get(config.head.name)
    image_id, layers = await _image(config, nodes)
    settings = {
        key: value.value
        for key, value in sorted(config.values.items())
        if value.source.layer != "default" and not value.setting.secret and value.setting.role == "container"
    }
    return {
        "image": config["image"],
        "image_id": image_id,
        "layers": layers,
        "vllm": image_facts.vllm if image_facts else None,
        "model": config["model"],
        "revision": head_manifest.ref if head_manifest else None,
        "config_hash": config_hash(config),
        "settings": json.loads(json.dumps(settings, default=str)),
        "nodes": len(config.nodes),
        "executor": config["executor"],
        "nccl": {name: n.transport for name, n in state.nccl.items()},
        "serving": bool(state.serving and state.serving.ready),
        "spark_tui": __version__,
    }


async def _image(config: Config, nodes: Nodes) -> tuple[str | None, list[str]]:
    try:
        img = await nodes.docker(config.head.name, lambda client: client.images.get(config["image"]))
    except (NodeError, docker.errors.APIError):
        return None, []
    return img.id, list((img.attrs.get("RootFS") or {}).get("Layers") or [])


async def measure(
    config: Config, nodes: Nodes, params: loadgen.Params, progress: loadgen.Progress | None = None
) -> tuple[dict, list[loadgen.Level]]:
    prov = await provenance(config, nodes)
    if not prov["serving"]:
        raise BenchError(
            f"nothing serves {params.model!r} at the head's port {config['vllm_port']}: start it with `spark-tui up`"
        )
    head = config.head
    target = head["data_ip"] or "127.0.0.1"
    try:
        base, listener = await nodes.transports[head.name].http_base(target, config["vllm_port"])
    except (NodeError, OSError) as exc:
        raise BenchError(f"cannot reach {target}:{config['vllm_port']} through {head.name}: {exc}") from None
    try:
        levels = await loadgen.run(base + "/v1", params, progress)
    finally:
        if listener is not None:
            listener.close()
    return prov, levels


def record(
    store: Store, prov: dict, params: loadgen.Params, levels: list[loadgen.Level], origin: str
) -> Outcome:
    run = store.add(origin, prov, params.key(), [lv.as_dict() for lv in levels])
    return Outcome(run, levels, store.previous_same(run), store.last_other_setup(run))


def compare_lines(run: Run, against: Run | None, label: str) -> list[str]:
    """Figures side by side with the provenance that differs: what changed, and by how much."""
    if against is None:
        return [f"{label}: none recorded"]
    lines = [f"{label}: run {against.id} ({_when(against.at)})"]
    for mine, theirs in zip(run.levels, against.levels, strict=False):
        if mine.get("concurrency") != theirs.get("concurrency"):
            continue
        parts = []
        for key, name in (("output_tps", "output tok/s"), ("ttft_p95", "TTFT p95"), ("itl_p95", "ITL p95")):
            a, b = mine.get(key), theirs.get(key)
            if isinstance(a, (int, float)) and isinstance(b, (int, float)) and b:
                parts.append(f"{name} {_fmt(key, a)} vs {_fmt(key, b)} ({(a - b) / b:+.0%})")
        errs = sum((mine.get("errors") or {}).values()), sum((theirs.get("errors") or {}).values())
        parts.append(f"errors {errs[0]} vs {errs[1]}")
        lines.append(f"  c={mine['concurrency']}: " + ", ".join(parts))
    diff = provenance_diff(against.provenance, run.provenance)
    lines += [f"  differs: {k}: {_short(a)} -> {_short(b)}" for k, a, b in diff if k not in ("serving",)] or [
        "  same image, configuration, model and nodes"
    ]
    return lines


def _fmt(key: str, value: float) -> str:
    return f"{value:.1f}" if key == "output_tps" else f"{value * 1000:.0f} ms"


def _short(value: object) -> str:
    text = json.dumps(value, default=str) if not isinstance(value, str) else value
    return text if len(text) <= 60 else text[:57] + "..."


def _when(at: float) -> str:
    import datetime as dt

    return dt.datetime.fromtimestamp(at, dt.UTC).strftime("%Y-%m-%d %H:%M UTC")


def import_vllm_result(doc: object, source: str) -> tuple[dict, list[dict]]:
    """`vllm bench serve --save-result`'s JSON as (params, one level); ValueError naming the field."""
    if not isinstance(doc, dict):
        raise ValueError(f"{source}: not a JSON object")

    def num(key: str, required: bool = True) -> float | None:
        value = doc.get(key)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
        if required:
            raise ValueError(f"{source}: `{key}` missing or not a number")
        return None

    concurrency = doc.get("max_concurrency")
    completed = num("completed")
    duration = num("duration")
    inputs = num("total_input_tokens", False)
    level = {
        "concurrency": concurrency if isinstance(concurrency, int) else None,
        "requests": int(completed or 0),
        "errors": _failed(doc.get("errors")),
        "wall_s": duration,
        "output_tps": num("output_throughput"),
        "input_tps": (inputs / duration) if inputs is not None and duration else None,
        "request_tps_p50": None,
        "ttft_p50": _ms(num("median_ttft_ms", False)),
        "ttft_p95": _ms(num("p95_ttft_ms", False) or num("p99_ttft_ms", False)),
        "itl_p50": _ms(num("median_itl_ms", False)),
        "itl_p95": _ms(num("p95_itl_ms", False) or num("p99_itl_ms", False)),
        "e2e_p50": _ms(num("median_e2el_ms", False)),
        "e2e_p95": _ms(num("p95_e2el_ms", False) or num("p99_e2el_ms", False)),
        "chunks": 0,
    }
    lens_in, lens_out = doc.get("input_lens"), doc.get("output_lens")
    params = {
        "concurrency": [level["concurrency"]],
        "prompt_tokens": _mean(lens_in),
        "output_tokens": _mean(lens_out),
    }
    return params, [level]


def _failed(errors: object) -> dict[str, int]:
    """vLLM's `errors` holds one string per request, empty when it succeeded."""
    if not isinstance(errors, list):
        return {}
    failed = sum(1 for e in errors if isinstance(e, str) and e)
    return {"failed": failed} if failed else {}


def _ms(value: float | None) -> float | None:
    return None if value is None else value / 1000


def _mean(values: object) -> int | None:
    if isinstance(values, list) and values and all(isinstance(v, int) for v in values):
        return round(sum(values) / len(values))
    return None
