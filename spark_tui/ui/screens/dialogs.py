"""Modal dialogs: the teardown confirmation, the wizard's upgrade-or-relaunch question, and the
help listing every binding."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from spark_tui.parsers.text import inert
from spark_tui.settings.keys import KEYS, hint
from spark_tui.ui.keys_ui import bindings_for


class ConfirmTeardown(ModalScreen[bool]):
    """Lists what will be stopped on which node; y confirms, n or esc cancels."""

    CSS_PATH = "dialogs.tcss"
    BINDINGS = bindings_for("dialog")

    def __init__(self, cluster: str, targets: dict[str, list[str] | str]):
        super().__init__(id="confirm")
        self.cluster = cluster
        self.targets = targets

    def compose(self) -> ComposeResult:
        t = Text()
        t.append(f"Tear down cluster {self.cluster}?\n\n", style="bold")
        for node, found in self.targets.items():
            t.append(f"{node}: ", style="bold")
            if isinstance(found, str):
                t.append(f"{inert(found)} (may still hold its container)\n", style="red")
            elif found:  # the core's words, shown (inert, masked) by the core; inert: the last guard
                t.append(", ".join(inert(f) for f in found) + "\n")
            else:
                t.append("nothing running\n", style="dim")
        keymap = getattr(self.app, "keymap", {})
        yes, no = hint("confirm.yes", keymap, every=True), hint("confirm.no", keymap, every=True)
        t.append(f"\n[{yes}] stop and remove   [{no}] cancel", style="bold")
        with Vertical(classes="dialog"):
            yield Static(t, id="confirm-text")

    def action_yes(self) -> None:
        self.dismiss(True)

    def action_no(self) -> None:
        self.dismiss(False)


class UpgradeOrRelaunch(ModalScreen[str]):
    """The wizard's image step chose another image while a deployment serves: an upgrade (the
    running one benched, the new one launched and benched, kept or rolled back) or the plain
    wizard (check, review, launch: the running one torn down first, no way back). Dismissed
    with "upgrade", "relaunch" or "cancel"."""

    CSS_PATH = "dialogs.tcss"
    BINDINGS = bindings_for("choice")

    def __init__(self, running: str, chosen: str):
        super().__init__(id="upgrade-or-relaunch")
        self.running, self.chosen = running, chosen

    def compose(self) -> ComposeResult:
        keymap = getattr(self.app, "keymap", {})
        t = Text()
        t.append(f"{inert(self.running)} serves now. Use {inert(self.chosen)}?\n\n", style="bold")
        t.append(
            f"[{hint('choice.upgrade', keymap, every=True)}] upgrade: bench what runs, launch "
            f"{inert(self.chosen)}, bench it with the same load; kept when nothing regressed beyond "
            "upgrade.*, else rolled back and relaunched\n"
        )
        t.append(
            f"[{hint('choice.relaunch', keymap, every=True)}] relaunch: go on in the wizard (check, review, "
            "launch); what runs must be torn down first, no way back\n"
        )
        t.append(f"[{hint('choice.cancel', keymap, every=True)}] cancel: choose again", style="dim")
        with Vertical(classes="dialog choice"):
            yield Static(t, id="choice-text")

    def action_upgrade(self) -> None:
        self.dismiss("upgrade")

    def action_relaunch(self) -> None:
        self.dismiss("relaunch")

    def action_cancel(self) -> None:
        self.dismiss("cancel")


class HelpScreen(ModalScreen[None]):
    CSS_PATH = "dialogs.tcss"
    BINDINGS = [("escape,q,question_mark", "close", "Close")]

    def __init__(self, keymap: dict[str, str]):
        super().__init__(id="help")
        self.keymap = keymap

    def compose(self) -> ComposeResult:
        table = Table(title="spark-tui keys (remap with `keys:` in the user config: id: keys)", expand=True)
        for col in ("id", "keys", "where", "what"):
            table.add_column(col)
        for row in self.rows():
            table.add_row(*row)
        with VerticalScroll(classes="dialog wide"):
            yield Static(table)

    def rows(self) -> list[tuple[str, str, str, str]]:
        """(id, effective keys, where, what) for every binding, remaps applied."""
        out = []
        for k in KEYS:
            keys = self.keymap.get(k.id, k.key)
            out.append(
                (k.id, keys.replace("question_mark", "?").replace("slash", "/"), k.where, k.description)
            )
        return out

    def action_close(self) -> None:
        self.dismiss(None)
