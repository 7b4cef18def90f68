"""The launch wizard: image -> check -> review -> launch, keyboard driven.

Each step is one widget in this package (image.py, check.py, review.py, launch.py) with its own
worker, state and styles; this screen moves between them. Edits made here become the `interactive` layer of the config, shown with
that provenance in the review.
"""

from __future__ import annotations

from functools import partial

from rich.text import Text
from textual.app import ComposeResult
from textual.reactive import reactive
from textual.screen import Screen
from textual.widgets import ContentSwitcher, Footer, Header, Static

from spark_tui.core.cockpit import CockpitAPI
from spark_tui.core.report.check import CheckResult
from spark_tui.errors import ConfigError
from spark_tui.settings.keys import hint
from spark_tui.ui.keys_ui import bindings_for
from spark_tui.ui.screens.dialogs import UpgradeOrRelaunch
from spark_tui.ui.screens.upgrade import UpgradeScreen
from spark_tui.ui.screens.wizard.check import CheckStep
from spark_tui.ui.screens.wizard.image import ImageStep
from spark_tui.ui.screens.wizard.launch import LaunchStep
from spark_tui.ui.screens.wizard.review import ReviewStep

STEPS = ("image", "check", "review", "launch")
TITLES = {"image": "1 image", "check": "2 config check", "review": "3 review", "launch": "4 launch"}


class WizardScreen(Screen):
    DEFAULT_CSS = """
    WizardScreen #steps { height: 1; background: $panel; }
    WizardScreen #switcher { height: 1fr; }
    WizardScreen #switcher > Vertical { height: 1fr; }
    """
    BINDINGS = bindings_for("wizard")

    def __init__(self, core: CockpitAPI, readonly: bool = False, start: str = "image"):
        super().__init__(id="wizard")
        self.core = core
        self.readonly = readonly
        self.set_reactive(WizardScreen.step, start)  # entered on mount, once the steps exist
        self.image_step = ImageStep(core, id="image")
        self.check_step = CheckStep(core, id="check")
        self.review_step = ReviewStep(core, id="review")
        self.launch_step = LaunchStep(core, id="launch")

    # The step shown; setting it (even to the same step: the refresh key) enters that step.
    step: reactive[str] = reactive("image", init=False, always_update=True)

    # What the steps hold, as the wizard's own state.
    @property
    def check_results(self) -> list[CheckResult]:
        return self.check_step.results

    @property
    def check_running(self) -> bool:
        return self.check_step.running

    @property
    def launch_state(self) -> str:
        return self.launch_step.state

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static(id="steps")
        with ContentSwitcher(initial=self.step, id="switcher"):
            yield self.image_step
            yield self.check_step
            yield self.review_step
            yield self.launch_step
        yield Footer()

    def on_mount(self) -> None:
        self.step = self.step

    def _key(self, binding_id: str) -> str:
        """The key shown in a hint, after the user's remapping (the key registry decides)."""
        return hint(binding_id, getattr(self.app, "keymap", {}))

    # --- navigation -------------------------------------------------------------------

    def watch_step(self, step: str) -> None:
        self.query_one("#switcher", ContentSwitcher).current = step
        t = Text()
        for s in STEPS:
            t.append(f" {TITLES[s]} ", style="bold reverse" if s == step else "dim")
            t.append(" > " if s != STEPS[-1] else "")
        t.append(
            f"    {self._key('wizard.next')}: next  {self._key('wizard.back')}: back"
            + (f"  {self._key('wizard.edit')}: edit" if step == "review" else "")
            + (f"  {self._key('wizard.defaults')}: defaults" if step == "review" else "")
            + (f"  {self._key('wizard.launch')}: launch" if step == "review" else ""),
            style="dim",
        )
        self.query_one("#steps", Static).update(t)
        {
            "image": self.image_step,
            "check": self.check_step,
            "review": self.review_step,
            "launch": self.launch_step,
        }[step].enter()

    def action_next(self) -> None:
        if self.step == "check":
            if self.check_running:
                self.notify("the check is still running", severity="warning")
                return
            failed = [r for r in self.check_results if r.status == "fail"]
            if failed:
                self.notify(
                    f"{len(failed)} check(s) failed; fix them and press {self._key('refresh')} to run the check again",
                    severity="error",
                )
                return
        if self.step == "review":
            self.action_launch()
            return
        if self.step == "launch":
            return
        self.step = STEPS[STEPS.index(self.step) + 1]

    def action_back(self) -> None:
        if self.step == "review" and self.review_step.editing:
            self.review_step.cancel_edit()
            return
        if self.step == "launch" and self.launch_state == "running":
            self.notify("the launch is running; it rolls back by itself on failure", severity="warning")
            return
        if self.step in ("image", "launch"):
            self.app.pop_screen()
            return
        self.step = STEPS[STEPS.index(self.step) - 1]

    def refresh_view(self) -> None:
        """The app's refresh key: run this step's work again."""
        if self.step in ("image", "check", "review"):
            self.step = self.step

    # --- what the steps ask of the screen -----------------------------------------------

    def on_image_step_chosen(self, message: ImageStep.Chosen) -> None:
        """Another image than the one serving: asked whether to upgrade to it (reversible) or to
        go on in the wizard (teardown and launch); the same image, or nothing serving: go on."""
        running = self.core.running_image()
        if running and message.ref != running and not self.readonly:
            self.app.push_screen(
                UpgradeOrRelaunch(running, message.ref), partial(self._chosen_over_running, message.ref)
            )
            return
        self._use_image(message.ref)

    def _chosen_over_running(self, ref: str, choice: str | None) -> None:
        if choice == "upgrade":
            self.app.pop_screen()  # the wizard gives way to the upgrade screen, which starts at once
            self.app.push_screen(UpgradeScreen(self.core, readonly=self.readonly, candidate=ref))
        elif choice == "relaunch":
            self._use_image(ref)

    def _use_image(self, ref: str) -> None:
        message = ImageStep.Chosen(ref)
        try:
            self.core.edit("image", message.ref)
        except ConfigError as exc:
            self.notify(f"{exc.source}: {exc.message}", severity="error", markup=False)
            return
        self.notify(f"image {message.ref} (interactive edit)", markup=False)
        self.step = "check"

    def action_edit(self) -> None:
        if self.step == "review":
            self.review_step.start_edit()

    def action_sync(self) -> None:
        if self.step == "check":
            self.check_step.start_sync()

    def action_fabric(self) -> None:
        if self.step == "check":
            self.check_step.start_fabric()

    def action_all_images(self) -> None:
        if self.step == "image":
            self.image_step.all_images = not self.image_step.all_images

    def action_reveal(self) -> None:
        if self.step == "review" and self.review_step.editing:
            self.review_step.toggle_reveal()

    def action_toggle_defaults(self) -> None:
        if self.step == "review" and not self.review_step.editing:
            self.review_step.toggle_defaults()

    def action_launch(self) -> None:
        if self.readonly:
            self.notify("readonly: launch is disabled", severity="error")
            return
        if self.launch_state == "running":
            return
        self.step = "launch"
        self.launch_step.start()
