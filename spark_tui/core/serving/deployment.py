"""The running deployment as its containers' labels tell it, for a `status` or cockpit started
later (another terminal, after the operator's machine rebooted): nothing of the launching process
is needed. The head's container names its cluster, role, configuration hash, executor, and who
launched it and when (core/node/labels.py); its image ID keys the last bench run recorded for exactly
that image and configuration (core/bench/bench_store.py).

Labels are the node's word (anyone can `docker run --label`): kept as text, cut short, and shown
inert by the callers like every other node output.
"""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from spark_tui.core.bench.bench_store import Store, StoreError
from spark_tui.core.node import labels
from spark_tui.core.node.probes import NodeSnapshot
from spark_tui.paths import state_dir
from spark_tui.settings.resolve import Config

LABEL_MAX = 200  # characters of a label value kept


@dataclass
class Deployment:
    cluster: str
    head: str
    image: str
    image_id: str
    config_hash: str
    executor: str
    launched_by: str
    launched_at: str
    started_at: str
    nodes: list[str] = field(default_factory=list)  # where its containers run
    last_bench: dict | None = None  # the last run recorded for this image and configuration
    bench_note: str = ""  # why there is none, or why it could not be read


def bench_path(environ: Mapping[str, str] = os.environ) -> str:
    return os.path.join(state_dir(environ), "bench.sqlite")  # as core/bench_run.py writes it


def find(
    config: Config, snaps: list[NodeSnapshot], environ: Mapping[str, str] = os.environ
) -> Deployment | None:
    """The deployment whose head container runs, found by its labels (cluster, role head, name)."""
    name, cluster = config["container_name"], config["name"]
    head = None
    nodes = []
    for snap in snaps:
        for c in snap.containers:
            if c.cluster != cluster or c.name != name or c.state != "running":
                continue
            nodes.append(snap.node)
            if c.labels.get(labels.ROLE) == "head":
                head = (snap.node, c)
    if head is None:
        return None
    node, c = head

    def label(key: str) -> str:
        return str(c.labels.get(key) or "")[:LABEL_MAX]

    found = Deployment(
        cluster=cluster,
        head=node,
        image=c.image_ref[:LABEL_MAX],
        image_id=c.image_id[:LABEL_MAX],
        config_hash=label(labels.CONFIG_HASH),
        executor=label(labels.EXECUTOR),
        launched_by=label(labels.LAUNCHED_BY),
        launched_at=label(labels.LAUNCHED_AT),
        started_at=c.started_at[:LABEL_MAX],
        nodes=nodes,
    )
    found.last_bench, found.bench_note = last_bench(found.image_id, found.config_hash, environ)
    return found


def last_bench(image_id: str, config_hash: str, environ: Mapping[str, str]) -> tuple[dict | None, str]:
    """The last bench run of this image and configuration, in brief, or why there is none."""
    path = bench_path(environ)
    if not os.path.exists(path):  # never create the database just to look into it
        return None, "no bench run recorded on this machine (spark-tui bench)"
    try:
        store = Store(Path(path))
        try:
            run = store.last_for(image_id, config_hash)
        finally:
            store.close()
    except StoreError as exc:
        return None, str(exc)
    if run is None:
        return None, "no bench run of this image and configuration (spark-tui bench)"
    levels = []
    for lv in run.levels:  # the database is input too: another program may have written it
        if not isinstance(lv, dict):
            continue
        errors = lv.get("errors")
        count = sum(v for v in errors.values() if isinstance(v, int)) if isinstance(errors, dict) else None
        keys = ("concurrency", "requests", "output_tps", "ttft_p95", "itl_p95")
        levels.append({key: lv.get(key) for key in keys} | {"errors": count})
    return {"id": run.id, "at": _when(run.at), "origin": run.origin, "levels": levels}, ""


def lines(d: Deployment) -> list[str]:
    """The deployment's provenance and last bench, for `status` and the cockpit's serving view."""
    by = f"launched by {d.launched_by or '?'} at {d.launched_at or '?'}"
    out = [
        f"  deployment: image {d.image} [{d.image_id.removeprefix('sha256:')[:12]}], config-hash "
        f"{d.config_hash or '(none: not started by spark-tui)'}, executor {d.executor or '?'}, {by}, "
        f"on {', '.join(d.nodes)} (found by its labels)",
    ]
    b = d.last_bench
    if b is None:
        return out + [f"  last bench: none: {d.bench_note}"]
    parts = []
    for lv in b["levels"]:
        figs = [f"c={lv.get('concurrency')}"]
        if isinstance(lv.get("output_tps"), (int, float)):
            figs.append(f"{lv['output_tps']:.1f} output tok/s")
        for key, what in (("ttft_p95", "TTFT p95"), ("itl_p95", "ITL p95")):
            if isinstance(lv.get(key), (int, float)):
                figs.append(f"{what} {lv[key] * 1000:.0f} ms")
        figs.append(f"{lv.get('errors')} errors")
        parts.append(" ".join(figs[:1]) + ": " + ", ".join(figs[1:]))
    return out + [f"  last bench: run {b['id']} at {b['at']} ({b['origin']}): " + "; ".join(parts)]


def _when(at: float) -> str:
    return dt.datetime.fromtimestamp(at, dt.UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
