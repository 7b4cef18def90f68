"""The wizard's four steps, one widget each: image -> check -> review -> launch.

Each step owns its widgets, its worker and its state; the wizard screen (ui/screens/wizard.py)
only moves between them. Steps reach the core through the CockpitAPI they are given and show
every line from a node masked and inert.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.message import Message
from textual.widgets import DataTable, Input, Log, ProgressBar, Static

from spark_tui.core import events as ev
from spark_tui.core.check import CheckResult
from spark_tui.core.cockpit import CockpitAPI, Follower
from spark_tui.core.logs import LogLines
from spark_tui.errors import ConfigError
from spark_tui.parsers.text import inert
from spark_tui.settings import report
from spark_tui.settings.keys import hint
from spark_tui.ui.messages import CheckRowArrived, HeadLogEvent, JobDone, LaunchProgress

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


def short_paths(text: str) -> str:
    """`cluster file /long/dir/duo.yaml:5:8` -> `cluster file duo.yaml:5:8` (the table has no room for dirs)."""
    return re.sub(r"(?<![\w.])/(?:[^\s/]+/)+", "", text)


class Step(Vertical):
    """What every step has: the core, and the user's keys for hints."""

    def __init__(self, core: CockpitAPI, id: str):
        super().__init__(id=id)
        self.core = core

    def key(self, binding_id: str) -> str:
        """The key shown in a hint, after the user's remapping (the key registry decides)."""
        return hint(binding_id, getattr(self.app, "keymap", {}))

    def shown(self, line: str) -> str:
        """A line from a node, as a person may see it: secrets masked, escapes made inert."""
        return self.core.redact.show(line)

    def enter(self) -> None:
        """The wizard moved to this step: start its work, focus its table."""
        raise NotImplementedError


# --- step 1: image --------------------------------------------------------------------


class ImageStep(Step):
    @dataclass
    class Chosen(Message):
        """The operator picked or typed an image reference."""

        ref: str

    def compose(self) -> ComposeResult:
        yield Static(
            "Images on the nodes (enter: use it). Same tag with different layers is marked MISMATCH.",
            classes="hint",
        )
        yield DataTable(id="images", cursor_type="row", zebra_stripes=True)
        yield Input(placeholder="or type an image reference and press enter", id="image-input")

    def on_mount(self) -> None:
        self.query_one("#images", DataTable).add_columns("image", "digest", "size", "created", "nodes", "")

    def enter(self) -> None:
        self.load_images()
        self.query_one("#images", DataTable).focus()

    @work(exclusive=True, group="images")
    async def load_images(self) -> None:
        rows = await self.core.images()
        table = self.query_one("#images", DataTable)
        table.clear()
        total = len(self.core.config.nodes)
        current = self.core.config["image"]
        for r in rows:
            have = f"{len(r.nodes)}/{total} " + ",".join(r.nodes)
            mark = (
                Text("MISMATCH", style="bold red")
                if r.mismatch
                else Text("missing on some" if len(r.nodes) < total else "", style="yellow")
            )
            ref = Text(inert(r.ref), style="bold" if r.ref == current else "")
            table.add_row(
                ref, r.digest.split(":")[-1][:12], f"{r.size_mb:.0f} MB", r.created, have, mark, key=r.ref
            )

    @on(DataTable.RowSelected, "#images")
    def image_row(self, event: DataTable.RowSelected) -> None:
        self.post_message(self.Chosen(str(event.row_key.value)))

    @on(Input.Submitted, "#image-input")
    def image_typed(self, event: Input.Submitted) -> None:
        if event.value.strip():
            self.post_message(self.Chosen(event.value.strip()))


# --- step 2: check --------------------------------------------------------------------


class CheckStep(Step):
    def __init__(self, core: CockpitAPI, id: str):
        super().__init__(core, id)
        self.results: list[CheckResult] = []
        self.rows: set[str] = set()  # row keys that have a result
        self.running = False

    def compose(self) -> ComposeResult:
        yield Static(id="check-summary", classes="hint")
        yield DataTable(id="checks", cursor_type="row")

    def on_mount(self) -> None:
        self.query_one("#checks", DataTable).add_columns("status", "node", "check", "message", "fix")

    def enter(self) -> None:
        self.run_check()
        self.query_one("#checks", DataTable).focus()

    @work(exclusive=True, group="check")
    async def run_check(self) -> None:
        self.running = True
        self.results, self.rows = [], set()
        table = self.query_one("#checks", DataTable)
        table.clear()
        for node in self.core.config.nodes:
            for cid in NODE_CHECKS:
                table.add_row(Text("running", style="cyan"), node.name, cid, "", "", key=f"{node.name}/{cid}")
        self.summary()
        ok = False
        try:
            await self.core.check(lambda r: self.post_message(CheckRowArrived(r)))
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
            r.node,
            r.id,
            Text(inert(r.message)),
            Text(inert(r.fix if r.status != "pass" else ""), style="dim"),
        )
        if key in table.rows:
            for col, value in zip(table.columns, cells, strict=False):
                table.update_cell(key, col, value)
        else:
            table.add_row(*cells, key=key)
        self.summary()

    def on_job_done(self, message: JobDone) -> None:
        if message.job != "check":
            return
        self.running = False
        table = self.query_one("#checks", DataTable)
        for key in list(table.rows):
            if key.value not in self.rows:
                table.update_cell(key, next(iter(table.columns)), Text("not run", style="dim"))
        self.summary()

    def summary(self) -> None:
        counts = {s: sum(r.status == s for r in self.results) for s in ("pass", "warn", "fail", "skipped")}
        state = "running..." if self.running else "done"
        text = Text(f"check {state}  ", style="bold")
        for s, n in counts.items():
            text.append(f"{n} {s}  ", style=STATUS_STYLE[s])
        text.append(f"({self.key('refresh')}: run again, {self.key('wizard.next')}: next)", style="dim")
        self.query_one("#check-summary", Static).update(text)


# --- step 3: review -------------------------------------------------------------------


class ReviewStep(Step):
    def __init__(self, core: CockpitAPI, id: str):
        super().__init__(core, id)
        self.edit_key: str | None = None

    def compose(self) -> ComposeResult:
        yield Static(id="review-warnings")
        yield DataTable(id="settings", cursor_type="row", zebra_stripes=True)
        yield Input(id="edit-input", classes="-hidden")
        yield Static(id="edit-error")

    def on_mount(self) -> None:
        settings = self.query_one("#settings", DataTable)
        # Fixed widths so provenance stays on screen at 120 columns; cells cut with an ellipsis.
        for label, width in (
            ("scope", 7),
            ("setting", 20),
            ("requested (all layers)", 30),
            ("effective", 20),
            ("from", 30),
        ):
            settings.add_column(label, width=width)

    def enter(self) -> None:
        self.show_review()
        self.query_one("#settings", DataTable).focus()

    def show_review(self) -> None:
        config = self.core.config
        t = Text()
        for w in config.warnings:
            t.append("! ", style="bold red")
            t.append(inert(w) + "\n", style="yellow")
        rows = report.rows(config)
        lost = [(r, x) for r in rows for x in r.not_applied]
        if lost:
            t.append("Requested but not applied:\n", style="bold")
            for r, x in lost:
                t.append(f"  {r.scope}.{r.key}: {inert(x)}\n")
        if not t.plain:
            t.append("No look-alike variables, nothing overridden.", style="green")
        self.query_one("#review-warnings", Static).update(t)
        table = self.query_one("#settings", DataTable)
        table.clear()
        for r in rows:
            key = r.key if r.scope == "cluster" else f"nodes.{r.scope}.{r.key}"
            source = Text(
                short_paths(r.source), style="bold cyan" if r.source.startswith("interactive") else ""
            )
            # Every value some layer asked for: the winner in bold, the losers struck out.
            requested = Text()
            for value, src, won in r.requested:
                requested.append(", " if requested.plain else "")
                requested.append(f"{inert(value)} ({src})", style="bold" if won else "strike yellow")
            table.add_row(r.scope, r.key, requested, Text(inert(r.effective)), source, key=key)

    @property
    def editing(self) -> bool:
        return not self.query_one("#edit-input", Input).has_class("-hidden")

    def cancel_edit(self) -> None:
        self.query_one("#edit-input", Input).add_class("-hidden")
        self.query_one("#settings", DataTable).focus()

    def start_edit(self) -> None:
        table = self.query_one("#settings", DataTable)
        if table.row_count == 0:
            return
        key = str(table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value)
        scope, name = (key.split(".")[1], key.split(".")[2]) if key.startswith("nodes.") else ("cluster", key)
        value = (
            self.core.config.values[name] if scope == "cluster" else self.core.config.node(scope).values[name]
        )
        if value.setting.scope == "node" and name == "name":
            self.notify("a node's name cannot be edited here", severity="warning")
            return
        self.edit_key = key
        box = self.query_one("#edit-input", Input)
        box.placeholder = f"{key}: new value (empty: drop the edit)"
        box.value = (
            ""
            if value.setting.secret
            else value.setting.kind.show(value.value)
            if value.value is not None
            else ""
        )
        box.password = value.setting.secret
        box.remove_class("-hidden")
        box.focus()

    @on(Input.Submitted, "#edit-input")
    def edit_done(self, event: Input.Submitted) -> None:
        error = self.query_one("#edit-error", Static)
        if self.edit_key is None:
            return
        try:
            self.core.edit(self.edit_key, event.value if event.value != "" else None)
        except ConfigError as exc:
            error.update(Text(f"{exc.source}: {exc.message}", style="bold red"))
            return
        error.update("")
        event.input.add_class("-hidden")
        self.show_review()
        self.query_one("#settings", DataTable).focus()


# --- step 4: launch -------------------------------------------------------------------


class LaunchStep(Step):
    def __init__(self, core: CockpitAPI, id: str):
        super().__init__(core, id)
        self.state = "idle"  # idle | running | ready | failed
        self.head_log: Follower | None = None  # follower of the head container during the launch

    def compose(self) -> ComposeResult:
        yield Static(id="launch-banner", classes="-empty")
        yield DataTable(id="stages", cursor_type="none")
        yield ProgressBar(total=100, id="shards", show_eta=False)
        yield Log(id="launch-log", max_lines=5000)

    def on_mount(self) -> None:
        self.query_one("#stages", DataTable).add_columns("node", "stage", "status", "detail", "elapsed")

    def enter(self) -> None:
        self.query_one("#stages", DataTable).focus()

    def start(self) -> None:
        self.state = "running"
        banner = self.query_one("#launch-banner", Static)
        banner.update(
            Text(
                f"launching {self.core.config['image']} on {len(self.core.config.nodes)} node(s)...",
                style="bold",
            )
        )
        banner.remove_class("-empty")
        self.query_one("#stages", DataTable).clear()
        self.run_launch()

    @work(exclusive=True, group="launch")
    async def run_launch(self) -> None:
        ok = False
        try:
            ok = await self.core.launch(lambda e: self.post_message(LaunchProgress(e)))
        finally:
            self.post_message(JobDone("launch", ok))

    def on_launch_progress(self, message: LaunchProgress) -> None:
        e = message.event
        log = self.query_one("#launch-log", Log)
        stages = self.query_one("#stages", DataTable)
        banner = self.query_one("#launch-banner", Static)
        if isinstance(e, ev.Stage):
            if e.node == self.core.config.head.name and e.stage == "container" and e.status == "done":
                self.follow_head()
            key = f"{e.node}/{e.stage}"
            cells = (
                e.node,
                e.stage,
                Text(
                    e.status,
                    style="red" if e.status == "failed" else "green" if e.status == "done" else "cyan",
                ),
                Text(inert(e.detail)[:80]),
                f"{e.elapsed:.1f}s",
            )
            if key in stages.rows:
                for col, value in zip(stages.columns, cells, strict=False):
                    stages.update_cell(key, col, value)
            else:
                stages.add_row(*cells, key=key)
            if e.stage == "shards" and e.fraction is not None:
                self.query_one("#shards", ProgressBar).update(progress=e.fraction * 100)
            log.write_line(f"[{e.elapsed:6.1f}s] {e.node} {e.stage} {e.status} {inert(e.detail)}")
        elif isinstance(e, ev.Ready):
            self.query_one("#shards", ProgressBar).update(progress=100)
            t = Text(f"READY in {e.elapsed:.1f} s: {inert(e.model)} at {e.endpoint}", style="bold")
            for n in e.nccl:
                t.append(f"\n{n.node}: {inert(n.text)}", style="yellow" if n.level == "warn" else "")
            banner.update(t)
            banner.set_class(True, "-ready")
            log.write_line(f"READY {e.endpoint}")
        elif isinstance(e, ev.Failed):
            t = Text(
                f"FAILED: {self.shown(e.cause)}\nrolling back everything this launch started...",
                style="bold red",
            )
            for line in e.log_lines[-8:]:
                t.append(f"\n  | {self.shown(line)[:140]}", style="red")
            banner.update(t)
            banner.set_class(True, "-failed")
            log.write_line(f"FAILED {self.shown(e.cause)}")
        elif isinstance(e, ev.NcclNet):
            log.write_line(f"{'WARNING ' if e.level == 'warn' else ''}{e.node} {inert(e.text)}")
        elif isinstance(e, ev.Removed):
            log.write_line(f"removed {e.container} ({e.image}) on {e.node}")
        elif isinstance(e, ev.StillHolding):
            log.write_line(f"STILL HOLDING {e.container} on {e.node}: {inert(e.reason)}")
        elif isinstance(e, ev.DriftItem):
            log.write_line(
                f"DRIFT {e.node} {e.what}: requested {inert(e.requested)}, actual {inert(e.actual)}"
            )
            banner.update(
                Text(
                    f"{banner.render()}\nDRIFT {e.node} {e.what}: requested {inert(e.requested)}, actual {inert(e.actual)}",
                    style="bold red",
                )
            )

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
        if not message.ok:
            banner = self.query_one("#launch-banner", Static)
            banner.update(
                Text(
                    f"{banner.render()}\nrollback finished: see the log below ({self.key('wizard.back')}: back)",
                    style="bold red",
                )
            )

    async def on_unmount(self) -> None:
        if self.head_log is not None:
            await self.head_log.stop()
