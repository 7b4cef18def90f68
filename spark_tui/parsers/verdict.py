"""The one shape every parser's verdicts take: a level, a stable code, and the words for a person."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Level = Literal["ok", "warn", "error"]


@dataclass
class Verdict:
    level: Level
    code: str  # stable id, for tests and tools (e.g. one_twin, oom)
    text: str
