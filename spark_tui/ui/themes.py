"""Theme files (YAML) turned into Textual themes: built-in ones in themes/, user ones in the XDG data dir."""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

from textual.theme import Theme

from spark_tui.errors import ConfigError
from spark_tui.settings import yamlfile
from spark_tui.settings.themefiles import theme_files

FIELDS = {f.name for f in dataclasses.fields(Theme)}


def load_theme(path: Path) -> Theme:
    doc = yamlfile.load(str(path))
    data = doc.data
    for key in data:
        if key not in FIELDS:
            raise ConfigError(
                doc.key_where(key), f"unknown theme field {key!r} (fields: {', '.join(sorted(FIELDS))})"
            )
    if "name" not in data or "primary" not in data:
        raise ConfigError(str(path), "a theme needs at least `name` and `primary`")
    try:
        return Theme(**data)
    except (TypeError, ValueError) as exc:
        raise ConfigError(str(path), f"bad theme: {exc}") from None


def load_all(environ=os.environ) -> dict[str, Theme]:
    return {t.name: t for t in (load_theme(p) for p in theme_files(environ))}
