"""The cockpit's log screen names a known failure when a node's lines show it: the cause and the
fix as a notice (inert text), once, and nothing for lines the table does not know."""

import asyncio
from pathlib import Path

from spark_tui.ui.app import SparkApp
from spark_tui.ui.screens.logs import LogsScreen
from tests.frozen import FrozenCore, cluster_config

SAMPLE = Path(__file__).parent / "data" / "failures" / "vllm_max_len_over_kv_cache.log"


def notices(lines):
    config, reconfigure = cluster_config(2, None)
    app = SparkApp(FrozenCore(config, reconfigure, log_lines=lines), live_refresh=False)

    async def flow():
        async with app.run_test(size=(120, 40)) as pilot:
            app.open_logs("spark-2")
            await pilot.pause(0.3)
            assert isinstance(app.screen, LogsScreen)
            # On a loaded machine the lines take longer to be read: wait for a notice (up to 3 s),
            # then a little more so that a repeated notice would have arrived too.
            for _ in range(30):
                if any(n.title == "known failure" for n in app._notifications):
                    break
                await pilot.pause(0.1)
            await pilot.pause(0.3)
            return [(n.title, n.message, n.severity) for n in app._notifications]

    return asyncio.run(flow())


def test_a_known_failure_in_the_log_is_noticed_with_its_fix(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    lines = SAMPLE.read_text().splitlines()
    got = [n for n in notices(lines + lines) if n[0] == "known failure"]  # the repeat is not noticed again
    assert len(got) == 1, got
    title, message, severity = got[0]
    assert severity == "error"
    assert message.startswith("spark-2: max model length 29000 does not fit the KV cache (23648 tokens)")
    assert "fix: Set --max-model-len 23648 or less" in message


def test_lines_the_table_does_not_know_give_no_notice(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    assert [
        n for n in notices(["ERROR frobnicator failed to warm up", "INFO fine"]) if n[0].startswith("known")
    ] == []
