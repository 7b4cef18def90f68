"""The load generator behind `spark-tui bench`: streamed completions against the running endpoint.

vLLM's OpenAI-compatible `/v1/completions` is asked with `stream: true` by N concurrent clients
(httpx, one connection pool), each sending its next request when the last one ended, for a
duration or a number of requests per concurrency level. Per request it measures the time to the
first token (TTFT), the gaps between tokens (ITL) and the whole request (e2e); per level the
output and input tokens per second over the level's wall time, with p50/p95 of each latency.
Token counts are the server's (`stream_options.include_usage`) where it sends them, else one
token per streamed chunk, as vLLM streams. Nothing a server sends can stop the run: an endpoint
that is down, answers an error, streams something that is not its format or stalls is an error
of a named kind, counted, and the run goes on within its limits.
"""

from __future__ import annotations

import asyncio
import json
import math
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import asdict, dataclass, field

import httpx

# Words that are one token each in the common tokenizers, so a prompt of N words is ~N tokens.
WORDS = ("the", "cat", "sat", "on", "a", "mat", "and", "then", "it", "ran", "to", "see", "how", "far")


@dataclass(frozen=True)
class Params:
    model: str
    concurrency: tuple[int, ...] = (1, 4, 16)
    prompt_tokens: int = 256
    output_tokens: int = 128
    duration: float | None = 20.0  # seconds per level; or
    requests: int | None = None  # requests per level
    stall: float = 30.0  # seconds without a byte before a request counts as stalled

    def key(self) -> dict:
        """What makes two runs comparable (not how long they ran)."""
        return {
            "concurrency": list(self.concurrency),
            "prompt_tokens": self.prompt_tokens,
            "output_tokens": self.output_tokens,
        }


@dataclass
class Request:
    ok: bool
    error: str = ""  # kind: connect, http 4xx/5xx, malformed, stalled, cut, timeout
    ttft: float | None = None
    itl: list[float] = field(default_factory=list)
    e2e: float = 0.0
    prompt_tokens: int = 0
    output_tokens: int = 0


@dataclass
class Level:
    concurrency: int
    requests: int
    errors: dict[str, int]
    wall_s: float
    output_tps: float  # output tokens / wall time, all clients
    input_tps: float  # prompt tokens / wall time (what prefill took in)
    request_tps_p50: float | None  # one request's output tokens / its decode time
    ttft_p50: float | None
    ttft_p95: float | None
    itl_p50: float | None
    itl_p95: float | None
    e2e_p50: float | None
    e2e_p95: float | None
    chunks: int  # streamed chunks read (the client's own load)

    def as_dict(self) -> dict:
        return asdict(self)


def percentile(values: list[float], q: float) -> float | None:
    """Nearest-rank percentile (q in 0..100); None for no values."""
    if not values:
        return None
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q / 100 * len(ordered)) - 1)]


def prompt_of(tokens: int, salt: int) -> str:
    """A prompt of about `tokens` tokens, different per request (no prefix-cache hit for free)."""
    return " ".join(WORDS[(salt + i * 7) % len(WORDS)] for i in range(max(1, tokens)))


async def one_request(client: httpx.AsyncClient, params: Params, salt: int) -> tuple[Request, int]:
    """One streamed completion; the request's figures and how many chunks were read."""
    body = {
        "model": params.model,
        "prompt": prompt_of(params.prompt_tokens, salt),
        "max_tokens": params.output_tokens,
        "stream": True,
        "ignore_eos": True,  # vLLM's own: the asked length, as `vllm bench serve` does
        "stream_options": {"include_usage": True},
    }
    start = time.perf_counter()
    out = Request(ok=False)
    chunks, last, usage = 0, start, None
    try:
        async with client.stream("POST", "/completions", json=body) as resp:
            if resp.status_code != 200:
                out.error = f"http {resp.status_code}"
                return out, 0
            async for line in resp.aiter_lines():
                if not line.startswith("data:"):
                    continue
                data = line[5:].strip()
                if data == "[DONE]":
                    out.ok = True
                    break
                text, found = _chunk(data)
                if text is None:
                    out.error = "malformed"
                    break
                usage = found or usage
                chunks += 1
                if text:
                    now = time.perf_counter()
                    if out.ttft is None:
                        out.ttft = now - start
                    else:
                        out.itl.append(now - last)
                    last = now
                    out.output_tokens += 1
            else:
                out.error = out.error or "cut"  # the stream ended without [DONE]
    except httpx.ReadTimeout:
        out.error = "stalled"
    except (httpx.ConnectError, httpx.ConnectTimeout):
        out.error = "connect"
    except (httpx.RemoteProtocolError, httpx.ReadError):
        out.error = "cut"
    except httpx.HTTPError as exc:
        out.error = type(exc).__name__
    out.e2e = time.perf_counter() - start
    if out.ok and usage:
        out.prompt_tokens = usage.get("prompt_tokens", 0)
        out.output_tokens = usage.get("completion_tokens", out.output_tokens)
    elif out.ok:
        out.prompt_tokens = params.prompt_tokens
    if out.ok and out.ttft is None:
        out.ok, out.error = False, "no tokens"
    return out, chunks


def _chunk(data: str) -> tuple[str | None, dict | None]:
    """(the chunk's text, its usage if any), or (None, None) when it is not a completion chunk."""
    try:
        doc = json.loads(data)
    except ValueError:
        return None, None
    if not isinstance(doc, dict):
        return None, None
    usage = doc.get("usage")
    usage = (
        {k: v for k, v in usage.items() if isinstance(v, int) and not isinstance(v, bool)}
        if isinstance(usage, dict)
        else None
    )
    choices = doc.get("choices")
    if choices == [] and usage:  # the usage-only chunk at the end
        return "", usage
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        return None, None
    text = choices[0].get("text", "")
    return (text if isinstance(text, str) else None), usage


Progress = Callable[[int, int, int, int], object]  # level concurrency, done, errors, tokens


async def run_level(
    client: httpx.AsyncClient, params: Params, concurrency: int, progress: Progress | None = None
) -> Level:
    results: list[Request] = []
    chunks = 0
    started = 0
    t0 = time.perf_counter()
    deadline = t0 + params.duration if params.duration else None

    def more() -> bool:
        if params.requests is not None:
            return started < params.requests
        return deadline is not None and time.perf_counter() < deadline

    async def client_loop(index: int) -> None:
        nonlocal started, chunks
        while more():
            started += 1
            req, n = await one_request(client, params, salt=started * 31 + index)
            results.append(req)
            chunks += n
            if progress:
                progress(
                    concurrency,
                    len(results),
                    sum(not r.ok for r in results),
                    sum(r.output_tokens for r in results),
                )
            if not req.ok and req.error == "connect":
                await asyncio.sleep(0.2)  # a down endpoint is not hammered

    await asyncio.gather(*(client_loop(i) for i in range(concurrency)))
    wall = max(time.perf_counter() - t0, 1e-9)
    ok = [r for r in results if r.ok]
    ttft = [r.ttft for r in ok if r.ttft is not None]
    itl = [g for r in ok for g in r.itl]
    per_request = [
        (r.output_tokens - 1) / (r.e2e - r.ttft)
        for r in ok
        if r.ttft is not None and r.e2e > r.ttft and r.output_tokens > 1
    ]
    return Level(
        concurrency,
        len(results),
        dict(Counter(r.error for r in results if not r.ok)),
        round(wall, 3),
        sum(r.output_tokens for r in ok) / wall,
        sum(r.prompt_tokens for r in ok) / wall,
        percentile(per_request, 50),
        percentile(ttft, 50),
        percentile(ttft, 95),
        percentile(itl, 50),
        percentile(itl, 95),
        percentile([r.e2e for r in ok], 50),
        percentile([r.e2e for r in ok], 95),
        chunks,
    )


async def run(base_url: str, params: Params, progress: Progress | None = None) -> list[Level]:
    """Every concurrency level in turn against `base_url` (ending in /v1)."""
    limits = httpx.Limits(
        max_connections=max(params.concurrency), max_keepalive_connections=max(params.concurrency)
    )
    timeout = httpx.Timeout(connect=5.0, read=params.stall, write=10.0, pool=params.stall)
    async with httpx.AsyncClient(base_url=base_url, timeout=timeout, limits=limits) as client:
        return [await run_level(client, params, c, progress) for c in params.concurrency]
