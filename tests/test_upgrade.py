"""`spark-tui upgrade IMAGE` end to end on the namespace test cluster: real SSH, real Docker
engines, the stand-in vLLM serving at a speed baked into each image (ENV
SPARK_TEST_TOKENS_PER_S / SPARK_TEST_FIRST_TOKEN_S, as a Dockerfile's ENV line would): a faster
candidate is kept, a slower one rolled back with its figures, one that fails its check or its
launch refused with the known-good serving, and Ctrl-C mid-way leaves the known-good running."""

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from spark_tui.core.bench_store import Store, upgrades
from tests.cluster import cluster as tc

pytestmark = pytest.mark.cluster

ROOT = Path(__file__).resolve().parent.parent
# The stand-in's default speed is 50 tokens/s per request: the known-good image (tc.IMAGE) serves so.
FAST = "spark-test/vllm:fast"  # 100 tokens/s: kept
SLOW = "spark-test/vllm:slow"  # 25 tokens/s, first token later: a regression, rolled back
CRASH = "spark-test/vllm:crash"  # `vllm serve` exits at start: refused at launch
BENCH = ["--concurrency", "1", "--prompt-tokens", "8", "--output-tokens", "12", "--requests", "3"]


def _derived(cluster, nodes, ref: str, **env: str) -> None:
    for node in nodes:
        cluster.import_image(node, ref, env=env)


def _running_image(cluster, node) -> str:
    out = cluster.docker(node, "ps", "--format", "{{.Image}}").stdout.split()
    return out[0] if len(out) == 1 else f"{len(out)} containers: {out}"


def _serves(node) -> bool:
    try:
        return httpx.get(f"http://{node.ip}:8000/v1/models", timeout=3).status_code == 200
    except httpx.HTTPError:
        return False


def _up(run_cli, path: str) -> None:
    code, out, err = run_cli("up", "--cluster", path, *tc.SANDBOX_FLAGS)
    assert code == 0, out + err


def _record(db: Path):
    store = Store(db)
    try:
        return upgrades(store)[0], {r.id: r for r in store.history()}
    finally:
        store.close()


def test_a_faster_candidate_is_synced_checked_and_kept(cluster, tmp_path, run_cli):
    """Two nodes: the candidate exists only on the head; upgrade copies it to the worker, checks,
    swaps and keeps it; the outcome and both bench runs are in the database."""
    head, worker = cluster.nodes[:2]
    _derived(cluster, [head], FAST, SPARK_TEST_TOKENS_PER_S="100")
    path = cluster.cluster_file(2, tmp_path / "c2.yaml")
    _up(run_cli, path)
    db = tmp_path / "bench.sqlite"
    code, out, err = run_cli("upgrade", FAST, "--cluster", path, *tc.SANDBOX_FLAGS, *BENCH, "--db", str(db))
    assert code == 0, out + err
    assert f"KEPT: {FAST} served as well as {tc.IMAGE}" in out
    assert "upgrade    sync       done" in out and "upgrade    check      done" in out
    assert f"{FAST}: verified" in out  # the worker got it node to node
    assert _running_image(cluster, head) == FAST and _running_image(cluster, worker) == FAST
    assert _serves(head)
    up, runs = _record(db)
    assert up.verdict == "kept" and up.candidate == FAST and up.known_good == tc.IMAGE
    before, after = runs[up.before_run], runs[up.after_run]
    assert before.provenance["image"] == tc.IMAGE and after.provenance["image"] == FAST
    assert after.levels[0]["request_tps_p50"] > before.levels[0]["request_tps_p50"] * 1.3


def test_a_slower_candidate_is_rolled_back_with_its_figures(cluster, tmp_path, run_cli):
    (head,) = cluster.nodes[:1]
    _derived(cluster, [head], SLOW, SPARK_TEST_TOKENS_PER_S="25", SPARK_TEST_FIRST_TOKEN_S="0.2")
    path = cluster.cluster_file(1, tmp_path / "c1.yaml")
    _up(run_cli, path)
    db = tmp_path / "bench.sqlite"
    code, out, err = run_cli("upgrade", SLOW, "--cluster", path, *tc.SANDBOX_FLAGS, *BENCH, "--db", str(db))
    assert code == 1, out + err
    line = next(line for line in out.splitlines() if line.startswith("ROLLED BACK: "))
    assert f"{SLOW} regressed against {tc.IMAGE}: c=1: decode " in line
    assert "limit -10%" in line and "TTFT p95" in line and "limit +20%" in line
    assert f"{tc.IMAGE} relaunched and serving" in line
    assert _running_image(cluster, head) == tc.IMAGE and _serves(head)
    up, runs = _record(db)
    assert up.verdict == "rolled back" and "decode" in up.reason
    assert runs[up.after_run].provenance["image"] == SLOW
    # The figures in the reason are the recorded runs' own.
    before = runs[up.before_run].levels[0]["request_tps_p50"]
    after = runs[up.after_run].levels[0]["request_tps_p50"]
    assert f"decode {before:.1f} -> {after:.1f} tok/s" in line


def test_a_candidate_failing_its_check_is_refused_untouched(cluster, tmp_path, run_cli):
    """The image without Ray, for executor ray (two nodes): refused before the teardown; the
    known-good container is the very same one, never restarted."""
    head, worker = cluster.nodes[:2]
    noray = tc.IMAGES["noray"].ref
    for node in (head, worker):
        cluster.import_image(node, noray, profile="noray")
    path = cluster.cluster_file(2, tmp_path / "c2.yaml")
    _up(run_cli, path)
    before = cluster.docker(head, "ps", "-q").stdout.split()
    db = tmp_path / "bench.sqlite"
    code, out, err = run_cli("upgrade", noray, "--cluster", path, *tc.SANDBOX_FLAGS, *BENCH, "--db", str(db))
    assert code == 1, out + err
    assert f"REFUSED: {noray} failed its check: cluster image.ray: {noray} has no Ray" in out
    assert "upgrade    teardown" not in out
    assert cluster.docker(head, "ps", "-q").stdout.split() == before and _serves(head)
    up, _ = _record(db)
    assert up.verdict == "refused" and up.after_run is None and up.before_run is not None


def test_a_candidate_failing_its_launch_is_refused_and_the_known_good_relaunched(cluster, tmp_path, run_cli):
    (head,) = cluster.nodes[:1]
    _derived(cluster, [head], CRASH, SPARK_TEST_FAIL="crash")
    path = cluster.cluster_file(1, tmp_path / "c1.yaml")
    _up(run_cli, path)
    db = tmp_path / "bench.sqlite"
    code, out, err = run_cli("upgrade", CRASH, "--cluster", path, *tc.SANDBOX_FLAGS, *BENCH, "--db", str(db))
    assert code == 1, out + err
    assert "FAILED: " in out  # the launch's own cause, from the candidate's log
    assert f"REFUSED: {CRASH} failed to launch" in out and f"{tc.IMAGE} relaunched and serving" in out
    assert _running_image(cluster, head) == tc.IMAGE and _serves(head)
    up, _ = _record(db)
    assert up.verdict == "refused" and up.after_run is None


def test_ctrl_c_mid_way_leaves_the_known_good_running(cluster, tmp_path, clean_env):
    """SIGINT (Ctrl-C) while the candidate loads: its containers go, the known-good comes back."""
    (head,) = cluster.nodes[:1]
    # Slow shards: the candidate is still loading when the signal comes.
    _derived(cluster, [head], FAST, SPARK_TEST_TOKENS_PER_S="100", SPARK_TEST_SHARD_DELAY="5")
    path = cluster.cluster_file(1, tmp_path / "c1.yaml")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    up = subprocess.run(
        [sys.executable, "-m", "spark_tui", "up", "--cluster", path, *tc.SANDBOX_FLAGS],
        env=env,
        capture_output=True,
        text=True,
    )
    assert up.returncode == 0, up.stdout + up.stderr
    db = tmp_path / "bench.sqlite"
    argv = [sys.executable, "-m", "spark_tui", "upgrade", FAST, "--cluster", path, *tc.SANDBOX_FLAGS]
    proc = subprocess.Popen(
        [*argv, *BENCH, "--db", str(db)], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    assert proc.stdout is not None
    seen = []
    for line in proc.stdout:
        seen.append(line)
        if "upgrade    launch     started" in line:
            time.sleep(1.0)  # the candidate's container is up and loading
            proc.send_signal(signal.SIGINT)
            break
    rest, _ = proc.communicate(timeout=180)
    out = "".join(seen) + rest
    assert proc.returncode == 130, out
    assert "INTERRUPTED: interrupted; " + f"{tc.IMAGE} relaunched and serving" in out
    assert _running_image(cluster, head) == tc.IMAGE and _serves(head)
    with sqlite3.connect(db) as conn:
        verdict, details = conn.execute("SELECT verdict, details FROM upgrades").fetchone()
    assert verdict == "interrupted" and json.loads(details)["serving"] == tc.IMAGE


def test_a_corrupt_database_is_one_line_exit_2(cluster, tmp_path, run_cli):
    path = cluster.cluster_file(1, tmp_path / "c1.yaml")
    db = tmp_path / "bench.sqlite"
    db.write_bytes(b"this is not a database" * 100)
    code, out, err = run_cli("upgrade", FAST, "--cluster", path, "--db", str(db))
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and "file is not a database" in err and str(db) in err
