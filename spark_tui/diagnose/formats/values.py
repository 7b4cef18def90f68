"""What every format reader shares: JSON values found in a paste (whole, as lines, cut short),
numbers read from figures' text, and verdicts in one shape."""

from __future__ import annotations

import json
import re

from spark_tui.diagnose.paste import Cleaned

# a quote marker left at the end of each line (`    "ExitCode": 137,> `): a quote-reply gone wrong
TRAILING_MARK = re.compile(r"[ \t]*>[ \t]+$")


def unmarked(text: str) -> str:
    """The paste without the '> ' a broken quote-reply left at the end of (nearly) every line."""
    lines = text.splitlines()
    full = [line for line in lines if line.strip()]
    marked = sum(1 for line in full if TRAILING_MARK.search(line))
    if len(full) < 3 or marked < 0.8 * len(full):
        return text
    return "\n".join(TRAILING_MARK.sub("", line) for line in lines)


def json_values(text: str) -> list:
    """Every JSON value a paste holds, each starting a line (after a prompt, a sentence or a
    backtick the reporter wrote): a whole output, JSON lines, a value followed by prose."""
    decoder = json.JSONDecoder()
    values = []
    pos = 0
    for m in re.finditer(r"^[ \t`]*(?=[\[{])", text, re.M):
        start = m.end()
        if start < pos:
            continue
        try:
            value, end = decoder.raw_decode(text, start)
        except (ValueError, RecursionError):  # not JSON, or nested deeper than Python recurses
            continue
        values.append(value)
        pos = end
    return values


def json_objects(text: str) -> list[dict]:
    out: list[dict] = []
    for v in json_values(text):
        out += (
            [r for r in v if isinstance(r, dict)]
            if isinstance(v, list)
            else [v]
            if isinstance(v, dict)
            else []
        )
    return out


def braced(text: str, start: int) -> str:
    """The JSON object opening at text[start] ('{'), to its matching brace (strings respected)."""
    depth, quoted, escaped = 0, False, False
    for i in range(start, len(text)):
        ch = text[i]
        if quoted:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                quoted = False
            continue
        if ch == '"':
            quoted = True
        elif ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0:
                return text[start : i + 1]
    return ""


def load_json(text: str):
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return None


def verdict(level: str, text: str, code: str = "") -> dict:
    return {"level": level, "text": text, **({"code": code} if code else {})}


def finding_verdict(f) -> dict:
    level = {"error": "error", "warn": "warn"}.get(f.severity, "ok")
    return verdict(level, f"{f.title}: {f.means} Fix: {f.fix}", f.id)


def number(value: object) -> float | None:
    """The number that starts a figure's text ('56 C', '250.00 W', '81920 MiB', '4'), if any."""
    m = re.match(r"\s*(-?\d+(?:\.\d+)?)", str(value)) if value is not None else None
    return float(m.group(1)) if m else None


def integer(value: object) -> int | None:
    n = number(value)
    return int(n) if n is not None else None


BARE_COMMAND = re.compile(
    r"^[`\s]*(?:sudo\s+)?(?P<cmd>(?:docker|podman|ip|ethtool|nvidia-smi|ray)\s.*?)`?\s*$"
)


def pasted_command(c: Cleaned) -> str:
    """The pasted command: its `$ ` line, or a first line that is a bare command (pasted
    without a prompt, inside backticks or indented as a markdown code block)."""
    if c.command:
        return c.command.removeprefix("sudo ").strip()
    for line in c.text.splitlines()[:3]:
        if line.strip() in ("", "`"):
            continue
        m = BARE_COMMAND.match(line)
        return m.group("cmd").strip() if m else ""
    return ""
