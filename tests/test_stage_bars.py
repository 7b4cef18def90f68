"""`up` and `sync` on a terminal: a stage's detail (the node's words) is shown as it reads, never
parsed as Rich markup."""

import io

import pytest
from rich.console import Console

from spark_tui.cli.bars import StageBars
from spark_tui.core.launch import events as ev


@pytest.mark.parametrize(
    "detail",
    [
        "[/x] closing tag",
        "[link=https://evil.example/]click me[/link]",
        "[bold red]shout[/]",
        "[@click=app.quit]q",
    ],
)
def test_stage_details_with_markup_are_shown_literally(detail):
    out = io.StringIO()
    console = Console(file=out, force_terminal=True, width=200, color_system="truecolor")
    with StageBars(console) as bars:
        bars.emit(ev.Stage("spark-1", "sync_model", "progress", detail, 1.0, 0.5))
        bars.emit(ev.Stage("spark-2", "sync_model", "done", detail, 2.0, 1.0))
        bars.progress.refresh()
    text = out.getvalue()
    assert "\x1b]8;" not in text  # no OSC 8 hyperlink
    assert detail in text, text[-2000:]
