"""Textual Binding objects built from the key registry (spark_tui/settings/keys.py)."""

from __future__ import annotations

from textual.binding import Binding, BindingType

from spark_tui.settings.keys import for_screen


def bindings_for(where: str) -> list[BindingType]:
    return [Binding(k.key, k.action, k.description, show=k.show, id=k.id) for k in for_screen(where)]
