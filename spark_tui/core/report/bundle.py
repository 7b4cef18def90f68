"""`spark-tui report`: one Markdown file with what an issue thread asks for, gathered in one go.

Versions (spark-tui, Docker, driver, image and its vLLM), the resolved configuration with where
each value came from, `check`, `status` per node, NCCL per node, and the last lines of each
spark-tui container's log. A node that cannot be reached is reported as such; the report is
still written. Everything that came from a node is made inert, and the whole text is masked
(the HF token, secret-named variables) before it is written.
"""

from __future__ import annotations

import datetime as dt

import docker

from spark_tui import __version__
from spark_tui.core.images.image_checks import default_cache, effective_facts
from spark_tui.core.launch.live import with_detected
from spark_tui.core.node import engines
from spark_tui.core.node.errors import NodeError, why
from spark_tui.core.node.nodes import Nodes
from spark_tui.core.node.probes import NodeSnapshot
from spark_tui.core.node.redact import Redactor
from spark_tui.core.report.check import CheckResult, run_checks
from spark_tui.core.report.cluster_state import as_lines, cluster_state
from spark_tui.core.report.status_text import render
from spark_tui.parsers.text import inert
from spark_tui.settings import provenance as settings_report
from spark_tui.settings.resolve import Config

DRIVER = ["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"]


async def build(config: Config, nodes: Nodes, log_lines: int = 200, fabric: bool = False) -> str:
    config, snaps = await with_detected(config, nodes)
    results: list[CheckResult] = await run_checks(config, nodes, fabric=fabric)
    watches: dict = {}  # once serving: figures with their series, node loads, signals
    state = await cluster_state(config, nodes, snaps, watches=watches)
    if "watch" in watches:
        await watches["watch"].close()
    by_node = {s.node: s for s in snaps}
    driver_of = await nodes.each(lambda node: _driver(nodes, by_node[node]), by_node)
    drivers = [f"unknown ({d})" if isinstance(d, NodeError) else d for d in driver_of.values()]
    _, facts, why_none = await effective_facts(
        config, nodes, default_cache(), {s.node for s in snaps if not s.reachable or s.docker_error}
    )
    tail_of = await nodes.each(lambda node: _tail(config, nodes, by_node[node], log_lines), by_node)
    logs = [
        [f"(log unreadable: {why(t)[:200]})"] if isinstance(t, NodeError) else t for t in tail_of.values()
    ]

    out: list[str] = [
        f"# spark-tui report: cluster {config['name']}",
        "",
        f"Written {dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M:%S} UTC by spark-tui {__version__}. "
        "Secrets are masked; text from the nodes is shown inert.",
        "",
        "## Versions",
        "",
        "| node | reachable | Docker | storage | kernel | GPU driver |",
        "|---|---|---|---|---|---|",
    ]
    for snap, driver in zip(snaps, drivers, strict=True):
        h = snap.host
        reach = "yes" if snap.reachable else f"NO: {snap.error}"
        # No Docker engine on a node is a fact of the report, said where its version would be.
        docker_cell = h.docker_version or (f"none: {snap.docker_error}" if snap.docker_error else "-")
        out.append(
            f"| {snap.node} | {_cell(reach)} | {_cell(docker_cell)} | {h.storage_driver or '-'} "
            f"| {h.kernel or '-'} | {_cell(driver)} |"
        )
    image = config["image"]
    if facts is None:
        out += ["", f"Image {image}: {why_none}"]
    else:
        vllm = f"vLLM {facts.vllm} ({facts.vllm_from})" if facts.vllm else "vLLM version unknown"
        ray = (
            f"Ray {facts.ray_version or 'present'}"
            if facts.ray
            else "no Ray"
            if facts.ray is False
            else "Ray unknown"
        )
        out += [
            "",
            f"Image {image} ({facts.image_id[7:19]}): {vllm}, {ray}, transformers {facts.transformers or '?'}",
        ]
    out += ["", "## Configuration (effective, with where each value came from)", "", "```text"]
    out += [settings_report.as_text(config), "```", "", "## Check", ""]
    out += [
        "The pre-launch check: while the cluster runs, `container.absent` fails by design.",
        "",
        "```text",
    ]
    marks = {"pass": "PASS", "warn": "WARN", "fail": "FAIL", "skipped": "SKIP"}
    for r in results:
        out.append(f"[{marks[r.status]}] {r.node:<10} {r.id:<20} {inert(r.message)}")
        if r.fix and r.status != "pass":
            out.append(f"       fix: {inert(r.fix)}")
    out += ["```", "", "## Status", "", "```text", render(snaps, config), "", *as_lines(state, config), "```"]
    out += ["", "## NCCL", ""]
    if state.nccl:
        out += [f"- {node}: {inert(net.text())}" for node, net in state.nccl.items()]
    else:
        out.append("No spark-tui container is running: no NCCL lines to read.")
    out += ["", "## Container logs", ""]
    for snap, tail in zip(snaps, logs, strict=True):
        out += [f"### {snap.node}: {config['container_name']}", "", "```text", *tail, "```", ""]
    redactor = Redactor(lambda: config)
    return "\n".join(redactor.show(line) for row in out for line in row.split("\n")) + "\n"


def _cell(text: str) -> str:
    return inert(text).replace("|", "/")[:120]


async def _driver(nodes: Nodes, snap: NodeSnapshot) -> str:
    if not snap.reachable:
        return "-"
    try:
        res = await nodes.transports[snap.node].run(DRIVER, timeout=20)
    except TimeoutError as exc:
        return f"unknown ({exc})"
    problem = res.problem("nvidia-smi")
    if problem:  # no NVIDIA driver tools on this node: a fact for the report, not an error
        return problem
    if res.exit_status != 0:
        return f"nvidia-smi failed: {(res.stdout + res.stderr).strip().splitlines()[:1] or ['exit ' + str(res.exit_status)]}"
    return ", ".join(sorted(set(res.stdout.split()))) or "-"


async def _tail(config: Config, nodes: Nodes, snap: NodeSnapshot, lines: int) -> list[str]:
    """The last lines of the node's spark-tui container, inert; or why there are none."""
    name = config["container_name"]
    if not snap.reachable:
        return [f"(node unreachable: {snap.error})"]
    if not any(c.name == name for c in snap.containers):
        return [f"(no container named {name} on {snap.node})"]
    try:
        raw = await nodes.docker(
            snap.node,
            lambda client: (
                engines.exact_container(client, name).logs(tail=lines).decode("utf-8", errors="replace")
            ),
        )
    except (docker.errors.APIError, AttributeError) as exc:  # AttributeError: it went meanwhile
        return [f"(log unreadable: {why(exc)[:200]})"]
    return [inert(line) for line in raw.splitlines()]
