"""`spark-tui report` on the namespace test cluster: one file an operator can attach to an issue."""

import asyncio

import pytest

from tests.cluster import cluster as tc
from tests.test_launch import config_for, down, launch

pytestmark = pytest.mark.cluster
TOKEN = "hf_reportTOKEN1234567890"


def test_report_holds_the_cluster_story_masked_and_inert(cluster, tmp_path, run_cli):
    """Two nodes serving (with a token set), a third unreachable: every section is there, the
    unreachable node is said as such, the token appears nowhere, nothing from a node is live."""
    config = config_for(
        cluster,
        2,
        tmp_path,
        hf_token=TOKEN,
        env={"SPARK_TEST_SHARD_DELAY": "0.02", "NOTE": "\x1b]0;pwned\x07ok"},
    )
    ok, _, _ = asyncio.run(launch(config))
    assert ok
    third = cluster.nodes[2]
    cluster.stop_sshd(third)
    try:
        path = cluster.cluster_file(3, tmp_path / "c3.yaml")
        out = tmp_path / "report.md"
        code, printed, err = run_cli(
            "report",
            "--cluster",
            path,
            *tc.SANDBOX_FLAGS,
            "--hf-token",
            TOKEN,
            "--out",
            str(out),
            "--lines",
            "50",
            "-e",
            "SPARK_TEST_SHARD_DELAY=0.02",
            "-e",
            "NOTE=\x1b]0;pwned\x07ok",
        )
    finally:
        cluster.start_sshd(third)
        asyncio.run(down(config))
    assert code == 0, err
    assert printed.startswith(f"report written to {out}")
    text = out.read_text()
    for section in (
        "## Versions",
        "## Configuration",
        "## Check",
        "## Status",
        "## NCCL",
        "## Container logs",
    ):
        assert section in text, section
    head, worker = cluster.nodes[:2]
    assert f"| {third.name} | NO: " in text and f"### {third.name}: vllm_node" in text
    assert "(node unreachable: " in text
    assert f"Image {tc.IMAGE} (" in text and "vLLM 0.12.0 (python metadata), Ray 2.49.2" in text
    assert (
        f"- {worker.name}: NCCL: IB/RoCE (IB) on rocep1s0f1, roceP2p1s0f1 over {tc.NETDEV} {worker.ip}"
        in text
    )
    assert "Application startup complete." in text  # the head's log tail
    assert "[PASS] spark-1" in text and "hf_token" in text
    assert TOKEN not in text and "***" in text
    assert "\x1b" not in text and "\x07" not in text


def test_report_refuses_an_output_it_cannot_write(cluster, tmp_path, run_cli):
    path = cluster.cluster_file(2, tmp_path / "c2.yaml")
    code, _, err = run_cli("report", "--cluster", path, "--out", "/nonexistent/dir/report.md")
    assert code == 2 and err.strip() == "spark-tui: error: --out: cannot write in /nonexistent/dir"
