"""Theme files: the built-in ones (package data) and the user's (XDG data dir). No Textual here:
every command checks the `theme` setting against these names; the cockpit turns them into themes."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from spark_tui import paths
from spark_tui.errors import ConfigError
from spark_tui.settings import yamlfile


def theme_files(environ: Mapping[str, str] = os.environ) -> list[Path]:
    """Built-in first, then the user's: a user theme with the same name replaces a built-in one."""
    found = sorted(paths.PACKAGE_THEMES.glob("*.yaml"))
    user = Path(paths.user_themes_dir(environ))
    if user.is_dir():
        found += sorted(user.glob("*.yaml"))
    return found


def theme_names(environ: Mapping[str, str] = os.environ) -> list[str]:
    names = []
    for path in theme_files(environ):
        doc = yamlfile.load(str(path))
        name = doc.data.get("name") if isinstance(doc.data, dict) else None
        if not isinstance(name, str) or not name:
            raise ConfigError(str(path), "a theme needs at least `name` and `primary`")
        names.append(name)
    return names


def check_theme(name: str, source: str, environ: Mapping[str, str] = os.environ) -> None:
    names = theme_names(environ)
    if name not in names:
        raise ConfigError(
            source, f"no theme {name!r} (themes: {', '.join(sorted(set(names))) or 'none found'})"
        )
