"""`spark-tui bench`: the load generator against the stand-in vLLM server and against servers that
misbehave (all on loopback), the results store (transactions, a corrupt or locked file) and the
comparison by provenance."""

import asyncio
import json
import socket
import sqlite3
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from spark_tui.core import bench_run
from spark_tui.core.bench import loadgen
from spark_tui.core.bench.bench_store import Store, StoreError, provenance_diff

HERE = Path(__file__).parent


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def standin():
    """The stand-in vLLM server in its own process on loopback: 200 tokens/s, first token at 50 ms."""
    from bench.loadgen import start_standin

    url, proc = start_standin(SPARK_TEST_TOKENS_PER_S="200", SPARK_TEST_FIRST_TOKEN_S="0.05")
    yield url
    proc.kill()
    proc.wait()


def test_levels_measured_against_the_standin(standin):
    params = loadgen.Params(
        model="m", concurrency=(1, 2), prompt_tokens=16, output_tokens=20, duration=None, requests=4
    )
    levels = asyncio.run(loadgen.run(standin, params))
    assert [lv.concurrency for lv in levels] == [1, 2]
    for lv in levels:
        assert lv.requests == 4 and lv.errors == {}
        assert lv.ttft_p50 is not None and lv.ttft_p50 >= 0.05
        assert lv.ttft_p95 >= lv.ttft_p50 and lv.itl_p95 >= lv.itl_p50
        assert lv.output_tps > 0 and lv.input_tps > 0
        # 200 tokens/s per request: one request's decode rate is of that order, never far above.
        assert 20 < lv.request_tps_p50 < 400
        assert lv.chunks >= 4 * 20


def test_a_wrong_model_name_is_an_http_error_counted(standin):
    params = loadgen.Params(model="not-served", concurrency=(1,), requests=2, duration=None, output_tokens=4)
    (level,) = asyncio.run(loadgen.run(standin, params))
    assert level.errors == {"http 404": 2} and level.output_tps == 0 and level.ttft_p50 is None


class _Hostile(BaseHTTPRequestHandler):
    mode = ""

    def log_message(self, *a):
        pass

    def do_POST(self):
        self.rfile.read(int(self.headers.get("content-length") or 0))
        if self.mode == "500":
            self.send_response(500)
            self.end_headers()
            return
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.end_headers()
        if self.mode == "malformed":
            self.wfile.write(b'data: {"choices": [{"text": "a"}]}\n\ndata: {not json\n\n')
        elif self.mode == "markup":  # text a terminal could misread is still just tokens
            for t in ("[bold]", "\x1b[2J", "[/x]"):
                self.wfile.write(b"data: " + json.dumps({"choices": [{"text": t}]}).encode() + b"\n\n")
            self.wfile.write(b"data: [DONE]\n\n")
        elif self.mode == "stall":
            self.wfile.write(b'data: {"choices": [{"text": "a"}]}\n\n')
            self.wfile.flush()
            time.sleep(3)
        elif self.mode == "cut":
            self.wfile.write(b'data: {"choices": [{"text": "a"}]}\n\n')
        self.wfile.flush()


@pytest.mark.parametrize(
    "mode,kind",
    [("500", "http 500"), ("malformed", "malformed"), ("stall", "stalled"), ("cut", "cut"), ("markup", None)],
)
def test_a_misbehaving_endpoint_gives_errors_of_a_kind_never_a_crash(mode, kind):
    handler = type("H", (_Hostile,), {"mode": mode})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        params = loadgen.Params(model="m", concurrency=(2,), requests=2, duration=None, stall=1.0)
        start = time.monotonic()
        (level,) = asyncio.run(loadgen.run(f"http://127.0.0.1:{server.server_port}/v1", params))
        assert time.monotonic() - start < 10
    finally:
        server.shutdown()
        server.server_close()
    if kind is None:
        assert level.errors == {} and level.requests == 2
    else:
        assert level.errors == {kind: 2}, level.errors


def test_an_endpoint_that_is_down_is_counted_and_the_run_ends():
    params = loadgen.Params(model="m", concurrency=(1,), requests=3, duration=None)
    (level,) = asyncio.run(loadgen.run(f"http://127.0.0.1:{_port()}/v1", params))
    assert level.errors == {"connect": 3}


# --- the store ----------------------------------------------------------------------------


def _prov(**over):
    base = {
        "image": "vllm:a",
        "image_id": "sha256:" + "a" * 64,
        "layers": ["l1"],
        "vllm": "0.12.0",
        "model": "org/model",
        "revision": "r1",
        "config_hash": "c1",
        "settings": {"image": "vllm:a"},
        "nodes": 2,
        "executor": "ray",
        "nccl": {"spark-1": "IB"},
    }
    return {**base, **over}


LEVEL = {"concurrency": 1, "output_tps": 50.0, "ttft_p95": 0.2, "itl_p95": 0.02, "errors": {}}
PARAMS = {"concurrency": [1], "prompt_tokens": 256, "output_tokens": 128}


def test_runs_are_compared_by_provenance(tmp_path):
    store = Store(tmp_path / "b.sqlite")
    first = store.add("spark-tui bench", _prov(), PARAMS, [LEVEL])
    second = store.add("spark-tui bench", _prov(), PARAMS, [{**LEVEL, "output_tps": 40.0}])
    upgraded = store.add(
        "spark-tui bench",
        _prov(image="vllm:b", image_id="sha256:" + "b" * 64, vllm="0.13.0", settings={"image": "vllm:b"}),
        PARAMS,
        [{**LEVEL, "output_tps": 30.0}],
    )
    other_load = store.add("spark-tui bench", _prov(), {**PARAMS, "output_tokens": 64}, [LEVEL])
    assert store.previous_same(second).id == first.id and store.previous_same(first) is None
    assert store.last_other_setup(upgraded).id == second.id
    assert store.previous_same(other_load) is None and store.last_other_setup(other_load) is None
    lines = bench_run.compare_lines(upgraded, second, "last run with another image or configuration")
    text = "\n".join(lines)
    assert "output tok/s 30.0 vs 40.0 (-25%)" in text
    assert "differs: vllm: 0.12.0 -> 0.13.0" in text and "settings.image: vllm:a -> vllm:b" in text
    assert ("image_id", "sha256:" + "a" * 64, "sha256:" + "b" * 64) in provenance_diff(
        second.provenance, upgraded.provenance
    )
    assert [r.id for r in store.history()] == [other_load.id, upgraded.id, second.id, first.id]


def test_a_corrupt_database_is_one_line_and_a_locked_one_loses_nothing(tmp_path, run_cli):
    bad = tmp_path / "bad.sqlite"
    bad.write_bytes(b"this is not a database, just some text " * 100)
    with pytest.raises(StoreError, match="not a database"):
        Store(bad)
    code, out, err = run_cli("bench", "--history", "--db", str(bad))
    assert code == 2 and err.count("\n") == 1 and str(bad) in err and "Traceback" not in err

    good = tmp_path / "good.sqlite"
    store = Store(good)
    store.add("spark-tui bench", _prov(), PARAMS, [LEVEL])
    holder = sqlite3.connect(good)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        with pytest.raises(StoreError, match="locked"):
            Store(good).add("spark-tui bench", _prov(), PARAMS, [LEVEL])
    finally:
        holder.rollback()
        holder.close()
    assert len(Store(good).history()) == 1  # the first run is whole, the refused one absent


def test_history_and_import_of_a_vllm_bench_result(tmp_path, run_cli):
    doc = json.loads((HERE / "data" / "bench" / "vllm-bench-serve-save-result.json").read_text())
    params, (level,) = bench_run.import_vllm_result(doc, "r.json")
    assert params == {"concurrency": [4], "prompt_tokens": 1024, "output_tokens": 112}
    assert level["output_tps"] == 41.93 and level["errors"] == {"failed": 1}
    assert level["ttft_p50"] == pytest.approx(0.45) and level["ttft_p95"] == pytest.approx(0.606)
    with pytest.raises(ValueError, match="`output_throughput` missing"):
        bench_run.import_vllm_result({**doc, "output_throughput": "fast"}, "r.json")
    code, out, err = run_cli("bench", "--history", "--db", str(tmp_path / "new.sqlite"))
    assert code == 0 and "no bench runs recorded yet" in out


@pytest.mark.parametrize(
    "argv,source",
    [
        (["--concurrency", "1,x"], "--concurrency"),
        (["--concurrency", "0"], "--concurrency"),
        (["--prompt-tokens", "0"], "--prompt-tokens"),
        (["--duration", "5", "--requests", "3"], "command line"),
        (["--requests", "many"], "command line"),
    ],
)
def test_bad_bench_flags_are_one_line(tmp_path, run_cli, argv, source):
    code, out, err = run_cli("bench", "--db", str(tmp_path / "b.sqlite"), *argv)
    assert code == 2 and err.startswith(f"spark-tui: error: {source}") and err.count("\n") == 1, err


# --- against a launched cluster -----------------------------------------------------------


@pytest.mark.cluster
def test_bench_a_launched_cluster_records_provenance_and_compares(cluster, tmp_path, run_cli):
    from tests.cluster import cluster as tc

    path = cluster.cluster_file(2, tmp_path / "two.yaml")
    db = str(tmp_path / "bench.sqlite")
    flags = ["--concurrency", "1,2", "--requests", "3", "--output-tokens", "8", "--prompt-tokens", "16"]
    code, out, err = run_cli("bench", "--cluster", path, "--db", db, *flags)
    assert code == 1 and "nothing serves" in err and err.count("\n") == 1, err  # not launched yet
    code, out, err = run_cli("up", "--cluster", path, *tc.SANDBOX_FLAGS)
    assert code == 0, err
    try:
        code, out, err = run_cli("bench", "--cluster", path, "--db", db, "--json", *flags)
        assert code == 0, err
        first = json.loads(out)
        prov = first["provenance"]
        assert prov["nodes"] == 2 and prov["executor"] == "ray" and prov["vllm"] == "0.12.0"
        assert (
            prov["image_id"].startswith("sha256:") and prov["layers"] and prov["model"] == "test/tiny-model"
        )
        assert set(prov["nccl"]) == {"spark-1", "spark-2"}
        levels = first["levels"]
        assert [lv["concurrency"] for lv in levels] == [1, 2]
        assert all(lv["requests"] == 3 and lv["errors"] == {} and lv["ttft_p50"] > 0 for lv in levels)
        code, out, err = run_cli("bench", "--cluster", path, "--db", db, "--compare", *flags)
        assert code == 0, err
        assert f"previous run, same setup: run {first['run']}" in out and "same image, configuration" in out
        assert "last run with another image or configuration: none recorded" in out
        code, out, _ = run_cli("bench", "--history", "--db", db)
        assert out.count("spark-tui bench") == 2
    finally:
        run_cli("down", "--cluster", path, "--yes")
