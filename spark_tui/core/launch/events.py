"""Typed events emitted by launch, sync and teardown; each says itself (`lines()`, `say()`), and every face
(the CLI's lines and bars, the wizard's log and banner, the cockpit's teardown) shows those words.

The core emits them already shown (`shown_by`): every text field made inert, then masked
(core/node/redact.py's one rule), so no face masks or makes inert on its own.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal, Self

# Every stage a launch or teardown reports, and the states a stage goes through.
StageName = Literal[
    "container",
    "ray_join",
    "vllm",
    "nccl_init",
    "shards",
    "rollback",
    "teardown",
    "sync_image",
    "sync_model",
    "memory",
    "restart",
]
StageStatus = Literal["started", "progress", "done", "failed"]


Show = Callable[[str], str]


def _shown(value: Any, show: Show) -> Any:
    if isinstance(value, str):
        return show(value)
    if isinstance(value, Event):
        return value.shown(show)
    if isinstance(value, list):
        return [_shown(v, show) for v in value]
    if isinstance(value, dict):
        return {k: _shown(v, show) for k, v in value.items()}
    return value  # numbers, None


class Event:
    """What every event can do: say itself, and be shown (its text through the one rule)."""

    def lines(self) -> list[str]:
        raise NotImplementedError

    def say(self) -> str:
        return "\n".join(self.lines())

    def shown(self, show: Show) -> Self:
        """This event with every text in it (lists and dicts included) passed through `show`."""
        assert dataclasses.is_dataclass(self)
        return dataclasses.replace(
            self, **{f.name: _shown(getattr(self, f.name), show) for f in dataclasses.fields(self)}
        )


def shown_by(show: Show, emit: Callable[[Any], object]) -> Callable[[Any], object]:
    """`emit`, given every event shown by `show` first: how the core's operations emit."""
    return lambda event: emit(event.shown(show))


@dataclass
class Stage(Event):
    node: str  # node name, or "cluster"
    stage: StageName
    status: StageStatus
    detail: str = ""
    elapsed: float = 0.0
    fraction: float | None = None

    def lines(self) -> list[str]:
        frac = f" {self.fraction:.0%}" if self.fraction is not None else ""
        return [f"[{self.elapsed:6.1f}s] {self.node:<10} {self.stage:<10} {self.status}{frac} {self.detail}"]


@dataclass
class NcclNet(Event):
    """The transport NCCL runs on for one node, said when its lines show it (and again in Ready)."""

    node: str
    level: str  # ok | warn | unknown
    text: str  # the node's NCCL state in words (core/launch/nccl_nodes.py)

    def lines(self) -> list[str]:
        return [f"{'WARNING ' if self.level == 'warn' else ''}{self.node} {self.text}"]


@dataclass
class Memory(Event):
    """A node's memory while a model loads (the launch guard's reading)."""

    node: str
    total_mib: float
    available_mib: float
    elapsed: float = 0.0

    def available(self) -> str:
        return f"{self.available_mib / 1024:.1f} of {self.total_mib / 1024:.1f} GiB available"

    def used_fraction(self) -> float | None:
        return 1 - self.available_mib / self.total_mib if self.total_mib else None

    def lines(self) -> list[str]:
        return [f"[{self.elapsed:6.1f}s] {self.node:<10} memory     {self.available()}"]


@dataclass
class Ready(Event):
    endpoint: str
    model: str
    elapsed: float
    nccl: list[NcclNet] = field(default_factory=list)  # every node's NCCL transport

    def headline(self) -> str:
        return f"READY in {self.elapsed:.1f} s: {self.model} at {self.endpoint}"

    def net_line(self, net: NcclNet) -> str:
        return f"  {net.node:<10} {net.text}"

    def lines(self) -> list[str]:
        return [self.headline()] + [self.net_line(n) for n in self.nccl]


@dataclass
class Failed(Event):
    cause: str
    log_lines: list[str] = field(default_factory=list)

    def headline(self) -> str:
        return f"FAILED: {self.cause}"

    @staticmethod
    def quoted(line: str) -> str:
        return f"    | {line}"

    def lines(self) -> list[str]:
        return [self.headline()] + [self.quoted(line) for line in self.log_lines]


@dataclass
class Diagnosis(Event):
    """A failure the knowledge base (spark_tui/knowledge) named in a node's log during a launch:
    what it is, the figures its line carried and the fix. Errors end the launch (Failed follows)."""

    node: str
    id: str
    severity: str  # error | warn
    title: str
    fix: str
    line: str
    means: str = ""
    figures: dict = field(default_factory=dict)
    source: str = ""
    # Named in the node's kernel log while the deployment serves (core/launch/kernel_watch.py):
    # said, never rolled back by itself (the operator decides).
    serving: bool = False

    def lines(self) -> list[str]:
        mark = "ERROR" if self.severity == "error" else "WARNING"
        said = [f"{mark} {self.node}: {self.title}", f"    fix: {self.fix}", f"    log: {self.line}"]
        if self.serving:
            # An error while serving restarts nothing by itself: the operator decides.
            kept = "; nothing rolled back or restarted for it" if mark == "ERROR" else ""
            said.append(f"    while serving (kernel log){kept}")
        return said


@dataclass
class KernelLogLost(Event):
    """A node's kernel log stopped being followed and could not be followed again (its SSH
    connection stayed down, its reader refused): GPU faults there are no longer named."""

    node: str
    cause: str

    def lines(self) -> list[str]:
        return [
            f"WARNING {self.node}: kernel log no longer followed ({self.cause}): GPU faults (Xid) on it will not be named"
        ]


@dataclass
class Restart(Event):
    """A crash seen while supervising (`restart: on-failure`): the deployment is relaunched, the
    `attempt`-th restart of at most `limit` within `window_s` seconds (core/launch/supervise.py)."""

    node: str
    cause: str
    attempt: int
    limit: int
    window_s: float

    def lines(self) -> list[str]:
        return [
            f"RESTART {self.attempt}/{self.limit} within {self.window_s:.0f} s after a crash: "
            f"{self.cause}; memory.fit runs again first"
        ]


@dataclass
class Removed(Event):
    node: str
    container: str
    image: str

    def lines(self) -> list[str]:
        return [f"removed {self.container} ({self.image}) on {self.node}"]


@dataclass
class StillHolding(Event):
    node: str
    container: str
    reason: str

    def lines(self) -> list[str]:
        return [f"STILL HOLDING {self.container} on {self.node}: {self.reason}"]


@dataclass
class DriftItem(Event):
    node: str
    what: str  # image, env, command, mounts, missing, config-hash
    requested: str
    actual: str

    def lines(self) -> list[str]:
        return [f"DRIFT {self.node} {self.what}: requested {self.requested}, actual {self.actual}"]


@dataclass
class KernelLogGap(Event):
    """A node's kernel log, followed again, no longer holds the last line seen: what was written
    between `last_seen` and `first_back` (while the follow was down) may be missing."""

    node: str
    last_seen: str
    first_back: str

    def lines(self) -> list[str]:
        return [
            f"WARNING {self.node}: kernel log lines written between {self.last_seen} and {self.first_back} "
            "may be missing (more came while its follow was down than the reader prints back): a GPU "
            "fault among them is not named; `dmesg` on the node shows what its log holds"
        ]


# What a node's kernel log says while serving (core/launch/kernel_watch.py), for the serving view.
KernelSaid = Diagnosis | KernelLogLost | KernelLogGap

# What a launch and a teardown emit (the CLI prints these, the cockpit shows them).
LaunchEvent = (
    Stage
    | NcclNet
    | Memory
    | Diagnosis
    | KernelLogLost
    | KernelLogGap
    | Ready
    | Failed
    | Restart
    | Removed
    | StillHolding
    | DriftItem
)
TeardownEvent = Stage | Removed | StillHolding
