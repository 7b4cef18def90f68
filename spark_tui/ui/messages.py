"""Messages between the core's workers and the cockpit's screens, in one place."""

from __future__ import annotations

from dataclasses import dataclass

from textual.message import Message

from spark_tui.core.monitor import NodeView


@dataclass
class NodeRefreshed(Message):
    """A node's pane has new data. A newer refresh of the same node replaces a queued one."""

    view: NodeView

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, NodeRefreshed) and message.view.node == self.view.node


@dataclass
class CoreEvent(Message):
    """A typed event from check, launch, teardown or a log follower (core/events.py, core/logs.py)."""

    event: object
    job: str  # check | launch | teardown | logs


@dataclass
class JobDone(Message):
    job: str
    ok: bool
