"""Install as a user does: the wheel holds every file the program needs, and `pip install .` into a
fresh virtual environment gives a `spark-tui` that opens the cockpit (the README's first command).

The editable install the other tests use reads themes and stylesheets straight from the source
tree, so it cannot show a file missing from the package; these tests use no editable install."""

from __future__ import annotations

import shutil
import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pytest

from tests.tmuxterm import Terminal

ROOT = Path(__file__).resolve().parent.parent
# Run in parallel (pytest-xdist), this module's tests stay on one worker: they share one venv.
pytestmark = pytest.mark.xdist_group("install")


def _source_copy(where: Path) -> Path:
    """The source as a clone has it: a `build/` left by an earlier build would hide a missing file."""
    dest = where / "src"
    shutil.copytree(
        ROOT,
        dest,
        ignore=shutil.ignore_patterns("build", "*.egg-info", ".git", "__pycache__", "__snapshots__"),
    )
    return dest


def _wheel(out: Path) -> Path:
    # Built as pip builds it for a user: in an isolated build environment.
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out), str(_source_copy(out))],
        check=True,
        capture_output=True,
        text=True,
    )
    return next(out.glob("spark_tui-*.whl"))


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """The wheel `pip install .` builds from a clean copy of the source (and then installs)."""
    return _wheel(tmp_path_factory.mktemp("wheel"))


def test_wheel_holds_every_source_module_stylesheet_and_theme(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    wanted = {
        str(p.relative_to(ROOT)) for p in (ROOT / "spark_tui").rglob("*") if p.suffix in (".py", ".tcss")
    }
    wanted |= {f"spark_tui/themes/{p.name}" for p in (ROOT / "themes").glob("*.yaml")}
    assert len([w for w in wanted if w.startswith("spark_tui/themes/")]) == 3
    assert sorted(wanted - names) == []


@pytest.fixture(scope="module")
def installed(wheel, tmp_path_factory) -> Path:
    """`pip install .` (not editable) into a new virtual environment, in its two steps: the wheel
    pip builds from the source (the fixture above, built once for both), then pip installs it
    with its dependencies. Returns the environment's bin directory."""
    where = tmp_path_factory.mktemp("venv")
    venv.create(where, with_pip=True)
    pip = [str(where / "bin" / "python"), "-m", "pip", "install", "-q", "--disable-pip-version-check"]
    proc = subprocess.run([*pip, str(wheel)], capture_output=True, text=True, cwd=where)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return where / "bin"


def test_fresh_install_is_not_the_source_tree(installed, tmp_path):
    out = subprocess.run(
        [
            str(installed / "python"),
            "-c",
            "import spark_tui.paths as p; print(p.__file__); print(p.PACKAGE_THEMES)",
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        check=True,
    ).stdout.split()
    assert all(str(installed.parent) in line and str(ROOT) not in line for line in out), out


def test_fresh_install_opens_the_cockpit_in_a_terminal(installed, tmp_path):
    """No cluster file: the cockpit opens on this machine as a one-node cluster."""
    term = Terminal("spark-tui-install")
    (tmp_path / "home").mkdir()
    done = tmp_path / "exit-code"
    env = {
        "HOME": str(tmp_path / "home"),
        "PATH": f"{installed}:/usr/sbin:/usr/bin:/sbin:/bin",
        "TERM": "xterm-256color",
    }
    term.start(f"spark-tui; echo $? > {done}", env, cwd=str(tmp_path))
    try:
        screen = term.wait_for("(head)", timeout=60)
        assert "error" not in screen.lower().split("(head)")[0], screen
        term.keys("?")
        assert "ctrl+d" in term.wait_for("remap with")
        term.keys("Escape")
        term.wait_gone("remap with")
        term.keys("q")
        assert term.exit_code(done) == "0"
    finally:
        term.kill()


def test_fresh_install_headless_commands(installed, tmp_path):
    env = {"HOME": str(tmp_path), "PATH": f"{installed}:/usr/bin:/bin"}
    proc = subprocess.run(["spark-tui", "info"], capture_output=True, text=True, env=env, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    themes = next(line for line in proc.stdout.splitlines() if line.startswith("themes (built in)"))
    assert str(installed.parent) in themes
    assert sorted(p.name for p in Path(themes.split()[3]).glob("*.yaml")) == sorted(
        p.name for p in (ROOT / "themes").glob("*.yaml")
    )
    proc = subprocess.run(
        ["spark-tui", "--theme", "nosuch", "config"], capture_output=True, text=True, env=env, cwd=tmp_path
    )
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and "nosuch" in proc.stderr, proc.stderr
