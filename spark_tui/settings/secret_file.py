"""Secret settings read from a file or standard input, so the value is in no argv (`ps`), no
environment a `ps e` shows, and no shell history: `--hf-token-file PATH`,
`SPARK_TUI_HF_TOKEN_FILE=PATH`, `-` for standard input (registry.Setting.file_flag/file_env).
Also the warning for a cluster file that holds a secret and is readable by others."""

from __future__ import annotations

import os
import stat
import sys

from spark_tui.errors import ConfigError

MAX_BYTES = 64 << 10  # a token is a few dozen bytes; never read a whole disk image by mistake
STDIN = "-"


def read(path: str, source: str) -> tuple[str, str]:
    """(the secret, where it came from as shown in provenance). The file's one line, without the
    newline `echo` adds; bad input raises ConfigError naming `source` (the flag or variable)."""
    try:
        if path == STDIN:
            text, where = sys.stdin.read(MAX_BYTES + 1), f"{source} - (standard input)"
        else:
            with open(os.path.expanduser(path), encoding="utf-8") as fh:
                text, where = fh.read(MAX_BYTES + 1), path
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else "not UTF-8 text"
        raise ConfigError(source, f"cannot read {path}: {reason}") from None
    if len(text) > MAX_BYTES:
        raise ConfigError(source, f"{path} is larger than {MAX_BYTES} bytes: not a token file")
    value = text.strip()
    if not value:
        raise ConfigError(source, f"{path} is empty")
    if "\n" in value or "\r" in value:
        raise ConfigError(source, f"{path} holds more than one line; a secret file holds the value only")
    return value, where


def readable_by_others(path: str, keys: list[str]) -> str | None:
    """A warning when `path` (a cluster file or user config holding the secret settings `keys`)
    can be read by its group or by everyone."""
    try:
        mode = stat.S_IMODE(os.stat(path).st_mode)
    except OSError:
        return None
    if not keys or not mode & 0o077:
        return None
    return (
        f"{path} holds {', '.join(keys)} and is readable by "
        f"{'everyone' if mode & 0o007 else 'its group'} (mode {mode:o}): chmod 600 {path}, "
        f"or keep the secret in a file of its own ({', '.join('--' + k.replace('_', '-') + '-file' for k in keys)})"
    )
