"""`status` once the cluster serves, on the namespace test cluster: the head's /metrics asked
through its connection, every node's heat, clock and links from its own programs and counters,
and the signals named with their node."""

import json

import pytest

from tests.cluster import cluster as tc

pytestmark = pytest.mark.cluster


def test_status_serving_view_names_a_refused_metrics_and_a_slowed_node(cluster, tmp_path, run_cli):
    """/metrics answers 404 (the head's server refuses it) and the log has no stat line: one line
    says so and the figures are absent, never 0; the worker's GPU is thermally slowed."""
    path = cluster.cluster_file(2, tmp_path / "c2.yaml")
    env = [
        "-e",
        "SPARK_TEST_SHARD_DELAY=0.02",
        "-e",
        "SPARK_TEST_METRICS=404",
        "-e",
        "SPARK_TEST_STAT_INTERVAL=3600",
    ]
    code, out, _ = run_cli("up", "--cluster", path, *tc.SANDBOX_FLAGS, *env)
    assert code == 0, out
    head, worker = cluster.nodes[:2]
    cluster.set_standin(worker, SMI_THROTTLE="thermal")
    try:
        code, out, _ = run_cli("status", "--cluster", path, *tc.SANDBOX_FLAGS, *env)
        assert "READY" in out, out
        assert "serving figures from nothing readable" in out
        assert f"  /metrics on {head.ip}:8000: answered HTTP 404 not found" in out
        assert "  decode                   not exposed" not in out  # not read is not "not exposed"
        assert f"  {head.name:<10} 46°C 11.2 W SM 2405 MHz" in out
        assert f"  {worker.name:<10} 46°C 11.2 W SM 1113 MHz SLOWED: thermal slowdown" in out
        assert f"SIGNAL WARN {worker.name} GPU 0 clocks slowed: thermal slowdown" in out
        assert f"{tc.NETDEV} " in out.split(f"  {head.name:<10} 46°C", 1)[1].splitlines()[0]
        code, out, _ = run_cli("status", "--cluster", path, *tc.SANDBOX_FLAGS, *env, "--json")
        view = json.loads(out)["serving_view"]
        assert view["origin"] == "none" and "answered HTTP 404" in view["problem"]
        assert view["figures"] == {}
        assert view["nodes"][worker.name]["gpus"][0]["active"] == ["thermal slowdown"]
        assert view["nodes"][head.name]["gpus"][0]["unsupported"] == [
            "clocks_event_reasons.hw_power_brake_slowdown"
        ]
        links = {x["name"]: x for x in view["nodes"][head.name]["links"]}
        assert links[tc.NETDEV]["rx_bytes_s"] is not None  # two looks: a rate from the node's counters
        assert [s["id"] for s in view["signals"]] == ["throttling"]
        report = tmp_path / "report.md"
        code, _, _ = run_cli("report", "--cluster", path, *tc.SANDBOX_FLAGS, *env, "--out", str(report))
        text = report.read_text()
        assert code == 0 and "serving figures from nothing readable" in text
        assert f"SIGNAL WARN {worker.name} GPU 0 clocks slowed: thermal slowdown" in text
    finally:
        cluster.set_standin(worker, SMI_THROTTLE="")


def test_watch_scrapes_through_the_head_connection_and_names_an_idle_twin(cluster, tmp_path):
    """The stand-in vLLM server in the head's network namespace, scraped through the head's SSH
    connection while streaming requests run; the head's second twin is up but carries nothing."""
    import asyncio
    import os
    import subprocess
    import sys
    import threading
    import time
    from pathlib import Path

    import httpx

    from spark_tui.core.node.nodes import Nodes
    from spark_tui.core.serving.serving_watch import ServingWatch
    from spark_tui.settings.resolve import Inputs, resolve

    head, worker = cluster.nodes[:2]
    standin = Path(__file__).parent / "cluster" / "standin" / "vllm_http.py"
    argv = [
        sys.executable,
        str(standin),
        "--port",
        "8000",
        "--host",
        head.ip,
        "--served",
        "m",
        "--version",
        "0.11.0",
    ]
    env = {**os.environ, "SPARK_TEST_TOKENS_PER_S": "300", "SPARK_TEST_FIRST_TOKEN_S": "0.01"}
    server = subprocess.Popen(
        ["nsenter", "-t", str(head.holder_pid), "--net", *argv], env=env, stdout=subprocess.DEVNULL
    )
    for _ in range(100):  # listening before the first look, so the second one has a rate
        try:
            if httpx.get(f"http://{head.ip}:8000/health", timeout=1).status_code == 200:
                break
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    cluster.add_twin(head)
    config = resolve(
        Inputs(cluster_file=cluster.cluster_file(2, tmp_path / "c2.yaml"), user_config="", environ={})
    )
    stop = threading.Event()

    def requests() -> None:
        body = {"model": "m", "prompt": "one two three", "max_tokens": 30, "stream": True}
        with httpx.Client(base_url=f"http://{head.ip}:8000", timeout=10) as client:
            while not stop.is_set():
                try:
                    with client.stream("POST", "/v1/completions", json=body) as resp:
                        for _ in resp.iter_lines():
                            pass
                except httpx.HTTPError:
                    stop.wait(0.2)

    async def run():
        async with Nodes(config) as nodes:
            watch = ServingWatch(config, nodes)
            await watch.look()
            worker_thread = threading.Thread(target=requests, daemon=True)
            worker_thread.start()
            ping = ["ping", "-q", "-c", "400", "-i", "0.005", "-s", "30000", head.ip]
            await asyncio.to_thread(tc.run, worker.nsenter(*ping), False)
            look = await watch.look()
            stop.set()
            await watch.close()
            return look

    try:
        look = asyncio.run(run())
    finally:
        stop.set()
        server.kill()
        server.wait()
        cluster.remove_twin(head)
    f = look.figures
    assert f.origin == "metrics" and f.version == "0.11.0", f.problem
    assert f.get("decode_tps") and f.figures["decode_tps"].source.startswith(
        "rate(vllm:generation_tokens_total["
    )
    assert f.figures["kv_pct"].source == "vllm:kv_cache_usage_perc"
    assert f.get("ttft_p50") is not None and f.figures["itl_p95"].source.startswith(
        "vllm:inter_token_latency_seconds"
    )
    links = {x.name: x for x in look.loads[config.head.name].links}
    assert links[tc.NETDEV].twin == tc.TWIN_NETDEV and (links[tc.NETDEV].rx_bps or 0) > 1e6
    idle = [s for s in look.signals if s.id == "twin_idle"]
    assert idle and idle[0].node == config.head.name and tc.TWIN_NETDEV in idle[0].text


@pytest.mark.cluster
def test_status_reads_the_launched_containers_metrics_with_their_series(cluster, tmp_path, run_cli):
    """End to end: the launched stand-in vLLM (0.12.0, current names only) serves /metrics; while
    requests stream (spark-tui's load generator), `status --json` gives figures over its window,
    each with the series it came from."""
    import asyncio
    import threading

    from spark_tui.core.bench import loadgen

    path = cluster.cluster_file(2, tmp_path / "c2.yaml")
    # The data link measured before the launch: the panes and status set its traffic beside it.
    run_cli("check", "--cluster", path, "--fabric", "--fabric-tool", "tcp", "--fabric-seconds", "1")
    code, out, err = run_cli("up", "--cluster", path, *tc.SANDBOX_FLAGS)
    assert code == 0, err
    head = cluster.nodes[0]
    params = loadgen.Params(model="test/tiny-model", concurrency=(2,), duration=8.0, output_tokens=32)
    load = threading.Thread(target=lambda: asyncio.run(loadgen.run(f"http://{head.ip}:8000/v1", params)))
    try:
        load.start()
        code, out, _ = run_cli("status", "--cluster", path, "--json")
        view = json.loads(out)["serving_view"]
        assert view["origin"] == "metrics", view
        figures = view["figures"]
        assert figures["kv_pct"]["source"] == "vllm:kv_cache_usage_perc"
        assert figures["decode_tps"]["source"].startswith("rate(vllm:generation_tokens_total")
        assert figures["decode_tps"]["value"] > 0, figures["decode_tps"]
        assert figures["ttft_p50"]["source"].startswith("vllm:time_to_first_token_seconds_bucket over")
        assert figures["ttft_p50"]["value"] is not None, figures["ttft_p50"]
        code, out, _ = run_cli("status", "--cluster", path)
        head_line = next(x for x in out.splitlines() if x.startswith(f"  {head.name:<10} ") and "SM " in x)
        assert f"{tc.NETDEV} " in head_line and "(measured " in head_line, head_line
        assert "Gb/s by built-in TCP with spark-2" in head_line, head_line
    finally:
        load.join()
        run_cli("down", "--cluster", path, "--yes")
