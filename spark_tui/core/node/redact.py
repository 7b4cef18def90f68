"""What any line from a node goes through before a person sees it: made inert, then secrets masked.

The cockpit (panes, logs, the wizard's launch report) and the headless commands (`up`'s failure
report) use the same rule, so a token in a log line is masked wherever it is shown.

Inert comes first: a token split by an escape sequence (`hf_ab\\x1b[0mcdef`) reads whole on a
terminal once the escape is gone, so it is masked in the form a person sees. Secrets of any length
are masked; those shorter than 4 characters only where they stand as a whole word (`--api-key ab`,
`KEY=ab`): masking every `ab` inside other words would garble every line and, by where the masks
fall, tell the secret.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from spark_tui.parsers.text import inert
from spark_tui.secret_names import SECRET_MASK, mask_flags_in_text, secret_values
from spark_tui.settings.resolve import Config

SHORT = 4  # below this length a secret is masked only as a whole word


class Redactor:
    """Masks the configuration's secrets: the HF token and secret-named container env values."""

    def __init__(self, config: Callable[[], Config]):
        self._config = config  # the current configuration (the cockpit's changes with edits)
        self._for: Config | None = None
        self._secrets: list[str] = []
        self._pattern: re.Pattern | None = None

    def secrets(self) -> list[str]:
        """Computed once per configuration: masking runs on every log line."""
        config = self._config()
        if self._for is not config:
            found = [config["hf_token"]] if config["hf_token"] else []
            for node in config.nodes:
                found += [v.value for v in node.container_env if v.secret and v.value]
            found += secret_values(list(config["vllm_args"] or []))  # `--api-key sk-...`
            # Longest first, so a secret that contains another is masked whole.
            self._secrets = sorted({s for s in found if s}, key=len, reverse=True)
            self._pattern = (
                re.compile(
                    "|".join(
                        re.escape(s) if len(s) >= SHORT else rf"(?<!\w){re.escape(s)}(?!\w)"
                        for s in self._secrets
                    )
                )
                if self._secrets
                else None
            )
            self._for = config
        return self._secrets

    def _mask(self, line: str) -> str:
        """The configuration's secrets, and any value after a secret flag (a `ps` line of another
        program, a log echoing its command line)."""
        self.secrets()
        line = mask_flags_in_text(line)
        return self._pattern.sub(SECRET_MASK, line) if self._pattern is not None else line

    def mask(self, line: str) -> str:
        """Secrets masked, escapes kept (for JSON, which escapes controls itself). When the line
        still shows a secret once made inert (one split by an escape), the masked inert form."""
        masked = self._mask(line)
        if masked.isprintable():
            return masked
        shown = inert(masked)
        again = self._mask(shown)
        return again if again != shown else masked

    def show(self, line: str) -> str:
        """Inert (escape sequences removed, controls made visible), then masked."""
        return self._mask(inert(line))
