"""Environment variables that look like settings but that spark-tui does not read: said loudly."""

from __future__ import annotations

from collections.abc import Mapping

from spark_tui.secret_names import SECRET_MASK, secret_flag
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


def secret_arg_warnings(values: dict[str, Value]) -> list[str]:
    """A secret in vllm_args is masked in spark-tui's output, but it is on the head's command
    line: any user there sees it in `ps`. Said, with the way that keeps it off the command line."""
    args = values["vllm_args"].value or []
    flags = sorted({a.partition("=")[0] for a in args if secret_flag(a)})
    if not flags:
        return []
    return [
        f"vllm_args holds a secret ({', '.join(flags)} from {values['vllm_args'].source}): spark-tui masks it, "
        "but any user on the head sees it in `ps`; pass the API key as VLLM_API_KEY in `env` instead "
        "(vLLM reads it; env values with secret names are masked and never on a command line)"
    ]
