"""Small pure pieces behind the cockpit: timestamps for resuming a log, the bounded log buffer,
the memory sparkline, path shortening in the review, key-map validation."""

import re

import pytest

from spark_tui.core.node.logs import LogCursor, since_seconds, split_timestamp
from spark_tui.errors import ConfigError
from spark_tui.settings.keys import BY_ID, KEYS, validate_keymap
from spark_tui.ui.screens.wizard.step import short_paths
from spark_tui.ui.widgets.log_view import LogBuffer
from spark_tui.ui.widgets.node_pane import sparkline


def test_docker_timestamps_compare_as_numbers_not_strings():
    # Docker trims trailing zeros: ".1Z" is later than ".09Z" although it sorts lower as text.
    a, text_a = split_timestamp("2026-12-02T17:01:02.09Z first line")
    b, text_b = split_timestamp("2026-12-02T17:01:02.1Z second line")
    c, _ = split_timestamp("2026-12-02T17:01:03Z third")
    assert a < b < c and text_a == "first line" and text_b == "second line"
    assert split_timestamp("no timestamp here") == (None, "no timestamp here")
    assert since_seconds(b) == 1796230862  # whole seconds, UTC


def test_log_cursor_drops_what_a_resumed_read_repeats():
    cursor = LogCursor()
    assert cursor.since() is None
    first = ["2026-12-02T17:01:02.5Z a", "2026-12-02T17:01:03.1Z b"]
    assert cursor.fresh(first) == ["a", "b"]
    assert cursor.since() == 1796230863  # the read resumes at b's whole second...
    again = ["2026-12-02T17:01:03.1Z b", "2026-12-02T17:01:03.2Z c", "no stamp"]
    assert cursor.fresh(again) == ["c", "no stamp"]  # ...and b is not shown twice


def test_log_cursor_read_args_tail_first_then_resume():
    cursor = LogCursor()
    assert cursor.read_args(500) == {"timestamps": True, "tail": 500}
    cursor.fresh(["2026-12-02T17:01:03.1Z b"])
    assert cursor.read_args(500) == {"timestamps": True, "since": 1796230863}


def test_log_buffer_is_bounded_filters_and_shows_lines_inert():
    buf = LogBuffer(3)
    shown = buf.add("[n1] ", ["one", "two NCCL INFO x", "\x1b[31mthree\x1b[0m", "four"])
    assert list(buf.lines) == ["[n1] two NCCL INFO x", "[n1] three", "[n1] four"]
    assert shown == ["[n1] one", "[n1] two NCCL INFO x", "[n1] three", "[n1] four"]
    buf.pattern = re.compile("t[wh]")
    assert buf.view() == ["[n1] two NCCL INFO x", "[n1] three"]
    buf.pattern, buf.nccl_only = None, True
    assert buf.add("", ["plain", "host:1:2 [0] NCCL INFO Init START"]) == [
        "host:1:2 [0] NCCL INFO Init START"
    ]


def test_sparkline_maps_fractions_to_eighths():
    assert sparkline([0.0, 0.5, 1.0, 1.7, -1]) == " ▄██ "  # out-of-range values clamp


def test_review_shortens_directories_but_keeps_file_line():
    assert short_paths("cluster file /tmp/x/y/duo.yaml:5:8") == "cluster file duo.yaml:5:8"
    assert (
        short_paths("derived from host (cluster file /a/b.yaml:3:1)")
        == "derived from host (cluster file b.yaml:3:1)"
    )
    assert short_paths("environment SPARK_TUI_IMAGE") == "environment SPARK_TUI_IMAGE"


def test_keymap_unknown_id_names_its_source():
    assert validate_keymap({"teardown": "ctrl+x"}, lambda k: "x") == {"teardown": "ctrl+x"}
    with pytest.raises(ConfigError) as exc:
        validate_keymap({"tear_down": "ctrl+x"}, lambda k: f"config.yaml:3:3 ({k})")
    assert (
        exc.value.source == "config.yaml:3:3 (tear_down)" and "did you mean 'teardown'" in exc.value.message
    )
    with pytest.raises(ConfigError):
        validate_keymap({"quit": " "}, lambda k: "x")
    assert len(BY_ID) == len(KEYS)  # every binding id is unique


def test_keys_setting_takes_dotted_ids_and_comma_keys_from_yaml_env_and_flags(tmp_path):
    from spark_tui.settings.resolve import Inputs, resolve

    user = tmp_path / "config.yaml"
    user.write_text("keys:\n  wizard.next: f6,ctrl+n\n  teardown: ctrl+x\n")
    config = resolve(
        Inputs(
            user_config=str(user),
            environ={"SPARK_TUI_KEYS": "quit=ctrl+q;logs.pause=space"},
            flags={"keys": ({"help": "f1"}, "--keys")},
        )
    )
    assert config["keys"] == {
        "wizard.next": "f6,ctrl+n",
        "teardown": "ctrl+x",
        "quit": "ctrl+q",
        "logs.pause": "space",
        "help": "f1",
    }
    assert str(config.values["keys"].item_sources["wizard.next"]).endswith("config.yaml:2:3")
    with pytest.raises(ConfigError) as exc:
        resolve(Inputs(user_config="", environ={"SPARK_TUI_KEYS": "Bad Id=x"}))
    assert exc.value.source == "SPARK_TUI_KEYS" and "not a binding id" in exc.value.message


def test_a_refresh_that_beats_the_dashboard_mount_is_shown():
    """The first refresh can arrive before the panes are mounted (it takes ~10 ms); it must
    neither raise nor be lost."""
    import asyncio

    from textual.app import App

    from spark_tui.ui.screens.dashboard import DashboardScreen
    from tests.frozen import cluster_config, node_view

    config, _ = cluster_config(2)

    class Host(App):
        def on_mount(self) -> None:
            self.dashboard = DashboardScreen(
                [("spark-1", "10.231.0.11", "head"), ("spark-2", "10.231.0.12", "worker")]
            )
            self.dashboard.show(node_view(config, "spark-2", drift=True))  # before the screen is mounted
            self.push_screen(self.dashboard)

    async def go():
        app = Host()
        async with app.run_test() as pilot:
            await pilot.pause()
            dashboard = app.dashboard
            pane = dashboard.panes["spark-2"]
            return (
                pane.has_class("-drift"),
                str(pane._containers.render()),
                str(dashboard.panes["spark-1"]._header.render()),
            )

    drift, containers, waiting = asyncio.run(go())
    assert drift and "DRIFT" in containers and "vllm-node:old" in containers
    assert "waiting for the first refresh" in waiting
