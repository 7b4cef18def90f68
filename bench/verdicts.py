"""Time to verdict: seconds from the moment a failure's evidence exists on a node to spark-tui's
named verdict, at the default timeouts (timeouts.ray_join 120 s, timeouts.ready 1800 s).

Evidence times come from the nodes themselves (Docker's log timestamps, a container's FinishedAt);
the verdict time is when `up` emitted its Failed event, before the rollback removes anything.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import re
import time
from pathlib import Path


def _epoch(stamp: str) -> float:
    """Docker's RFC 3339 time with nanoseconds, as seconds since the epoch."""
    stamp = re.sub(r"(\.\d{6})\d*", r"\1", stamp.replace("Z", "+00:00"))
    return dt.datetime.fromisoformat(stamp).timestamp()


def _first_log_time(cluster, node, pattern: str) -> float | None:
    out = cluster.docker(node, "logs", "-t", "vllm_node", check=False)
    for line in (out.stdout + out.stderr).splitlines():
        if re.search(pattern, line):
            return _epoch(line.split(" ", 1)[0])
    return None


def _finished_at(cluster, node) -> float | None:
    out = cluster.docker(node, "inspect", "--format", "{{json .State}}", "vllm_node", check=False)
    if out.returncode != 0:
        return None
    state = json.loads(out.stdout)
    return _epoch(state["FinishedAt"]) if state.get("Status") == "exited" else None


def _launch(cluster, tmp: Path, evidence, **flags) -> dict:
    """One failing `up`; `evidence(cluster, failed)` reads the evidence time before rollback."""
    from spark_tui.core.launch import events as ev
    from spark_tui.core.launch.launch import Launch
    from spark_tui.core.node.nodes import Nodes
    from spark_tui.settings.resolve import Inputs, resolve
    from tests.cluster import cluster as tc

    path = cluster.cluster_file(2, tmp / "verdict.yaml")
    values = {**tc.SANDBOX, **flags}
    config = resolve(
        Inputs(
            cluster_file=path, user_config="", environ={}, flags={k: (v, f"--{k}") for k, v in values.items()}
        )
    )
    seen: dict = {}

    def emit(event) -> None:
        if isinstance(event, ev.Failed) and "verdict" not in seen:
            seen["verdict"] = time.time()
            seen["cause"] = event.cause
            seen["evidence"] = evidence(cluster, event)

    async def go() -> bool:
        async with Nodes(config) as nodes:
            return await Launch(config, nodes, emit).run()

    start = time.time()
    ok = asyncio.run(go())
    if ok or seen.get("evidence") is None:
        raise RuntimeError(f"the failure did not happen as staged: ok={ok}, {seen}")
    return {
        "seconds_to_verdict": round(seen["verdict"] - seen["evidence"], 2),
        "seconds_from_up": round(seen["verdict"] - start, 2),
        "cause": seen["cause"][:160],
    }


def bench_time_to_verdict(cluster, tmp: Path) -> dict:
    head, worker = cluster.nodes[0], cluster.nodes[1]
    out = {}

    # 1. A worker that cannot join Ray (a firewall refuses the head's GCS port on the worker).
    cluster.block_tcp(worker, 29501)
    try:
        out["worker_cannot_join"] = _launch(
            cluster, tmp, lambda c, e: _first_log_time(c, worker, "Failed to connect to GCS"), executor="ray"
        )
    finally:
        cluster.unblock_tcp(worker, 29501)

    # 2. A container that exits at once (vLLM's argparse refuses an argument, native executor).
    def first_exit(c, failed) -> float | None:
        node = next(n for n in c.nodes[:2] if failed.cause.startswith(n.name + ":"))
        return _finished_at(c, node)

    out["container_exits_at_once"] = _launch(
        cluster, tmp, first_exit, executor="native", vllm_args=["--no-such-option"]
    )

    # 3. Out of memory during the load (the head's vLLM prints torch's OutOfMemoryError).
    out["oom_during_load"] = _launch(
        cluster,
        tmp,
        lambda c, e: _first_log_time(c, head, "OutOfMemoryError"),
        executor="ray",
        env={"SPARK_TEST_FAIL": "oom"},
    )
    return out
