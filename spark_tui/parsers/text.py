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
