"""Environment variables that look like settings but that spark-tui does not read: said loudly."""

from __future__ import annotations

from collections.abc import Mapping

from spark_tui.secret_names import SECRET_MASK
from spark_tui.settings.model import Value
from spark_tui.settings.registry import BY_KEY, LOOKALIKE_ENV, how_to_set


def lookalike_warnings(environ: Mapping[str, str], values: dict[str, Value]) -> list[str]:
    """Variables that look like settings but that spark-tui does not read: say so, loudly."""
    out = []
    for name in sorted(environ):
        key = LOOKALIKE_ENV.get(name)
        if key is None:
            continue
        setting = BY_KEY[key]
        shown = SECRET_MASK if setting.secret else environ[name]
        eff = values[key]
        out.append(
            f"{name}={shown} is set in the environment but spark-tui does not read it; "
            f"it looks like the setting `{key}` (effective: {eff.shown() or '(unset)'} from {eff.source}). "
            f"To use it: {how_to_set(setting)}."
        )
    return out
