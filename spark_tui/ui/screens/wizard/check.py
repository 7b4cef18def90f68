"""Step 2 of the wizard: every check on every node, rows turning into results as they come;
a sync on a failed image/model row, the data links measured on a key."""

from __future__ import annotations

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.reactive import reactive
from textual.widgets import DataTable, Static

from spark_tui.core.cockpit import CockpitAPI
from spark_tui.core.launch import events as ev
from spark_tui.core.report.check import CheckResult
from spark_tui.parsers.text import inert
from spark_tui.ui.messages import CheckRowArrived, JobDone
from spark_tui.ui.screens.wizard.step import Step, plain

STATUS_STYLE = {"pass": "green", "warn": "yellow", "fail": "bold red", "skipped": "dim", "running": "cyan"}
# The checks every node gets; rows start as "running" and turn into their result.
NODE_CHECKS = (
    "ssh.reachable",
    "docker.engine",
    "image.present",
    "container.absent",
    "gpu.present",
    "net.data_interface",
)


# Check rows a sync fixes, and which sync.
SYNC_FIXES = {
    "image.present": "image",
    "image.same": "image",
    "model.cached": "model",
    "model.complete": "model",
}


class CheckStep(Step):
    """Every check's row, "running" until its result arrives; the summary line says whether a
    check runs now (`job`), with the counts so far."""

    DEFAULT_CSS = """
    CheckStep #checks { height: 1fr; }
    """

    def __init__(self, core: CockpitAPI, id: str):
        super().__init__(core, id)
        self.results: list[CheckResult] = []
        self.rows: set[str] = set()  # row keys that have a result

    # What runs now: "" (nothing), "check" or "sync". The summary line follows a check's state;
    # a sync writes its own progress there, which stays after it ends (a failure is read there).
    job: reactive[str] = reactive("", init=False)

    @property
    def running(self) -> bool:
        return bool(self.job)

    def watch_job(self, old: str, new: str) -> None:
        self.set_class(bool(new), "-running")
        if "check" in (old, new):
            self.summary()

    def compose(self) -> ComposeResult:
        yield Static(id="check-summary", classes="hint")
        yield DataTable(id="checks", cursor_type="row")

    def on_mount(self) -> None:
        self.query_one("#checks", DataTable).add_columns("status", "node", "check", "message", "fix")

    def enter(self) -> None:
        self.run_check()
        self.query_one("#checks", DataTable).focus()

    def start_fabric(self) -> None:
        if self.running:
            self.notify("the check is still running", severity="warning")
            return
        self.run_check(fabric=True)

    @work(exclusive=True, group="check", name="check", exit_on_error=False)
    async def run_check(self, fabric: bool = False) -> None:
        self.results, self.rows = [], set()
        self.job = "check"
        table = self.query_one("#checks", DataTable)
        table.clear()
        for node in self.core.config.nodes:
            for cid in NODE_CHECKS:
                table.add_row(
                    Text("running", style="cyan"),
                    plain(node.name),
                    plain(cid),
                    plain(""),
                    plain(""),
                    key=f"{node.name}/{cid}",
                )
        self.summary()
        ok = False
        try:
            await self.core.check(lambda r: self.post_message(CheckRowArrived(r)), fabric=fabric)
            ok = True
        finally:
            self.post_message(JobDone("check", ok))

    def on_check_row_arrived(self, message: CheckRowArrived) -> None:
        r = message.result
        table = self.query_one("#checks", DataTable)
        key = f"{r.node}/{r.id}"
        if key in self.rows:
            key = f"{key}/{len(self.results)}"  # several results of one id (net.reach per peer)
        self.rows.add(key)
        self.results.append(r)
        cells = (
            Text(r.status, style=STATUS_STYLE[r.status]),
            plain(r.node),
            plain(r.id),
            plain(r.message),
            plain(r.fix if r.status != "pass" else "", style="dim"),
        )
        if key in table.rows:
            for col, value in zip(table.columns, cells, strict=False):
                table.update_cell(key, col, value)
        else:
            table.add_row(*cells, key=key)
        self.summary()

    def sync_offer(self) -> str | None:
        """What a sync would fix for the highlighted row: "image", "model", or None."""
        table = self.query_one("#checks", DataTable)
        if table.row_count == 0:
            return None
        key = str(table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value)
        result = next((r for r in self.results if key.startswith(f"{r.node}/{r.id}")), None)
        if result is None or result.status not in ("fail", "warn"):
            return None
        return SYNC_FIXES.get(result.id)

    def start_sync(self) -> None:
        what = self.sync_offer()
        if what is None:
            self.notify("sync fixes a failed image.present, image.same, model.cached or model.complete row")
            return
        if self.running:
            self.notify("the check is still running", severity="warning")
            return
        self.run_sync(what)

    @work(exclusive=True, group="check", name="sync", exit_on_error=False)
    async def run_sync(self, what: str) -> None:
        self.job = "sync"
        summary = self.query_one("#check-summary", Static)
        progress: dict[str, str] = {}

        def show(event) -> None:
            # The events' own words (the CLI's), shown by the core: one line per node, the failure last.
            if isinstance(event, ev.Stage):
                progress[event.node] = inert(event.say())
            elif isinstance(event, ev.Failed):
                progress["!"] = inert(event.headline())
            self.app.call_later(summary.update, Text(f"sync {what}\n" + "\n".join(progress.values())))

        ok = False
        try:
            ok = await self.core.sync(what, show)
        finally:
            self.job = ""
            self.notify(
                f"sync {what} {'done: checking again' if ok else 'failed'}",
                severity="information" if ok else "error",
            )
            if ok:
                self.run_check()

    def on_job_done(self, message: JobDone) -> None:
        if message.job != "check":
            return
        table = self.query_one("#checks", DataTable)
        for key in list(table.rows):
            if key.value not in self.rows:
                table.update_cell(key, next(iter(table.columns)), Text("not run", style="dim"))
        if self.job == "check":  # a sync that replaced the check runs on
            self.job = ""

    def summary(self) -> None:
        counts = {s: sum(r.status == s for r in self.results) for s in ("pass", "warn", "fail", "skipped")}
        state = "running..." if self.running else "done"
        text = Text(f"check {state}  ", style="bold")
        for s, n in counts.items():
            text.append(f"{n} {s}  ", style=STATUS_STYLE[s])
        text.append(
            f"({self.key('refresh')}: run again, {self.key('wizard.fabric')}: also measure the data links, "
            f"{self.key('wizard.sync')}: sync on a failed image/model row, {self.key('wizard.next')}: next)",
            style="dim",
        )
        self.query_one("#check-summary", Static).update(text)
