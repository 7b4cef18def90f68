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
    finally:
        cluster.set_standin(worker, SMI_THROTTLE="")
