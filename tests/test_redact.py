"""The redactor's order and reach: inert first, then masked; short secrets masked as whole words."""

from spark_tui.core.node.redact import Redactor
from spark_tui.parsers.text import inert
from tests.frozen import cluster_config

TOKEN = "hf_SuperSecretToken123"


def redactor(environ) -> Redactor:
    config, _ = cluster_config(2, environ)
    return Redactor(lambda: config)


def test_a_token_split_by_an_escape_sequence_is_masked():
    """`hf_Super<ESC>[0mSecretToken123` reads as the whole token on a terminal once the escape is
    gone: the form a person sees is the form that is masked."""
    r = redactor({"SPARK_TUI_HF_TOKEN": TOKEN})
    for split in (
        "hf_Super\x1b[0mSecretToken123",
        "hf_Super\x1b]0;t\x07SecretToken123",
        "hf_Super\rSecretToken123",
    ):
        line = f"downloading with {split} now"
        shown = r.show(line)
        assert TOKEN not in shown and "***" in shown, repr(shown)
        # JSON keeps escapes, but never a secret a terminal would show whole.
        assert TOKEN not in inert(r.mask(line)), repr(r.mask(line))
    assert r.mask("plain \x1b[31mred\x1b[0m") == "plain \x1b[31mred\x1b[0m"  # no secret: raw kept


def test_short_secrets_are_masked_as_whole_words():
    r = redactor({"SPARK_TUI_HF_TOKEN": "ab1"})
    assert r.show("HF_TOKEN=ab1") == "HF_TOKEN=***"
    assert r.show("--hf-token ab1 --x") == "--hf-token *** --x"
    assert r.mask("token: ab1") == "token: ***"
    # Inside other words it stays: masking every `ab1` would garble lines and tell the secret.
    assert r.show("tab1e cab1n") == "tab1e cab1n"
    one = redactor({"SPARK_TUI_HF_TOKEN": "x"})
    assert one.show("HF_TOKEN=x next") == "HF_TOKEN=*** next"
    assert one.show("max xx") == "max xx"
