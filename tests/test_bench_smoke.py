"""Smoke run of the benchmarks with tiny sizes, so they cannot rot (figures come from `python -m bench.run`)."""

import pytest

from bench import run as bench


def test_parser_bench_smoke():
    out = bench.bench_parsers(2_000)
    assert out["nccl"]["lines"] == 2_000 and out["nccl"]["lines_per_s"] > 0
    assert out["vllm"]["lines"] == 2_000


@pytest.mark.cluster
def test_refresh_bench_smoke(cluster):
    out = bench.bench_refresh(cluster, [1, 2], repeats=1)
    assert set(out) == {1, 2}
    assert out[2]["persistent_ms"] > 0 and out[1]["ssh_over_persistent"] > 1


def test_startup_bench_smoke():
    assert 0 < bench.bench_startup(1)["help_s"] < 10


@pytest.mark.cluster
def test_operations_bench_smoke(cluster):
    out = bench.bench_operations(cluster, [1])
    assert out[1]["up_s"] > 0 and out[1]["check_vs_1"] == 1.0
