"""Text helpers shared by the parsers and the log views."""

from __future__ import annotations

import re

# Real escape sequences (CSI, OSC, other ESC-x) and the residue pasted logs keep
# when the ESC byte was lost: `[0m`, `[36m`, `[32m`.
_ANSI = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]|\[\d{1,3}(?:;\d{1,3})*m"
)
# C0 controls but tab and newline, DEL, and every C1 control (U+0080-U+009F: 8-bit CSI, OSC,
# DCS, ST and the rest, which some terminals act on as their ESC-x forms).
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def strip_ansi(line: str) -> str:
    if "\x1b" not in line and "[" not in line:
        return line
    return _ANSI.sub("", line)


def inert(line: str) -> str:
    """A log line made safe to show on a terminal: escapes removed, other controls made visible."""
    line = strip_ansi(line).replace("\r", "")
    if _CONTROL.search(line):
        line = _CONTROL.sub(
            lambda m: f"^{chr(ord(m.group()) ^ 0x40)}" if ord(m.group()) < 0x80 else "?", line
        )
    return line


_COUNT = re.compile(r"[0-9]{1,18}")


def count(text: str | None) -> int | None:
    """A whole number written in ASCII digits (at most 18 of them), else None.

    What a node prints is read with this, never with `str.isdigit()` + `int()`: isdigit accepts
    `²` and other digits int() refuses, a regex `\\d+` matches any Unicode digit, and int()
    refuses runs of more than 4300 digits. A parser must never raise on a node's output."""
    if text is None:
        return None
    text = text.strip()
    return int(text) if _COUNT.fullmatch(text) else None


def whole(value: float | None) -> int | None:
    """A parsed number as an int; None when absent or beyond any real count (inf, nan, 1e400)."""
    if value is None or not (-(2**62) < value < 2**62):  # nan fails both comparisons
        return None
    return int(value)
