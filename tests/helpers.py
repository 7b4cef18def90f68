"""Paths the tests share (imported by tests and conftest alike; conftest holds fixtures only)."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data"
SAMPLES = DATA / "failures"  # real failure samples: NAME.log, NAME.source, NAME.expect


def sample(name: str) -> str:
    """The text of the real failure sample tests/data/failures/NAME.log."""
    return (SAMPLES / f"{name}.log").read_text()


def found(name: str, ident: str):
    """The finding of entry `ident` in the sample NAME (StopIteration when the sample does not name it)."""
    from spark_tui.knowledge import scan  # here: conftest imports this module too

    return next(f for f in scan(sample(name)) if f.id == ident)
