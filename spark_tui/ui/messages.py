"""Messages between the core's workers and the cockpit's screens, in one place."""

from __future__ import annotations

from dataclasses import dataclass

from textual.message import Message
from textual.widget import Widget
from textual.worker import Worker, WorkerState

from spark_tui.core.launch.events import LaunchEvent, TeardownEvent
from spark_tui.core.monitor import NodeView
from spark_tui.core.node.logs import LogLines, StreamState
from spark_tui.core.report.check import CheckResult
from spark_tui.core.serving.serving_watch import ServingLook


@dataclass
class NodeRefreshed(Message):
    """A node's pane has new data. A newer refresh of the same node replaces a queued one."""

    view: NodeView

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, NodeRefreshed) and message.view.node == self.view.node


@dataclass
class CheckRowArrived(Message):
    """One check result, as it comes (the wizard's check step)."""

    result: CheckResult


@dataclass
class LaunchProgress(Message):
    """A launch event: a stage, READY, the failure, a removal during rollback, drift afterwards."""

    event: LaunchEvent


@dataclass
class TeardownProgress(Message):
    event: TeardownEvent


@dataclass
class LogStreamEvent(Message):
    """Lines or a state change of one followed container (the logs screen); `prefix` names its node."""

    prefix: str
    event: LogLines | StreamState


@dataclass
class HeadLogEvent(Message):
    """The head container's log during a launch (the wizard's launch step)."""

    event: LogLines | StreamState


@dataclass
class JobDone(Message):
    job: str
    ok: bool


@dataclass
class JobStarted(Message):
    """A launch or an upgrade begins (bubbles to the app, which stops supervising first)."""

    job: str


@dataclass
class SupervisionEvent(Message):
    """An event of the deployment's supervision (`restart: on-failure`): a crash's restart with
    its memory check, the relaunch's stages, READY again, a restart loop or a refusal."""

    event: LaunchEvent


@dataclass
class SupervisionEnded(Message):
    """Supervision ended: why (core/launch/supervise.py: removed, exited, loop, refused)."""

    why: str


@dataclass
class ServingRefreshed(Message):
    """New serving figures, node loads and signals (every metrics_interval once serving); None
    when the cluster stopped serving (its container no longer runs on the head)."""

    look: ServingLook | None

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, ServingRefreshed)


def forward_failure(widget: Widget, event: Worker.StateChanged) -> None:
    """Worker.StateChanged does not bubble: a widget running workers hands a failure on to the
    app, whose one handler (SparkApp.worker_failed) shows every worker's failure."""
    if event.state == WorkerState.ERROR:
        widget.app.post_message(Worker.StateChanged(event.worker, event.state))
