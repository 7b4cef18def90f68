"""`restart: on-failure`: keep a launched deployment serving after a crash, without a restart loop.

Why spark-tui supervises, not Docker's restart policy (`--restart on-failure`): Docker restarts
the one container that exited, at once and blindly. That skips the memory check (a crash from
memory pressure would be relaunched into the same pressure, again and again, each load eating
the host's memory), counts restarts over the container's lifetime instead of a window, and in a
Ray or native cluster brings back one container whose peers lost their rank: it never serves
again. spark-tui relaunches the whole deployment through the same transactional launch as `up`
(memory guard, readiness, rollback), after `memory.fit` ran again on every node's live numbers.
The price: supervision lasts while `up` runs (it stays attached), or while the cockpit that
launched runs (core/cockpit.py: the same Supervisor, the same events); the containers keep
serving when it ends.

A restart loop (more than `restart_max` restarts within `restart_window` seconds) is stopped and
named: what still runs is stopped (the containers stay, for their logs; `down` removes them).

While it watches a serving deployment it follows every node's kernel log too (core/launch/
kernel_watch.py): an Xid, NV_ERR_NO_MEMORY, the GPU falling off the bus or the OOM killer is named
for its node at once, as a Diagnosis marked `serving`, each once. That alone restarts nothing: a
GPU fault may leave the server answering, and the operator decides; a container that exits is
what the restart policy acts on.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

import docker

from spark_tui.core.launch.events import Failed, Restart, Stage, shown_by
from spark_tui.core.launch.failure_watch import FailureWatch, cause_text
from spark_tui.core.launch.kernel_watch import KernelWatch
from spark_tui.core.launch.launch import EXIT_REASON, SERVE_EXIT, Emit, Launch
from spark_tui.core.launch.live import with_detected
from spark_tui.core.models.memory_fit import model_checks
from spark_tui.core.models.model_cache import first_model_config
from spark_tui.core.node import engines
from spark_tui.core.node.errors import NodeError, why
from spark_tui.core.node.nodes import Nodes
from spark_tui.core.node.redact import Redactor
from spark_tui.settings.resolve import Config

# Seconds between looks at the containers: a crash is seen within about a second, and one
# inspect per node per second through the node's tunnel costs the nodes nothing.
WATCH_INTERVAL = 1.0


@dataclass
class Crash:
    node: str
    cause: str
    log_lines: list[str]


class Supervisor:
    """Watches the deployment `up` launched; relaunches it after a crash (see the module's why)."""

    def __init__(
        self,
        config: Config,
        nodes: Nodes,
        emit: Emit,
        clock: Callable[[], float] = time.monotonic,
        kernels: KernelWatch | None = None,
        kernel_emit: Emit | None = None,
    ):
        """`kernels`: the launch's kernel follow, handed over at READY (`Launch(...,
        follow_after_ready=True)`), so a line written just after READY is named too; without it
        the supervisor opens its own. What the kernel logs name goes to `kernel_emit` (the
        cockpit's serving view), else to `emit`."""
        self.config, self.nodes, self.clock = config, nodes, clock
        self.kernels = kernels
        # A crash's log lines are the node's words: masked and made inert here, as a launch's are.
        show = Redactor(lambda: self.config).show
        self.emit = shown_by(show, emit)
        self.kernel_emit = shown_by(show, kernel_emit) if kernel_emit is not None else self.emit
        self.restarts: deque[float] = deque()  # when each restart of the window began
        self.last_failed = ""

    def headline(self) -> str:
        """What `up` and the cockpit say when supervision begins."""
        return (
            f"supervising (restart on-failure, at most {self.config['restart_max']} restarts in "
            f"{self.config['restart_window']:.0f} s)"
        )

    async def run(self) -> str:
        """Until the deployment ends: returns why ("removed", "exited", "loop", "refused")."""
        crash = await self.watch()
        while isinstance(crash, Crash):
            now = self.clock()
            window, limit = self.config["restart_window"], self.config["restart_max"]
            while self.restarts and now - self.restarts[0] > window:
                self.restarts.popleft()
            if len(self.restarts) >= limit:
                await self._stop_all()
                self.emit(
                    Failed(
                        f"restart loop: {crash.cause}; that is {len(self.restarts) + 1} crashes within "
                        f"{window:.0f} s (restart_max {limit} in restart_window {window:.0f} s): not restarted "
                        "again, so no load after load eats the nodes' memory; what still ran is stopped, the "
                        "containers are kept for their logs (spark-tui logs; spark-tui down removes them)",
                        crash.log_lines,
                    )
                )
                return "loop"
            self.restarts.append(now)
            self.emit(Restart(crash.node, crash.cause, len(self.restarts), limit, window))
            await self._remove_all()
            refused = await self.memory_check()
            if refused:
                self.emit(Failed(f"restart refused: {refused}", crash.log_lines))
                return "refused"
            launch = Launch(self.config, self.nodes, self._launch_emit, follow_after_ready=True)
            if await launch.run():
                self.kernels = launch.kernels
                crash = await self.watch()
            else:
                # A relaunch that fails is the crash again: counted in the window like any other.
                crash = Crash("cluster", f"the relaunch failed: {self.last_failed}", [])
        return crash if isinstance(crash, str) else ""

    def _launch_emit(self, event) -> None:
        if isinstance(event, Failed):
            self.last_failed = event.cause
        self.emit(event)

    async def watch(self) -> Crash | str:
        """Looks at the containers every WATCH_INTERVAL until one crashed (a Crash), one was
        removed ("removed"), or one exited by itself with code 0 ("exited": not a failure); the
        nodes' kernel logs are followed meanwhile (each fault named once, nothing restarted)."""
        if self.kernels is None:
            self.kernels = KernelWatch(self.nodes, self.kernel_emit, serving=True)
            await self.kernels.start()
        self.kernels.emit = self.kernel_emit  # a launch's follow, from READY on
        try:
            return await self._watch_containers()
        finally:
            kernels, self.kernels = self.kernels, None  # a relaunch follows them itself
            if kernels is not None:
                await asyncio.shield(kernels.stop())

    async def _watch_containers(self) -> Crash | str:
        name = self.config["container_name"]
        while True:
            for node in self.config.nodes:
                try:
                    found = await self._look(node.name, name)
                except (NodeError, docker.errors.APIError):
                    continue  # a node not answering is no crash: asked again next round
                if found is not None:
                    return found
            await asyncio.sleep(WATCH_INTERVAL)

    async def _look(self, node: str, name: str) -> Crash | str | None:
        c = await self.nodes.docker(node, lambda client: engines.exact_container(client, name))
        if c is None:
            self.emit(Stage(node, "restart", "done", f"container {name} was removed: supervision ends"))
            return "removed"
        state = c.attrs.get("State") or {}
        if c.status == "running":
            if node != self.config.head.name or self.config["executor"] != "ray":
                return None
            # Ray holds the head's container when `vllm serve` ends: its exit is in the log.
            raw = await self.nodes.docker(node, lambda _client: c.logs(tail=20))
            tail = raw.decode(errors="replace").splitlines()
            exited = next((line for line in tail if line.startswith(SERVE_EXIT)), None)
            if exited is None:
                return None
            return await self._crash(node, c, exited.removeprefix("spark-tui: ").strip())
        if c.status in ("created", "restarting"):
            return None
        code = state.get("ExitCode")
        if code == 0 and not state.get("OOMKilled"):
            self.emit(
                Stage(node, "restart", "done", "exited with code 0: on-failure restarts only after a failure")
            )
            return "exited"
        how = f"exited with code {code}" + (
            " (killed by the kernel's OOM killer)" if state.get("OOMKilled") else ""
        )
        return await self._crash(node, c, how)

    async def _crash(self, node: str, container, how: str) -> Crash:
        """The crash named as a launch names a failure: the knowledge base, else the log's line."""
        raw = await asyncio.to_thread(container.logs, tail=400)
        lines = raw.decode(errors="replace").splitlines()
        kb = FailureWatch(self.emit)
        kb.feed(node, lines)
        named = kb.cause(node)
        if named is not None:
            return Crash(node, cause_text(named, how), lines[-20:])
        line = next((x for x in reversed(lines[-20:]) if EXIT_REASON.search(x)), "")
        return Crash(
            node, f"{node}: container {how}" + (f": {line.strip()[:200]}" if line else ""), lines[-20:]
        )

    async def memory_check(self) -> str:
        """`memory.fit` again on every node's live numbers (as `check` runs it), each row emitted;
        why the restart must not happen, or "" when it may."""
        self.config, snaps = await with_detected(self.config, self.nodes)
        rows: list[tuple[str, str, str, str, str]] = []

        def add(id_: str, node: str, status: str, message: str, fix: str = "", values=None) -> None:
            rows.append((id_, node, status, message, fix))

        usable = [n for n in self.config.nodes if any(s.node == n.name and s.reachable for s in snaps)]
        model = asyncio.ensure_future(first_model_config(self.nodes, usable, self.config["model"]))
        await model_checks(self.config, self.nodes, add, snaps, model)
        refused = []
        for id_, node, status, message, fix in rows:
            if id_ != "memory.fit":
                continue
            self.emit(
                Stage(
                    node,
                    "memory",
                    "failed" if status == "fail" else "done",
                    f"memory.fit {status}: {message}",
                )
            )
            if status == "fail":
                refused.append(f"memory.fit failed on {node}: {message}" + (f" (fix: {fix})" if fix else ""))
        return "; ".join(refused)

    async def _remove_all(self) -> None:
        """What the crashed deployment left (a Ray head still running, exited containers)."""
        await self._each_container(
            "remove", lambda client, c: client.api.remove_container(c["Id"], force=True)
        )

    async def _stop_all(self) -> None:
        await self._each_container(
            "stop",
            lambda client, c: client.api.stop(c["Id"], timeout=10) if c.get("State") == "running" else None,
        )

    async def _each_container(self, verb: str, act) -> None:
        """`act(client, container)` on each of this cluster's containers, every node at once; a
        node that cannot be reached or refuses is said, never raised."""
        name, cluster = self.config["container_name"], self.config["name"]

        def on_engine(client) -> None:
            for c in engines.own_containers(client, cluster, name):
                act(client, c)

        found = await self.nodes.each(lambda node: self.nodes.docker(node, on_engine))
        for node, result in found.items():
            if isinstance(result, NodeError):
                self.emit(Stage(node, "restart", "failed", f"could not {verb} {name}: {why(result)[:160]}"))
