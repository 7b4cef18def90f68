"""The wording of node failures. The types live in the one tree of `spark_tui/errors.py`."""

from __future__ import annotations

from spark_tui.errors import EngineError, HostKeyError, NodeError
from spark_tui.parsers.text import inert

__all__ = ["EngineError", "HostKeyError", "NodeError", "engine_said", "why"]


def why(exc: BaseException) -> str:
    """The reason alone, without the node name a NodeError starts with."""
    return exc.reason if isinstance(exc, NodeError) else inert(str(exc))


def engine_said(exc: BaseException) -> str:
    """An engine failure in the words of the engine (or its SDK), without the node's name an
    `EngineError` adds: for lines that name the node themselves. Other failures whole."""
    return exc.reason if isinstance(exc, EngineError) else str(exc)
