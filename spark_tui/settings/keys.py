"""Every key binding of the cockpit, with an id the user config can remap (`keys:`).

No Textual import: the CLI validates `keys` against this list before the cockpit starts,
and the help screen, the screens' BINDINGS and the README all read it.
"""

from __future__ import annotations

from dataclasses import dataclass

from spark_tui.errors import ConfigError
from spark_tui.settings.model import closest


@dataclass(frozen=True)
class KeySpec:
    id: str
    key: str  # Textual key string; several keys separated by commas
    action: str
    description: str
    where: str  # app | dashboard | wizard | logs | serving | upgrade | dialog | choice
    show: bool = True


KEYS: tuple[KeySpec, ...] = (
    KeySpec("help", "question_mark", "help", "Help: every binding", "app"),
    KeySpec("quit", "q", "quit", "Quit", "app"),
    KeySpec("palette", "ctrl+p", "command_palette", "Command palette", "app", show=False),
    KeySpec("wizard", "w", "wizard", "Launch wizard", "app"),
    KeySpec("logs", "l", "logs", "Logs", "app"),
    KeySpec("serving", "v", "serving", "Serving figures", "app"),
    KeySpec("refresh", "r", "refresh", "Refresh now", "app"),
    KeySpec("teardown", "ctrl+d", "teardown", "Tear down (confirm)", "app"),
    KeySpec("upgrade", "u", "upgrade", "Upgrade the image: keep it or roll back", "app", show=False),
    KeySpec("next_pane", "tab,right", "app.focus_next", "Next pane", "dashboard", show=False),
    KeySpec("prev_pane", "shift+tab,left", "app.focus_previous", "Previous pane", "dashboard", show=False),
    KeySpec("wizard.next", "n,ctrl+n", "next", "Next step", "wizard"),
    KeySpec("wizard.back", "escape,b", "back", "Back", "wizard"),
    KeySpec("wizard.edit", "e", "edit", "Edit setting", "wizard"),
    KeySpec("wizard.launch", "ctrl+l", "launch", "Launch", "wizard"),
    KeySpec("wizard.sync", "s", "sync", "Sync image/model (a failed row)", "wizard"),
    KeySpec("wizard.fabric", "f", "fabric", "Measure the data links (check --fabric)", "wizard"),
    KeySpec("wizard.defaults", "d", "toggle_defaults", "Show / fold built-in defaults", "wizard"),
    KeySpec(
        "wizard.all_images",
        "a",
        "all_images",
        "Ask every image, not only vLLM-looking ones (images --all)",
        "wizard",
        show=False,
    ),
    KeySpec(
        "wizard.reveal", "ctrl+r", "reveal", "Show / hide a secret in the edit box", "wizard", show=False
    ),
    KeySpec("logs.back", "escape", "back", "Back", "logs"),
    KeySpec("logs.filter", "slash", "filter", "Filter (regex)", "logs"),
    KeySpec("logs.search", "ctrl+f", "search", "Search", "logs"),
    KeySpec("logs.pause", "p", "pause", "Pause / follow", "logs"),
    KeySpec("logs.nccl", "c", "nccl_only", "NCCL only", "logs"),
    KeySpec("logs.wrap", "ctrl+w", "wrap", "Wrap", "logs"),
    KeySpec("logs.save", "s", "save", "Save log", "logs"),
    KeySpec("logs.source", "o", "next_source", "Next source", "logs"),
    KeySpec("serving.back", "escape", "back", "Back", "serving"),
    KeySpec("upgrade.back", "escape", "back", "Back (once the upgrade ended)", "upgrade"),
    KeySpec("confirm.yes", "y", "yes", "Yes", "dialog"),
    KeySpec("confirm.no", "n,escape", "no", "No", "dialog"),
    # The wizard's question when another image is chosen while a deployment serves.
    KeySpec("choice.upgrade", "u", "upgrade", "Upgrade to it: kept, or rolled back to what runs", "choice"),
    KeySpec(
        "choice.relaunch",
        "t",
        "relaunch",
        "Use it in the wizard: tear down and launch, no way back",
        "choice",
    ),
    KeySpec("choice.cancel", "escape", "cancel", "Cancel: choose again", "choice"),
)

BY_ID = {k.id: k for k in KEYS}


def for_screen(where: str) -> list[KeySpec]:
    return [k for k in KEYS if k.where == where]


def validate_keymap(keymap: dict[str, str], source_of) -> dict[str, str]:
    """The `keys` setting: every id must exist; errors name where the bad id came from."""
    for binding_id, keys in keymap.items():
        if binding_id not in BY_ID:
            hint = closest(binding_id, BY_ID)
            raise ConfigError(
                str(source_of(binding_id)),
                f"keys: no binding with id {binding_id!r}"
                + (f"; did you mean {hint!r}?" if hint else f" (ids: {', '.join(BY_ID)})"),
            )
        if not keys.strip():
            raise ConfigError(str(source_of(binding_id)), f"keys: {binding_id} needs at least one key")
    return keymap


# How a key is written in a hint (Textual names -> what is on the keycap).
SHOWN = {"escape": "esc", "question_mark": "?", "slash": "/", "space": "space", "enter": "enter"}


def effective_keys(binding_id: str, keymap: dict[str, str]) -> list[str]:
    """The keys a binding answers to after the user's remapping."""
    keys = keymap.get(binding_id) or BY_ID[binding_id].key
    return [SHOWN.get(k.strip(), k.strip()) for k in keys.split(",") if k.strip()]


def hint(binding_id: str, keymap: dict[str, str], every: bool = False) -> str:
    """The key to show for a binding in a hint: the first one, or all of them joined by ' / '."""
    keys = effective_keys(binding_id, keymap)
    return " / ".join(keys) if every else keys[0]


def markdown_table() -> str:
    rows = ["| id | keys | where | what |", "|---|---|---|---|"]
    for k in KEYS:
        rows.append(f"| `{k.id}` | `{k.key}` | {k.where} | {k.description} |")
    return "\n".join(rows)
