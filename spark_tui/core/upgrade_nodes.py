"""What an upgrade knows of each node while it swaps images: which node answers, what the upgrade
last did there, what runs there now, and what serves. core/upgrade.py asks these before it
restores (a restore needs every node: the known-good runs on all its nodes or not at all) and
after every verdict (the outcome says what each node is left with, as the nodes show it, never
as the upgrade assumes it).

A node that does not answer is named with why; what the upgrade last saw there (a container it
started or removed, a removal that could not be done) is said beside it, marked as last seen:
the node itself may hold something else by now.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

from spark_tui.core.launch import serving
from spark_tui.core.launch.events import Removed, Stage, StillHolding
from spark_tui.core.node import engines
from spark_tui.core.node.errors import NodeError, why
from spark_tui.core.node.nodes import Nodes
from spark_tui.settings.resolve import Config

# Seconds between looks at a lost node while a restore waits for it.
ASK_EVERY = 2.0


class Ledger:
    """The last thing this upgrade did on each node, from the launch and teardown events."""

    def __init__(self) -> None:
        self.last: dict[str, str] = {}

    def see(self, event: object) -> None:
        if isinstance(event, Removed):
            self.last[event.node] = f"removed {event.container} ({event.image})"
        elif isinstance(event, StillHolding):
            self.last[event.node] = f"could not remove {event.container}: {event.reason}"
        elif isinstance(event, Stage) and event.stage == "container" and event.status in ("started", "done"):
            self.last[event.node] = f"container {event.status} ({event.detail})"


async def lost(config: Config, nodes: Nodes) -> dict[str, str]:
    """{node: why} for every node whose Docker engine does not answer (through its SSH tunnel)."""
    answers = await nodes.each(lambda node: nodes.docker(node, lambda client: client.ping()))
    return {node: why(r)[:200] for node, r in answers.items() if isinstance(r, NodeError)}


async def wait_for(
    config: Config, nodes: Nodes, seconds: float, say: Callable[[str], object]
) -> dict[str, str]:
    """Ask every node until all answer or `seconds` passed: {} when all answer, else the lost
    ones with why. Said once when waiting begins, not every round."""
    deadline = time.monotonic() + seconds
    missing = await lost(config, nodes)
    if missing and seconds > 0:
        said = "; ".join(f"{n} ({w})" for n, w in missing.items())
        say(f"waiting up to {seconds:.0f} s (upgrade.restore_wait) for {said}")
    while missing and time.monotonic() < deadline:
        await asyncio.sleep(min(ASK_EVERY, max(0.0, deadline - time.monotonic())))
        missing = await lost(config, nodes)
    return missing


async def _own(config: Config, nodes: Nodes) -> dict[str, list[dict] | NodeError]:
    """Every node's containers of this cluster, or why the node cannot be asked."""
    name, cluster = config["container_name"], config["name"]
    return await nodes.each(
        lambda node: nodes.docker(node, lambda c: engines.own_containers(c, cluster, name))
    )


async def states(config: Config, nodes: Nodes, ledger: Ledger) -> list[str]:
    """One line per node: this cluster's containers there (image, state), or why it cannot be
    asked and what the upgrade last did there."""
    name, found = config["container_name"], await _own(config, nodes)
    out = []
    for node in config.nodes:
        result = found.get(node.name)
        if isinstance(result, NodeError):
            seen = ledger.last.get(node.name)
            out.append(
                f"{node.name}: unreachable ({why(result)[:160]})"
                + (f"; last seen by this upgrade: {seen}" if seen else "")
            )
        elif not result:
            out.append(f"{node.name}: no {name} container of cluster {config['name']}")
        else:
            out.append(
                f"{node.name}: "
                + ", ".join(f"{name} {c.get('State', '?')} ({c.get('Image', '?')})" for c in result)
            )
    return out


async def serving_image(config: Config, nodes: Nodes) -> str:
    """The image that serves now: the head's container of this cluster runs and its endpoint
    answers as a client's would (core/launch/serving.py). "" when nothing serves."""
    head = config.head.name
    name, cluster = config["container_name"], config["name"]
    try:
        mine = await nodes.docker(head, lambda c: engines.own_containers(c, cluster, name))
    except NodeError:
        return ""
    running = [c for c in mine if c.get("State") == "running"]
    if not running:
        return ""
    answer = await serving.ask(config, nodes.transports[head])
    return str(running[0].get("Image") or "?") if answer.ready else ""


async def not_running(config: Config, nodes: Nodes) -> list[str]:
    """Every node whose container of this cluster does not run, or that cannot be asked: a bench
    measures the head's endpoint only, and a deployment with a node gone is not the one measured
    to be kept (on real ranks the lost node's peers fail at their next collective)."""
    name, found = config["container_name"], await _own(config, nodes)
    out = []
    for node in config.nodes:
        result = found.get(node.name)
        if isinstance(result, NodeError):
            out.append(f"{node.name} unreachable ({why(result)[:160]})")
        elif not any(c.get("State") == "running" for c in result or []):
            out.append(f"{node.name} runs no {name}")
    return out
