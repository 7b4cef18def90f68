"""Parsed command-line flags to settings: the flag layer, and the one `load_config` every command
(and the cockpit, for its edits and detected values) resolves its configuration with.

Kept import-light like the CLI: no Textual, asyncssh or docker here.
"""

from __future__ import annotations

import argparse
import os

from spark_tui.errors import ConfigError
from spark_tui.secret_names import SECRET_MASK
from spark_tui.settings import kinds, secret_file
from spark_tui.settings.registry import CLUSTER_SETTINGS


def settings_from_args(args: argparse.Namespace) -> dict[str, tuple[object, str]]:
    """Parse flag values with the registry's kinds; errors name the flag."""
    out: dict[str, tuple[object, str]] = {}
    for s in CLUSTER_SETTINGS:
        given = getattr(args, s.dest, None)
        files = getattr(args, s.file_dest, None) if s.file_flag else None
        if files:
            out[s.key] = _from_file(s, files, bool(given))
            continue
        if not given:
            continue
        flag = given[-1][1]
        try:
            if isinstance(s.kind, kinds.EnvMap):
                value: dict[str, str] = {}
                for item, flag in given:  # noqa: B007 - the except below names the flag that failed
                    pair = _one_pair(s.kind, item)
                    if set(pair) & set(value) and pair != {k: value[k] for k in pair}:
                        raise ValueError(f"{next(iter(pair))} given twice with different values")
                    value.update(pair)
                flag = s.flag
            elif len({repr(v) for v, _ in given}) > 1:
                shown = ", ".join(SECRET_MASK if s.secret else str(v) for v, _ in given)
                raise ValueError(f"given {len(given)} times with different values ({shown}); give it once")
            else:
                value = given[-1][0] if isinstance(s.kind, kinds.Bool) else s.kind.from_text(given[-1][0])
        except ValueError as exc:
            raise ConfigError(flag, str(exc)) from None
        out[s.key] = (value, flag)
    return out


def _from_file(s, files: list[tuple[str, str]], also_value: bool) -> tuple[object, str]:
    """A secret given as `--x-file PATH`: its value, and the file as where it came from."""
    if also_value:
        raise ConfigError(s.file_flag, f"give {s.flag} or {s.file_flag}, not both")
    if len({p for p, _ in files}) > 1:
        raise ConfigError(s.file_flag, f"given {len(files)} times with different files; give it once")
    text, where = secret_file.read(files[-1][0], s.file_flag)
    try:
        value = s.kind.from_text(text)
    except ValueError as exc:
        raise ConfigError(s.file_flag, f"{where}: {exc}") from None
    return value, where if where.startswith(s.file_flag) else f"{s.file_flag} {where}"


def _one_pair(kind: kinds.EnvMap, item: str) -> dict:
    # Each `-e K=V` is one variable; its value may contain commas (NCCL_IB_HCA=a,b).
    key, sep, val = item.partition("=")
    if not sep:
        raise ValueError(f"expected NAME=VALUE, got {item!r}")
    return kind.from_yaml({key: val})


def load_config(args: argparse.Namespace, environ=None):
    """The files read and validated once per command (keys and theme included); detected values
    and edits re-layer this configuration later without the disk (resolve.relayer)."""
    from spark_tui.settings.resolve import Inputs, check_cockpit_settings, resolve

    environ = os.environ if environ is None else environ
    flags = settings_from_args(args)
    cluster_file, _ = flags.pop("cluster", (None, ""))
    inputs = Inputs(
        cluster_file=str(cluster_file) if cluster_file is not None else None,
        cluster_file_source="--cluster",
        environ=dict(environ),
        flags=flags,
    )
    config = resolve(inputs)
    check_cockpit_settings(config)
    return config
