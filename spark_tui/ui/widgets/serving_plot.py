"""A plotext chart drawn in another process: the serving screen's four charts cost 30-90 ms each
on this project's 2-core machine, and drawn in the event loop (or in a thread, which holds the GIL
as long) they held key presses for as long (bench/serving.py measured key p95 of 600 ms and
140 ms). A helper process (chart_server.py) draws them; until a chart is ready the last one stays.
Should the helper be unusable, charts are drawn in a thread (slower keys, never a crash)."""

from __future__ import annotations

import asyncio
import atexit
import json
import subprocess
import sys
import threading

from rich.text import Text
from textual.widget import Widget
from textual.worker import Worker

from spark_tui.ui.messages import forward_failure
from spark_tui.ui.widgets.memory_plot import ansi_chart


class _Helper:
    """The chart process: one request at a time (a lock), answered in order."""

    def __init__(self) -> None:
        self.proc: subprocess.Popen | None = None
        self.lock = threading.Lock()
        self.broken = False

    def draw(self, request: dict) -> str:
        with self.lock:
            if not self.broken:
                try:
                    if self.proc is None or self.proc.poll() is not None:
                        argv = [sys.executable, "-m", "spark_tui.ui.widgets.chart_server"]
                        self.proc = subprocess.Popen(
                            argv,
                            stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL,
                            text=True,
                        )
                        atexit.register(self.proc.kill)
                    assert self.proc.stdin is not None and self.proc.stdout is not None
                    self.proc.stdin.write(json.dumps(request) + "\n")
                    self.proc.stdin.flush()
                    answer = json.loads(self.proc.stdout.readline() or "{}")
                    if "ansi" in answer:
                        return answer["ansi"]
                except (OSError, ValueError):
                    self.broken = True
        return ansi_chart(
            request["series"], request["width"], request["height"], request["ymax"], request["unit"]
        )


HELPER = _Helper()


def thin(values: list[float], points: int) -> list[float]:
    """At most `points` values, evenly picked, the newest kept (plotext's cost grows with points)."""
    if len(values) <= points or points < 2:
        return values
    step = (len(values) - 1) / (points - 1)
    return [values[round(i * step)] for i in range(points)]


class ServingPlot(Widget):
    DEFAULT_CSS = "ServingPlot { height: 1fr; min-height: 6; }"

    def __init__(self, unit: str, what: str, **kwargs):
        super().__init__(**kwargs)
        self.unit, self.what = unit, what
        self.series: dict[str, list[float]] = {}
        self.ymax: float | None = None
        self._drawn: tuple | None = None
        self._text = self._waiting()

    def _waiting(self) -> Text:
        return Text(f"{self.what} ({self.unit}): collecting samples...", style="dim")

    def update(self, series: dict[str, list[float]], ymax: float | None = None) -> None:
        self.series, self.ymax = series, ymax
        self._draw()

    def on_resize(self) -> None:
        self._draw()

    def _draw(self) -> None:
        width, height = self.size.width, self.size.height
        series = {k: thin(v, max(2, width)) for k, v in self.series.items()}
        key = (width, height, self.ymax, tuple((k, tuple(v)) for k, v in series.items()))
        if key == self._drawn or not width:
            return
        self._drawn = key
        if width < 20 or height < 4 or not any(len(v) > 1 for v in series.values()):
            self._show(self._waiting())
            return
        ymax, unit = self.ymax, self.unit

        request = {"series": series, "width": width, "height": height, "ymax": ymax, "unit": unit}

        async def draw() -> None:
            ansi = await asyncio.to_thread(HELPER.draw, request)
            self._show(Text.from_ansi(ansi, no_wrap=True))

        self.run_worker(draw(), exclusive=True, group="draw", name="chart", exit_on_error=False)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        forward_failure(self, event)

    def _show(self, text: Text) -> None:
        self._text = text
        self.refresh()

    def render(self) -> Text:
        return self._text
