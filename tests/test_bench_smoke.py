"""Smoke run of the benchmarks with tiny sizes, so they cannot rot (figures come from `python -m bench.run`)."""

from pathlib import Path

import pytest

from bench import run as bench


def test_parser_bench_smoke():
    out = bench.bench_parsers(2_000)
    assert out["nccl"]["lines"] == 2_000 and out["nccl"]["lines_per_s"] > 0
    assert out["vllm"]["lines"] == 2_000
    assert out["knowledge"]["lines"] == 2_000 and out["knowledge"]["vs_vllm_parser"] > 0


@pytest.mark.cluster
def test_refresh_bench_smoke(cluster):
    out = bench.bench_refresh(cluster, [1, 2], repeats=5, ssh_runs=1)
    assert set(out) == {1, 2}
    assert out[2]["persistent_ms"] > 0 and out[1]["ssh_over_persistent"] > 1
    # /proc/stat counts in 10 ms ticks: five refreshes of two nodes are several ticks.
    assert out[2]["client_cpu_ms"] > 0 and out[2]["machine_cpu_ms"] > 0


@pytest.mark.cluster
def test_node_wait_bench_smoke(cluster):
    out = bench.bench_node_wait(cluster, [1], repeats=1, wait_s=0.02)
    assert out["refresh"][1]["persistent_ms"] >= 40  # two nvidia-smi calls, each waiting 20 ms
    assert out["check"][1]["check_ms"] >= 40
    assert "SMI_WAIT" not in (Path(cluster.nodes[0].dir) / "bin" / "standin.env").read_text()  # restored


def test_startup_bench_smoke():
    assert 0 < bench.bench_startup(1)["help_s"] < 10


@pytest.mark.cluster
def test_operations_bench_smoke(cluster):
    out = bench.bench_operations(cluster, [1], checks=1, cycles=1)
    assert out[1]["up_ms"] > 0 and out[1]["check_vs_1"] == 1.0 and out[1]["down_cpu_floor_ms"] > 0


def test_logs_screen_bench_smoke():
    from bench import cockpit

    out = cockpit.bench_logs(total=5_000, flood_rate=5_000, flood_seconds=0.3, buffer_lines=1_000)
    assert out["buffer_lines"] == 1_000 and out["log_widget_lines"] == 1_000  # bounded
    assert out["key_presses"] >= 1 and out["key_p95_ms"] > 0 and out["lines_per_s"] > 0


@pytest.mark.cluster
def test_first_frame_bench_smoke(cluster):
    from bench import cockpit
    from bench.run import build_cockpit

    out = cockpit.bench_first_frame(lambda build: build_cockpit(build, cluster, 1))
    assert 0 < out["first_frame_s"] <= out["all_panes_live_s"]


@pytest.mark.cluster
def test_time_to_verdict_bench_smoke(cluster, tmp_path):
    from bench.verdicts import bench_time_to_verdict

    out = bench_time_to_verdict(cluster, tmp_path)
    assert set(out) == {"worker_cannot_join", "container_exits_at_once", "oom_during_load"}
    assert all(0 <= r["seconds_to_verdict"] < 60 for r in out.values()), out
    assert (
        "cannot join" in out["worker_cannot_join"]["cause"]
        and "out of memory" in out["oom_during_load"]["cause"]
    )


@pytest.mark.cluster
def test_image_inspection_bench_smoke(cluster):
    from bench.images import bench_inspection

    out = bench_inspection(cluster, nodes=1, cached_runs=2)
    node = out[cluster.nodes[0].name]
    assert node["first_ms"] > node["cached_ms"] > 0


def test_pane_render_bench_smoke():
    from bench.cockpit import bench_pane_render

    out = bench_pane_render(2)
    assert out["with_plot_ms"] > out["text_ms"] > 0


@pytest.mark.cluster
def test_sync_bench_smoke(cluster):
    from bench.sync import bench_sync, sync_table

    out = bench_sync(cluster, image_mb=4, model_mb=4, rounds=1)
    ways = ("image_sync", "image_manual", "image_docker_pipe", "model_sync", "model_rsync_via_here")
    assert all(out[w]["mb_s"] > 0 for w in ways + ("raw_copy", "raw_link"))
    assert 4 < out["model_mb"] < 5 and out["ratios"]["model_sync_over_raw_link"] > 0
    title, rows = sync_table(out)
    assert "median of 1" in title and len(rows) == 4 and all(len(r) == 6 for r in rows)


def test_loadgen_bench_smoke():
    from bench.loadgen import bench_loadgen

    out = bench_loadgen(0.5, concurrency=2, output_tokens=32)
    assert out["chunks"] > 0 and out["errors"] == {} and out["chunks_per_client_cpu_s"] > 0


def test_serving_scrape_bench_smoke():
    from bench import serving

    out = serving.bench_scrape(repeats=3)
    assert out["engines"] == 2 and out["samples"] > 500  # real size: two engines' series
    assert out["scrape_cpu_ms"] > 0 and out["parse_cpu_ms"] > 0


def test_serving_keys_bench_smoke():
    from bench import serving

    out = serving.bench_serving_keys(seconds=1.0, interval=0.5)
    assert out["key_presses"] >= 1 and out["key_p95_ms"] > 0 and out["scrapes"] >= 1
