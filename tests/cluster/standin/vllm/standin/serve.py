"""`vllm serve` of the stand-in: what the real one prints and does around a model load, no GPU.

- readiness as current vLLM prints it (no "Uvicorn running on" line; SPARK_TEST_LEGACY_UVICORN=1
  adds it, as older versions printed it), then /health and /v1/models served by vllm_http (a
  child process, so a test can stop the endpoint while the container runs on);
- NCCL lines from each rank's own environment (vllm.standin.nccl); native multi-node
  (--nnodes > 1) really rendezvous over TCP at --master-addr:--master-port; the Ray executor
  really runs on Ray (vllm.standin.ray_executor);
- knobs: SPARK_TEST_FAIL=nccl_hang | oom | crash | worker_oom (Ray: the rank on the node at
  SPARK_TEST_FAIL_IP, else the last rank, runs out of memory in its actor; ray_executor.py) |
  log:NAME[@HOST] (prints /usr/share/spark-test/failures/NAME.log first thing, then exits 1; with
  @HOST only on that node); SPARK_TEST_SHARDS (4),
  SPARK_TEST_SHARD_DELAY (0.1 s per shard), SPARK_TEST_IB_DOWN=1.
"""

from __future__ import annotations

import argparse
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

from vllm import __version__
from vllm.standin import nccl

FAILURE_LOGS = Path("/usr/share/spark-test/failures")


def ts() -> str:
    return time.strftime("%m-%d %H:%M:%S")


def say(line: str) -> None:
    print(line, flush=True)


def api(where: str, msg: str) -> None:
    say(f"(APIServer pid={os.getpid()}) INFO {ts()} [{where}] {msg}")


def engine(msg: str) -> None:
    say(f"(EngineCore_DP0 pid={os.getpid()}) {msg}")


def hang(line: str = "") -> None:
    if line:
        say(line)
    while True:
        time.sleep(3600)


def serve(args: argparse.Namespace) -> int:
    # As PID 1 of a container Python gets no default SIGTERM action: `docker stop` must not wait.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    served = (args.served_model_name or [args.model])[0]
    world = args.tensor_parallel_size * args.pipeline_parallel_size
    api("api_server.py:1805", f"vLLM API server version {__version__}")
    api(
        "utils.py:328",
        # As the real one, a given --api-key is echoed in the clear.
        f"non-default args: {{'model': '{args.model}', "
        + (f"'api_key': {[args.api_key]!r}, " if args.api_key else "")
        + f"'tensor_parallel_size': {args.tensor_parallel_size}, "
        f"'pipeline_parallel_size': {args.pipeline_parallel_size}}}",
    )
    fail = os.environ.get("SPARK_TEST_FAIL", "")
    if fail.startswith("log:"):
        _failure_log(fail[4:])
    if args.nnodes > 1:
        _native(args, world, fail)
    elif args.distributed_executor_backend == "ray":
        from vllm.standin import ray_executor

        code = ray_executor.run(world, hang_in_init=fail == "nccl_hang")
        if code:
            return code
    _failures(fail)
    _load_shards()
    return _serve_http(args.port, served, args.model, args.max_model_len or 4096)


def _native(args: argparse.Namespace, world: int, fail: str) -> None:
    """Native executor: rank 0 accepts the other ranks on the master port (torch's TCP store)."""
    for line in nccl.init_start(args.node_rank, world):
        say(line)
    if fail == "nccl_hang":
        hang()
    if args.node_rank == 0:
        joined: set[str] = set()
        server = socket.create_server(("", args.master_port), reuse_port=True)

        def accept() -> None:
            while True:
                conn, _ = server.accept()
                with conn:
                    words = conn.makefile().readline().split()
                    if len(words) == 2 and words[0] == "RANK":
                        joined.add(words[1])
                        conn.sendall(b"OK\n")

        threading.Thread(target=accept, daemon=True).start()
        while len(joined) < args.nnodes - 1:
            time.sleep(0.2)
    else:
        while True:
            try:
                with socket.create_connection((args.master_addr, args.master_port), timeout=2) as conn:
                    conn.sendall(f"RANK {args.node_rank}\n".encode())
                    if conn.makefile().readline().strip() == "OK":
                        break
            except OSError:
                pass
            time.sleep(1)
    say(nccl.init_complete(args.node_rank, world))
    if args.headless:
        hang(
            f"(EngineCore_DP0 pid={os.getpid()}) INFO {ts()} [core.py:93] Headless worker rank {args.node_rank} ready"
        )


def _failures(fail: str) -> None:
    pid = os.getpid()
    if fail == "oom":
        say(
            f"(EngineCore_DP0 pid={pid}) ERROR {ts()} [core.py:708] torch.OutOfMemoryError: CUDA out of memory. "
            "Tried to allocate 28.44 GiB. GPU 0 has a total capacity of 119.70 GiB of which 1.38 GiB is free."
        )
        sys.exit(1)
    if fail == "crash":
        say(f"(EngineCore_DP0 pid={pid}) ERROR {ts()} [core.py:708] EngineCore failed to start.")
        say("RuntimeError: Engine core initialization failed. See root cause above. Failed core proc(s): {}")
        sys.exit(1)


def _failure_log(what: str) -> None:
    """`log:NAME[@HOST]`: a real failure's lines (tests/data/failures/NAME.log, copied into the
    image) as the program printed them, then exit 1, before anything else; with @HOST only on that
    node (its hostname), so one node of a cluster fails."""
    name, _, host = what.partition("@")
    if host and host != socket.gethostname():
        return
    path = FAILURE_LOGS / f"{name}.log"
    if "/" in name or not path.is_file():
        say(f"cat: can't open '{path}': No such file or directory")
        sys.exit(1)
    with open(path, encoding="utf-8", errors="replace") as fh:
        for line in fh:
            say(line.rstrip("\n"))
    sys.exit(1)


def _load_shards() -> None:
    shards = int(os.environ.get("SPARK_TEST_SHARDS") or 4)
    delay = float(os.environ.get("SPARK_TEST_SHARD_DELAY") or 0.1)
    for i in range(shards + 1):
        pct = i * 100 // shards
        engine(
            f"Loading safetensors checkpoint shards: {pct:3d}% Completed | {i}/{shards} [00:0{i}<00:00,  1.20it/s]"
        )
        if i < shards:
            time.sleep(delay)
    engine(f"INFO {ts()} [default_loader.py:267] Loading weights took 0.52 seconds")


def _serve_http(port: int, served: str, model: str, max_model_len: int) -> int:
    pid = os.getpid()
    say(
        f"(APIServer pid={pid}) INFO {ts()} [api_server.py:1900] Starting vLLM API server 0 on http://0.0.0.0:{port}"
    )
    say(f"(APIServer pid={pid}) INFO:     Started server process [{pid}]")
    say(f"(APIServer pid={pid}) INFO:     Waiting for application startup.")
    code = "import sys, vllm_http; vllm_http.serve(int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]))"
    http = subprocess.Popen(
        [sys.executable, "-c", code, str(port), served, model, __version__, str(max_model_len)]
    )
    while True:  # the socket is bound before startup completes, as vLLM binds it itself
        if http.poll() is not None:
            say(
                f"(APIServer pid={pid}) ERROR {ts()} [api_server.py:1900] OSError: could not serve on port {port}"
            )
            return 1
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            time.sleep(0.05)
    say(f"(APIServer pid={pid}) INFO:     Application startup complete.")
    if os.environ.get("SPARK_TEST_LEGACY_UVICORN") == "1":
        say(
            f"(APIServer pid={pid}) INFO:     Uvicorn running on http://0.0.0.0:{port} (Press CTRL+C to quit)"
        )
    hang()
    return 0
