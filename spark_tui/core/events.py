"""Typed events emitted by check, launch and teardown; the CLI prints them, the cockpit shows them."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Stage:
    node: str  # node name, or "cluster"
    stage: str  # container, ray_join, nccl_init, shards, ready, rollback, teardown
    status: str  # started | progress | done | failed
    detail: str = ""
    elapsed: float = 0.0
    fraction: float | None = None


@dataclass
class Ready:
    endpoint: str
    model: str
    elapsed: float


@dataclass
class Failed:
    cause: str
    log_lines: list[str] = field(default_factory=list)


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
