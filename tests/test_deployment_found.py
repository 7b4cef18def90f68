"""A `status` started later, in a fresh process that knows nothing of the `up` that launched (another
terminal, the operator's machine rebooted), finds the running deployment by its containers'
labels and shows it serving with its provenance (image, config hash, who launched it and when)
and its last bench, keyed by that image and configuration; so does a cockpit's serving view.
On the namespace test cluster."""

import asyncio
import datetime as dt
import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from spark_tui.core.bench.bench_store import Store
from spark_tui.core.cockpit import CockpitCore
from spark_tui.core.serving.deployment import bench_path
from spark_tui.settings.resolve import Inputs, resolve
from spark_tui.ui.screens.serving import figures_text
from tests.cluster import cluster as tc
from tests.helpers import ROOT

pytestmark = pytest.mark.cluster


def _fresh_status(path: str, *argv: str) -> tuple[int, str, str]:
    """`spark-tui status` as its own process, with this test's HOME (where the bench store is)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run(
        [sys.executable, "-m", "spark_tui", "status", "--cluster", path, *argv],
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )
    return proc.returncode, proc.stdout, proc.stderr


async def _cockpit_look(path: str):
    core = CockpitCore(resolve(Inputs(cluster_file=path, user_config="")))
    try:
        for node in core.config.nodes:
            await core.refresh(node.name)
        return await core.serving()
    finally:
        await core.close()


def test_a_fresh_status_finds_the_deployment_by_its_labels_with_its_last_bench(cluster, tmp_path, run_cli):
    path = cluster.cluster_file(2, tmp_path / "c2.yaml")
    flags = [*tc.SANDBOX_FLAGS, "-e", "SPARK_TEST_SHARD_DELAY=0.02"]
    code, out, err = run_cli("up", "--cluster", path, *flags)
    assert code == 0, err
    head = cluster.nodes[0]
    try:
        labels = json.loads(
            cluster.docker(head, "inspect", "-f", "{{json .Config.Labels}}", "vllm_node").stdout
        )
        image_id = cluster.docker(head, "inspect", "-f", "{{.Image}}", "vllm_node").stdout.strip()
        assert labels["spark-tui.launched-by"].endswith("@" + socket.gethostname()), labels
        launched = dt.datetime.strptime(labels["spark-tui.launched-at"], "%Y-%m-%dT%H:%M:%SZ")
        assert abs(dt.datetime.now(dt.UTC).replace(tzinfo=None) - launched) < dt.timedelta(minutes=10)

        # No bench yet: found all the same, and it says there is none (the database not created).
        code, out, err = _fresh_status(path, *flags, "--json")
        found = json.loads(out)["deployment"]
        assert found["head"] == head.name and found["nodes"] == [n.name for n in cluster.nodes[:2]], found
        assert found["image"] == tc.IMAGE and found["image_id"] == image_id
        assert found["config_hash"] == labels["spark-tui.config-hash"] and found["executor"] == "ray"
        assert (found["launched_by"], found["launched_at"]) == (
            labels["spark-tui.launched-by"],
            labels["spark-tui.launched-at"],
        )
        assert found["last_bench"] is None and found["bench_note"].startswith("no bench run recorded")
        assert not os.path.exists(bench_path())

        bench = ["--concurrency", "1", "--requests", "3", "--output-tokens", "8", "--prompt-tokens", "16"]
        code, out, err = run_cli("bench", "--cluster", path, *flags, *bench)
        assert code == 0, err
        store = Store(Path(bench_path()))
        (run,) = store.history()
        store.close()
        assert run.provenance["config_hash"] == labels["spark-tui.config-hash"]

        code, out, err = _fresh_status(path, *flags)
        assert "READY" in out, out + err
        assert (
            f"  deployment: image {tc.IMAGE} [{image_id[7:19]}], config-hash {labels['spark-tui.config-hash']}, "
            f"executor ray, launched by {labels['spark-tui.launched-by']} at {labels['spark-tui.launched-at']}, "
            f"on {cluster.nodes[0].name}, {cluster.nodes[1].name} (found by its labels)"
        ) in out, out
        level = run.levels[0]
        assert (
            f"  last bench: run {run.id} at " in out
            and f"c=1: {level['output_tps']:.1f} output tok/s, TTFT p95 {level['ttft_p95'] * 1000:.0f} ms"
            in out
        ), out
        code, out, err = _fresh_status(path, *flags, "--json")
        last = json.loads(out)["deployment"]["last_bench"]
        assert last["id"] == run.id and last["levels"][0]["output_tps"] == level["output_tps"], last
        assert last["levels"][0]["errors"] == 0

        # The cockpit, started now, finds it the same way: its serving view shows it first.
        look = asyncio.run(_cockpit_look(path))
        assert look is not None and look.deployment is not None
        assert look.deployment.config_hash == labels["spark-tui.config-hash"]
        assert look.deployment.last_bench is not None and look.deployment.last_bench["id"] == run.id
        shown = figures_text(look).plain.splitlines()
        assert shown[0].startswith(f"deployment: image {tc.IMAGE} [{image_id[7:19]}]"), shown
        assert shown[1].startswith(f"last bench: run {run.id} at "), shown
    finally:
        run_cli("down", "--cluster", path, "--yes")
