"""Stand-in for vLLM's OpenAI API server (the HTTP side), stdlib only.

Serves what spark-tui and a client ask of a real vLLM: /health, /v1/models, /version, /metrics in
the real exposition format (prometheus_client's: HELP/TYPE lines, `_total` and `_created` samples,
sorted labels, vLLM's own histogram bounds), and /v1/completions and /v1/chat/completions, with
OpenAI streaming (SSE) when asked. Requests really run: tokens come at SPARK_TEST_TOKENS_PER_S per
request after SPARK_TEST_FIRST_TOKEN_S, take KV blocks from a pool of SPARK_TEST_KV_BLOCKS x 16
tokens, wait when it is full and are preempted (recomputed) when a running one cannot grow, so the
counters, gauges and histograms move as vLLM's do. Every SPARK_TEST_STAT_INTERVAL seconds (10) it
prints vLLM's periodic stat line on stdout (the container's log).

The series follow the version: before 0.10 the old names (gpu_cache_usage_perc,
gpu_prefix_cache_*, time_per_output_token_seconds, no engine label); from 0.10 on the current
names only. SPARK_TEST_METRICS=slow|huge|truncated|html|401|404 makes /metrics misbehave;
SPARK_TEST_MODELS_BODY=json is what /v1/models answers instead.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

BLOCK = 16
TTFT_BOUNDS = [
    0.001,
    0.005,
    0.01,
    0.02,
    0.04,
    0.06,
    0.08,
    0.1,
    0.25,
    0.5,
    0.75,
    1.0,
    2.5,
    5.0,
    7.5,
    10.0,
    20.0,
    40.0,
    80.0,
    160.0,
    640.0,
    2560.0,
]
ITL_BOUNDS = [
    0.01,
    0.025,
    0.05,
    0.075,
    0.1,
    0.15,
    0.2,
    0.3,
    0.4,
    0.5,
    0.75,
    1.0,
    2.5,
    5.0,
    7.5,
    10.0,
    20.0,
    40.0,
    80.0,
]
REQ_BOUNDS = [
    0.3,
    0.5,
    0.8,
    1.0,
    1.5,
    2.0,
    2.5,
    5.0,
    10.0,
    15.0,
    20.0,
    30.0,
    40.0,
    50.0,
    60.0,
    120.0,
    240.0,
    480.0,
    960.0,
    1920.0,
    7680.0,
]
HIGHR_BOUNDS = [
    0.01,
    0.025,
    0.05,
    0.075,
    0.1,
    0.25,
    0.5,
    0.75,
    1.0,
    1.5,
    2.0,
    2.5,
    3.0,
    3.5,
    4.0,
    4.5,
    5.0,
    7.5,
    10.0,
    30.0,
    60.0,
]
TOKEN_BOUNDS = [1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0, 200.0, 500.0, 1000.0, 2000.0, 5000.0, 10000.0]


def _env(name: str, default: float) -> float:
    try:
        return float(os.environ.get(name, default))
    except ValueError:
        return default


def _old(version: str) -> bool:
    parts = (version.split("+")[0].split(".") + ["0", "0"])[:2]
    try:
        return (int(parts[0]), int(parts[1])) < (0, 10)
    except ValueError:
        return False


def _status_words(code) -> str:
    """`200 OK`, `404 Not Found`: the status as uvicorn's access line writes it."""
    from http import HTTPStatus

    try:
        return f"{int(code)} {HTTPStatus(int(code)).phrase}"
    except ValueError:
        return str(code)


class Histogram:
    def __init__(self, bounds: list[float]):
        self.bounds, self.counts, self.sum, self.n = bounds, [0] * len(bounds), 0.0, 0

    def observe(self, v: float) -> None:
        self.sum += v
        self.n += 1
        for i, b in enumerate(self.bounds):
            if v <= b:
                self.counts[i] += 1


class Engine:
    """The serving state, shared by the request threads under one lock."""

    def __init__(self, served: str, version: str):
        self.served, self.version, self.old = served, version, _old(version)
        self.lock = threading.Condition()
        self.created = time.time()
        self.pool = int(_env("SPARK_TEST_KV_BLOCKS", 2048)) * BLOCK
        self.used = 0  # tokens held by running requests
        self.running = 0
        self.waiting = 0
        self.c = dict.fromkeys(("prompt", "gen", "preempt", "pq", "ph"), 0)
        self.finished = {"stop": 0, "length": 0, "abort": 0}
        self.http = {}  # (handler, method, status class) -> count
        self.h = {
            n: Histogram(b)
            for n, b in (
                ("ttft", TTFT_BOUNDS),
                ("itl", ITL_BOUNDS),
                ("e2e", REQ_BOUNDS),
                ("queue", REQ_BOUNDS),
                ("prefill", REQ_BOUNDS),
                ("decode", REQ_BOUNDS),
                ("inference", REQ_BOUNDS),
                ("ptok", TOKEN_BOUNDS),
                ("gtok", TOKEN_BOUNDS),
                ("one", [1.0, 2.0, 5.0, 10.0, 20.0]),
            )
        }
        self.seen_prefixes: set[str] = set()
        self.window = {"prompt": 0, "gen": 0, "pq": 0, "ph": 0}

    def http_done(self, path: str, method: str, status: int) -> None:
        with self.lock:
            key = (path, method, f"{status // 100}xx")
            self.http[key] = self.http.get(key, 0) + 1

    def run(self, prompt: str, max_tokens: int, emit) -> str:
        """One request through queue, prefill and decode; `emit(text)` per token; returns the reason."""
        prompt_tokens = max(1, int(len(prompt.split()) * 1.3))
        rate = max(_env("SPARK_TEST_TOKENS_PER_S", 50.0), 0.1)
        first = _env("SPARK_TEST_FIRST_TOKEN_S", 0.05)
        arrived = time.monotonic()
        with self.lock:
            self.waiting += 1
            self.c["pq"] += prompt_tokens
            self.window["pq"] += prompt_tokens
            if prompt[:32] in self.seen_prefixes:
                hit = prompt_tokens // 2
                self.c["ph"] += hit
                self.window["ph"] += hit
            self.seen_prefixes.add(prompt[:32])
        made = 0
        while True:  # admitted, maybe preempted and admitted again (recompute)
            with self.lock:
                while self.used + prompt_tokens + made > self.pool:
                    self.lock.wait(0.2)
                self.waiting -= 1
                self.running += 1
                self.used += prompt_tokens + made
                self.c["prompt"] += prompt_tokens
                self.window["prompt"] += prompt_tokens
            scheduled = time.monotonic()
            self.h["queue"].observe(scheduled - arrived)
            time.sleep(first)
            preempted = False
            last = time.monotonic()
            if made == 0:
                self.h["ttft"].observe(last - arrived)
                self.h["prefill"].observe(last - scheduled)
            while made < max_tokens:
                with self.lock:
                    if self.used + 1 > self.pool:
                        # No block to grow into: preempted, its KV freed, back to the queue.
                        self.c["preempt"] += 1
                        self.used -= prompt_tokens + made
                        self.running -= 1
                        self.waiting += 1
                        self.lock.notify_all()
                        preempted = True
                        break
                    self.used += 1
                    self.c["gen"] += 1
                    self.window["gen"] += 1
                made += 1
                emit(f" tok{made}")
                time.sleep(1.0 / rate)
                now = time.monotonic()
                self.h["itl"].observe(now - last)
                last = now
            if not preempted:
                break
        done = time.monotonic()
        with self.lock:
            self.running -= 1
            self.used -= prompt_tokens + made
            self.finished["length"] += 1
            self.lock.notify_all()
        for name, value in (
            ("e2e", done - arrived),
            ("decode", done - scheduled),
            ("inference", done - scheduled),
        ):
            self.h[name].observe(value)
        self.h["ptok"].observe(prompt_tokens)
        self.h["one"].observe(1)
        self.h["gtok"].observe(made)
        return "length"

    def stat_line(self, every: float) -> str:
        with self.lock:
            w, self.window = self.window, dict.fromkeys(self.window, 0)
            running, waiting, used = self.running, self.waiting, self.used
        hit = 100.0 * w["ph"] / w["pq"] if w["pq"] else 0.0
        stamp = time.strftime("%m-%d %H:%M:%S")
        return (
            f"(APIServer pid={os.getpid()}) INFO {stamp} [loggers.py:123] Engine 000: "
            f"Avg prompt throughput: {w['prompt'] / every:.1f} tokens/s, Avg generation throughput: "
            f"{w['gen'] / every:.1f} tokens/s, Running: {running} reqs, Waiting: {waiting} reqs, "
            f"GPU KV cache usage: {100.0 * used / self.pool:.1f}%, Prefix cache hit rate: {hit:.1f}%"
        )

    def metrics(self, model: str) -> str:
        """The exposition as prometheus_client writes it."""
        out: list[str] = []
        labels = {"model_name": model} if self.old else {"engine": "0", "model_name": model}

        def lab(extra=None) -> str:
            items = sorted({**labels, **(extra or {})}.items())
            return "{" + ",".join(f'{k}="{v}"' for k, v in items) + "}"

        def head(name, kind, text):
            out.append(f"# HELP {name} {text}")
            out.append(f"# TYPE {name} {kind}")

        def gauge(name, text, value):
            head(name, "gauge", text)
            out.append(f"{name}{lab()} {float(value)!r}")

        def counter(name, text, value, extra=None):
            head(name + "_total", "counter", text)
            for ex, v in extra or [(None, value)]:
                out.append(f"{name}_total{lab(ex)} {float(v)!r}")
            for ex, _ in extra or [(None, value)]:
                out.append(f"{name}_created{lab(ex)} {self.created!r}")

        def histogram(name, text, h):
            head(name, "histogram", text)
            for b, c in zip(h.bounds, h.counts, strict=True):
                out.append(f"{name}_bucket{lab({'le': str(b)})} {float(c)!r}")
            out.append(f"{name}_bucket{lab({'le': '+Inf'})} {float(h.n)!r}")
            out.append(f"{name}_count{lab()} {float(h.n)!r}")
            out.append(f"{name}_sum{lab()} {h.sum!r}")
            out.append(f"{name}_created{lab()} {self.created!r}")

        with self.lock:
            for gen in range(3):
                out.append(f'python_gc_objects_collected_total{{generation="{gen}"}} {1000.0 * (gen + 1)!r}')
            head("process_resident_memory_bytes", "gauge", "Resident memory size in bytes.")
            out.append("process_resident_memory_bytes 1.234567168e+09")
            head(
                "process_start_time_seconds",
                "gauge",
                "Start time of the process since unix epoch in seconds.",
            )
            out.append(f"process_start_time_seconds {self.created!r}")
            head("http_requests_total", "counter", "Total number of requests by method, status and handler.")
            for (path, method, status), n in sorted(self.http.items()):
                out.append(
                    f'http_requests_total{{handler="{path}",method="{method}",status="{status}"}} {float(n)!r}'
                )
            gauge("vllm:num_requests_running", "Number of requests in model execution batches.", self.running)
            gauge("vllm:num_requests_waiting", "Number of requests waiting to be processed.", self.waiting)
            usage = self.used / self.pool
            if self.old:
                gauge("vllm:gpu_cache_usage_perc", "GPU KV-cache usage. 1 means 100 percent usage.", usage)
                counter(
                    "vllm:gpu_prefix_cache_queries",
                    "GPU prefix cache queries, in terms of number of queried tokens.",
                    self.c["pq"],
                )
                counter(
                    "vllm:gpu_prefix_cache_hits",
                    "GPU prefix cache hits, in terms of number of cached tokens.",
                    self.c["ph"],
                )
            else:
                gauge("vllm:kv_cache_usage_perc", "KV-cache usage. 1 means 100 percent usage.", usage)
                counter(
                    "vllm:prefix_cache_queries",
                    "Prefix cache queries, in terms of number of queried tokens.",
                    self.c["pq"],
                )
                counter(
                    "vllm:prefix_cache_hits",
                    "Prefix cache hits, in terms of number of cached tokens.",
                    self.c["ph"],
                )
            counter(
                "vllm:num_preemptions", "Cumulative number of preemption from the engine.", self.c["preempt"]
            )
            counter("vllm:prompt_tokens", "Number of prefill tokens processed.", self.c["prompt"])
            counter("vllm:generation_tokens", "Number of generation tokens processed.", self.c["gen"])
            counter(
                "vllm:request_success",
                "Count of successfully processed requests.",
                0,
                [({"finished_reason": r}, n) for r, n in self.finished.items()],
            )
            histogram("vllm:request_prompt_tokens", "Number of prefill tokens processed.", self.h["ptok"])
            histogram(
                "vllm:request_generation_tokens", "Number of generation tokens processed.", self.h["gtok"]
            )
            histogram(
                "vllm:time_to_first_token_seconds",
                "Histogram of time to first token in seconds.",
                self.h["ttft"],
            )
            if self.old:
                histogram(
                    "vllm:time_per_output_token_seconds",
                    "Histogram of time per output token in seconds.",
                    self.h["itl"],
                )
            else:
                histogram(
                    "vllm:inter_token_latency_seconds",
                    "Histogram of inter-token latency in seconds.",
                    self.h["itl"],
                )
            histogram(
                "vllm:e2e_request_latency_seconds",
                "Histogram of e2e request latency in seconds.",
                self.h["e2e"],
            )
            for key, what in (
                ("queue", "WAITING"),
                ("inference", "RUNNING"),
                ("prefill", "PREFILL"),
                ("decode", "DECODE"),
            ):
                histogram(
                    f"vllm:request_{key}_time_seconds",
                    f"Histogram of time spent in {what} phase for request.",
                    self.h[key],
                )
            # Families vLLM and the FastAPI instrumentator also write, which no serving figure reads.
            histogram(
                "vllm:iteration_tokens_total",
                "Histogram of number of tokens per engine_step.",
                self.h["ptok"],
            )
            histogram(
                "vllm:request_max_num_generation_tokens",
                "Histogram of maximum number of requested generation tokens.",
                self.h["gtok"],
            )
            histogram("vllm:request_params_n", "Histogram of the n request parameter.", self.h["one"])
            histogram(
                "vllm:request_params_max_tokens",
                "Histogram of the max_tokens request parameter.",
                self.h["gtok"],
            )
            head(
                "http_request_duration_highr_seconds",
                "histogram",
                "Latency with many buckets but no API specific labels.",
            )
            for b in HIGHR_BOUNDS:
                out.append(
                    f'http_request_duration_highr_seconds_bucket{{le="{b}"}} {float(sum(self.http.values()))!r}'
                )
            out.append(
                f'http_request_duration_highr_seconds_bucket{{le="+Inf"}} {float(sum(self.http.values()))!r}'
            )
            head("vllm:cache_config_info", "gauge", "Information of the LLMEngine CacheConfig")
            info = {
                "block_size": str(BLOCK),
                "cache_dtype": "auto",
                "enable_prefix_caching": "True",
                "gpu_memory_utilization": "0.9",
                "num_gpu_blocks": str(self.pool // BLOCK),
            }
            out.append(
                "vllm:cache_config_info{" + ",".join(f'{k}="{v}"' for k, v in sorted(info.items())) + "} 1.0"
            )
        dp = int(_env("SPARK_TEST_DP", 1))
        if dp > 1 and not self.old:  # one copy of every engine series per data-parallel rank
            out = [
                x
                for line in out
                for x in (
                    [line] + [line.replace('engine="0"', f'engine="{k}"') for k in range(1, dp)]
                    if 'engine="0"' in line
                    else [line]
                )
            ]
        return "\n".join(out) + "\n"


def _handler(engine: Engine, served: str, model: str, max_model_len: int):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, fmt, *args):  # uvicorn's access line, as vLLM's log shows it
            print(
                f"(APIServer pid={os.getpid()}) INFO:     {self.client_address[0]}:{self.client_address[1]} - "
                f'"{self.command} {self.path} HTTP/1.1" {_status_words(args[1] if len(args) > 1 else "")}',
                flush=True,
            )

        def _send(self, status: int, body: bytes, ctype: str = "application/json") -> None:
            self.send_response(status)
            self.send_header("content-type", ctype)
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            try:
                self.wfile.write(body)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (a scraper's cap or timeout), as uvicorn shrugs it off
            engine.http_done(self.path.split("?")[0], self.command, status)

        def do_GET(self):
            path = self.path.split("?")[0]
            if path == "/health":
                self._send(200, b"")
            elif path == "/version":
                self._send(200, json.dumps({"version": engine.version}).encode())
            elif path == "/v1/models" and os.environ.get("SPARK_TEST_MODELS_BODY"):
                # A broken or hostile server's answer (the knob of the stand-in this file replaced).
                self._send(200, os.environ["SPARK_TEST_MODELS_BODY"].encode())
            elif path == "/v1/models":
                data = [
                    {
                        "id": served,
                        "object": "model",
                        "created": int(engine.created),
                        "owned_by": "vllm",
                        "root": model,
                        "parent": None,
                        "max_model_len": max_model_len,
                    }
                ]
                self._send(200, json.dumps({"object": "list", "data": data}).encode())
            elif path == "/metrics":
                self._metrics()
            else:
                self._send(404, b'{"detail":"Not Found"}')

        def _metrics(self):
            mode = os.environ.get("SPARK_TEST_METRICS", "")
            text = engine.metrics(served)
            if mode in ("401", "404"):
                return self._send(
                    int(mode), b'{"detail":"Not Found"}' if mode == "404" else b'{"error":"Unauthorized"}'
                )
            if mode == "html":
                return self._send(200, b"<!DOCTYPE html><html><body>proxy login</body></html>\n", "text/html")
            if mode == "slow":
                time.sleep(_env("SPARK_TEST_METRICS_DELAY", 30.0))
            if mode == "huge":
                text = text + "# filler\n" * int(_env("SPARK_TEST_METRICS_FILL", 2_000_000))
            body = text.encode()
            if mode == "truncated":
                body = body[: len(body) // 2]
            self._send(200, body, "text/plain; version=0.0.4; charset=utf-8")

        def do_POST(self):
            path = self.path.split("?")[0]
            if path not in ("/v1/completions", "/v1/chat/completions"):
                return self._send(404, b'{"detail":"Not Found"}')
            try:
                req = json.loads(self.rfile.read(int(self.headers.get("content-length") or 0)) or b"{}")
            except ValueError:
                return self._send(400, b'{"error":"invalid JSON"}')
            if req.get("model") != served:
                body = {
                    "object": "error",
                    "message": f"The model `{req.get('model')}` does not exist.",
                    "type": "NotFoundError",
                    "code": 404,
                }
                return self._send(404, json.dumps(body).encode())
            chat = path.endswith("chat/completions")
            prompt = (
                " ".join(str(m.get("content", "")) for m in req.get("messages", []))
                if chat
                else str(req.get("prompt", ""))
            )
            max_tokens = int(req.get("max_tokens") or 16)
            rid = f"{'chatcmpl' if chat else 'cmpl'}-{threading.get_ident():x}{int(time.time() * 1000):x}"
            if req.get("stream"):
                self._stream(rid, chat, prompt, max_tokens)
            else:
                parts: list[str] = []
                reason = engine.run(prompt, max_tokens, parts.append)
                text = "".join(parts)
                choice = (
                    {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": reason}
                    if chat
                    else {"index": 0, "text": text, "finish_reason": reason}
                )
                ptok = max(1, int(len(prompt.split()) * 1.3))
                body = {
                    "id": rid,
                    "object": "chat.completion" if chat else "text_completion",
                    "model": served,
                    "choices": [choice],
                    "usage": {
                        "prompt_tokens": ptok,
                        "completion_tokens": len(parts),
                        "total_tokens": ptok + len(parts),
                    },
                }
                self._send(200, json.dumps(body).encode())

        def _stream(self, rid: str, chat: bool, prompt: str, max_tokens: int):
            self.send_response(200)
            self.send_header("content-type", "text/event-stream; charset=utf-8")
            self.send_header("transfer-encoding", "chunked")
            self.end_headers()

            def chunk(data: str) -> None:
                raw = f"data: {data}\n\n".encode()
                self.wfile.write(f"{len(raw):x}\r\n".encode() + raw + b"\r\n")
                self.wfile.flush()

            def event(text: str, reason=None) -> None:
                choice = (
                    {"index": 0, "delta": {"content": text}, "finish_reason": reason}
                    if chat
                    else {"index": 0, "text": text, "finish_reason": reason}
                )
                obj = "chat.completion.chunk" if chat else "text_completion"
                chunk(json.dumps({"id": rid, "object": obj, "model": served, "choices": [choice]}))

            try:
                reason = engine.run(prompt, max_tokens, event)
                event("", reason)
                chunk("[DONE]")
                self.wfile.write(b"0\r\n\r\n")
                self.wfile.flush()
            except (BrokenPipeError, ConnectionResetError):
                pass
            engine.http_done(self.path.split("?")[0], "POST", 200)

    return Handler


def serve(
    port: int, served: str, model: str, version: str, max_model_len: int, host: str = "0.0.0.0"
) -> None:
    """Serve until the process ends (blocks). Tests on this machine pass host="127.0.0.1"."""
    engine = Engine(served, version)
    every = max(_env("SPARK_TEST_STAT_INTERVAL", 10.0), 0.5)

    def stats() -> None:
        while True:
            time.sleep(every)
            print(engine.stat_line(every), flush=True)

    threading.Thread(target=stats, daemon=True).start()
    server = ThreadingHTTPServer((host, port), _handler(engine, served, model, max_model_len))
    server.daemon_threads = True
    server.serve_forever()


if __name__ == "__main__":
    import argparse

    p = argparse.ArgumentParser()
    p.add_argument("--port", type=int, default=8000)
    p.add_argument("--served", default="model")
    p.add_argument("--model", default="model")
    p.add_argument("--version", default="0.12.0")
    p.add_argument("--max-model-len", type=int, default=4096)
    p.add_argument("--host", default="0.0.0.0")
    a = p.parse_args()
    sys.exit(serve(a.port, a.served, a.model, a.version, a.max_model_len, a.host))
