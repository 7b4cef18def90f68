"""The real `spark-tui` command in a real terminal (tmux): keys sent, screen captured."""

import os
import shutil
import subprocess
import sys
import time

import pytest

pytestmark = pytest.mark.cluster

SESSION = "spark-tui-test"


def capture() -> str:
    return subprocess.run(["tmux", "capture-pane", "-p", "-t", SESSION], capture_output=True, text=True).stdout


def wait_for(text: str, timeout: float = 30) -> str:
    deadline = time.monotonic() + timeout
    screen = ""
    while time.monotonic() < deadline:
        screen = capture()
        if text in screen:
            return screen
        time.sleep(0.2)
    raise AssertionError(f"{text!r} not on screen after {timeout:.0f} s:\n{screen}")


def wait_gone(text: str, timeout: float = 10) -> None:
    deadline = time.monotonic() + timeout
    while text in capture():
        if time.monotonic() > deadline:
            raise AssertionError(f"{text!r} still on screen after {timeout:.0f} s")
        time.sleep(0.2)


def keys(*k: str) -> None:
    subprocess.run(["tmux", "send-keys", "-t", SESSION, *k], check=True)


def test_cockpit_in_tmux(cluster, tmp_path):
    if shutil.which("tmux") is None:
        pytest.fail("tmux is missing; bash tests/run.sh installs it")
    path = cluster.cluster_file(2, tmp_path / "c2.yaml")
    (tmp_path / "home").mkdir()
    done = tmp_path / "exit-code"
    env = {"HOME": str(tmp_path / "home"), "PATH": os.environ["PATH"], "TERM": "xterm-256color", "IMAGE_NAME": "typo/image:1"}
    command = f"{sys.executable} -m spark_tui --cluster {path}; echo $? > {done}"
    subprocess.run(["tmux", "kill-session", "-t", SESSION], capture_output=True)
    subprocess.run(["tmux", "new-session", "-d", "-s", SESSION, "-x", "120", "-y", "40", "--", "sh", "-c", command],
                   check=True, env=env, cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    try:
        screen = wait_for("rtt")  # a pane has refreshed over SSH
        assert "spark-1 (head)" in screen and "spark-2 (worker)" in screen
        assert "IMAGE_NAME=typo/image:1" in screen  # the look-alike warning banner
        assert "enp1s0f1np1" in screen and "unified" in screen
        keys("?")
        screen = wait_for("remap with")
        assert "teardown" in screen and "ctrl+d" in screen
        keys("Escape")
        wait_gone("remap with")  # a key right after ESC would arrive as alt+key
        keys("w")
        screen = wait_for("1 image")
        assert "spark-test/vllm:latest" in wait_for("spark-test/vllm:latest")
        keys("Escape")
        wait_gone("1 image")
        keys("q")
        deadline = time.monotonic() + 15
        while not done.exists() and time.monotonic() < deadline:
            time.sleep(0.2)
        assert done.read_text().strip() == "0"
    finally:
        subprocess.run(["tmux", "kill-session", "-t", SESSION], capture_output=True)
