"""Memory fit before a launch and the guard during a load, on the namespace test cluster.

Each node gets its own /proc/meminfo (cluster.set_meminfo: a file bind-mounted in the node's
mount namespace), so a node can be a Spark with 120 GiB of which some is held elsewhere. The
model's shards are sparse files: a 40 GiB shard whose safetensors header says so, costing no disk.
"""

import asyncio
import json
import struct
from pathlib import Path

import pytest

from spark_tui.core.launch import events as ev
from spark_tui.core.models.memory_fit import parse_guard, utilization
from spark_tui.core.node.nodes import Nodes
from spark_tui.core.report.check import run_checks
from spark_tui.settings.resolve import Inputs, resolve
from tests.cluster import cluster as tc
from tests.test_launch import containers, launch

MODEL = "test/tiny-model"
SPARK_GIB = 119.7  # MemTotal of a DGX Spark


def sparse_model(cache: Path, shard_gib: list[float]) -> None:
    """A cache entry whose shards are as large as a real model's, as sparse files."""
    repo = cache / "hub" / ("models--" + MODEL.replace("/", "--"))
    snap = repo / "snapshots" / "abc"
    snap.mkdir(parents=True)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text("abc")
    (snap / "config.json").write_text(json.dumps({"architectures": ["Qwen3ForCausalLM"]}))
    names = [f"model-{i + 1:05d}-of-{len(shard_gib):05d}.safetensors" for i in range(len(shard_gib))]
    for name, gib in zip(names, shard_gib, strict=True):
        n = int(gib * 1024**3) // 2
        header = json.dumps({"w": {"dtype": "BF16", "shape": [n], "data_offsets": [0, 2 * n]}}).encode()
        with open(snap / name, "wb") as f:
            f.write(struct.pack("<Q", len(header)) + header)
            f.truncate(8 + len(header) + 2 * n)
    (snap / "model.safetensors.index.json").write_text(
        json.dumps({"weight_map": {f"w{i}": n for i, n in enumerate(names)}})
    )


def config_for(cluster, count, tmp_path, **flags):
    """Every node's cache is the one directory holding the model (set visibly: `volumes`)."""
    path = cluster.cluster_file(count, tmp_path / f"c{count}.yaml")
    flags = {"volumes": [f"{tmp_path / 'hf'}:/root/.cache/huggingface"], **flags}
    return resolve(
        Inputs(
            cluster_file=path, user_config="", environ={}, flags={k: (v, f"--{k}") for k, v in flags.items()}
        )
    )


def fit_rows(config):
    async def go():
        async with Nodes(config) as nodes:
            return await run_checks(config, nodes)

    return {r.node: r for r in asyncio.run(go()) if r.id == "memory.fit"}


def test_utilization_is_read_from_vllm_args(tmp_path, cluster):
    assert utilization(config_for(cluster, 2, tmp_path)) == (0.9, "vLLM's default gpu_memory_utilization 0.9")
    for args in (["--gpu-memory-utilization", "0.7"], ["--gpu-memory-utilization=0.7"]):
        assert utilization(config_for(cluster, 2, tmp_path, vllm_args=args))[0] == 0.7


def test_weights_are_estimated_from_config_json_when_no_shards_are_cached():
    from spark_tui.core.models.memory_fit import weights
    from spark_tui.core.models.model_cache import ModelConfig

    # Llama-3.1-8B's config.json: 32 layers, hidden 4096, 8 of 32 heads for k/v, bf16.
    data = {
        "hidden_size": 4096,
        "num_hidden_layers": 32,
        "intermediate_size": 14336,
        "vocab_size": 128256,
        "num_attention_heads": 32,
        "num_key_value_heads": 8,
        "torch_dtype": "bfloat16",
    }
    w = weights({}, ModelConfig("spark-1", True, "", "/x/config.json", ["LlamaForCausalLM"], data))
    assert w is not None and 14 < w.total_bytes / 1024**3 < 17  # the real checkpoint: 15.0 GiB
    assert w.how == "estimated from config.json (8.0 B parameters, bfloat16)"
    assert weights({}, ModelConfig("spark-1", False, "not cached")) is None


def test_guard_output_is_read_defensively():
    text = "MemTotal:       125524500 kB\nMemAvailable:   1048576 kB\npswpout 42\n"
    r = parse_guard("spark-1", text)
    assert r is not None and round(r.available_mib) == 1024 and r.swapped_out == 42
    assert parse_guard("spark-1", "garbage\n\x1b[2J") is None


@pytest.mark.cluster
def test_fit_names_each_node_with_its_numbers(cluster, tmp_path):
    """80 GiB of weights over 3 nodes (26.7 GiB each): fits where 112 GiB are free; the weights alone
    do not fit where 20 GiB are; vLLM would refuse where 60 GiB are (0.9 x 119.7 > 60)."""
    sparse_model(tmp_path / "hf", [40.0, 40.0])
    fits, small, busy = cluster.nodes[:3]
    cluster.set_meminfo(fits, SPARK_GIB, 112.0)
    cluster.set_meminfo(small, SPARK_GIB, 20.0)
    cluster.set_meminfo(busy, SPARK_GIB, 60.0)
    rows = fit_rows(config_for(cluster, 3, tmp_path))
    assert rows[fits.name].status == "pass", rows[fits.name]
    assert (
        "weights 26.7 GiB on spark-1 (2 shard(s) in the cache on spark-1, / TP x PP 3)"
        in rows[fits.name].message
    )
    assert rows[small.name].status == "fail"
    assert rows[small.name].message.startswith("the weights alone do not fit: weights 26.7 GiB on spark-2")
    assert "20.0 of 119.7 GiB available" in rows[small.name].message
    assert rows[busy.name].status == "fail" and "vLLM would refuse to start" in rows[busy.name].message
    assert "lower --gpu-memory-utilization to 0.47" in rows[busy.name].fix


@pytest.mark.cluster
def test_fit_is_skipped_with_the_reason_when_the_model_is_not_cached(cluster, tmp_path):
    rows = fit_rows(config_for(cluster, 2, tmp_path))
    assert all(
        r.status == "skipped" and "model size unknown: test/tiny-model is not in" in r.message
        for r in rows.values()
    )


@pytest.mark.cluster
def test_guard_aborts_the_load_when_a_node_runs_out_of_memory(cluster, tmp_path):
    """A slow load; when spark-2's available memory collapses, the launch stops within seconds,
    names the node and the numbers, and rolls back everything."""
    head, worker = cluster.nodes[:2]
    for node in (head, worker):
        cluster.set_meminfo(node, SPARK_GIB, 110.0)
    config = config_for(
        cluster, 2, tmp_path, **tc.SANDBOX, env={"SPARK_TEST_SHARD_DELAY": "1", "SPARK_TEST_SHARDS": "30"}
    )
    collapsed = []

    def on_event(e):
        if isinstance(e, ev.Stage) and e.stage == "shards" and not collapsed:
            cluster.set_meminfo(worker, SPARK_GIB, 1.5, swapped_out=250_000)  # 1 GiB swapped out
            collapsed.append(e.elapsed)

    ok, got, _ = asyncio.run(launch(config, on_event=on_event))
    assert not ok and collapsed
    failed = next(e for e in got if isinstance(e, ev.Failed))
    assert failed.cause.startswith(f"{worker.name}: memory nearly exhausted during the model load: ")
    assert "MemAvailable 1.5 GiB of 119.7 GiB, below memory_floor 4g" in failed.cause
    assert "977 MiB swapped out since the load began" in failed.cause  # 250,000 pages of 4 KiB
    rollback = next(e for e in got if isinstance(e, ev.Stage) and e.stage == "rollback")
    assert rollback.elapsed - collapsed[0] < 5  # within seconds of the collapse, not at a timeout
    seen = {e.node for e in got if isinstance(e, ev.Memory)}
    assert seen == {head.name, worker.name}  # the launch step plots both
    assert all(ids == [] for ids in containers(cluster, 2).values())
