"""Memory over time as a plotext chart: a node pane's used / available / page cache, and the
launch step's available memory of every node while the model loads.

plotext draws into a string with colour escapes; this widget turns it into rich Text at the
size the widget has. Drawing a chart costs about 2 ms (measured in bench/), done only when
the data or the size changed."""

from __future__ import annotations

import threading

import plotext as plt
from rich.text import Text
from textual.widget import Widget

COLOURS = ("red", "green", "cyan", "magenta", "yellow", "blue", "white", "orange")
# plotext draws into one module-level figure: one chart at a time, whichever thread draws it.
DRAWING = threading.Lock()


def chart(
    series: dict[str, list[float]],
    width: int,
    height: int,
    ymax: float | None,
    unit: str,
    what: str = "memory",
) -> Text:
    """`series`: name -> values, oldest first, all sampled at the same times."""
    if width < 20 or height < 4 or not any(len(v) > 1 for v in series.values()):
        return Text(f"{what} ({unit}): collecting samples...", style="dim")
    with DRAWING:
        return _draw(series, width, height, ymax, unit)


def _draw(series: dict[str, list[float]], width: int, height: int, ymax: float | None, unit: str) -> Text:
    return Text.from_ansi(ansi_chart(series, width, height, ymax, unit), no_wrap=True)


def ansi_chart(series: dict[str, list[float]], width: int, height: int, ymax: float | None, unit: str) -> str:
    """plotext's drawing, as the string with colour escapes it builds (picklable: the serving
    screen draws in another process)."""
    plt.clear_figure()
    plt.plotsize(width, height)
    plt.theme("clear")
    plt.frame(True)
    for (name, values), colour in zip(series.items(), COLOURS, strict=False):
        if len(values) > 1:
            plt.plot(values, label=name, color=colour, marker="braille")
    if ymax:
        plt.ylim(0, ymax)
    plt.ylabel(unit)
    plt.xticks([])
    return plt.build()


class MemoryPlot(Widget):
    """A chart that fills the widget; `update(series, ymax)` gives it new data."""

    DEFAULT_CSS = "MemoryPlot { height: 1fr; min-height: 6; }"

    def __init__(self, unit: str = "GiB", what: str = "memory", **kwargs):
        super().__init__(**kwargs)
        self.unit, self.what = unit, what
        self.series: dict[str, list[float]] = {}
        self.ymax: float | None = None
        self._drawn: tuple | None = None
        self._text = Text()

    def update(self, series: dict[str, list[float]], ymax: float | None = None) -> None:
        self.series, self.ymax = series, ymax
        self.refresh()

    def render(self) -> Text:
        key = (
            self.size.width,
            self.size.height,
            self.ymax,
            tuple((k, tuple(v)) for k, v in self.series.items()),
        )
        if key != self._drawn:
            self._drawn = key
            self._text = chart(
                self.series, self.size.width, self.size.height, self.ymax, self.unit, self.what
            )
        return self._text
