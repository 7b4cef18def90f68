"""Every node's log during `up`, read through the failure knowledge base.

A launch hands each batch of new lines it reads (the head's log, the workers' logs, an exited
container's last lines) to `FailureWatch.feed`. A failure the table names as an error ends the
launch with that node, cause, figures and fix; a warning is told once and the launch goes on.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from spark_tui.core.launch.events import Diagnosis
from spark_tui.knowledge import Finding, Watch, default_matcher
from spark_tui.parsers.ray_lines import origin_ip


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


def cause_text(f: Finding, how: str = "", read_in: str = "", origin: str = "", log: str = "log") -> str:
    """The Failed cause: node, what happened, the fix, the line it was read from, and how the
    container ended when it had (`how`). A line read in another node's log (a Ray worker's,
    which reaches the head's log under its actor prefix) says so, with the worker's address (the
    line's prefix, else `origin`: the driver's copy of a worker's exception has no prefix of its
    own): the same words whether the knowledge base or the launch's reading of vLLM's failure
    named it first. `log` says which log the line is from (the kernel's, for an Xid)."""
    where = ""
    if read_in and read_in != f.node:
        ip = origin_ip(f.line) or origin
        where = f" ({f'ip={ip}, ' if ip else ''}read in {read_in}'s log)"
    # The container's end comes last: the cause reads the same whether the log was read while
    # the container ran or after it had exited.
    ended = f"; container {how}" if how else ""
    return f"{f.node}: {f.title}{where}. Fix: {f.fix} ({log}: {f.quoted(240)}){ended}"


class FailureWatch:
    def __init__(self, emit: Callable[[Any], object]):
        self.emit = emit
        self.matcher = default_matcher()  # one prefilter for every node
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
        # A secondary follows from another error; read in the same batch it is told after it, whatever
        # order the log's two streams (stdout: our exit line, stderr: the traceback) interleaved in.
        for f in sorted(new, key=lambda f: f.secondary):
            if f.severity in ("error", "warn"):
                self.emit(diagnosis(f))
        return self.cause(node) if any(f.severity == "error" for f in new) else None

    def line_cause(self, line: str, node: str, read_in: str, origin: str = "") -> str | None:
        """The cause text for one failure line the launch picked itself (vLLM's failing rank),
        when the table knows it as a primary error: named for `node`, read in `read_in`'s log."""
        found = [f for f in self.matcher.match(line) if f.severity == "error" and not f.secondary]
        if not found:
            return None
        found[0].node = node
        return cause_text(found[0], read_in=read_in, origin=origin)

    def cause(self, node: str) -> Finding | None:
        """The node's primary error, if its lines named one."""
        found = self.watch(node).cause()
        return found if found is not None and not found.secondary else None

    def warnings(self) -> list[Finding]:
        return [f for w in self.watches.values() for f in w.ranked() if f.severity == "warn"]
