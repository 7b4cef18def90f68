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
from pathlib import Path

import httpx
import pytest

from spark_tui.core.bench.bench_store import Store, upgrades
from tests.cluster import cluster as tc
from tests.test_image_facts import hf_cache

pytestmark = pytest.mark.cluster

ROOT = Path(__file__).resolve().parent.parent
# The stand-in's default speed is 50 tokens/s per request, first token after 50 ms: the
# known-good image (tc.IMAGE) serves so. The candidates differ by far more than the thresholds
# (decode -10%, TTFT p95 +20%), so a loaded machine's noise never decides a verdict.
FAST = "spark-test/vllm:fast"  # 200 tokens/s, first token after 10 ms (60 and 50 ms on two nodes): kept
SLOW = "spark-test/vllm:slow"  # 8 tokens/s, first token after 1.5 s: rolled back
CRASH = "spark-test/vllm:crash"  # `vllm serve` crashes at start: refused at launch
STEADY = "spark-test/vllm:steady"  # 20 tokens/s, first token after 1 s: the two-node known-good
LOADING = "spark-test/vllm:loading"  # its shards load slowly: still loading when Ctrl-C comes
OLD = tc.IMAGES["ngc-25.10"].ref  # vLLM 0.10.2, which does not know the model: refused at check
NEW_ARCH = "Qwen3VLMoeForConditionalGeneration"  # the model's architecture (since vLLM 0.11)
BENCH = ["--concurrency", "1", "--prompt-tokens", "8", "--output-tokens", "12", "--requests", "2"]


def _running_image(cluster, node) -> str:
    out = cluster.docker(node, "ps", "--format", "{{.Image}}").stdout.split()
    return out[0] if len(out) == 1 else f"{len(out)} containers: {out}"


def _serves(node) -> bool:
    try:
        return httpx.get(f"http://{node.ip}:8000/v1/models", timeout=3).status_code == 200
    except httpx.HTTPError:
        return False


def _record(db: Path):
    store = Store(db)
    try:
        return upgrades(store)[0], {r.id: r for r in store.history()}
    finally:
        store.close()


@pytest.fixture(scope="module")
def solo(test_cluster, tmp_path_factory):
    """One node serving the known-good image (executor solo), shared by the tests of one verdict
    each: every upgrade must leave the known-good serving, so the next test starts from it (a
    test that finds anything else brings it up again). The model's config.json is in a
    Hugging Face cache mounted as the containers' (a visible setting), so check can tell
    whether an image's vLLM knows its architecture; one results database for all (the
    known-good's bench run is measured by the first test and reused as recent by the others)."""
    cluster = test_cluster.cluster
    head = cluster.nodes[0]
    work = tmp_path_factory.mktemp("upgrade")
    hf = hf_cache(work, "test/tiny-model", [NEW_ARCH])
    images = {
        FAST: {"SPARK_TEST_TOKENS_PER_S": "200", "SPARK_TEST_FIRST_TOKEN_S": "0.01"},
        SLOW: {"SPARK_TEST_TOKENS_PER_S": "8", "SPARK_TEST_FIRST_TOKEN_S": "1.5"},
        CRASH: {"SPARK_TEST_FAIL": "crash"},
        LOADING: {"SPARK_TEST_SHARD_DELAY": "5"},
    }
    for ref, env in images.items():
        cluster.import_image(head, ref, env=env)
    cluster.import_image(head, OLD, profile="ngc-25.10")
    path = cluster.cluster_file(1, work / "c1.yaml")
    flags = ["--cluster", path, *tc.SANDBOX_FLAGS, "--volumes", f"{hf}:/root/.cache/huggingface"]
    yield cluster, head, flags, work / "bench.sqlite"
    cluster.remove_all_containers(head)
    for ref in (*images, OLD):
        cluster.docker(head, "rmi", "-f", ref, check=False)


def _known_good(solo, run_cli) -> None:
    cluster, head, flags, _ = solo
    if _running_image(cluster, head) == tc.IMAGE and _serves(head):
        return
    cluster.remove_all_containers(head)
    code, out, err = run_cli("up", *flags)
    assert code == 0, out + err


def _upgrade(solo, run_cli, image: str):
    _, _, flags, db = solo
    return run_cli("upgrade", image, *flags, *BENCH, "--db", str(db))


def test_a_slower_candidate_is_rolled_back_with_its_figures(solo, run_cli):
    cluster, head, _, db = solo
    _known_good(solo, run_cli)
    code, out, err = _upgrade(solo, run_cli, SLOW)
    assert code == 1, out + err
    assert "upgrade    known-good done spark-test/vllm:latest, bench run " in out
    line = next(line for line in out.splitlines() if line.startswith("ROLLED BACK: "))
    assert f"{SLOW} regressed against {tc.IMAGE}: c=1: decode " in line
    assert "limit -10%" in line and "TTFT p95" in line and "limit +20%" in line
    assert line.endswith(f"{tc.IMAGE} relaunched and serving")
    assert _running_image(cluster, head) == tc.IMAGE and _serves(head)
    up, runs = _record(db)
    assert up.verdict == "rolled back" and up.reason == line.removeprefix("ROLLED BACK: ")
    assert runs[up.before_run].provenance["image"] == tc.IMAGE
    assert runs[up.after_run].provenance["image"] == SLOW
    # The figures in the reason are the recorded runs' own.
    before = runs[up.before_run].levels[0]["request_tps_p50"]
    after = runs[up.after_run].levels[0]["request_tps_p50"]
    assert f"decode {before:.1f} -> {after:.1f} tok/s" in line


def test_a_candidate_failing_its_check_is_refused_untouched(solo, run_cli):
    """vLLM 0.10.2 does not know the model's architecture: refused before the teardown; the
    known-good container is the very same one, never restarted."""
    cluster, head, _, db = solo
    _known_good(solo, run_cli)
    before = cluster.docker(head, "ps", "-q").stdout.split()
    code, out, err = _upgrade(solo, run_cli, OLD)
    assert code == 1, out + err
    assert (
        f"upgrade    check      failed {head.name} model.architecture: test/tiny-model is {NEW_ARCH}" in out
    )
    assert f"REFUSED: {OLD} failed its check: {head.name} model.architecture: " in out
    assert "upgrade    teardown" not in out and "bench run " in out and "(recent)" in out
    assert cluster.docker(head, "ps", "-q").stdout.split() == before and _serves(head)
    up, _ = _record(db)
    assert up.verdict == "refused" and up.after_run is None and up.before_run is not None


def test_a_candidate_failing_its_launch_is_refused_and_the_known_good_relaunched(solo, run_cli):
    cluster, head, _, db = solo
    _known_good(solo, run_cli)
    code, out, err = _upgrade(solo, run_cli, CRASH)
    assert code == 1, out + err
    assert "FAILED: " in out  # the launch's own cause, from the candidate's log
    assert f"REFUSED: {CRASH} failed to launch" in out and f"{tc.IMAGE} relaunched and serving" in out
    assert _running_image(cluster, head) == tc.IMAGE and _serves(head)
    up, _ = _record(db)
    assert up.verdict == "refused" and up.after_run is None


def test_ctrl_c_mid_way_leaves_the_known_good_running(solo, run_cli):
    """SIGINT (Ctrl-C) while the candidate loads: its container goes, the known-good comes back."""
    cluster, head, flags, db = solo
    _known_good(solo, run_cli)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    argv = [sys.executable, "-m", "spark_tui", "upgrade", LOADING, *flags, *BENCH, "--db", str(db)]
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert proc.stdout is not None
    seen = []
    for line in proc.stdout:
        seen.append(line)
        if "container  done" in line:  # the candidate's container runs and loads its shards
            proc.send_signal(signal.SIGINT)
            break
    rest, _ = proc.communicate(timeout=300)
    out = "".join(seen) + rest
    assert proc.returncode == 130, out
    assert f"INTERRUPTED: interrupted; {tc.IMAGE} relaunched and serving" in out
    assert _running_image(cluster, head) == tc.IMAGE and _serves(head)
    with sqlite3.connect(db) as conn:
        verdict, details = conn.execute("SELECT verdict, details FROM upgrades ORDER BY id DESC").fetchone()
    assert verdict == "interrupted" and json.loads(details)["serving"] == tc.IMAGE


def test_a_faster_candidate_is_synced_checked_and_kept(cluster, tmp_path, run_cli):
    """Two nodes (executor native): the candidate is only on the head; upgrade copies it to the
    worker node to node, checks, swaps and keeps it; the outcome and both runs are recorded.
    The known-good here is a steady 20 tokens/s with its first token after 1 s, the candidate
    three times as fast: rates low enough that a loaded machine's scheduling does not blur them."""
    head, worker = cluster.nodes[:2]
    cluster.remove_all_containers(head)  # the known-good of the tests above
    for node in (head, worker):
        cluster.import_image(
            node, STEADY, env={"SPARK_TEST_TOKENS_PER_S": "20", "SPARK_TEST_FIRST_TOKEN_S": "1"}
        )
    cluster.import_image(
        head, FAST, env={"SPARK_TEST_TOKENS_PER_S": "60", "SPARK_TEST_FIRST_TOKEN_S": "0.05"}
    )
    path = cluster.cluster_file(2, tmp_path / "c2.yaml")
    flags = ["--cluster", path, *tc.SANDBOX_FLAGS, "--executor", "native", "--image", STEADY]
    code, out, err = run_cli("up", *flags)
    assert code == 0, out + err
    db = tmp_path / "bench.sqlite"
    code, out, err = run_cli("upgrade", FAST, *flags, *BENCH, "--db", str(db))
    assert code == 0, out + err
    assert f"KEPT: {FAST} served as well as {STEADY}" in out
    assert f"{FAST}: verified, 3 layers as on {head.name}" in out  # the worker got it from the head
    assert "upgrade    check      done" in out
    assert _running_image(cluster, head) == FAST and _running_image(cluster, worker) == FAST
    assert _serves(head)
    up, runs = _record(db)
    assert up.verdict == "kept" and up.candidate == FAST and up.known_good == STEADY
    before, after = runs[up.before_run], runs[up.after_run]
    assert before.provenance["image"] == STEADY and after.provenance["image"] == FAST
    assert after.levels[0]["request_tps_p50"] > before.levels[0]["request_tps_p50"]
    # The kept configuration says where its image came from.
    assert after.provenance["settings"]["image"] == FAST
    for node in (head, worker):
        cluster.docker(node, "rmi", "-f", FAST, STEADY, check=False)


def test_a_corrupt_database_is_one_line_exit_2(tmp_path, run_cli):
    db = tmp_path / "bench.sqlite"
    db.write_bytes(b"this is not a database" * 100)
    code, out, err = run_cli("upgrade", FAST, "--db", str(db))
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and "file is not a database" in err and str(db) in err


def test_the_upgrade_key_opens_the_screen_and_shows_each_step_inert():
    """`u` (the key registry's `upgrade`) opens the screen; an image typed and enter runs the
    core's upgrade; its steps show as the CLI prints them, a node's markup as plain text."""
    import asyncio

    from spark_tui.ui.app import SparkApp
    from spark_tui.ui.screens.upgrade import UpgradeScreen
    from tests.frozen import FrozenCore, cluster_config

    config, reconfigure = cluster_config(2)
    core = FrozenCore(config, reconfigure)
    app = SparkApp(core, live_refresh=False)

    async def flow():
        async with app.run_test(size=(140, 40)) as pilot:
            await pilot.press("u")
            await pilot.pause(0.2)
            assert isinstance(app.screen, UpgradeScreen)
            await pilot.press(*"vllm:next", "enter")
            for _ in range(50):
                if "upgrade vllm:next" in core.calls and not app.screen.running:
                    break
                await pilot.pause(0.1)
            log = app.screen.query_one("#upgrade-log")
            text = "\n".join(line.text for line in log.lines)
            await pilot.press("escape")
            await pilot.pause(0.1)
            return text, app.screen

    text, after = asyncio.run(flow())
    assert "upgrade    known-good done" in text and "bench run 7 (recent)" in text
    assert "FAILED: spark-1: vLLM failed: [bold]boom[/bold]" in text
    assert f"REFUSED: vllm:next failed to launch; {config['image']} relaunched and serving" in text
    assert not isinstance(after, UpgradeScreen)


def test_the_verdict_follows_the_thresholds_settings():
    """judge() on recorded runs: the defaults roll back a 15% slower decode and a 25% later TTFT;
    the upgrade.* settings move the lines; errors beyond upgrade.max_errors always count."""
    from spark_tui.core.bench.bench_store import Run
    from spark_tui.core.upgrade import Thresholds, judge

    def run(decode, ttft, errors=None):
        level = {"concurrency": 4, "request_tps_p50": decode, "ttft_p95": ttft, "errors": errors or {}}
        return Run(1, 0.0, "t", "s", "l", {}, {}, [level])

    defaults = Thresholds(10.0, 20.0, 0)
    before = run(40.0, 0.200)
    assert judge(before, run(38.0, 0.230), defaults)[0] == []
    regressions, figures = judge(before, run(34.0, 0.250), defaults)
    assert regressions == [
        "c=4: decode 40.0 -> 34.0 tok/s (-15.0%, limit -10%)",
        "c=4: TTFT p95 200 -> 250 ms (+25.0%, limit +20%)",
    ]
    assert figures == [
        "c=4: decode 40.0 -> 34.0 tok/s (-15.0%), TTFT p95 200 -> 250 ms (+25.0%), errors 0 -> 0"
    ]
    assert judge(before, run(34.0, 0.250), Thresholds(20.0, 30.0, 0))[0] == []
    assert judge(before, run(50.0, 0.1, {"stalled": 2}), Thresholds(20.0, 30.0, 0))[0] == [
        "2 failed request(s) (stalled 2; limit 0)"
    ]
    assert judge(before, run(50.0, 0.1, {"stalled": 2}), Thresholds(20.0, 30.0, 2))[0] == []


def test_the_candidate_replaces_only_the_image_wherever_it_was_set(clean_env):
    """The candidate configuration is the known-good one with the image replaced at the layer
    that set it (a wizard edit sits above flags), its source named; everything else unchanged."""
    from spark_tui.core.upgrade import SOURCE, candidate_config
    from tests.frozen import cluster_config

    config, reconfigure = cluster_config(2)
    edited = reconfigure({"image": "vllm:edited", "vllm_port": 8001}, {})
    candidate = candidate_config(edited, "vllm:next")
    assert candidate["image"] == "vllm:next" and candidate["vllm_port"] == 8001
    plain = candidate_config(config, "vllm:next")
    assert plain["image"] == "vllm:next" and plain.values["image"].source.location == SOURCE
    assert [n.name for n in plain.nodes] == [n.name for n in config.nodes]
