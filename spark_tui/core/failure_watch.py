"""Every node's log during `up`, read through the failure knowledge base.

A launch hands each batch of new lines it reads (the head's log, the workers' logs, an exited
container's last lines) to `FailureWatch.feed`. A failure the table names as an error ends the
launch with that node, cause, figures and fix; a warning is told once and the launch goes on.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from spark_tui.core.events import Diagnosis
from spark_tui.knowledge import Finding, Matcher, Watch


def diagnosis(f: Finding) -> Diagnosis:
    return Diagnosis(
        node=f.node,
        id=f.id,
        severity=f.severity,
        title=f.title,
        fix=f.fix,
        line=f.line,
        means=f.means,
        figures=dict(f.figures),
        source=f.source,
    )


def cause_text(f: Finding, how: str = "") -> str:
    """The Failed cause: node, what happened, the fix, and the line it was read from."""
    head = f"{f.node}: " + (f"container {how}: " if how else "")
    return f"{head}{f.title}. Fix: {f.fix} (log: {f.line[:240]})"


class FailureWatch:
    def __init__(self, emit: Callable[[Any], object]):
        self.emit = emit
        self.matcher = Matcher()  # one prefilter for every node
        self.watches: dict[str, Watch] = {}

    def watch(self, node: str) -> Watch:
        if node not in self.watches:
            self.watches[node] = Watch(node, self.matcher)
        return self.watches[node]

    def feed(self, node: str, lines: Iterable[str]) -> Finding | None:
        """The node's cause once its lines name a primary error, else None. An error that only
        follows from another (an engine that died of something the table does not know) is left
        to the launch's own reading, which quotes the line above it. Each new warning or error is
        emitted as a Diagnosis event."""
        w = self.watch(node)
        new = w.feed_lines(list(lines))
        for f in new:
            if f.severity in ("error", "warn"):
                self.emit(diagnosis(f))
        return self.cause(node) if any(f.severity == "error" for f in new) else None

    def cause(self, node: str) -> Finding | None:
        """The node's primary error, if its lines named one."""
        found = self.watch(node).cause()
        return found if found is not None and not found.secondary else None

    def warnings(self) -> list[Finding]:
        return [f for w in self.watches.values() for f in w.ranked() if f.severity == "warn"]
