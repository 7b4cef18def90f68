"""Typed events emitted by check, launch and teardown; the CLI prints them, the cockpit shows them."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

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


@dataclass
class Stage:
    node: str  # node name, or "cluster"
    stage: StageName
    status: StageStatus
    detail: str = ""
    elapsed: float = 0.0
    fraction: float | None = None


@dataclass
class NcclNet:
    """The transport NCCL runs on for one node, said when its lines show it (and again in Ready)."""

    node: str
    level: str  # ok | warn | unknown
    text: str


@dataclass
class Memory:
    """A node's memory while a model loads (the launch guard's reading)."""

    node: str
    total_mib: float
    available_mib: float
    elapsed: float = 0.0


@dataclass
class Ready:
    endpoint: str
    model: str
    elapsed: float
    nccl: list[NcclNet] = field(default_factory=list)  # every node's NCCL transport


@dataclass
class Failed:
    cause: str
    log_lines: list[str] = field(default_factory=list)


@dataclass
class Diagnosis:
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


@dataclass
class Restart:
    """A crash seen while supervising (`restart: on-failure`): the deployment is relaunched, the
    `attempt`-th restart of at most `limit` within `window_s` seconds (core/supervise.py)."""

    node: str
    cause: str
    attempt: int
    limit: int
    window_s: float


@dataclass
class Removed:
    node: str
    container: str
    image: str


@dataclass
class StillHolding:
    node: str
    container: str
    reason: str


@dataclass
class DriftItem:
    node: str
    what: str  # image, env, command, mounts, missing, config-hash
    requested: str
    actual: str


# What a launch and a teardown emit (the CLI prints these, the cockpit shows them).
LaunchEvent = (
    Stage | NcclNet | Memory | Diagnosis | Ready | Failed | Restart | Removed | StillHolding | DriftItem
)
TeardownEvent = Stage | Removed | StillHolding
