"""What every wizard step has: the core, the user's keys for hints, the masking of node text,
and the cell helpers the steps' tables share."""

from __future__ import annotations

import re

from rich.text import Text
from textual.containers import Vertical
from textual.worker import Worker

from spark_tui.core.cockpit import CockpitAPI
from spark_tui.parsers.text import inert
from spark_tui.settings.keys import hint
from spark_tui.ui.messages import forward_failure


def plain(value: object, style: str = "") -> Text:
    """A table cell: always Text, inert, never markup. DataTable renders a str cell as Rich
    markup, so an image label `[@click=app.quit]` would become an action and `[/x]` a crash."""
    return Text(inert(str(value)), style=style)


def short_paths(text: str) -> str:
    """`cluster file /long/dir/duo.yaml:5:8` -> `cluster file duo.yaml:5:8` (the table has no room for dirs)."""
    return re.sub(r"(?<![\w.])/(?:[^\s/]+/)+", "", text)


class Step(Vertical):
    """What every step has: the core, and the user's keys for hints."""

    DEFAULT_CSS = """
    Step .hint { height: auto; padding: 0 1; color: $text-muted; }
    """

    def __init__(self, core: CockpitAPI, id: str):
        super().__init__(id=id)
        self.core = core

    def key(self, binding_id: str) -> str:
        """The key shown in a hint, after the user's remapping (the key registry decides)."""
        return hint(binding_id, getattr(self.app, "keymap", {}))

    def shown(self, line: str) -> str:
        """A line from a node, as a person may see it: secrets masked, escapes made inert."""
        return self.core.redact.show(line)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        forward_failure(self, event)  # a step's check, sync, listing or launch that raised

    def enter(self) -> None:
        """The wizard moved to this step: start its work, focus its table."""
        raise NotImplementedError
