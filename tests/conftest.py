import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data"
sys.path.insert(0, str(ROOT))

from spark_tui.settings.registry import ENV_PREFIX, LOOKALIKE_ENV  # noqa: E402


@pytest.fixture
def clean_env(monkeypatch, tmp_path):
    """An environment with no spark-tui or look-alike variables and a private HOME/XDG."""
    for name in list(os.environ):
        if name.startswith(ENV_PREFIX) or name in LOOKALIKE_ENV or name.startswith("XDG_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    (tmp_path / "home").mkdir()
    return tmp_path


@pytest.fixture
def run_cli(clean_env, capsys):
    """Run `spark-tui ARGS` in-process; returns (exit code, stdout, stderr)."""
    from spark_tui.cli import main

    def run(*argv: str):
        code = main(list(argv))
        out = capsys.readouterr()
        return code, out.out, out.err

    return run
