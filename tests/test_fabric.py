"""`check --fabric`: real TCP and real iperf3 between namespace nodes, perftest's stand-in where RDMA
would be needed, verdicts against the field bands, and nothing left running or listening."""

import json
import os
import socket
import subprocess
from pathlib import Path

import pytest

from spark_tui.parsers.perftest import ib_write_bw_gbps, iperf3_gbps
from tests.cluster import cluster as tc

DATA = Path(__file__).parent / "data" / "fabric"


def test_perftest_report_in_mb_per_second_gives_the_last_size_in_gbps():
    text = (DATA / "ib_read_bw-mb-sec-all-sizes-ucx8851.txt").read_text()
    assert ib_write_bw_gbps(text) == pytest.approx(38.95 * 8e-3)


def test_perftest_stand_in_layout_and_hostile_text():
    standin = Path(__file__).parent / "cluster" / "hostbin" / "ib_write_bw"
    body = standin.read_text()
    report = body[body.index(" WARNING: BW peak") : body.index('"""\n)')]
    report = report.replace("{float(rate):.2f}", "97.30").replace("{iters}", "1").replace("{dev}", "x")
    assert ib_write_bw_gbps(report) == pytest.approx(97.3)
    for hostile in ("", "#bytes #iterations", "BW average[Gb/sec]\n 1 2 x y", "\x1b[2J²³ 1 1 1 1"):
        assert ib_write_bw_gbps(hostile) is None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_iperf3_json_from_the_real_program_on_loopback():
    port = str(_free_port())
    server = subprocess.Popen(
        ["iperf3", "-s", "-1", "-B", "127.0.0.1", "-p", port], stdout=subprocess.DEVNULL
    )
    try:
        for _ in range(50):
            out = subprocess.run(
                ["iperf3", "-c", "127.0.0.1", "-p", port, "-t", "1", "-J"], capture_output=True, text=True
            )
            if "refused" not in out.stdout:
                break
        gbps, error = iperf3_gbps(out.stdout)
        assert gbps is not None and gbps > 0.1 and error == ""
    finally:
        server.kill()
        server.wait()
    refused = subprocess.run(["iperf3", "-c", "127.0.0.1", "-p", port, "-J"], capture_output=True, text=True)
    gbps, error = iperf3_gbps(refused.stdout)
    assert gbps is None and "connect" in error
    assert iperf3_gbps("not json") == (None, "") and iperf3_gbps("[1]") == (None, "")
    assert iperf3_gbps('{"end": {"sum_received": {"bits_per_second": "fast"}}}')[0] is None


# --- on the namespace test cluster ---------------------------------------------------------


def _fabric(run_cli, path, *flags):
    code, out, err = run_cli("check", "--cluster", str(path), "--fabric", "--json", *flags)
    rows = [r for r in json.loads(out)["results"] if r["id"].startswith("fabric.")]
    return code, rows


def _links(rows):
    return [r for r in rows if r["id"] == "fabric.link"]


def _nothing_left(cluster, nodes):
    """No fabric program in the nodes' namespaces, nothing listening on any node but sshd."""
    ours = {os.readlink(f"/proc/{n.holder_pid}/ns/net") for n in nodes}
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if os.readlink(f"/proc/{pid}/ns/net") not in ours:
                continue  # another test run's cluster on this machine, or the host
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        assert "spark-tui-fabric" not in cmd and "iperf3 -s" not in cmd and "ib_write_bw" not in cmd, cmd
    for node in nodes:
        listening = {
            int(line.split()[1].rsplit(":", 1)[1], 16)
            for line in Path(f"/proc/{node.holder_pid}/net/tcp").read_text().splitlines()[1:]
            if line.split()[3] == "0A"
        }
        assert listening <= {22}, (node.name, listening)


@pytest.mark.cluster
def test_builtin_tcp_measures_head_to_worker_and_leaves_nothing(cluster, tmp_path, run_cli):
    path = cluster.cluster_file(2, tmp_path / "two.yaml")
    code, rows = _fabric(run_cli, path, "--fabric-tool", "tcp", "--fabric-seconds", "1")
    (link,) = _links(rows)
    assert link["node"] == "spark-1->spark-2" and link["values"]["tool"] == "tcp"
    assert "built-in TCP" in link["message"] and link["values"]["gbps"] > 0.05
    assert link["values"]["from"] == f"spark-1 {cluster.nodes[0].ip}"
    assert link["values"]["to"] == f"spark-2 {cluster.nodes[1].ip}"
    # The test bed has no twin: said, not silently ignored.
    assert any(r["id"] == "fabric.twin" and "enP2p1s0f1np1" in r["message"] for r in rows)
    # veth reports 10000 Mb/s: below a Spark port's 200G, named per node.
    ports = [r for r in rows if r["id"] == "fabric.port"]
    assert {r["node"] for r in ports} == {"spark-1", "spark-2"} and all(r["status"] == "warn" for r in ports)
    _nothing_left(cluster, cluster.nodes[:2])


@pytest.mark.cluster
def test_auto_takes_iperf3_where_both_nodes_have_it(cluster, tmp_path, run_cli):
    path = cluster.cluster_file(2, tmp_path / "two.yaml")
    code, rows = _fabric(run_cli, path, "--fabric-seconds", "1")
    (link,) = _links(rows)
    assert link["values"]["tool"] == "iperf3" and "by iperf3" in link["message"], rows
    assert link["values"]["gbps"] > 0.05
    _nothing_left(cluster, cluster.nodes[:2])


@pytest.mark.cluster
def test_a_slow_link_is_judged_and_named(cluster, tmp_path, run_cli):
    path = cluster.cluster_file(2, tmp_path / "two.yaml")
    cluster.rate_limit(cluster.nodes[1], "40mbit")
    code, rows = _fabric(run_cli, path, "--fabric-tool", "tcp", "--fabric-seconds", "1")
    (link,) = _links(rows)
    assert link["values"]["gbps"] < 0.1 and link["status"] == "warn"
    assert (
        "degraded-initialisation level" in link["message"] and "confirm with ib_write_bw" in link["message"]
    )
    assert "PR #108" in link["message"]


@pytest.fixture
def twins(cluster):
    """Both nodes with the port's second twin and perftest's stand-in, as a Spark with perftest."""
    nodes = cluster.nodes[:2]
    for node in nodes:
        cluster.add_twin(node)
        cluster.install_tool(node, "ib_write_bw")
    try:
        yield nodes
    finally:
        for node in nodes:
            cluster.remove_twin(node)
            cluster.remove_tool(node, "ib_write_bw")
            cluster.set_standin(node, IB_WRITE_BW_GBPS="", IB_WRITE_BW_GBPS_roceP2p1s0f1="")


@pytest.mark.cluster
def test_rdma_per_twin_healthy_and_one_twin_slow(cluster, tmp_path, run_cli, twins):
    path = cluster.cluster_file(2, tmp_path / "two.yaml")
    for node in twins:
        cluster.set_standin(node, IB_WRITE_BW_GBPS_roceP2p1s0f1="48.20")
    code, rows = _fabric(run_cli, path, "--fabric-seconds", "1")
    links = {r["values"]["interface"]: r for r in _links(rows)}
    assert set(links) == {"enp1s0f1np1", "enP2p1s0f1np1"}
    first, twin = links["enp1s0f1np1"], links["enP2p1s0f1np1"]
    assert first["status"] == "pass" and first["values"]["gbps"] == pytest.approx(111.7)
    assert "ib_write_bw (perftest)" in first["message"]
    assert twin["status"] == "warn" and twin["values"]["gbps"] == pytest.approx(48.2)
    assert twin["values"]["to"] == f"spark-2 {tc.TWIN_SUBNET}.12"
    (pair,) = [r for r in rows if r["id"] == "fabric.twins"]
    assert pair["status"] == "warn" and "enP2p1s0f1np1 carries 48.2 Gb/s" in pair["message"]
    _nothing_left(cluster, twins)


@pytest.mark.cluster
def test_rdma_at_the_degraded_init_level_fails(cluster, tmp_path, run_cli, twins):
    path = cluster.cluster_file(2, tmp_path / "two.yaml")
    for node in twins:
        cluster.set_standin(node, IB_WRITE_BW_GBPS="13.1")
    code, rows = _fabric(run_cli, path, "--fabric-seconds", "1")
    links = _links(rows)
    assert code == 1 and len(links) == 2, rows
    assert all(r["status"] == "fail" and "degraded-initialisation" in r["message"] for r in links), links
    assert all("reboot both nodes" in r["fix"] for r in links)
    (pair,) = [r for r in rows if r["id"] == "fabric.twins"]
    assert pair["status"] == "pass"


@pytest.mark.cluster
def test_a_tool_asked_for_but_missing_and_the_time_limit(cluster, tmp_path, run_cli, twins):
    path = cluster.cluster_file(2, tmp_path / "two.yaml")
    cluster.remove_tool(twins[1], "ib_write_bw")
    code, rows = _fabric(run_cli, path, "--fabric-tool", "ib_write_bw")
    assert all(r["status"] == "skipped" for r in _links(rows))
    assert any("fabric_tool ib_write_bw: no ib_write_bw on spark-2" in r["message"] for r in _links(rows)), (
        rows
    )
    # Two twins at 3 s each (and 1 s to spare) do not fit in 6.5 s: the second is skipped, saying why.
    cluster.install_tool(twins[1], "ib_write_bw")
    code, rows = _fabric(run_cli, path, "--fabric-seconds", "3", "--fabric-timeout", "6.5")
    statuses = [(r["status"], r["message"]) for r in _links(rows)]
    assert statuses[0][0] == "pass" and statuses[1][0] == "skipped", statuses
    assert "fabric_timeout (6.5 s) reached" in statuses[1][1]


@pytest.mark.cluster
def test_one_node_has_no_link_to_measure(cluster, tmp_path, run_cli):
    path = cluster.cluster_file(1, tmp_path / "one.yaml")
    code, rows = _fabric(run_cli, path)
    assert [(r["id"], r["status"]) for r in rows] == [("fabric.link", "skipped")]
    assert "one node" in rows[0]["message"]


@pytest.mark.cluster
def test_report_with_fabric_has_the_rows(cluster, tmp_path, run_cli):
    path = cluster.cluster_file(2, tmp_path / "two.yaml")
    out = tmp_path / "report.md"
    code, _, err = run_cli("report", "--cluster", str(path), "--out", str(out), "--fabric")
    text = out.read_text()
    assert code == 0, err
    assert "fabric.link" in text and "by iperf3" in text
    code, _, _ = run_cli("report", "--cluster", str(path), "--out", str(out))
    assert "fabric.link" not in out.read_text()


def test_the_fabric_record_is_read_as_hostile_input(tmp_path):
    from spark_tui.core.fabric import fabric_record

    env = {"XDG_STATE_HOME": str(tmp_path)}
    rows = [{"sender": "a", "receiver": "b", "netdev": "enp1s0f1np1", "gbps": 97.3, "tool": "iperf3"}]
    fabric_record.save("c", rows, env)
    got = fabric_record.last_measured("c", env)
    assert got[("b", "enp1s0f1np1")].startswith("measured 97.3 Gb/s by iperf3 with a, ")
    assert oct(fabric_record.record_path("c", env).stat().st_mode & 0o777) == "0o600"
    for bad in ("", "[]", '{"links": 3}', '{"links": [1, {"sender": 1}, {"gbps": true}]}', "\x00\xff"):
        fabric_record.record_path("c", env).write_text(bad)
        assert fabric_record.last_measured("c", env) == {}
