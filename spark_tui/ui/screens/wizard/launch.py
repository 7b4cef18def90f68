"""Step 4 of the wizard: the launch, stage by stage, with the head's own log and every node's
memory while the model loads; READY or the failure and its rollback."""

from __future__ import annotations

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.reactive import reactive
from textual.widgets import DataTable, Log, ProgressBar, Static

from spark_tui.core.cockpit import CockpitAPI, Follower
from spark_tui.core.launch import events as ev
from spark_tui.core.node.logs import LogLines
from spark_tui.parsers.text import inert
from spark_tui.ui.messages import HeadLogEvent, JobDone, JobStarted, LaunchProgress
from spark_tui.ui.screens.wizard.step import Step, plain
from spark_tui.ui.widgets.memory_plot import MemoryPlot


class LaunchStep(Step):
    """The launch as it goes: the banner follows the step's `state`, the stages table, shard
    progress, memory plot and log follow the core's events."""

    DEFAULT_CSS = """
    LaunchStep #launch-banner { height: auto; padding: 0 1; background: $panel; }
    LaunchStep #launch-banner.-empty { display: none; }
    LaunchStep #launch-banner.-ready { background: $success 30%; }
    LaunchStep #launch-banner.-failed { background: $error 30%; }
    LaunchStep #stages { height: auto; max-height: 14; }
    LaunchStep #shards { margin: 0 1; }
    LaunchStep #launch-log { height: 1fr; border-top: solid $primary 40%; }
    LaunchStep #launch-memory { height: 10; }
    LaunchStep #launch-memory.-empty { display: none; }
    """

    def __init__(self, core: CockpitAPI, id: str):
        super().__init__(core, id)
        self.head_log: Follower | None = None  # follower of the head container during the launch
        self.memory: dict[str, list[float]] = {}  # node -> available GiB during the load
        self.memory_total = 0.0

    state: reactive[str] = reactive("idle", init=False)  # idle | running | ready | failed

    def watch_state(self, state: str) -> None:
        self.set_class(state == "running", "-running")
        banner = self.query_one("#launch-banner", Static)
        if state == "running":
            banner.update(
                Text(
                    f"launching {self.core.config['image']} on {len(self.core.config.nodes)} node(s)...",
                    style="bold",
                )
            )
            banner.set_class(False, "-empty", "-ready", "-failed")  # a launch again starts plain
        elif state == "failed":
            banner.update(
                Text(
                    f"{banner.render()}\nrollback finished: see the log below ({self.key('wizard.back')}: back)",
                    style="bold red",
                )
            )

    def compose(self) -> ComposeResult:
        yield Static(id="launch-banner", classes="-empty")
        yield DataTable(id="stages", cursor_type="none")
        yield ProgressBar(total=100, id="shards", show_eta=False)
        yield MemoryPlot(id="launch-memory", classes="-empty")
        yield Log(id="launch-log", max_lines=5000)

    def on_mount(self) -> None:
        self.query_one("#stages", DataTable).add_columns("node", "stage", "status", "detail", "elapsed")

    def enter(self) -> None:
        self.query_one("#stages", DataTable).focus()

    def start(self) -> None:
        self.post_message(JobStarted("launch"))  # the app stops supervising what ran before
        self.state = "running"
        self.query_one("#stages", DataTable).clear()
        self.memory, self.memory_total = {}, 0.0
        self.run_launch()

    @work(exclusive=True, group="launch", name="launch", exit_on_error=False)
    async def run_launch(self) -> None:
        ok = False
        try:
            ok = await self.core.launch(lambda e: self.post_message(LaunchProgress(e)))
        finally:
            self.post_message(JobDone("launch", ok))

    def on_launch_progress(self, message: LaunchProgress) -> None:
        """Every event in its own words (core/launch/events.py: the CLI's, shown by the core) into the log;
        here only where else it goes and how it is styled. (`inert` again only as the terminal's
        last guard: idempotent on the core's shown text; masking is the core's alone.)"""
        e = message.event
        self.query_one("#launch-log", Log).write_lines([inert(line) for line in e.lines()])
        banner = self.query_one("#launch-banner", Static)
        if isinstance(e, ev.Stage):
            self.stage_row(e)
        elif isinstance(e, ev.Memory):
            self.memory_plot(e)
        elif isinstance(e, ev.Ready):
            self.query_one("#shards", ProgressBar).update(progress=100)
            t = Text(inert(e.headline()), style="bold")
            for n in e.nccl:
                t.append("\n" + inert(e.net_line(n)), style="yellow" if n.level == "warn" else "")
            banner.update(t)
            banner.set_class(True, "-ready")
        elif isinstance(e, ev.Failed):
            t = Text(
                f"{inert(e.headline())}\nrolling back everything this launch started...", style="bold red"
            )
            for line in e.log_lines[-8:]:
                t.append("\n" + inert(e.quoted(line))[:146], style="red")
            banner.update(t)
            banner.set_class(True, "-failed")
        elif isinstance(e, ev.DriftItem):
            banner.update(Text(f"{banner.render()}\n{inert(e.say())}", style="bold red"))

    def stage_row(self, e: ev.Stage) -> None:
        if e.node == self.core.config.head.name and e.stage == "container" and e.status == "done":
            self.follow_head()
        stages = self.query_one("#stages", DataTable)
        key = f"{e.node}/{e.stage}"
        style = "red" if e.status == "failed" else "green" if e.status == "done" else "cyan"
        cells = (
            plain(e.node),
            plain(e.stage),
            Text(e.status, style=style),
            plain(e.detail[:80]),
            plain(f"{e.elapsed:.1f}s"),
        )
        if key in stages.rows:
            for col, value in zip(stages.columns, cells, strict=False):
                stages.update_cell(key, col, value)
        else:
            stages.add_row(*cells, key=key)
        if e.stage == "shards" and e.fraction is not None:
            self.query_one("#shards", ProgressBar).update(progress=e.fraction * 100)

    def memory_plot(self, e: ev.Memory) -> None:
        """Every node's available memory while the model loads: the guard's view, plotted."""
        for node, values in self.memory.items():
            if node != e.node and values:
                values.append(values[-1])  # one sample per event keeps the lines aligned
        self.memory.setdefault(e.node, []).append(e.available_mib / 1024)
        self.memory_total = max(self.memory_total, e.total_mib / 1024)
        plot = self.query_one("#launch-memory", MemoryPlot)
        plot.remove_class("-empty")
        plot.update({f"{n} available": v for n, v in self.memory.items()}, self.memory_total)

    def follow_head(self) -> None:
        """The head container's own log, live, under the stage events."""
        if self.head_log is not None:
            return
        head = self.core.config.head.name
        head_log = self.head_log = self.core.follower(
            head,
            self.core.config["container_name"],
            lambda e: self.post_message(HeadLogEvent(e)),
            tail=200,
        )
        head_log.start()

    def on_head_log_event(self, message: HeadLogEvent) -> None:
        if isinstance(message.event, LogLines):
            log = self.query_one("#launch-log", Log)
            log.write_lines([f"  | {self.shown(line)}" for line in message.event.lines])

    def on_job_done(self, message: JobDone) -> None:
        if message.job != "launch":
            return
        self.state = "ready" if message.ok else "failed"

    async def on_unmount(self) -> None:
        if self.head_log is not None:
            await self.head_log.stop()
