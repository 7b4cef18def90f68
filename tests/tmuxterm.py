"""A real terminal for tests: a tmux session running a command, keys sent, the screen captured."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path


class Terminal:
    def __init__(self, session: str):
        if shutil.which("tmux") is None:
            raise AssertionError("tmux is missing; bash tests/run.sh installs it")
        # Each terminal has its own tmux server (-L): a session started on a server that another
        # test (another xdist worker) started first would get that server's environment, not
        # `env`. The pid keeps parallel runs apart.
        self.session = f"{session}-{os.getpid()}"
        self.tmux = ["tmux", "-L", self.session]

    def start(self, command: str, env: dict, cwd: str, width: int = 120, height: int = 40) -> None:
        self.kill()
        subprocess.run(
            [
                *self.tmux,
                "new-session",
                "-d",
                "-s",
                self.session,
                "-x",
                str(width),
                "-y",
                str(height),
                "--",
                "sh",
                "-c",
                command,
            ],
            check=True,
            env=env,
            cwd=cwd,
        )

    def capture(self) -> str:
        return subprocess.run(
            [*self.tmux, "capture-pane", "-p", "-t", self.session], capture_output=True, text=True
        ).stdout

    def wait_for(self, text: str, timeout: float = 30) -> str:
        deadline = time.monotonic() + timeout
        screen = ""
        while time.monotonic() < deadline:
            screen = self.capture()
            if text in screen:
                return screen
            time.sleep(0.2)
        raise AssertionError(f"{text!r} not on screen after {timeout:.0f} s:\n{screen}")

    def wait_gone(self, text: str, timeout: float = 10) -> None:
        deadline = time.monotonic() + timeout
        while text in self.capture():
            if time.monotonic() > deadline:
                raise AssertionError(f"{text!r} still on screen after {timeout:.0f} s")
            time.sleep(0.2)

    def keys(self, *k: str) -> None:
        subprocess.run([*self.tmux, "send-keys", "-t", self.session, *k], check=True)

    def exit_code(self, done: Path, timeout: float = 15) -> str:
        """What the command wrote to `done` on exit (`...; echo $? > done`), waiting for it."""
        deadline = time.monotonic() + timeout
        while not done.exists() and time.monotonic() < deadline:
            time.sleep(0.2)
        return done.read_text().strip()

    def kill(self) -> None:
        subprocess.run([*self.tmux, "kill-server"], capture_output=True)
