"""Every node's kernel log, followed (core/node/kernel_log.py) while a launch runs and while the
deployment serves.

GPU faults (an Xid, the driver's NV_ERR_NO_MEMORY, the GPU falling off the bus) and the kernel's
OOM killer are said in a node's kernel log only. During a launch the lines are taken at each of
the launch's polls (`take`): an error ends the launch. From READY on (`serve`, or a watch made
with `serving=True`) they are read through the failure table as they come: each new finding is emitted once as a Diagnosis for
its node (marked `serving`), and nothing is rolled back: a fault while serving is the operator's
to decide on (the supervisor's restart policy is for containers that exit).

A node whose kernel log cannot be read is said once (`driver.kernel_log_unreadable`); one whose
follow ended and could not be resumed (core/node/kernel_log.py) once as a KernelLogLost; lines a
resumed follow could not get back (more than the reader prints back) as a KernelLogGap.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable
from typing import Any

from spark_tui.core.launch.events import KernelLogGap, KernelLogLost
from spark_tui.core.launch.failure_watch import FailureWatch, diagnosis
from spark_tui.core.node.kernel_log import KernelLog
from spark_tui.core.node.nodes import Nodes

KERNEL_LOG_UNREADABLE = "driver.kernel_log_unreadable"  # the table's words for a kernel log we may not read


class KernelWatch:
    """The kernel logs of the nodes it was started on, one KernelLog each. A finding repeated with
    the same figures (the same Xid on the same GPU and process) is counted, not said again, as in
    a container's log (knowledge/engine.py: Watch)."""

    def __init__(
        self,
        nodes: Nodes,
        emit: Callable[[Any], object],
        kb: FailureWatch | None = None,
        serving: bool = False,
    ):
        """`emit` gets the events (shown by the caller's emit); `kb` is the launch's failure watch
        (its warnings are the launch's), else one of its own."""
        self.nodes = nodes
        self.serving = serving
        self.emit = emit
        self.kb = kb or FailureWatch(self._finding)
        self.logs: dict[str, KernelLog] = {}
        self._lines: dict[str, list[str]] = {}

    def _finding(self, event) -> None:
        self.emit(dataclasses.replace(event, serving=self.serving) if self.serving else event)

    async def start(self, names: Iterable[str] | None = None) -> None:
        """Follow every node's kernel log (or `names`') from now on. A node whose kernel log this
        user may not read (dmesg restricted, no journal group) is said once as a warning."""

        async def open_one(node: str) -> None:
            log = KernelLog(
                self.nodes.transports[node],
                node,
                lambda lines: self._got(node, lines),
                lambda cause: self.emit(KernelLogLost(node, cause)),
                lambda last, first: self.emit(KernelLogGap(node, last, first)),
            )
            if await log.open():
                log.start()
                self.logs[node] = log
                return
            said = self.kb.matcher.named(KERNEL_LOG_UNREADABLE, {"why": log.refusal}, log.refusal, node)
            self._finding(diagnosis(said))

        await self.nodes.each(open_one, names)

    def _got(self, node: str, lines: list[str]) -> None:
        if self.serving:
            self.kb.feed(node, lines)  # each new finding emitted once, as it comes
        else:
            self._lines.setdefault(node, []).extend(lines)

    def serve(self) -> None:
        """READY: from now on each finding is said as it comes, marked `serving`, and rolls
        nothing back. The launch's own table watch goes on reading, so a line the launch named
        is not named again; lines the launch had not looked at yet are read now."""
        self.serving = True
        self.kb.emit = self._finding
        for node, lines in self.take().items():
            self.kb.feed(node, lines)

    def take(self) -> dict[str, list[str]]:
        """The lines each node's kernel logged since the last take (during a launch)."""
        lines, self._lines = self._lines, {}
        return lines

    async def stop(self) -> None:
        logs, self.logs = self.logs, {}
        await self.nodes.each(lambda node: logs[node].stop(), logs)
