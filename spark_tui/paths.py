"""Every path spark-tui reads or writes, following the XDG base directory spec."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

APP = "spark-tui"
_HERE = Path(__file__).resolve().parent
# Installed from a wheel, the built-in themes are package data (spark_tui/themes/); in a source
# checkout (and an editable install) they are the top-level themes/ folder they are built from.
PACKAGE_THEMES = _HERE / "themes" if (_HERE / "themes").is_dir() else _HERE.parent / "themes"


def _xdg(environ: Mapping[str, str], var: str, fallback: str) -> Path:
    value = environ.get(var)
    if value and os.path.isabs(value):
        return Path(value) / APP
    return Path(environ.get("HOME") or os.path.expanduser("~")) / fallback / APP


def user_config_file(environ: Mapping[str, str]) -> str:
    return str(_xdg(environ, "XDG_CONFIG_HOME", ".config") / "config.yaml")


def user_themes_dir(environ: Mapping[str, str]) -> str:
    return str(_xdg(environ, "XDG_DATA_HOME", ".local/share") / "themes")


def state_dir(environ: Mapping[str, str]) -> str:
    return str(_xdg(environ, "XDG_STATE_HOME", ".local/state"))


def cache_dir(environ: Mapping[str, str]) -> str:
    return str(_xdg(environ, "XDG_CACHE_HOME", ".cache"))
