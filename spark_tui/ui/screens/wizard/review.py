"""Step 3 of the wizard: requested next to effective, with where each value came from; edits
become the `interactive` layer."""

from __future__ import annotations

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.reactive import reactive
from textual.widgets import DataTable, Input, Static

from spark_tui.core.cockpit import CockpitAPI
from spark_tui.errors import ConfigError
from spark_tui.parsers.text import inert
from spark_tui.secret_names import mask_flags_in_text
from spark_tui.settings import provenance as report
from spark_tui.ui.screens.wizard.step import Step, plain, short_paths


class EditBox(Input):
    """The review's edit box. A value holding a secret (a secret setting, or `--api-key X` /
    `--hf-token X` typed into vllm_args) is shown masked: the reveal key shows it while the box
    has focus, and it is masked again as soon as focus leaves."""

    secret_setting: reactive[bool] = reactive(False, init=False)  # the setting itself is a secret
    revealed: reactive[bool] = reactive(False, init=False)

    def __init__(self, **kw):
        super().__init__(**kw)
        self.reveal_key = ""

    @property
    def holds_secret(self) -> bool:
        return self.secret_setting or mask_flags_in_text(self.value) != self.value

    def update_mask(self) -> None:
        self.password = self.holds_secret and not (self.revealed and self.has_focus)
        self.border_title = (
            f"{'shown' if not self.password else 'masked'}: {self.reveal_key} to {'hide' if not self.password else 'show'}"
            if self.holds_secret
            else None
        )

    def watch_secret_setting(self) -> None:
        self.update_mask()

    def watch_revealed(self) -> None:
        self.update_mask()

    def on_input_changed(self) -> None:
        self.update_mask()

    def on_blur(self) -> None:
        self.revealed = False
        self.update_mask()


class ReviewStep(Step):
    """Requested next to effective, with where each value came from. The rows that matter come
    first (set by some layer, derived, overridden, warned about); built-in defaults nobody
    touched are folded behind one key. The highlighted row is shown whole under the table."""

    DEFAULT_CSS = """
    ReviewStep #settings { height: 1fr; }
    ReviewStep #review-warnings { height: auto; max-height: 12; padding: 0 1; overflow-y: auto; }
    ReviewStep #edit-input.-hidden { display: none; }
    ReviewStep #edit-error { height: auto; padding: 0 1; }
    """

    show_defaults: reactive[bool] = reactive(False, init=False)  # built-in defaults listed too
    editing: reactive[bool] = reactive(False, init=False)  # the edit box is open

    def __init__(self, core: CockpitAPI, id: str):
        super().__init__(core, id)
        self.edit_key: str | None = None
        self.rows: dict[str, report.Row] = {}

    def compose(self) -> ComposeResult:
        yield Static(id="review-warnings")
        yield DataTable(id="settings", cursor_type="row", zebra_stripes=True)
        yield Static(id="review-detail", classes="hint")
        yield EditBox(id="edit-input", classes="-hidden")
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

    def watch_show_defaults(self) -> None:
        self.show_review()

    def watch_editing(self, editing: bool) -> None:
        box = self.query_one("#edit-input", EditBox)
        box.set_class(not editing, "-hidden")
        if editing:
            box.focus()
        else:
            box.revealed = False
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

    def cancel_edit(self) -> None:
        self.editing = False

    def toggle_reveal(self) -> None:
        box = self.query_one("#edit-input", EditBox)
        box.revealed = not box.revealed

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
        box = self.query_one("#edit-input", EditBox)
        box.placeholder = f"{key}: new value (empty: drop the edit)"
        box.reveal_key = self.key("wizard.reveal")
        box.secret_setting = value.setting.secret
        box.value = (
            ""
            if value.setting.secret
            else value.setting.kind.show(value.value)
            if value.value is not None
            else ""
        )
        box.revealed = False
        box.update_mask()  # now, before the box shows: never a frame with the value in clear
        self.editing = True
        box.focus()

    @on(Input.Submitted, "#edit-input")
    def edit_done(self, event: Input.Submitted) -> None:
        error = self.query_one("#edit-error", Static)
        if self.edit_key is None:
            return
        try:
            self.core.edit(self.edit_key, event.value if event.value != "" else None)
        except ConfigError as exc:
            # Masked: the message may quote the refused value (`--api-key X` in vllm_args).
            error.update(Text(self.shown(f"{exc.source}: {exc.message}"), style="bold red"))
            return
        error.update("")
        self.show_review()
        self.editing = False


def requested_text(r: report.Row) -> Text:
    """Every value some layer asked for: the winner in bold, the losers struck out."""
    requested = Text()
    for value, src, won in r.requested:
        requested.append(", " if requested.plain else "")
        requested.append(f"{inert(value)} ({src})", style="bold" if won else "strike yellow")
    return requested
