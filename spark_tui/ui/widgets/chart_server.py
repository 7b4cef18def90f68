"""A helper process that draws plotext charts for the serving screen (see serving_plot.py):
one JSON request per line on stdin, one JSON answer per line on stdout. Run as
`python -m spark_tui.ui.widgets.chart_server`; it ends when stdin closes."""

from __future__ import annotations

import json
import sys

from spark_tui.ui.widgets.memory_plot import ansi_chart


def main() -> None:
    for line in sys.stdin:
        try:
            req = json.loads(line)
            answer = {
                "ansi": ansi_chart(req["series"], req["width"], req["height"], req["ymax"], req["unit"])
            }
        except Exception as exc:  # a bad request is answered, never the end of the helper
            answer = {"error": f"{type(exc).__name__}: {exc}"[:200]}
        sys.stdout.write(json.dumps(answer) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
