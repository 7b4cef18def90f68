"""Serving figures from the head's vLLM `/metrics`, with where each came from.

`MetricsWindow` keeps the recent scrapes and turns them into figures: rates between the last two
scrapes, latency quantiles from histogram bucket deltas over `metrics_window` seconds. Each figure
names the series it came from; a figure no series provides says "not exposed by vLLM X", never 0.
When /metrics cannot be read, the figures come from vLLM's periodic stat line in the head's log,
labelled as such. `MetricsScraper` does the HTTP side (httpx, capped, one line per failure).
"""

from __future__ import annotations

import math
import time
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass, field
from typing import Any

import httpx

from spark_tui.core.node.connection import Transport
from spark_tui.core.node.errors import NodeError
from spark_tui.parsers.vllm_metrics import (
    MetricsError,
    Reader,
    Scrape,
    StatLine,
    looks_like_exposition,
    parse_stat_lines,
    quantile,
)


@dataclass
class Figure:
    key: str
    label: str
    value: float | None
    unit: str
    source: str = ""  # the series (or log line) it came from
    note: str = ""  # why there is no value

    def text(self) -> str:
        if self.value is None:
            return self.note or "-"
        v = self.value
        num = f"{v:.0f}" if abs(v) >= 100 or v == int(v) else f"{v:.3g}" if abs(v) < 1 else f"{v:.1f}"
        return f"{num}{' ' + self.unit if self.unit else ''}"


@dataclass
class ServingFigures:
    origin: str  # "metrics" | "log" | "none"
    version: str | None
    figures: dict[str, Figure] = field(default_factory=dict)
    finished: dict[str, float] = field(default_factory=dict)  # finished_reason -> requests since start
    http_status: dict[str, float] = field(default_factory=dict)  # status class -> requests since start
    problem: str = ""  # one line: why /metrics was not usable
    at: float = 0.0

    def get(self, key: str) -> float | None:
        f = self.figures.get(key)
        return f.value if f else None

    def as_json(self) -> dict:
        return {
            "origin": self.origin,
            "vllm_version": self.version,
            "problem": self.problem or None,
            "figures": {k: asdict(f) for k, f in self.figures.items()},
            "finished_by_reason": self.finished,
            "http_requests_by_status": self.http_status,
        }


def _absent(version: str | None) -> str:
    return f"not exposed by vLLM {version}" if version else "not exposed by this vLLM (version unknown)"


def _first(scrape: Scrape, names: tuple[str, ...]) -> str | None:
    return next((n for n in names if scrape.has(n)), None)


class MetricsWindow:
    """Recent scrapes of one server and the figures they give."""

    def __init__(self, window: float = 60.0, history: int = 120):
        self.window = window
        self.scrapes: deque[Scrape] = deque()
        self.history: deque[ServingFigures] = deque(maxlen=history)  # for plots and signals

    def add(self, scrape: Scrape) -> None:
        if self.scrapes and _restarted(self.scrapes[-1], scrape):
            self.scrapes.clear()  # counters went back: the server restarted, old deltas mean nothing
        self.scrapes.append(scrape)
        while len(self.scrapes) > 2 and scrape.at - self.scrapes[1].at >= self.window:
            self.scrapes.popleft()

    def figures(self, version: str | None) -> ServingFigures:
        cur = self.scrapes[-1]
        prev = self.scrapes[-2] if len(self.scrapes) > 1 else None
        oldest = self.scrapes[0]
        out = ServingFigures("metrics", version, at=cur.at)
        absent = _absent(version)
        dt = cur.at - prev.at if prev else 0.0

        def put(key, label, unit, value, source, note=""):
            out.figures[key] = Figure(key, label, value, unit, source, "" if value is not None else note)

        def rate(key, label, unit, names):
            name = _first(cur, names)
            if name is None:
                return put(key, label, unit, None, "", absent)
            series = f"{name}_total"
            if prev is None or dt <= 0:
                return put(key, label, unit, None, f"rate({series})", "needs a second scrape")
            delta = cur.values.get(series, 0.0) - prev.values.get(series, 0.0)
            put(key, label, unit, max(delta, 0.0) / dt, f"rate({series}[{dt:.0f}s])")

        def gauge(key, label, unit, names, scale=1.0, peak=False):
            name = _first(cur, names)
            if name is None:
                return put(key, label, unit, None, "", absent)
            got = (cur.peaks if peak else cur.values).get(name)
            put(key, label, unit, got * scale if got is not None else None, name, absent)

        def ratio(key, label, num_names, den_names, gauge_name=None):
            num, den = _first(cur, num_names), _first(cur, den_names)
            if num is None or den is None:
                if gauge_name and cur.has(gauge_name):
                    return gauge(key, label, "%", (gauge_name,), 100.0)
                return put(key, label, "%", None, "", absent)
            source = f"rate({num}_total) / rate({den}_total)"
            if prev is None:
                return put(key, label, "%", None, source, "needs a second scrape")
            d_num = cur.values.get(num + "_total", 0.0) - prev.values.get(num + "_total", 0.0)
            d_den = cur.values.get(den + "_total", 0.0) - prev.values.get(den + "_total", 0.0)
            if d_den <= 0:
                return put(key, label, "%", None, source, f"none in the last {dt:.0f}s")
            put(key, label, "%", 100.0 * max(d_num, 0.0) / d_den, source + f" [{dt:.0f}s]")

        def latency(key, label, names):
            name = _first(cur, names)
            for q in (50, 95):
                k = f"{key}_p{q}"
                if name is None:
                    put(k, f"{label} p{q}", "s", None, "", absent)
                    continue
                span = cur.at - oldest.at
                source = f"{name}_bucket " + ("since start" if oldest is cur else f"over {span:.0f}s")
                deltas = _bucket_deltas(
                    cur.buckets.get(name, {}), oldest.buckets.get(name, {}), oldest is cur
                )
                value = quantile(q / 100, deltas)
                quiet = (
                    "no requests since the server started"
                    if oldest is cur
                    else f"no requests in the last {span:.0f}s"
                )
                put(k, f"{label} p{q}", "s", value, source, quiet)

        rate("prefill_tps", "prefill", "tok/s", ("vllm:prompt_tokens",))
        rate("decode_tps", "decode", "tok/s", ("vllm:generation_tokens",))
        gauge("running", "running", "req", ("vllm:num_requests_running",))
        gauge("waiting", "waiting", "req", ("vllm:num_requests_waiting",))
        gauge(
            "kv_pct", "KV cache", "%", ("vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc"), 100.0, True
        )
        info = cur.cache_info
        blocks, size = _int(info.get("num_gpu_blocks")), _int(info.get("block_size"))
        if blocks and size:
            put(
                "kv_pool",
                "KV pool",
                "tok",
                float(blocks * size),
                "vllm:cache_config_info num_gpu_blocks×block_size",
            )
        else:
            note = (
                absent if not cur.has("vllm:cache_config_info") else "cache_config_info has no num_gpu_blocks"
            )
            put("kv_pool", "KV pool", "tok", None, "", note)
        rate("preempt_ps", "preemptions", "/s", ("vllm:num_preemptions",))
        ratio(
            "prefix_hit_pct",
            "prefix cache hits",
            ("vllm:prefix_cache_hits", "vllm:gpu_prefix_cache_hits"),
            ("vllm:prefix_cache_queries", "vllm:gpu_prefix_cache_queries"),
            "vllm:gpu_prefix_cache_hit_rate",
        )
        ratio(
            "spec_accept_pct",
            "spec-decode acceptance",
            ("vllm:spec_decode_num_accepted_tokens",),
            ("vllm:spec_decode_num_draft_tokens",),
        )
        if "spec_accept_pct" in out.figures and out.figures["spec_accept_pct"].note == absent:
            out.figures["spec_accept_pct"].note = absent + " (speculative decoding off)"
        latency("ttft", "TTFT", ("vllm:time_to_first_token_seconds",))
        latency("itl", "ITL", ("vllm:inter_token_latency_seconds", "vllm:time_per_output_token_seconds"))
        latency("e2e", "e2e", ("vllm:e2e_request_latency_seconds",))
        out.finished = dict(cur.by_label.get("vllm:request_success_total", {}))
        out.http_status = dict(cur.by_label.get("http_requests_total", {}))
        errors = sum(v for s, v in out.http_status.items() if s[:1] in ("4", "5"))
        if cur.has("http_requests_total"):
            put("http_errors", "HTTP errors", "req", errors, "http_requests_total{status=4xx|5xx}")
        else:
            put("http_errors", "HTTP errors", "req", None, "", absent)
        self.history.append(out)
        return out


def _int(text: str | None) -> int | None:
    try:
        return int(float(text)) if text not in (None, "None", "") else None
    except ValueError:
        return None


def _restarted(prev: Scrape, cur: Scrape) -> bool:
    for name in ("vllm:generation_tokens_total", "vllm:prompt_tokens_total"):
        if name in prev.values and cur.values.get(name, 0.0) < prev.values[name]:
            return True
    return False


def _bucket_deltas(cur: dict[float, float], old: dict[float, float], same: bool) -> list[tuple[float, float]]:
    """Cumulative bucket counts added since `old` (all of them when there is one scrape only)."""
    if not cur:
        return []
    if math.inf not in cur:
        return []  # a histogram without its +Inf bucket is cut off: no quantile from it
    return [(le, cur[le] - (0.0 if same else old.get(le, 0.0))) for le in sorted(cur)]


def from_stat_line(line: StatLine, version: str | None, problem: str) -> ServingFigures:
    """Figures from vLLM's log line, for when /metrics cannot be read."""
    src = f"log: vLLM stat line{f' (Engine {line.engine})' if line.engine else ''}"
    out = ServingFigures("log", version, problem=problem, at=time.monotonic())
    no = "not in vLLM's stat line"
    for key, label, unit, value in (
        ("prefill_tps", "prefill", "tok/s", line.prompt_tps),
        ("decode_tps", "decode", "tok/s", line.decode_tps),
        ("running", "running", "req", float(line.running)),
        ("waiting", "waiting", "req", float(line.waiting)),
        ("kv_pct", "KV cache", "%", line.kv_pct),
        ("prefix_hit_pct", "prefix cache hits", "%", line.prefix_hit_pct),
        ("spec_accept_pct", "spec-decode acceptance", "%", line.acceptance_pct),
    ):
        out.figures[key] = Figure(
            key, label, value, unit, src if value is not None else "", "" if value is not None else no
        )
    for key, label, unit in (("kv_pool", "KV pool", "tok"), ("preempt_ps", "preemptions", "/s")):
        out.figures[key] = Figure(key, label, None, unit, "", no)
    for key, label in (("ttft", "TTFT"), ("itl", "ITL"), ("e2e", "e2e")):
        for q in (50, 95):
            out.figures[f"{key}_p{q}"] = Figure(f"{key}_p{q}", f"{label} p{q}", None, "s", "", no)
    out.figures["http_errors"] = Figure("http_errors", "HTTP errors", None, "req", "", no)
    return out


LogTail = Callable[[], Awaitable[list[str]]]


class MetricsScraper:
    """Scrapes one server's /metrics through the head's transport (an SSH forward to its data
    address, as `status` asks /health). Never raises: a failure is a one-line `problem`."""

    def __init__(
        self,
        transport: Transport,
        target: str,
        port: int,
        *,
        window: float = 60.0,
        max_bytes: int = 8 * 1024 * 1024,
        timeout: float = 5.0,
        log_tail: LogTail | None = None,
    ):
        self.transport, self.target, self.port = transport, target, port
        self.max_bytes, self.timeout, self.log_tail = max_bytes, timeout, log_tail
        self.window = MetricsWindow(window)
        self.version: str | None = None
        self.last: ServingFigures | None = None
        self.reader = Reader()
        self._client: httpx.AsyncClient | None = None
        self._listener: Any = None  # the SSH forward (asyncssh.SSHListener), None on a local node

    async def _http(self) -> httpx.AsyncClient:
        """One client (and SSH forward) kept across scrapes: a new httpx client costs ~25 ms of
        CPU (its TLS context), five times a whole scrape's parsing."""
        if self._client is None:
            base, self._listener = await self.transport.http_base(self.target, self.port)
            self._client = httpx.AsyncClient(base_url=base, timeout=httpx.Timeout(self.timeout))
        return self._client

    async def _drop_client(self) -> None:
        if self._listener is not None:
            self._listener.close()
        client, self._client, self._listener = self._client, None, None
        if client is not None:
            await client.aclose()

    async def scrape(self) -> ServingFigures:
        try:
            text = await self._fetch()
            if text and not text.endswith("\n"):
                raise MetricsError(f"truncated: the answer ends mid-line after {len(text)} bytes")
            if not looks_like_exposition(text):
                raise MetricsError("answer is not Prometheus text (" + _first_line(text) + ")")
            scrape = self.reader.parse(text, time.monotonic())
            if not any(n.startswith("vllm:") for n in scrape.names):
                raise MetricsError(f"no vllm: series among its {scrape.families} metric families")
        except MetricsError as exc:
            figures = await self._fallback(f"/metrics on {self.target}:{self.port}: {exc}")
        else:
            self.window.add(scrape)
            figures = self.window.figures(self.version)
        self.last = figures
        return figures

    async def _fetch(self) -> str:
        try:
            client = await self._http()
        except (NodeError, OSError) as exc:
            raise MetricsError(f"cannot reach it: {exc}") from None
        try:
            if self.version is None:
                self.version = await _version(client)
            async with client.stream("GET", "/metrics") as resp:
                if resp.status_code != 200:
                    words = {401: "unauthorized", 403: "forbidden", 404: "not found"}.get(
                        resp.status_code, ""
                    )
                    raise MetricsError(f"answered HTTP {resp.status_code}{' ' + words if words else ''}")
                declared = resp.headers.get("content-length")
                if declared and declared.isdigit() and int(declared) > self.max_bytes:
                    raise MetricsError(
                        f"{declared} bytes, more than metrics_max_bytes ({self.max_bytes}); not read"
                    )
                chunks, size = [], 0
                async for chunk in resp.aiter_bytes():
                    size += len(chunk)
                    if size > self.max_bytes:
                        raise MetricsError(f"more than metrics_max_bytes ({self.max_bytes}); not read")
                    chunks.append(chunk)
        except httpx.TimeoutException:
            await self._drop_client()
            raise MetricsError(f"no answer within {self.timeout:.0f}s") from None
        except httpx.HTTPError as exc:
            await self._drop_client()
            raise MetricsError(f"{type(exc).__name__}: {str(exc)[:100] or 'connection failed'}") from None
        return b"".join(chunks).decode("utf-8", errors="replace")

    async def _fallback(self, problem: str) -> ServingFigures:
        if self.log_tail is not None:
            try:
                line = parse_stat_lines(await self.log_tail())
            except Exception as exc:  # a log read is best effort: its failure joins the message
                problem += f"; the log could not be read either ({type(exc).__name__})"
                line = None
            if line is not None:
                return from_stat_line(line, self.version, problem)
        return ServingFigures("none", self.version, problem=problem, at=time.monotonic())

    async def close(self) -> None:
        await self._drop_client()


async def _version(client: httpx.AsyncClient) -> str | None:
    """vLLM's GET /version ({"version": "0.11.0"}); None when it does not say."""
    try:
        resp = await client.get("/version")
        got = resp.json().get("version") if resp.status_code == 200 else None
    except (httpx.HTTPError, ValueError, AttributeError):
        return None
    return str(got)[:40] if isinstance(got, str | int | float) else None


def _first_line(text: str) -> str:
    for line in text.splitlines():
        if line.strip():
            return repr(line.strip()[:40])
    return "empty"
