"""Serving figures from vLLM's /metrics: real-format samples under both namings, the log-line
fallback, and the scraper against the stand-in server on loopback with each kind of bad answer."""

from __future__ import annotations

import socket
import threading
import time
from pathlib import Path

import pytest

from spark_tui.core.node.connection import LocalTransport
from spark_tui.core.serving.serving_metrics import MetricsScraper, MetricsWindow
from spark_tui.parsers.vllm_metrics import (
    MetricsError,
    looks_like_exposition,
    parse,
    parse_stat_lines,
    quantile,
)
from tests.cluster.standin import vllm_http

DATA = Path(__file__).parent / "data" / "metrics"
CORPUS_LOG = (
    Path(__file__).parent / "data" / "docker" / "vllm-apiserver-ready-then-engine-throughput-metrics.txt"
)


def window(name: str, version: str):
    w = MetricsWindow(60.0)
    w.add(parse((DATA / f"{name}-t0.txt").read_text(), 100.0))
    w.add(parse((DATA / f"{name}-t1.txt").read_text(), 105.0))
    return w.figures(version)


def test_new_names_give_every_figure_with_its_series():
    f = window("vllm-0.11-new-names", "0.11.0")
    assert f.origin == "metrics"
    assert f.get("decode_tps") == pytest.approx(200.0)  # 1000 tokens in 5 s
    assert f.figures["decode_tps"].source == "rate(vllm:generation_tokens_total[5s])"
    assert f.get("prefill_tps") == pytest.approx(800.0)
    assert (f.get("running"), f.get("waiting")) == (8.0, 5.0)
    assert f.get("kv_pct") == pytest.approx(97.0, abs=0.01)
    assert f.figures["kv_pct"].source == "vllm:kv_cache_usage_perc"
    assert f.get("kv_pool") == 14835 * 16
    assert f.get("preempt_ps") == pytest.approx(0.8)
    assert f.get("prefix_hit_pct") == pytest.approx(10.0)
    assert f.figures["prefix_hit_pct"].source.startswith("rate(vllm:prefix_cache_hits_total)")
    assert f.get("spec_accept_pct") == pytest.approx(50.0)
    # Quantiles from the buckets added between the scrapes: 7 TTFTs of 1.8 s in (1.0, 2.5].
    assert f.get("ttft_p50") == pytest.approx(1.75)
    assert f.get("ttft_p95") == pytest.approx(2.425)
    assert f.get("itl_p50") == pytest.approx(0.125)
    assert f.figures["itl_p50"].source.startswith("vllm:inter_token_latency_seconds_bucket")
    assert f.get("e2e_p50") == pytest.approx(12.5)
    assert f.get("http_errors") == 3.0  # the 5xx of http_requests_total
    assert f.finished == {"stop": 405.0, "length": 92.0, "abort": 2.0, "error": 0.0}


def test_old_names_are_read_and_named_and_missing_ones_are_not_zero():
    f = window("vllm-0.9-old-names", "0.9.2")
    assert f.get("decode_tps") == pytest.approx(100.0)
    assert f.get("kv_pct") == pytest.approx(30.0, abs=0.01)
    assert f.figures["kv_pct"].source == "vllm:gpu_cache_usage_perc"
    assert f.get("prefix_hit_pct") == pytest.approx(100 * 500 / 1500)
    assert "vllm:gpu_prefix_cache_hits_total" in f.figures["prefix_hit_pct"].source
    assert f.figures["itl_p50"].source.startswith("vllm:time_per_output_token_seconds_bucket")
    assert f.get("itl_p50") == pytest.approx(0.019375)
    assert f.get("itl_p95") == pytest.approx(0.09375)
    spec = f.figures["spec_accept_pct"]
    assert spec.value is None and spec.note.startswith("not exposed by vLLM 0.9.2")
    assert spec.text().startswith("not exposed by vLLM 0.9.2")
    assert f.as_json()["figures"]["spec_accept_pct"]["value"] is None


def test_one_scrape_gives_gauges_and_says_rates_need_another():
    w = MetricsWindow(60.0)
    w.add(parse((DATA / "vllm-0.11-new-names-t0.txt").read_text(), 0.0))
    f = w.figures(None)
    assert f.get("running") == 8.0
    assert f.get("decode_tps") is None and f.figures["decode_tps"].note == "needs a second scrape"
    assert f.get("ttft_p50") is not None  # all observations since start
    missing = MetricsWindow(60.0)
    missing.add(parse('vllm:num_requests_running{engine="0",model_name="m"} 1.0\n', 0.0))
    assert missing.figures(None).figures["kv_pct"].note == "not exposed by this vLLM (version unknown)"


def test_a_restart_does_not_give_negative_rates():
    w = MetricsWindow(60.0)
    w.add(parse((DATA / "vllm-0.11-new-names-t1.txt").read_text(), 0.0))
    w.add(parse((DATA / "vllm-0.11-new-names-t0.txt").read_text(), 5.0))  # counters went back
    assert w.figures("0.11.0").get("decode_tps") is None


def test_quantile_interpolates_like_prometheus():
    buckets = [(0.1, 0.0), (0.5, 10.0), (1.0, 20.0), (float("inf"), 20.0)]
    assert quantile(0.5, buckets) == pytest.approx(0.5)
    assert quantile(0.25, buckets) == pytest.approx(0.3)
    assert quantile(0.5, [(1.0, 0.0), (float("inf"), 0.0)]) is None
    assert quantile(0.99, [(1.0, 1.0), (float("inf"), 10.0)]) == 1.0  # beyond the last bound


@pytest.mark.parametrize(
    "text",
    [
        'vllm:num_requests_running{engine="0",model_name="m} 1.0\n',  # unclosed label value
        "vllm:num_requests_running{} abc\n",
    ],
)
def test_bad_exposition_is_one_line(text):
    with pytest.raises(MetricsError) as err:
        parse(text, 0.0)
    assert str(err.value).startswith("not Prometheus text") and "\n" not in str(err.value)


def test_html_and_json_are_not_exposition():
    assert not looks_like_exposition("<!DOCTYPE html><html>")
    assert not looks_like_exposition('{"detail":"Not Found"}')
    assert looks_like_exposition((DATA / "vllm-0.9-old-names-t0.txt").read_text())


def test_stat_line_from_the_corpus_log():
    line = parse_stat_lines(CORPUS_LOG.read_text().splitlines())
    assert line is not None
    assert (line.prompt_tps, line.decode_tps, line.running, line.waiting) == (10922.8, 4.0, 1, 0)
    assert (line.kv_pct, line.prefix_hit_pct, line.engine) == (2.1, 0.0, "000")
    assert (line.mean_accept_len, line.acceptance_pct) == (2.79, 89.3)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def server():
    port = _free_port()
    args = (port, "served-m", "org/model", "0.12.0", 4096)
    threading.Thread(target=vllm_http.serve, args=args, kwargs={"host": "127.0.0.1"}, daemon=True).start()
    for _ in range(50):
        try:
            socket.create_connection(("127.0.0.1", port), 0.2).close()
            break
        except OSError:
            time.sleep(0.05)
    return port


def _scraper(port: int, **kw) -> MetricsScraper:
    return MetricsScraper(LocalTransport(None), "127.0.0.1", port, **kw)  # type: ignore[arg-type]


async def test_scraper_reads_the_standin_and_counters_move(server, monkeypatch):
    import httpx

    monkeypatch.setenv("SPARK_TEST_TOKENS_PER_S", "400")
    monkeypatch.setenv("SPARK_TEST_FIRST_TOKEN_S", "0.02")
    scraper = _scraper(server)
    first = await scraper.scrape()
    assert first.origin == "metrics" and first.version == "0.12.0", first.problem
    async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{server}", timeout=10) as client:
        body = {
            "model": "served-m",
            "messages": [{"role": "user", "content": "hi"}],
            "max_tokens": 40,
            "stream": True,
        }
        async with client.stream("POST", "/v1/chat/completions", json=body) as resp:
            events = [line async for line in resp.aiter_lines() if line.startswith("data: ")]
    assert events[-1] == "data: [DONE]" and len(events) == 40 + 2
    second = await scraper.scrape()
    assert second.get("decode_tps") and second.get("decode_tps") > 0
    assert second.figures["kv_pct"].source == "vllm:kv_cache_usage_perc"  # 0.12: new names only
    assert second.get("ttft_p50") is not None and second.get("itl_p50") is not None
    assert second.finished.get("length", 0) >= 1


@pytest.mark.parametrize(
    "mode, words",
    [
        ("404", "answered HTTP 404 not found"),
        ("401", "answered HTTP 401 unauthorized"),
        ("html", "not Prometheus text"),
        ("truncated", "truncated"),
        ("huge", "more than metrics_max_bytes"),
        ("slow", "no answer within 1s"),
    ],
)
async def test_bad_metrics_answers_are_one_line_and_fall_back_to_the_log(server, monkeypatch, mode, words):
    monkeypatch.setenv("SPARK_TEST_METRICS", mode)
    monkeypatch.setenv("SPARK_TEST_METRICS_DELAY", "3")
    monkeypatch.setenv("SPARK_TEST_METRICS_FILL", "300000")

    async def log_tail():
        return CORPUS_LOG.read_text().splitlines()

    scraper = _scraper(server, timeout=1.0, max_bytes=1_000_000, log_tail=log_tail)
    got = await scraper.scrape()
    assert words in got.problem and "\n" not in got.problem
    assert got.origin == "log"
    assert got.get("decode_tps") == 4.0
    assert got.figures["decode_tps"].source == "log: vLLM stat line (Engine 000)"
    assert got.figures["ttft_p95"].value is None and got.figures["ttft_p95"].note == "not in vLLM's stat line"


async def test_nothing_listening_and_no_log_says_so():
    got = await _scraper(_free_port(), timeout=1.0).scrape()
    assert got.origin == "none" and "ConnectError" in got.problem and "\n" not in got.problem


async def test_an_old_standin_serves_the_old_names_and_they_are_named():
    port = _free_port()
    args = (port, "old-m", "org/model", "0.9.2", 4096)
    threading.Thread(target=vllm_http.serve, args=args, kwargs={"host": "127.0.0.1"}, daemon=True).start()
    scraper = _scraper(port)
    for _ in range(50):
        got = await scraper.scrape()
        if got.origin == "metrics":
            break
        time.sleep(0.05)
    assert got.version == "0.9.2"
    assert got.figures["kv_pct"].source == "vllm:gpu_cache_usage_perc"
    assert got.figures["prefix_hit_pct"].source.startswith("rate(vllm:gpu_prefix_cache_hits_total)")
    assert got.figures["itl_p50"].note == "no requests since the server started"  # there, but empty
    spec = got.figures["spec_accept_pct"]
    assert spec.value is None and spec.note == "not exposed by vLLM 0.9.2 (speculative decoding off)"
    await scraper.close()
