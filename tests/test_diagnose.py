"""`spark-tui diagnose` on what operators paste (real samples in tests/data, see INDEX.md):
the kind picked, the figures extracted, verdicts that say what was seen and what to do."""

import json

import pytest

from spark_tui import diagnose
from tests.helpers import DATA


def read(rel: str) -> str:
    return (DATA / rel).read_text()


def verdicts(result: dict) -> list[str]:
    return [f"{v['level']}: {v['text']}" for v in result["verdicts"]]


@pytest.mark.parametrize(
    "rel, kind, wanted",
    [
        (
            "netif/show_gids-cx6-prompt-v1-v2-ipv4-spectrumscale4.txt",
            "gids",
            ["ok: mlx5_0: RoCE v2 GID with IPv4 at index 5 (NCCL_IB_GID_INDEX=5 selects it)"],
        ),
        (
            "netif/ibstat-cx7-ethernet-rate200-one-down-mooncake1999.txt",
            "ibstat",
            [
                "ok: mlx5_0 port 1: Active / LinkUp, 200 Gb/s, Ethernet (RoCE)",
                "info: mlx5_10 port 1: Down / Disabled, rate not shown, link layer not shown: not usable by NCCL until it"
                " is Active / LinkUp (another port is up: an uncabled port, normal on a Spark)",
            ],
        ),
        (
            "netif/ibstat-mlx4-ib-two-ports-ibwarn-noise-rdmacore847.txt",
            "ibstat",
            ["ok: mlx4_0 port 2: Active / LinkUp, 56 Gb/s, link layer not shown"],
        ),
        (
            "docker/vllm-compose-prefix-rocm-gemma3-load-kv-ready-window.txt",
            "vllm",
            [
                "ok: API server started at http://0.0.0.0:8000",
                "ok: model loaded: 51.7891 GiB of weights in 29.9297 s",
                "ok: KV cache: 109.86 GiB, 205,696 tokens, 50.05x concurrency at 4,096 tokens per request",
                "ok: engine initialised in 102.52 s",
            ],
        ),
        (
            "docker/vllm-model-loading-took-gib-memory-shards-tp-vllm38820.txt",
            "vllm",
            ["ok: model loaded: 12.66 GiB of weights in 31.657 s"],
        ),
        (
            "docker/vllm-kv-cache-size-concurrency-tp-prefixes-vllm28228.txt",
            "vllm",
            ["ok: KV cache: 2.3 GiB, 75,840 tokens, 2.48x concurrency at 120,000 tokens per request"],
        ),
        (
            "docker/vllm-init-engine-took-kv-tokens-api-server-runai67.txt",
            "vllm",
            [
                "ok: engine initialised in 90.84 s",
                "ok: API server starting at http://0.0.0.0:8000 (no 'Application startup complete' in this input)",
            ],
        ),
        (
            "docker/vllm-legacy-loading-weights-gb-gpu-blocks-vllm12569.txt",
            "vllm",
            ["ok: model loaded: 67.7229 GiB of weights"],
        ),
        (
            "docker/vllm-startup-free-memory-check-cuda0-format.txt",
            "vllm",
            [
                "error: vLLM's start-up check failed on cuda:0: 4.22 of 79.14 GiB free, gpu_memory_utilization 0.9 "
                "wants 71.22 GiB; something else holds 74.9 GiB (another process or container: on a Spark, the "
                "unified memory). Stop it first: only 5% of the memory is free, too little to serve from"
            ],
        ),
        (
            "nvidia-smi/gb10-query-gpu-noheader-na-llamaswap782.txt",
            "gpu",
            [
                "ok: memory fields [N/A]: normal on GB10 (unified memory): read /proc/meminfo for what is used and free"
            ],
        ),
        (
            "nvidia-smi/gb10-compute-apps-noheader-nounits-llamaswap782.txt",
            "gpu",
            ["ok: process 114687 /usr/local/bin/python: 19135 MiB"],
        ),
        (
            "docker/docker-ps-format-table-names-image-status-ports-gb10.txt",
            "docker-ps",
            [
                "warn: agentic-rag-llm-standard-1 (nvcr.io/nim/nvidia/nemotron-3-nano:1.7.0-variant, Up 14 minutes "
                "(healthy)) looks like vLLM/Ray: on a Spark it shares the unified memory with a new load"
            ],
        ),
        (
            "nccl/ray-repeated-across-cluster-internal-error-nccl1591.txt",
            "vllm",
            [
                "error: (RayWorkerWrapper pid=335, ip=10.1.0.67) ERROR 01-29 07:44:33 worker_base.py:467] "
                "RuntimeError: NCCL error: internal error - please report this issue to the NCCL developers"
            ],
        ),
    ],
)
def test_what_operators_paste_is_read(rel, kind, wanted):
    result = diagnose.analyse(read(rel))
    assert result["kind"] == kind
    got = verdicts(result)
    for line in wanted:
        assert line in got, got


def test_pasting_residue_never_reaches_the_fields():
    """Compose prefixes, a `$` command line, Ray's repeat suffixes: gone before any parser."""
    result = diagnose.analyse(read("docker/vllm-compose-prefix-rocm-gemma3-load-kv-ready-window.txt"))
    assert (
        "vllm-1" not in json.dumps(result["summary"]) and result["summary"]["shard_owner"] == "EngineCore_DP0"
    )
    result = diagnose.analyse(read("nccl/ray-repeated-across-cluster-internal-error-nccl1591.txt"))
    assert result["summary"]["repeated_lines_folded_by_ray"] == 2 + 14 * 4
    assert "repeated" not in json.dumps(result["summary"]["errors"])
    gids = diagnose.analyse(read("netif/show_gids-cx6-prompt-v1-v2-ipv4-spectrumscale4.txt"))
    assert gids["command"] == "show_gids mlx5_0" and len(gids["summary"]["gids"]) == 6


def test_docker_ps_default_table_after_a_prompt_and_a_cli_warning():
    result = diagnose.analyse(read("docker/docker-ps-default-table-prompt-warning-truncated-netology.txt"))
    assert result["kind"] == "docker-ps" and result["command"] == "docker ps"
    assert [c["NAMES"] for c in result["summary"]["containers"]] == ["mysql-docker", "vagrant-netology-2"]
    assert "ok: commands are truncated in this table: docker ps --no-trunc shows them whole" in verdicts(
        result
    )


def test_stage_and_double_prefixes_do_not_hide_the_rank_address():
    """Two process prefixes on each NCCL line (the real DGX Spark Ray sample), and the same with a
    `[Stage-0]` prefix added as pasted: the worker is known by the Ray actor's address."""
    text = read("nccl/dgxspark-vllm-ray-ibext-channels.txt")
    for pasted in (text, "\n".join("[Stage-0] " + line for line in text.splitlines())):
        result = diagnose.analyse(pasted, "nccl")
        assert result["summary"]["per_host"]["169.254.28.198"]["transport"] == "IBext_v10"
        assert not any("Stage" in h or "(" in h for h in result["summary"]["hosts"])


def test_newer_nccl_virtual_devices_name_the_hcas():
    """NCCL 2.2x on a Spark: the HCAs from `Made virtual device` lines alone (the lines of the
    real two-Spark sample, without its other NET/IB forms)."""
    lines = [
        line
        for line in read("nccl/gb10-nccltests-2node-roce-switch-init.txt").splitlines()
        if "NET/IB" not in line or "Made virtual device" in line
    ]
    result = diagnose.analyse("\n".join(lines))
    assert result["kind"] == "nccl"
    assert [h[0] for h in result["summary"]["hcas"]] == ["rocep1s0f1", "roceP2p1s0f1"]
    assert result["summary"]["per_host"]["spark-fb97"]["hcas"] == ["rocep1s0f1", "roceP2p1s0f1"]


def test_the_pasted_command_names_the_csv_fields():
    text = (
        "$ nvidia-smi --query-gpu=memory.used,memory.total,utilization.memory --format=csv,noheader\n"
        + read("nvidia-smi/gb10-query-gpu-noheader-na-llamaswap782.txt")
    )
    result = diagnose.analyse(text)
    assert result["kind"] == "gpu" and result["summary"]["csv"] == [
        {"memory.used": None, "memory.total": None, "utilization.memory": 0.0}
    ]


def test_gid_indexes_that_differ_between_nodes_are_named():
    """Two nodes' show_gids: the second is the real sample with its link-local GIDs gone, so its
    RoCE v2 IPv4 GID sits at index 3 instead of 5."""
    node_a = read("netif/show_gids-cx6-prompt-v1-v2-ipv4-spectrumscale4.txt")
    rows = node_a.splitlines()
    node_b = "\n".join(rows[:3] + [r.replace("  4  ", "  2  ").replace("  5  ", "  3  ") for r in rows[7:9]])
    node_b = node_b.replace("1       4       ", "1       2       ").replace(
        "1       5       ", "1       3       "
    )
    result = diagnose.analyse_many([("spark-1.txt", node_a), ("spark-2.txt", node_b)])
    assert [r["summary"]["roce_v2_index"] for r in result["inputs"]] == [{"mlx5_0": 5}, {"mlx5_0": 3}]
    (verdict,) = result["across"]
    assert (
        verdict["level"] == "error"
        and "spark-1.txt: {'mlx5_0': 5}; spark-2.txt: {'mlx5_0': 3}" in verdict["text"]
    )
    assert "NCCL_IB_GID_INDEX" in verdict["text"]


def test_several_files_stdin_and_a_directory(run_cli, clean_env, monkeypatch):
    import io
    import shutil

    folder = clean_env / "pasted"
    folder.mkdir()
    for rel in (
        "netif/ibstat-cx7-ethernet-rate200-one-down-mooncake1999.txt",
        "docker/vllm-init-engine-took-kv-tokens-api-server-runai67.txt",
    ):
        shutil.copy(DATA / rel, folder)
    code, out, _ = run_cli("diagnose", str(folder))
    assert code == 0 and out.count("== ") == 2 and "kind: ibstat" in out and "kind: vllm" in out
    monkeypatch.setattr(
        "sys.stdin",
        io.TextIOWrapper(
            io.BytesIO(read("netif/show_gids-cx6-prompt-v1-v2-ipv4-spectrumscale4.txt").encode())
        ),
    )
    code, out, _ = run_cli(
        "diagnose",
        "-",
        str(DATA / "nvidia-smi/gb10-compute-apps-noheader-nounits-llamaswap782.txt"),
        "--json",
    )
    data = json.loads(out)
    assert code == 0 and [r["input"] for r in data["inputs"]] == [
        "-",
        str(DATA / "nvidia-smi/gb10-compute-apps-noheader-nounits-llamaswap782.txt"),
    ]
    assert [r["kind"] for r in data["inputs"]] == ["gids", "gpu"]
    code, _, err = run_cli("diagnose", str(clean_env / "empty-dir-that-is-not-there"))
    assert code == 2 and "cannot read" in err


@pytest.mark.parametrize(
    "rel",
    [
        "netif/ibdev2netdev-dgxspark-f0-up-perfguide-spark-5c2d.txt",
        "netif/ibv_devinfo-dgxspark-cx7-4ports-f1-active.txt",
    ],
)
def test_a_sparks_uncabled_ports_are_no_warning_while_another_port_is_up(rel):
    """A Spark shows four RoCE ports and most clusters cable one or two: the others are down, normally."""
    text = read(rel)
    levels = [v["level"] for v in diagnose.analyse(text)["verdicts"]]
    assert "ok" in levels and "info" in levels and "warn" not in levels
    # the same output with every port down: each port is a warning
    down = text.replace("(Up)", "(Down)").replace("PORT_ACTIVE", "PORT_DOWN")
    levels = [v["level"] for v in diagnose.analyse(down)["verdicts"]]
    assert levels and set(levels) == {"warn"}
    assert "[INFO]" in diagnose.as_text(diagnose.analyse(text))
