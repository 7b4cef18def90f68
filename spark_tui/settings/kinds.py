"""Value kinds for settings: how a value is read from YAML and from text (env, flags).

Each kind raises ValueError with a short reason; the caller adds the source
(file:line:col, variable or flag) so the operator gets one line naming it.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass


class Kind:
    name = "str"

    def from_yaml(self, value):
        """Validate a value already typed by YAML."""
        raise NotImplementedError

    def from_text(self, text: str):
        """Parse a value given as text (environment variable, command-line flag)."""
        return self.from_yaml(text)

    def show(self, value) -> str:
        if value is None:
            return ""
        return str(value)


@dataclass(frozen=True)
class Str(Kind):
    pattern: str | None = None
    hint: str = ""
    name = "str"

    def from_yaml(self, value):
        if isinstance(value, bool) or not isinstance(value, (str, int, float)):
            raise ValueError(f"expected a string, got {_type_name(value)}")
        text = str(value)
        if "\x00" in text:
            raise ValueError("NUL byte in value")
        if self.pattern and not re.fullmatch(self.pattern, text):
            raise ValueError(f"{text!r} is not valid{': ' + self.hint if self.hint else ''}")
        return text


@dataclass(frozen=True)
class Int(Kind):
    min: int | None = None
    max: int | None = None
    name = "int"

    def from_yaml(self, value):
        if isinstance(value, bool) or not isinstance(value, int):
            raise ValueError(f"expected an integer, got {_type_name(value)} {value!r}")
        if self.min is not None and value < self.min:
            raise ValueError(f"{value} is below the minimum {self.min}")
        if self.max is not None and value > self.max:
            raise ValueError(f"{value} is above the maximum {self.max}")
        return value

    def from_text(self, text: str):
        if not re.fullmatch(r"[+-]?\d{1,12}", text.strip()):
            raise ValueError(f"expected an integer, got {text!r}")
        return self.from_yaml(int(text))


@dataclass(frozen=True)
class Float(Kind):
    min: float | None = None
    name = "float"

    def from_yaml(self, value):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ValueError(f"expected a number, got {_type_name(value)} {value!r}")
        if self.min is not None and value < self.min:
            raise ValueError(f"{value} is below the minimum {self.min}")
        return float(value)

    def from_text(self, text: str):
        try:
            return self.from_yaml(float(text))
        except ValueError:
            raise ValueError(f"expected a number, got {text!r}") from None


@dataclass(frozen=True)
class Bool(Kind):
    name = "bool"

    def from_yaml(self, value):
        if not isinstance(value, bool):
            raise ValueError(f"expected true or false, got {value!r}")
        return value

    def from_text(self, text: str):
        lowered = text.strip().lower()
        if lowered in ("1", "true", "yes", "on"):
            return True
        if lowered in ("0", "false", "no", "off"):
            return False
        raise ValueError(f"expected true or false, got {text!r}")

    def show(self, value) -> str:
        return "true" if value else "false"


@dataclass(frozen=True)
class Choice(Kind):
    choices: tuple[str, ...] = ()
    name = "choice"

    def from_yaml(self, value):
        if not isinstance(value, str) or value not in self.choices:
            raise ValueError(f"{value!r} is not one of {', '.join(self.choices)}")
        return value


@dataclass(frozen=True)
class IPv4(Kind):
    name = "ipv4"

    def from_yaml(self, value):
        if not isinstance(value, str):
            raise ValueError(f"expected an IPv4 address, got {_type_name(value)} {value!r}")
        try:
            return str(ipaddress.IPv4Address(value))
        except ValueError:
            raise ValueError(f"{value!r} is not an IPv4 address") from None


@dataclass(frozen=True)
class Host(Kind):
    """An SSH host: an IP address, a host name or an ~/.ssh/config alias, or `local`."""

    name = "host"

    def from_yaml(self, value):
        if not isinstance(value, str) or not value:
            raise ValueError(f"expected a host name or address, got {value!r}")
        if re.fullmatch(r"[\d.]+", value):
            try:
                ipaddress.IPv4Address(value)
            except ValueError:
                raise ValueError(f"{value!r} is not an IPv4 address") from None
        elif not re.fullmatch(r"[A-Za-z0-9]([A-Za-z0-9._:-]{0,252})|\[[0-9a-fA-F:]+\]", value):
            raise ValueError(f"{value!r} is not a host name or address")
        return value


@dataclass(frozen=True)
class StrList(Kind):
    """A list of strings; as text, comma separated."""

    item: Kind = Str()
    name = "list"

    def from_yaml(self, value):
        if isinstance(value, str):
            return self.from_text(value)
        if not isinstance(value, list):
            raise ValueError(f"expected a list, got {_type_name(value)}")
        return [self.item.from_yaml(v) for v in value]

    def from_text(self, text: str):
        return [self.item.from_text(part.strip()) for part in text.split(",") if part.strip()]

    def show(self, value) -> str:
        return ",".join(value or [])


@dataclass(frozen=True)
class ArgList(Kind):
    """Command-line arguments; as text, split like a shell would (no expansion)."""

    name = "args"

    def from_yaml(self, value):
        if isinstance(value, str):
            return self.from_text(value)
        if not isinstance(value, list) or not all(
            isinstance(v, (str, int, float)) and not isinstance(v, bool) for v in value
        ):
            raise ValueError("expected a list of arguments")
        return [str(v) for v in value]

    def from_text(self, text: str):
        import shlex

        try:
            return shlex.split(text)
        except ValueError as exc:
            raise ValueError(f"cannot split arguments: {exc}") from None

    def show(self, value) -> str:
        import shlex

        return " ".join(shlex.quote(v) for v in value or [])


BINDING_ID = re.compile(r"[a-z][a-z_]*(?:\.[a-z][a-z_]*)?")
ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@dataclass(frozen=True)
class EnvMap(Kind):
    """Environment variables for the container; as text, KEY=VALUE separated by commas."""

    name = "map"
    shape = "NAME: value"  # for "expected a mapping of ..."

    def from_yaml(self, value):
        if not isinstance(value, dict):
            raise ValueError(f"expected a mapping of {self.shape}, got {_type_name(value)}")
        return {self.key(key): self.value(key, val) for key, val in value.items()}

    def key(self, key) -> str:
        if not isinstance(key, str) or not ENV_NAME.fullmatch(key):
            raise ValueError(f"{key!r} is not a valid environment variable name")
        return key

    def value(self, key: str, val) -> str:
        if isinstance(val, (dict, list)) or val is None:
            raise ValueError(f"value of {key} must be a string")
        return "true" if val is True else "false" if val is False else str(val)

    separator = ","  # between pairs in text form

    def from_text(self, text: str):
        out = {}
        for part in [p for p in text.split(self.separator) if p.strip()]:
            key, sep, val = part.partition("=")
            if not sep:
                raise ValueError(f"expected NAME=VALUE, got {part!r}")
            out.update(self.from_yaml({key.strip(): val}))
        return out

    def show(self, value) -> str:
        return self.separator.join(f"{k}={v}" for k, v in (value or {}).items())


class KeyMap(EnvMap):
    """Key remapping: binding id -> Textual key string (`n,ctrl+n`: commas separate keys).

    As text (SPARK_TUI_KEYS) pairs are separated by semicolons, since values hold commas.
    """

    name = "keymap"
    shape = "binding id: keys"

    def key(self, key) -> str:
        if not isinstance(key, str) or not BINDING_ID.fullmatch(key):
            raise ValueError(f"{key!r} is not a binding id (see `?` in the cockpit)")
        return key

    def value(self, key: str, val) -> str:
        if not isinstance(val, str) or not val.strip():
            raise ValueError(f"keys for {key} must be a non-empty string such as ctrl+x")
        return val.strip()

    separator = ";"


def size_bytes(text: str) -> int:
    """Bytes in a Size value ("64g"); units are powers of 1024, as for docker."""
    unit = text[-1].lower() if text[-1].isalpha() else "b"
    number = int(text[:-1] if text[-1].isalpha() else text)
    return number * 1024 ** "bkmg".index(unit)


@dataclass(frozen=True)
class Size(Kind):
    """A docker size such as 64g or 512m."""

    name = "size"

    def from_yaml(self, value):
        text = str(value) if isinstance(value, (str, int)) and not isinstance(value, bool) else None
        if text is None or not re.fullmatch(r"\d+[bkmgBKMG]?", text):
            raise ValueError(f"{value!r} is not a size like 64g or 512m")
        return text.lower()


def _type_name(value) -> str:
    return {dict: "a mapping", list: "a list", type(None): "nothing", bool: "a boolean"}.get(
        type(value), type(value).__name__
    )
