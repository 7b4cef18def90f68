"""Errors that reach the operator as one line and exit code 2."""


class ConfigError(Exception):
    """Bad input. `source` names where it came from: file:line:col, a flag or a variable."""

    def __init__(self, source: str, message: str):
        super().__init__(f"{source}: {message}")
        self.source = source
        self.message = message
