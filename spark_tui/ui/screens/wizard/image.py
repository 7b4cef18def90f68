"""Step 1 of the wizard: every image on the nodes with what it can run."""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.message import Message
from textual.reactive import reactive
from textual.widgets import DataTable, Input, Static

from spark_tui.core.cockpit import CockpitAPI
from spark_tui.core.image_table import ImageEntry, ImageListing, short_version, yes_no
from spark_tui.core.models.model_cache import ModelConfig
from spark_tui.parsers.text import inert
from spark_tui.ui.screens.wizard.step import Step, plain, short_paths


class ImageStep(Step):
    """Every image on the nodes with what it can run; the effective one marked with its source.
    Highlighting another image says what choosing it would change."""

    DEFAULT_CSS = """
    ImageStep #images { height: 1fr; }
    ImageStep #image-input { margin: 0 1; }
    """

    @dataclass
    class Chosen(Message):
        """The operator picked or typed an image reference."""

        ref: str

    def __init__(self, core: CockpitAPI, id: str):
        super().__init__(core, id)
        self.listing: ImageListing | None = None

    # Ask every image (each run in a confined container), not only the effective one and those
    # that look like vLLM: the CLI's `images --all`.
    all_images: reactive[bool] = reactive(False, init=False)

    def watch_all_images(self, all_images: bool) -> None:
        self.query_one("#image-effective", Static).update(
            "Asking every image on the nodes..." if all_images else "Looking at the images on the nodes..."
        )
        self.load_images()

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

    @work(exclusive=True, group="images", name="image listing", exit_on_error=False)
    async def load_images(self) -> None:
        self.listing = found = await self.core.images(run_all=self.all_images)
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
                f"{inert(model)}. enter: use the highlighted image; "
                + (
                    f"every image asked ({self.key('wizard.all_images')}: only vLLM-looking ones)"
                    if self.all_images
                    else f"{self.key('wizard.all_images')}: ask every image, not only vLLM-looking ones"
                ),
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
