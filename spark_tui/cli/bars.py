"""`spark-tui up` on a terminal: one live progress bar per node and stage (rich), the other events
printed above them. Without a terminal (or with --json) `up` prints one line per change instead."""

from __future__ import annotations

from rich.console import Console
from rich.progress import BarColumn, Progress, TaskID, TextColumn, TimeElapsedColumn

from spark_tui.core.launch import events as ev


class StageBars:
    def __init__(self, console: Console | None = None):
        """Events arrive shown (the core made their text inert and masked): a bar shows a stage's
        words, and every other event is printed above the bars in its own words."""
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

    def emit(self, event) -> None:
        if isinstance(event, ev.Memory):  # a bar of the node's used memory while the model loads
            event = ev.Stage(
                event.node, "memory", "progress", event.available(), event.elapsed, event.used_fraction()
            )
        if not isinstance(event, ev.Stage):
            self.progress.console.print(event.say(), markup=False, highlight=False)
            return
        key = (event.node, event.stage)
        completed = 100 if event.status == "done" else round((event.fraction or 0.0) * 100)
        node, stage, status, detail = event.node, event.stage, event.status, event.detail[:60]
        if key not in self.tasks:
            self.tasks[key] = self.progress.add_task(
                "", total=100, completed=completed, node=node, stage=stage, status=status, detail=detail
            )
        else:
            self.progress.update(
                self.tasks[key], completed=completed, node=node, stage=stage, status=status, detail=detail
            )
