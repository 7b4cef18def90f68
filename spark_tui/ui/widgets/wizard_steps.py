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
from spark_tui.core.image_table import ImageEntry, ImageListing, short_version, yes_no
from spark_tui.core.logs import LogLines
from spark_tui.core.model_cache import ModelConfig
from spark_tui.errors import ConfigError
from spark_tui.parsers.text import inert
from spark_tui.settings import report
from spark_tui.settings.keys import hint
from spark_tui.ui.messages import CheckRowArrived, HeadLogEvent, JobDone, LaunchProgress
from spark_tui.ui.widgets.memory_plot import MemoryPlot

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


def plain(value: object, style: str = "") -> Text:
    """A table cell: always Text, inert, never markup. DataTable renders a str cell as Rich
    markup, so an image label `[@click=app.quit]` would become an action and `[/x]` a crash."""
    return Text(inert(str(value)), style=style)


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
    """Every image on the nodes with what it can run; the effective one marked with its source.
    Highlighting another image says what choosing it would change."""

    @dataclass
    class Chosen(Message):
        """The operator picked or typed an image reference."""

        ref: str

    def __init__(self, core: CockpitAPI, id: str):
        super().__init__(core, id)
        self.listing: ImageListing | None = None

    def compose(self) -> ComposeResult:
        yield Static("Looking at the images on the nodes...", id="image-effective", classes="hint")
        yield DataTable(id="images", cursor_type="row", zebra_stripes=True)
        yield Static(id="image-detail", classes="hint")
        yield Input(placeholder="or type an image reference and press enter", id="image-input")

    def on_mount(self) -> None:
        self.query_one("#images", DataTable).add_columns(
            "", "image", "id", "nodes", "vLLM", "Ray", "native", "model", "can it run?"
        )

    def enter(self) -> None:
        self.load_images()
        self.query_one("#images", DataTable).focus()

    @work(exclusive=True, group="images")
    async def load_images(self) -> None:
        self.listing = found = await self.core.images()
        table = self.query_one("#images", DataTable)
        table.clear()
        total = len(self.core.config.nodes)
        executor = self.core.config["executor"]
        for e in found.entries:
            f, ids = e.facts, set(e.row.nodes.values())
            problems = e.problems(executor, found.model)
            verdict = (
                Text("✗ " + ", ".join(short for short, _ in problems), style="bold red")
                if problems
                else Text("?", style="dim")
                if f is None
                else Text("✓", style="green")
            )
            table.add_row(
                Text("*", style="bold") if e.effective else plain(""),
                plain(e.row.ref, style="bold" if e.effective else ""),
                Text("MISMATCH", style="bold red") if len(ids) > 1 else plain(next(iter(ids), "-")),
                plain(
                    f"{len(e.row.nodes)}/{total} " + ",".join(e.row.nodes),
                    style="" if len(e.row.nodes) == total else "yellow",
                ),
                plain(short_version(f.vllm) if f else "?"),
                plain((f.ray_version or "yes" if f.ray else yes_no(f.ray)) if f else "?"),
                plain(yes_no(f.native) if f else "?"),
                Text(
                    yes_no(e.arch_ok(found.model), "✓", "✗"),
                    style="red" if e.arch_ok(found.model) is False else "",
                ),
                verdict,
                key=e.row.ref,
            )
        eff = next(e for e in found.entries if e.effective)
        # The cursor starts on the effective image: enter keeps it, as the hint says.
        table.move_cursor(row=found.entries.index(eff))
        model = (
            f"model {self.core.config['model']} is {', '.join(found.model.architectures)}"
            if found.model.found
            else f"model architecture unknown: {found.model.reason}"
        )
        self.query_one("#image-effective", Static).update(
            Text(
                f"* effective: {inert(eff.row.ref)} (from {inert(short_paths(eff.source))}); executor {executor}; "
                f"{inert(model)}. enter: use the highlighted image",
            )
        )

    @on(DataTable.RowHighlighted, "#images")
    def image_highlighted(self, event: DataTable.RowHighlighted) -> None:
        """What choosing the highlighted image would change, against the effective one."""
        if self.listing is None or event.row_key.value is None:
            return
        by_ref = {e.row.ref: e for e in self.listing.entries}
        eff = next(e for e in self.listing.entries if e.effective)
        chosen = by_ref.get(str(event.row_key.value))
        if chosen is None:
            return
        detail = self.query_one("#image-detail", Static)
        if chosen is eff:
            detail.update(Text(inert(f"{eff.row.ref}: the effective image (from {short_paths(eff.source)})")))
            return
        detail.update(Text(inert(change_text(eff, chosen, self.core.config["executor"], self.listing.model))))

    @on(DataTable.RowSelected, "#images")
    def image_row(self, event: DataTable.RowSelected) -> None:
        self.post_message(self.Chosen(str(event.row_key.value)))

    @on(Input.Submitted, "#image-input")
    def image_typed(self, event: Input.Submitted) -> None:
        if event.value.strip():
            self.post_message(self.Chosen(event.value.strip()))


def change_text(eff: ImageEntry, chosen: ImageEntry, executor: str, model: ModelConfig) -> str:
    """`choosing B: vLLM 0.12.0 -> 0.10.2, native yes -> no; ...` (only what differs)."""

    def facts(e: ImageEntry) -> dict[str, str]:
        f = e.facts
        return {
            "vLLM": (f.vllm or "?") if f else "?",
            "Ray": yes_no(f.ray) if f else "?",
            "native": yes_no(f.native) if f else "?",
            "model arch": yes_no(e.arch_ok(model), "known", "unknown"),
            "nodes": str(len(e.row.nodes)),
        }

    a, b = facts(eff), facts(chosen)
    diffs = [f"{k} {a[k]} -> {b[k]}" for k in a if a[k] != b[k]]
    text = f"choosing {chosen.row.ref}: " + (", ".join(diffs) or "same facts as the effective image")
    text += "; image becomes an interactive edit"
    problems = chosen.problems(executor, model)
    return text + (f"; CANNOT RUN: {'; '.join(whole for _, whole in problems)}" if problems else "")


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

    def start_fabric(self) -> None:
        if self.running:
            self.notify("the check is still running", severity="warning")
            return
        self.run_check(fabric=True)

    @work(exclusive=True, group="check")
    async def run_check(self, fabric: bool = False) -> None:
        self.running = True
        self.results, self.rows = [], set()
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

    @work(exclusive=True, group="check")
    async def run_sync(self, what: str) -> None:
        self.running = True
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
            self.running = False
            self.notify(
                f"sync {what} {'done: checking again' if ok else 'failed'}",
                severity="information" if ok else "error",
            )
            if ok:
                self.run_check()

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
        text.append(
            f"({self.key('refresh')}: run again, {self.key('wizard.fabric')}: also measure the data links, "
            f"{self.key('wizard.sync')}: sync on a failed image/model row, {self.key('wizard.next')}: next)",
            style="dim",
        )
        self.query_one("#check-summary", Static).update(text)


# --- step 3: review -------------------------------------------------------------------


class ReviewStep(Step):
    """Requested next to effective, with where each value came from. The rows that matter come
    first (set by some layer, derived, overridden, warned about); built-in defaults nobody
    touched are folded behind one key. The highlighted row is shown whole under the table."""

    def __init__(self, core: CockpitAPI, id: str):
        super().__init__(core, id)
        self.edit_key: str | None = None
        self.show_defaults = False
        self.rows: dict[str, report.Row] = {}

    def compose(self) -> ComposeResult:
        yield Static(id="review-warnings")
        yield DataTable(id="settings", cursor_type="row", zebra_stripes=True)
        yield Static(id="review-detail", classes="hint")
        yield Input(id="edit-input", classes="-hidden")
        yield Static(id="edit-error")

    def on_mount(self) -> None:
        settings = self.query_one("#settings", DataTable)
        # Fixed widths keep provenance on screen at 120 columns; what a cell cannot hold is
        # in the detail line under the table, whole.
        for label, width in (
            ("scope", 7),
            ("setting", 22),
            ("requested (all layers)", 28),
            ("effective", 22),
            ("from", 30),
        ):
            settings.add_column(label, width=width)

    def enter(self) -> None:
        self.show_review()
        self.query_one("#settings", DataTable).focus()

    def toggle_defaults(self) -> None:
        self.show_defaults = not self.show_defaults
        self.show_review()

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
        first = [r for r in rows if report.matters(r, config)]
        folded = [r for r in rows if not report.matters(r, config)]
        t.append(
            f"\n{len(first)} settings set, derived or overridden first; {len(folded)} built-in defaults "
            + ("shown after them" if self.show_defaults else "folded")
            + f" ({self.key('wizard.defaults')}: {'fold' if self.show_defaults else 'show'})",
            style="dim",
        )
        self.query_one("#review-warnings", Static).update(t)
        table = self.query_one("#settings", DataTable)
        table.clear()
        self.rows = {}
        for r in first + (folded if self.show_defaults else []):
            key = r.key if r.scope == "cluster" else f"nodes.{r.scope}.{r.key}"
            self.rows[key] = r
            source = plain(
                short_paths(r.source), style="bold cyan" if r.source.startswith("interactive") else ""
            )
            table.add_row(
                plain(r.scope), plain(r.key), requested_text(r), plain(r.effective), source, key=key
            )

    @on(DataTable.RowHighlighted, "#settings")
    def row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        """The highlighted row whole: no value is ever only seen cut off."""
        r = self.rows.get(str(event.row_key.value))
        if r is None:
            return
        t = Text()
        t.append(f"{r.scope}.{r.key}", style="bold")
        t.append(f" = {inert(r.effective)}  from {r.source}")
        if r.requested:
            t.append("\nrequested: ")
            t.append_text(requested_text(r))
        self.query_one("#review-detail", Static).update(t)

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


def requested_text(r: report.Row) -> Text:
    """Every value some layer asked for: the winner in bold, the losers struck out."""
    requested = Text()
    for value, src, won in r.requested:
        requested.append(", " if requested.plain else "")
        requested.append(f"{inert(value)} ({src})", style="bold" if won else "strike yellow")
    return requested


# --- step 4: launch -------------------------------------------------------------------


class LaunchStep(Step):
    def __init__(self, core: CockpitAPI, id: str):
        super().__init__(core, id)
        self.state = "idle"  # idle | running | ready | failed
        self.head_log: Follower | None = None  # follower of the head container during the launch
        self.memory: dict[str, list[float]] = {}  # node -> available GiB during the load
        self.memory_total = 0.0

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
        self.memory, self.memory_total = {}, 0.0
        self.run_launch()

    @work(exclusive=True, group="launch")
    async def run_launch(self) -> None:
        ok = False
        try:
            ok = await self.core.launch(lambda e: self.post_message(LaunchProgress(e)))
        finally:
            self.post_message(JobDone("launch", ok))

    def on_launch_progress(self, message: LaunchProgress) -> None:
        """Every event in its own words (core/events.py: the CLI's, shown by the core) into the log;
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
