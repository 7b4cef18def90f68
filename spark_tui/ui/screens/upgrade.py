"""The upgrade screen: the operator names a candidate image; core/upgrade.py tries it and keeps it
or rolls back, and each step shows here as the CLI prints it (the same events, the same text)."""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.message import Message
from textual.screen import Screen
from textual.widgets import Footer, Header, Input, RichLog, Static

from spark_tui.core.cockpit import CockpitAPI
from spark_tui.core.launch import events as ev
from spark_tui.core.upgrade import UpgradeOutcome, event_text
from spark_tui.ui.keys_ui import bindings_for
from spark_tui.ui.messages import JobDone, JobStarted

VERDICT_STYLE = {"kept": "bold green", "rolled back": "bold yellow", "refused": "bold yellow"}


@dataclass
class UpgradeProgress(Message):
    event: object


class UpgradeScreen(Screen):
    CSS_PATH = "upgrade.tcss"
    BINDINGS = bindings_for("upgrade")

    def __init__(self, core: CockpitAPI, readonly: bool = False, candidate: str = ""):
        """`candidate`: an image already chosen (the wizard's image step): the upgrade starts at once."""
        super().__init__(id="upgrade")
        self.core = core
        self.readonly = readonly
        self.running = False
        self.candidate = candidate

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static(
            Text(
                f"Running: {self.core.config['image']}. Candidate image (enter starts: known-good bench, "
                "sync, check, teardown, launch, bench; kept or rolled back by the upgrade.* thresholds)"
            ),
            id="upgrade-intro",
        )
        yield Input(placeholder="candidate image, e.g. vllm/vllm-openai:nightly", id="upgrade-image")
        yield RichLog(id="upgrade-log", wrap=True, markup=False, highlight=False)
        yield Footer()

    def on_mount(self) -> None:
        if self.candidate:
            box = self.query_one("#upgrade-image", Input)
            box.value = self.candidate
            self.start(self.candidate)

    def on_input_submitted(self, message: Input.Submitted) -> None:
        self.start(message.value.strip())

    def start(self, image: str) -> None:
        if self.readonly:
            self.notify("readonly: upgrade is disabled", severity="error")
        elif self.running:
            self.notify("an upgrade is running: it keeps the candidate or restores the known-good first")
        elif image:
            self.running = True
            self.run_upgrade(image)

    @work(exclusive=True, group="upgrade")
    async def run_upgrade(self, image: str) -> None:
        self.post_message(JobStarted("upgrade"))  # the app stops supervising the known-good first
        serving = False
        try:
            outcome = await self.core.upgrade(image, lambda e: self.post_message(UpgradeProgress(e)))
            serving = bool(outcome.serving)
        finally:
            self.running = False
            self.post_message(JobDone("upgrade", serving))  # the app supervises what serves now

    def on_upgrade_progress(self, message: UpgradeProgress) -> None:
        e, show = message.event, self.core.redact.show
        log = self.query_one("#upgrade-log", RichLog)
        if isinstance(e, ev.Failed):
            log.write(Text(f"FAILED: {show(e.cause)}", style="red"))
            return
        if isinstance(e, ev.Removed):
            log.write(Text(f"removed {show(e.container)} on {e.node}"))
            return
        line = event_text(e, show)
        if line is not None:
            style = VERDICT_STYLE.get(e.verdict, "bold red") if isinstance(e, UpgradeOutcome) else ""
            log.write(Text(line, style=style))

    def action_back(self) -> None:
        if self.running:
            self.notify("an upgrade is running: it keeps the candidate or restores the known-good first")
            return
        self.app.pop_screen()
