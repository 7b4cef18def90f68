"""The real `spark-tui` command in a real terminal (tmux): keys sent, screen captured."""

import os
import sys
import time

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
        deadline = time.monotonic() + 15
        while not done.exists() and time.monotonic() < deadline:
            time.sleep(0.2)
        assert done.read_text().strip() == "0"
    finally:
        term.kill()
