"""The serving screen and the panes' serving line, driven by keys against the frozen core (the
0.11 /metrics samples; the head's GPU thermally slowed, its second twin idle)."""

import asyncio

from spark_tui.ui.app import SparkApp
from spark_tui.ui.screens.dashboard import DashboardScreen
from spark_tui.ui.screens.serving import ServingScreen
from tests.frozen import FrozenCore, cluster_config


def test_serving_key_opens_the_screen_with_series_plots_and_signals():
    config, reconfigure = cluster_config(2, {"SPARK_TUI_METRICS_INTERVAL": "0.5"})
    app = SparkApp(FrozenCore(config, reconfigure, serving=True))

    async def flow():
        async with app.run_test(size=(160, 50)) as pilot:
            for _ in range(50):
                if app.serving_look is not None:
                    break
                await pilot.pause(0.1)
            pane = app.dashboard.panes["spark-1"]
            line = str(pane._serving.render())
            assert "71°C 38.5 W SM 1113 MHz SLOWED: thermal slowdown" in line
            assert "WARN GPU 0 clocks slowed: thermal slowdown" in line
            assert "SLOWED" not in str(app.dashboard.panes["spark-2"]._serving.render())
            await pilot.press("v")
            await pilot.pause(0.3)
            screen = app.screen
            assert isinstance(screen, ServingScreen)
            figures = str(screen._figure_lines.render())
            assert "from /metrics, vLLM 0.11.0" in figures
            assert "rate(vllm:generation_tokens_total[5s])" in figures and "200 tok/s" in figures
            assert "vllm:cache_config_info num_gpu_blocks×block_size" in figures
            nodes = str(screen._node_lines.render())
            assert "WARN spark-1 KV cache full with requests waiting" in nodes
            assert "one twin carries the traffic, enP2p1s0f1np1 is idle" in nodes
            for _ in range(100):  # the chart comes from the helper process when it is drawn
                plot = str(screen.plots[0].render())
                if "collecting samples" not in plot:
                    break
                await pilot.pause(0.1)
            assert "decode" in plot and "collecting samples" not in plot
            await pilot.press("escape")
            await pilot.pause(0.1)
            assert isinstance(app.screen, DashboardScreen)
            app.core.serving_on = False  # the head's container is gone: the serving lines go
            for _ in range(50):
                if app.serving_look is None:
                    break
                await pilot.pause(0.1)
            assert app.serving_look is None and pane._serving.has_class("-empty")

    asyncio.run(flow())


def test_before_serving_the_screen_says_so():
    config, reconfigure = cluster_config(1)
    app = SparkApp(FrozenCore(config, reconfigure), live_refresh=False)

    async def flow():
        async with app.run_test(size=(120, 40)) as pilot:
            await pilot.press("v")
            await pilot.pause(0.2)
            assert "not serving yet" in str(app.screen._figure_lines.render())

    asyncio.run(flow())
