"""Paths the tests share (imported by tests and conftest alike; conftest holds fixtures only)."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data"
