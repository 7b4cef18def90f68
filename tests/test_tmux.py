"""The real `spark-tui` command in a real terminal (tmux): keys sent, screen captured."""

import os
import subprocess
import sys

import pytest

from tests.tmuxterm import Terminal

pytestmark = pytest.mark.cluster


def test_cockpit_in_tmux(cluster, tmp_path):
    term = Terminal("spark-tui-test")
    path = cluster.cluster_file(2, tmp_path / "c2.yaml")
    (tmp_path / "home").mkdir()
    done = tmp_path / "exit-code"
    env = {
        "HOME": str(tmp_path / "home"),
        "PATH": os.environ["PATH"],
        "TERM": "xterm-256color",
        "IMAGE_NAME": "typo/image:1",
    }
    command = f"{sys.executable} -m spark_tui --cluster {path}; echo $? > {done}"
    term.start(command, env, cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    try:
        screen = term.wait_for("rtt")  # a pane has refreshed over SSH
        assert "spark-1 (head)" in screen and "spark-2 (worker)" in screen
        assert "IMAGE_NAME=typo/image:1" in screen  # the look-alike warning banner
        assert "enp1s0f1np1" in screen and "unified" in screen
        term.keys("?")
        screen = term.wait_for("remap with")
        assert "teardown" in screen and "ctrl+d" in screen
        term.keys("Escape")
        term.wait_gone("remap with")  # a key right after ESC would arrive as alt+key
        term.keys("w")
        screen = term.wait_for("1 image")
        assert "spark-test/vllm:latest" in term.wait_for("spark-test/vllm:latest")
        term.keys("Escape")
        term.wait_gone("1 image")
        term.keys("q")
        assert term.exit_code(done) == "0"
    finally:
        term.kill()


def test_headless_up_on_a_terminal_draws_live_bars(cluster, tmp_path):
    """On a terminal `up` draws a bar per node and stage (the other events above them); piped, it
    prints one line per change (tests/test_launch.py)."""
    from tests.cluster import cluster as tc

    term = Terminal("spark-tui-up")
    path = cluster.cluster_file(2, tmp_path / "c2.yaml")
    env = {"HOME": str(tmp_path), "PATH": os.environ["PATH"], "TERM": "xterm-256color"}
    flags = " ".join(tc.SANDBOX_FLAGS)
    command = f"{sys.executable} -m spark_tui up --cluster {path} {flags} -e SPARK_TEST_SHARD_DELAY=0.2; echo EXIT=$?; sleep 60"
    term.start(command, env, cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    try:
        screen = term.wait_for("EXIT=", timeout=90)
        assert "EXIT=0" in screen and "READY in" in screen, screen
        bars = [line for line in screen.splitlines() if "━" in line]
        assert any("shards" in line for line in bars), screen
        assert any(line.split()[0] == cluster.nodes[1].name and "container" in line for line in bars), screen
        assert "[  " not in screen  # no per-line stage log on a terminal
    finally:
        term.kill()
        subprocess.run(
            [sys.executable, "-m", "spark_tui", "down", "--cluster", path, "--yes"],
            env=env,
            capture_output=True,
        )
