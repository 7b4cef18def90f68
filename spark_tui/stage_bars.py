"""`spark-tui up` on a terminal: one live progress bar per node and stage (rich), the other events
printed above them. Without a terminal (or with --json) `up` prints one line per change instead."""

from __future__ import annotations

from collections.abc import Callable

from rich.console import Console
from rich.progress import BarColumn, Progress, TaskID, TextColumn, TimeElapsedColumn

from spark_tui.core import events as ev


class StageBars:
    def __init__(
        self,
        line_of: Callable[[object], str | None],
        show: Callable[[str], str],
        console: Console | None = None,
    ):
        """`line_of(event)`: how the line printer shows an event that is not a stage (None: nothing);
        `show`: masks and makes inert what came from a node (a stage's detail)."""
        self.line_of = line_of
        self.show = show
        # markup=False: a detail quotes the node (`[/x]` would raise MarkupError, `[link=...]`
        # would become a hyperlink); the columns show it as it reads.
        self.progress = Progress(
            TextColumn("{task.fields[node]:<10} {task.fields[stage]:<10}", markup=False),
            BarColumn(bar_width=30),
            TextColumn("{task.fields[status]:<8} {task.fields[detail]}", markup=False),
            TimeElapsedColumn(),
            console=console,
            transient=False,
        )
        self.tasks: dict[tuple[str, str], TaskID] = {}

    def __enter__(self) -> StageBars:
        self.progress.start()
        return self

    def __exit__(self, *exc) -> None:
        self.progress.stop()

    def line_of_detail(self, detail: str) -> str:
        return self.show(detail)[:60]

    def emit(self, event) -> None:
        if isinstance(event, ev.Memory):  # a bar of the node's used memory while the model loads
            event = ev.Stage(
                event.node,
                "memory",
                "progress",
                memory_text(event),
                event.elapsed,
                1 - event.available_mib / event.total_mib if event.total_mib else None,
            )
        if not isinstance(event, ev.Stage):
            line = self.line_of(event)
            if line is not None:
                self.progress.console.print(line, markup=False, highlight=False)
            return
        key = (event.node, event.stage)
        completed = 100 if event.status == "done" else round((event.fraction or 0.0) * 100)
        node, stage, status, detail = event.node, event.stage, event.status, self.line_of_detail(event.detail)
        if key not in self.tasks:
            self.tasks[key] = self.progress.add_task(
                "", total=100, completed=completed, node=node, stage=stage, status=status, detail=detail
            )
        else:
            self.progress.update(
                self.tasks[key], completed=completed, node=node, stage=stage, status=status, detail=detail
            )


def memory_text(event: ev.Memory) -> str:
    return f"{event.available_mib / 1024:.1f} of {event.total_mib / 1024:.1f} GiB available"
