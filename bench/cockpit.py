"""Cockpit benchmarks, headless: logs screen throughput, memory and key latency under a flood; first frame.

Lines enter the logs screen the way a follower delivers them (LogStreamEvent messages holding
LogLines chunks), so the measured path is the real one: message, bounded buffer,
50 ms batched render.
"""

from __future__ import annotations

import asyncio
import statistics
import time
from pathlib import Path

from spark_tui.core.node.logs import LogLines
from spark_tui.ui.app import SparkApp
from spark_tui.ui.messages import LogStreamEvent
from spark_tui.ui.screens.logs import LogsScreen

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = (
    (ROOT / "tests" / "data" / "nccl" / "gb10-nccltests-2node-roce-switch-init.txt").read_text().splitlines()
)
CHUNK = 500  # lines per docker log chunk


def _rss_mb() -> float:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def _frozen_app(buffer_lines: int) -> SparkApp:
    from tests.frozen import FrozenCore, cluster_config

    config, reconfigure = cluster_config(1, interactive={"log_buffer_lines": buffer_lines})
    core = FrozenCore(config, reconfigure)
    core.follower = lambda node, container, emit, tail=500: _Silent()
    return SparkApp(core, live_refresh=False)


class _Silent:
    def start(self):
        return None

    async def stop(self):
        return None


def _lines(start: int, count: int) -> list[str]:
    return [f"{i} {SAMPLE[i % len(SAMPLE)]}" for i in range(start, start + count)]


async def _open_logs(app, pilot) -> LogsScreen:
    app.open_logs("all nodes")
    await pilot.pause()
    screen = app.screen
    assert isinstance(screen, LogsScreen)
    return screen


def bench_logs(
    total: int = 1_000_000, flood_rate: int = 20_000, flood_seconds: float = 5.0, buffer_lines: int = 100_000
) -> dict:
    """Throughput, memory growth over `total` lines, and key latency during a `flood_rate` lines/s flood."""
    app = _frozen_app(buffer_lines)
    out: dict = {}

    async def run():
        async with app.run_test(size=(120, 40)) as pilot:
            screen = await _open_logs(app, pilot)
            view = screen.view

            async def drained(last: int) -> None:
                give_up = time.perf_counter() + 60  # a screen that died must fail the bench, not hang it
                while view.pending or not (
                    view.buffer.lines and view.buffer.lines[-1].startswith(f"{last} ")
                ):
                    if time.perf_counter() > give_up:
                        raise RuntimeError(f"the logs screen did not take line {last} within 60 s")
                    await asyncio.sleep(0.002)

            async def pump(count: int, start: int) -> float:
                """As fast as the screen takes them, 10,000 lines in flight at most (a socket's backpressure)."""
                t0 = time.perf_counter()
                for i in range(start, start + count, CHUNK):
                    screen.post_message(LogStreamEvent("", LogLines("n", "c", _lines(i, CHUNK))))
                    if (i - start) % 10_000 == 10_000 - CHUNK:
                        await drained(i + CHUNK - 1)
                await drained(start + count - 1)
                await pilot.pause()
                return time.perf_counter() - t0

            # Warm-up fills the buffer once: memory after it is the baseline.
            await pump(buffer_lines, 0)
            rss_before = _rss_mb()
            # In five steps, so the figures show whether memory levels off or keeps growing.
            elapsed, curve, step = 0.0, [], max(CHUNK, total // 5 // CHUNK * CHUNK)
            for start in range(buffer_lines, buffer_lines + total, step):
                elapsed += await pump(min(step, buffer_lines + total - start), start)
                curve.append(round(_rss_mb() - rss_before, 1))
            out["rss_growth_curve_mb"] = curve
            out["lines"] = total
            out["lines_per_s"] = round(total / elapsed)
            out["rss_before_mb"] = round(rss_before, 1)
            out["rss_after_mb"] = round(_rss_mb(), 1)
            out["rss_growth_mb"] = round(out["rss_after_mb"] - rss_before, 1)
            out["buffer_lines"] = len(view.buffer.lines)
            out["log_widget_lines"] = view.text_log.line_count

            # Key latency: a steady flood at flood_rate in docker-sized chunks, keys pressed meanwhile.
            latencies: list[float] = []
            handled: list[float] = []
            original = screen.action_pause

            def timed_pause():
                original()
                handled.append(time.perf_counter())

            screen.action_pause = timed_pause
            stop = asyncio.Event()

            async def flood():
                i, t0 = total + buffer_lines, time.perf_counter()
                sent = 0
                while not stop.is_set():
                    due = int((time.perf_counter() - t0) * flood_rate)
                    while sent + CHUNK <= due:
                        screen.post_message(LogStreamEvent("", LogLines("n", "c", _lines(i, CHUNK))))
                        i += CHUNK
                        sent += CHUNK
                    await asyncio.sleep(CHUNK / flood_rate / 2)
                out["flood_lines_per_s"] = round(sent / (time.perf_counter() - t0))

            from textual import events

            task = asyncio.ensure_future(flood())
            deadline = time.perf_counter() + flood_seconds
            await asyncio.sleep(0.3)
            while not latencies or time.perf_counter() < deadline:
                before = len(handled)
                sent_at = time.perf_counter()
                app._driver.send_message(events.Key("p", "p"))
                while len(handled) == before:
                    await asyncio.sleep(0.001)
                latencies.append(handled[-1] - sent_at)
                await asyncio.sleep(0.1)
            stop.set()
            await task
            latencies.sort()
            out["key_presses"] = len(latencies)
            out["key_p50_ms"] = round(statistics.median(latencies) * 1000, 1)
            out["key_p95_ms"] = round(latencies[max(0, int(len(latencies) * 0.95) - 1)] * 1000, 1)
            out["key_max_ms"] = round(latencies[-1] * 1000, 1)

    asyncio.run(run())
    return out


def bench_first_frame(config_factory) -> dict:
    """Headless: time to the dashboard's first frame, and to every pane holding live data."""
    from spark_tui.cli.commands import build_app

    t0 = time.perf_counter()
    app = config_factory(build_app)
    out: dict = {}

    async def run():
        async with app.run_test(size=(120, 40)) as pilot:
            out["first_frame_s"] = round(time.perf_counter() - t0, 3)
            names = [n.name for n in app.core.config.nodes]
            while not all(n in app.views for n in names):
                await pilot.pause(0.01)
            out["all_panes_live_s"] = round(time.perf_counter() - t0, 3)

    asyncio.run(run())
    return out


def bench_pane_render(repeats: int = 200) -> dict:
    """What a node pane costs to draw per refresh, with its memory plot and without: the text
    sections alone, then the same plus the plotext chart at a 2-node pane's size (56 x 16)."""
    from spark_tui.ui.widgets import node_pane
    from spark_tui.ui.widgets.memory_plot import chart
    from tests.frozen import cluster_config, node_view

    config = cluster_config(2)[0]
    view = node_view(config, config.nodes[0].name)
    sections = (
        node_pane.header_text,
        node_pane.interfaces_text,
        node_pane.gpu_text,
        node_pane.containers_text,
        node_pane.nccl_text,
    )

    def text_only():
        for section in sections:
            section(view)

    def with_plot():
        text_only()
        # a new sample each refresh: the chart is drawn again, as the widget does then
        view.memory_series["used"].append(view.memory_series["used"][-1])
        chart(view.memory_series, 56, 16, 118.2, "GiB")

    def per_call(fn) -> float:
        runs = []
        for _ in range(5):
            start = time.perf_counter()
            for _ in range(repeats):
                fn()
            runs.append((time.perf_counter() - start) / repeats * 1000)
        return statistics.median(runs)

    text_ms, plot_ms = per_call(text_only), per_call(with_plot)
    return {
        "text_ms": round(text_ms, 3),
        "with_plot_ms": round(plot_ms, 3),
        "plot_over_text": round(plot_ms / text_ms, 1),
    }
