"""The load generator's own cost: `python -m bench.loadgen [--seconds S]`.

The stand-in vLLM server runs in its own process, streaming as fast as it can (no per-token
delay, no first-token delay); `spark-tui bench`'s load generator runs here against it. What the
client can sustain is its streamed chunks per second of its own CPU time: the server's CPU is
not counted, so the figure is the client's ceiling however fast a real server is. The issue's
bar: 5,000 chunks/s (ten times what two Sparks serve on popular models).
"""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from spark_tui.core.bench import loadgen  # noqa: E402

STANDIN = ROOT / "tests" / "cluster" / "standin" / "vllm_http.py"


def start_standin(**knobs: str) -> tuple[str, subprocess.Popen]:
    """The stand-in vLLM server in its own process on loopback with these SPARK_TEST_* knobs:
    its /v1 base URL (once it accepts connections) and the process to kill afterwards."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = subprocess.Popen(
        [sys.executable, str(STANDIN), "--port", str(port), "--served", "m", "--host", "127.0.0.1"],
        env=dict(os.environ, **knobs),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            break
        except OSError:
            time.sleep(0.05)
    return f"http://127.0.0.1:{port}/v1", server


def bench_loadgen(seconds: float = 5.0, concurrency: int = 8, output_tokens: int = 512) -> dict:
    url, server = start_standin(
        SPARK_TEST_TOKENS_PER_S="1000000", SPARK_TEST_FIRST_TOKEN_S="0", SPARK_TEST_STAT_INTERVAL="3600"
    )
    try:
        params = loadgen.Params(
            model="m",
            concurrency=(concurrency,),
            prompt_tokens=16,
            output_tokens=output_tokens,
            duration=seconds,
        )
        cpu0, wall0 = time.process_time(), time.perf_counter()
        (level,) = asyncio.run(loadgen.run(url, params))
        cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
    finally:
        server.kill()
        server.wait()
    return {
        "chunks": level.chunks,
        "requests": level.requests,
        "errors": level.errors,
        "wall_s": round(wall, 2),
        "client_cpu_s": round(cpu, 2),
        "chunks_per_wall_s": round(level.chunks / wall),
        "chunks_per_client_cpu_s": round(level.chunks / cpu) if cpu else None,
        "goal": 5000,
    }


if __name__ == "__main__":
    seconds = float(sys.argv[sys.argv.index("--seconds") + 1]) if "--seconds" in sys.argv else 5.0
    out = bench_loadgen(seconds)
    print(
        f"load generator: {out['chunks']} chunks in {out['wall_s']} s ({out['chunks_per_wall_s']}/s with the "
        f"server on the same 2 cores), {out['client_cpu_s']} s of its own CPU: "
        f"{out['chunks_per_client_cpu_s']} chunks per client CPU second (goal {out['goal']}); errors {out['errors']}"
    )
