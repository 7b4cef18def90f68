"""What any line from a node goes through before a person sees it: secrets masked, then made inert.

The cockpit (panes, logs, the wizard's launch report) and the headless commands (`up`'s failure
report) use the same rule, so a token in a log line is masked wherever it is shown.
"""

from __future__ import annotations

from collections.abc import Callable

from spark_tui.parsers.text import inert
from spark_tui.secret_names import SECRET_MASK
from spark_tui.settings.resolve import Config


class Redactor:
    """Masks the configuration's secrets: the HF token and secret-named container env values."""

    def __init__(self, config: Callable[[], Config]):
        self._config = config  # the current configuration (the cockpit's changes with edits)
        self._for: Config | None = None
        self._secrets: list[str] = []

    def secrets(self) -> list[str]:
        """Computed once per configuration: masking runs on every log line."""
        config = self._config()
        if self._for is not config:
            found = [config["hf_token"]] if config["hf_token"] else []
            for node in config.nodes:
                found += [v.value for v in node.container_env if v.secret and v.value]
            # Longest first, so a secret that contains another is masked whole; very short values
            # would mask half of every line.
            self._secrets = sorted({s for s in found if len(s) >= 4}, key=len, reverse=True)
            self._for = config
        return self._secrets

    def mask(self, line: str) -> str:
        for secret in self.secrets():
            if secret in line:
                line = line.replace(secret, SECRET_MASK)
        return line

    def show(self, line: str) -> str:
        """Masked, then inert (escape sequences removed, controls made visible)."""
        return inert(self.mask(line))
