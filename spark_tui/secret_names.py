"""Which names hold secrets, and how a secret is shown: one rule at the bottom of the package,
used by settings (masking config values), parsers (masking pasted env), the plan and the
redactor. The same rule names secret command-line flags: `--api-key sk-...` in vllm_args is
masked wherever the arguments are shown."""

from __future__ import annotations

import re

# A name holds a secret when it says so: *_TOKEN, *_SECRET, *_PASSWORD, *_KEY, *_PASS, AUTH,
# *_CREDENTIALS, API keys... as words of the name. `TOKEN` as a prefix is no secret
# (TOKENIZERS_PARALLELISM, --max-num-batched-tokens), nor `KEY` inside a word (--ssl-keyfile, a path).
SECRET_NAME = re.compile(
    r"(?:TOKEN|SECRET|PASSWORD|PASSWD|PASSPHRASE|CREDENTIALS?|API_?KEY)(?![A-Za-z])"
    r"|(?:^|[_.-])(?:KEY|PASS|AUTH|AUTHORIZATION|COOKIE)(?:$|[_.-])",
    re.I,
)
SECRET_MASK = "***"


def secret_flag(arg: str) -> bool:
    """`--api-key`, `--hf-token=...`: an option whose name is a secret's (its value follows)."""
    if not arg.startswith("-") or arg in ("-", "--"):
        return False
    name = arg.lstrip("-").partition("=")[0]
    if re.search(r"[-_](file|path|dir)$", name, re.I):
        return False  # `--hf-token-file PATH`: where the secret is kept, a path, not the secret
    return bool(name) and bool(SECRET_NAME.search(name.replace("-", "_")))


def secret_values(argv: list[str]) -> list[str]:
    """The values given to secret flags: `--api-key X` and `--api-key=X` both give X."""
    out = []
    for i, arg in enumerate(argv):
        if secret_flag(arg):
            if "=" in arg:
                out.append(arg.partition("=")[2])
            elif i + 1 < len(argv):
                out.append(argv[i + 1])
    return [v for v in out if v]


def mask_args(argv: list[str]) -> list[str]:
    """The arguments with every secret flag's value masked (the flags themselves stay)."""
    out = list(argv)
    for i, arg in enumerate(argv):
        if secret_flag(arg):
            if "=" in arg:
                out[i] = arg.partition("=")[0] + "=" + SECRET_MASK
            elif i + 1 < len(argv):
                out[i + 1] = SECRET_MASK
    return out


# In free text (a `ps` line, a log that echoes its command line): a flag and its value.
_FLAG_VALUE = re.compile(r"(?<![\w-])(--?[A-Za-z][\w.-]*)(=|[ \t]+)(\"[^\"]*\"|'[^']*'|[^\s\"']+)")


def mask_flags_in_text(text: str) -> str:
    """`... --api-key sk-1 --port 8000` -> `... --api-key *** --port 8000`."""
    if "-" not in text:
        return text
    return _FLAG_VALUE.sub(
        lambda m: m.group(1) + m.group(2) + SECRET_MASK if secret_flag(m.group(1)) else m.group(0), text
    )
