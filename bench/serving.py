"""Serving figures: CPU of one /metrics scrape and its parsing, against the stand-in vLLM server
(a separate process on loopback, so only spark-tui's side is counted), at a real size: the current
names, two data-parallel engines, every family vLLM and the FastAPI instrumentator write."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import statistics
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
STANDIN = ROOT / "tests" / "cluster" / "standin" / "vllm_http.py"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_standin(port: int, dp: int = 2, version: str = "0.12.0") -> subprocess.Popen:
    env = {
        **os.environ,
        "SPARK_TEST_DP": str(dp),
        "SPARK_TEST_TOKENS_PER_S": "2000",
        "SPARK_TEST_FIRST_TOKEN_S": "0",
    }
    argv = [
        sys.executable,
        str(STANDIN),
        "--port",
        str(port),
        "--served",
        "m",
        "--version",
        version,
        "--host",
        "127.0.0.1",
    ]
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(100):
        try:
            socket.create_connection(("127.0.0.1", port), 0.2).close()
            return proc
        except OSError:
            time.sleep(0.05)
    proc.kill()
    raise RuntimeError("the stand-in vLLM did not start")


def _requests(port: int, count: int) -> None:
    body = json.dumps({"model": "m", "prompt": "a b c d e f g h", "max_tokens": 8}).encode()
    for _ in range(count):
        req = urllib.request.Request(
            f"http://127.0.0.1:{port}/v1/completions", data=body, headers={"content-type": "application/json"}
        )
        urllib.request.urlopen(req, timeout=10).read()


def bench_scrape(repeats: int = 200, dp: int = 2) -> dict:
    from spark_tui.core.node.connection import LocalTransport
    from spark_tui.core.serving.serving_metrics import MetricsScraper
    from spark_tui.parsers.vllm_metrics import parse

    port = _free_port()
    proc = start_standin(port, dp)
    try:
        _requests(port, 5)
        text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10).read().decode()
        samples = [x for x in text.splitlines() if x and not x.startswith("#")]
        scraper = MetricsScraper(LocalTransport(None), "127.0.0.1", port)  # type: ignore[arg-type]

        async def run() -> list[float]:
            cpu = []
            await scraper.scrape()  # the first one also asks /version
            for _ in range(repeats):
                start = time.process_time()
                got = await scraper.scrape()
                cpu.append((time.process_time() - start) * 1000)
                assert got.origin == "metrics", got.problem
            return cpu

        scrape_ms = asyncio.run(run())
        parse_ms = []
        for _ in range(repeats):
            start = time.process_time()
            parse(text, 0.0)
            parse_ms.append((time.process_time() - start) * 1000)
    finally:
        proc.kill()
        proc.wait()
    q = statistics.quantiles
    return {
        "lines": len(text.splitlines()),
        "samples": len(samples),
        "bytes": len(text),
        "engines": dp,
        "runs": repeats,
        "scrape_cpu_ms": round(statistics.median(scrape_ms), 2),
        "scrape_cpu_p95_ms": round(q(scrape_ms, n=20)[-1], 2),
        "parse_cpu_ms": round(statistics.median(parse_ms), 2),
    }


def scrape_table(r: dict) -> tuple[str, list[list]]:
    """bench_scrape's result as the title and rows of run.py's table."""
    title = f"serving: one /metrics scrape (CPU ms of spark-tui's process, median of {r['runs']} runs)"
    return title, [
        ["lines", "samples", "bytes", "engines", "scrape+parse", "p95", "first parse of a server"],
        [
            r["lines"],
            r["samples"],
            r["bytes"],
            r["engines"],
            r["scrape_cpu_ms"],
            r["scrape_cpu_p95_ms"],
            r["parse_cpu_ms"],
        ],
    ]


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    print(json.dumps(bench_scrape(), indent=1))


def bench_serving_keys(seconds: float = 10.0, interval: float = 1.0) -> dict:
    """Key latency on the serving screen while it scrapes the stand-in every `interval` seconds
    (five times the default rate) with streaming requests running on it, and runs the node script
    on this machine; every scrape redraws the four charts."""
    from textual import events

    from spark_tui.core.node.connection import LocalTransport
    from spark_tui.core.serving.node_load import NodeLoadTracker
    from spark_tui.core.serving.serving_metrics import MetricsScraper
    from spark_tui.core.serving.serving_signals import all_signals
    from spark_tui.core.serving.serving_watch import ServingLook
    from spark_tui.ui.app import SparkApp
    from spark_tui.ui.screens.serving import ServingScreen
    from tests.frozen import FrozenCore, cluster_config

    port = _free_port()
    proc = start_standin(port, 2)
    local = LocalTransport(None)  # type: ignore[arg-type]

    class ScrapingCore(FrozenCore):
        def __init__(self, config, reconfigure):
            super().__init__(config, reconfigure)
            self.scraper = MetricsScraper(local, "127.0.0.1", port)
            self.tracker = NodeLoadTracker("spark-1")
            self.scrapes = 0

        async def serving(self):
            figures, load = await asyncio.gather(self.scraper.scrape(), self.tracker.sample(local))
            self.scrapes += 1
            history = list(self.scraper.window.history)
            loads = {"spark-1": load}
            return ServingLook(figures, loads, all_signals("spark-1", history, {"spark-1": [load]}), history)

    config, reconfigure = cluster_config(1, {"SPARK_TUI_METRICS_INTERVAL": str(interval)})
    core = ScrapingCore(config, reconfigure)
    app = SparkApp(core)
    # Requests from another process (as clients are), so their work is not this process's.
    client = (
        "import json, urllib.request\n"
        f"body = json.dumps({{'model': 'm', 'prompt': 'a b c d', 'max_tokens': 64, 'stream': True}}).encode()\n"
        "while True:\n"
        f"    r = urllib.request.Request('http://127.0.0.1:{port}/v1/completions', data=body, "
        "headers={'content-type': 'application/json'})\n"
        "    urllib.request.urlopen(r, timeout=30).read()\n"
    )
    load = subprocess.Popen(
        [sys.executable, "-c", client], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    out: dict = {}

    async def run() -> None:
        async with app.run_test(size=(160, 50)) as pilot:
            await pilot.press("v")
            await pilot.pause(0.5)
            screen = app.screen
            assert isinstance(screen, ServingScreen)
            handled: list[float] = []
            original = screen.refresh_view

            def timed() -> None:
                original()
                handled.append(time.perf_counter())

            screen.refresh_view = timed  # type: ignore[method-assign]
            latencies: list[float] = []
            deadline = time.perf_counter() + seconds
            while time.perf_counter() < deadline or not latencies:
                before, sent = len(handled), time.perf_counter()
                app._driver.send_message(events.Key("r", "r"))
                while len(handled) == before:
                    await asyncio.sleep(0.001)
                latencies.append(handled[-1] - sent)
                await asyncio.sleep(0.1)
            latencies.sort()
            out["key_presses"] = len(latencies)
            out["key_p50_ms"] = round(statistics.median(latencies) * 1000, 1)
            out["key_p95_ms"] = round(latencies[max(0, int(len(latencies) * 0.95) - 1)] * 1000, 1)
            out["key_max_ms"] = round(latencies[-1] * 1000, 1)
            out["scrapes"] = core.scrapes
            out["scrape_interval_s"] = interval

    try:
        asyncio.run(run())
    finally:
        for p in (load, proc):
            p.kill()
            p.wait()
    return out
