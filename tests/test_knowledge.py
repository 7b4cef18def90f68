"""The failure knowledge base: every real sample named with its cause and figures, nothing named
for healthy lines, and a malformed table refused with file:entry."""

import json
import re
from pathlib import Path

import pytest

from spark_tui.knowledge import KnowledgeError, Matcher, Watch, scan, table
from spark_tui.knowledge.table import FAMILIES, load_folder, needle_of, parse_table

DATA = Path(__file__).parent / "data"
SAMPLES = DATA / "failures"


def expected(name: str) -> list[str]:
    """The entries a sample names: its NAME.expect, one id per line, sorted."""
    return sorted((SAMPLES / f"{name}.expect").read_text().split())


# Every real sample: tests/data/failures/NAME.log, its thread in NAME.source, what it names in NAME.expect.
NAMES = sorted(p.stem for p in SAMPLES.glob("*.log"))


def _sample(name: str) -> str:
    return (SAMPLES / f"{name}.log").read_text()


def test_every_sample_has_expectations_and_a_source():
    assert len(NAMES) >= 300
    assert {p.stem for p in SAMPLES.glob("*.expect")} == set(NAMES)
    assert {p.stem for p in SAMPLES.glob("*.source")} == set(NAMES)
    for name in NAMES:
        assert expected(name), f"{name}.expect names no entry"
        source = (SAMPLES / f"{name}.source").read_text().strip()
        # a public thread: GitHub, or the kernel's mailing-list archive for kernel lines
        assert source.startswith(("https://github.com/", "https://lore.kernel.org/")), name


@pytest.mark.parametrize("name", NAMES)
def test_real_samples_are_named(name):
    assert sorted({f.id for f in scan(_sample(name))}) == expected(name)


def test_a_sample_copied_through_a_web_page_keeps_its_names():
    """Curly quotes and no-break spaces where the program printed ASCII ones (a paste from a
    rendered thread or a chat) are read as the program's own characters."""
    for name in NAMES:
        text = _sample(name).replace("'", "\u2019").replace('"', "\u201d").replace(" ", "\u00a0")
        assert sorted({f.id for f in scan(text)}) == expected(name), name


@pytest.mark.parametrize(
    "name, ident, figures",
    [
        ("vllm_unrecognized_arguments", "vllm.unrecognized_arguments", {"args": "--omni"}),
        ("vllm_max_len_over_kv_cache", "vllm.max_len_over_kv_cache", {"max_len": 29000, "kv_tokens": 23648}),
        (
            "vllm_kv_cache_too_small_estimate",
            "vllm.kv_cache_too_small",
            {"max_len": 131072, "needed_gib": 16.0, "available_gib": 0.71, "estimated_len": 5632},
        ),
        (
            "vllm_startup_free_memory",
            "vllm.startup_free_memory",
            {"free_gib": 1.53, "total_gib": 22.05, "utilization": 0.9, "wanted_gib": 19.84},
        ),
        ("hub_gated_401", "hub.gated", {"model": "meta-llama/Llama-2-7b", "status": 401}),
        ("hub_forbidden_403", "hub.not_authorized", {"model": "meta-llama/Llama-3.1-8B-Instruct"}),
        (
            "hub_file_404",
            "hub.file_not_found",
            {"model": "HuggingFaceH4/gemma-2-2b-gkd", "file": "config.json"},
        ),
        ("safetensors_metadata_incomplete", "safetensors.bad_header", {"error": "MetadataIncompleteBuffer"}),
        ("vllm_no_gpu_on_node", "vllm.no_gpu_on_node", {"address": "74.10.28.48"}),
        ("vllm_world_size_local_gpus", "vllm.local_world_size", {"world_size": 2, "gpus": 1}),
        (
            "cuda_oom_worker",
            "cuda.out_of_memory",
            {"tried_gib": 28.44, "total_gib": 178.34, "free_gib": 7.38},
        ),
        (
            "nccl_ib_completion_error",
            "nccl.ib_completion_error",
            {"status": 12, "status_name": "IBV_WC_RETRY_EXC_ERR", "peer": "172.36.143.59<44206>"},
        ),
        (
            "nccl_modify_qp_timeout",
            "nccl.modify_qp_failed",
            {"error": "110 Connection timed out", "gid_index": 3, "from_state": "INIT", "to_state": "RTR"},
        ),
        (
            "nccl_watchdog_timeout",
            "nccl.watchdog_timeout",
            {"rank": 4, "collective": "ALLREDUCE", "timeout_ms": 1800000},
        ),
        (
            "nccl_unhandled_cuda_error",
            "nccl.cuda_error",
            {"nccl_version": "2.20.5", "cuda_error": "1 'invalid argument'"},
        ),
        ("ray_gcs_unreachable_cpp", "ray.gcs_unreachable", {"address": "172.23.15.13:20000"}),
        ("ray_gcs_unreachable_python", "ray.gcs_unreachable", {"address": "10.0.53.19:49650"}),
        ("ray_raylet_address_mismatch", "ray.address_mismatch", {"address": "10.6.0.55"}),
        ("ray_node_marked_dead_ip", "ray.node_dead", {"address": "172.31.12.38"}),
        (
            "ray_version_mismatch",
            "ray.version_mismatch",
            {
                "cluster_ray": "2.12.0",
                "cluster_python": "3.11.11",
                "node_ray": "2.42.0",
                "node_python": "3.9.21",
            },
        ),
        ("docker_pull_access_denied", "docker.pull_access_denied", {"image": "vila-server"}),
        ("docker_name_in_use", "docker.name_in_use", {"name": "greenlight-v2"}),
        ("docker_no_gpu_driver", "docker.gpu_runtime_missing", {"driver": ""}),
        (
            "docker_exec_format_error",
            "docker.platform_mismatch",
            {"image_platform": "linux/amd64", "host_platform": "linux/arm64/v8"},
        ),
        ("nvml_version_mismatch", "driver.nvml_mismatch", {"library_version": "570.124"}),
        (
            "nvrm_api_mismatch",
            "driver.api_mismatch",
            {"client_version": "570.153.02", "kernel_version": "570.144"},
        ),
        (
            "nvrm_api_mismatch_client",
            "driver.api_mismatch",
            {"client_version": "595.84", "kernel_version": "595.80"},
        ),
        (
            "nvrm_api_mismatch_syslog",
            "driver.api_mismatch",
            {"client_version": "535.54.03", "kernel_version": "530.30.02"},
        ),
        ("xid_79", "driver.xid_hardware", {"xid": 79, "xid_name": "GPU has fallen off the bus"}),
        ("vllm_invalid_choice", "vllm.invalid_choice", {"option": "--tool-call-parser", "choice": "glm45"}),
        (
            "vllm_max_len_over_model_positions",
            "vllm.max_len_over_model",
            {"max_len": 131072, "derived_key": "max_position_embeddings", "derived_len": 32768},
        ),
        ("vllm_tp_heads_divisible_28", "vllm.tp_heads_divisible", {"heads": 28, "tp": 8}),
        ("hub_bad_repo_id", "hub.bad_repo_id", {"model": "/models/"}),
        ("nccl_shm_no_space", "nccl.shm_too_small", {"segment": "/dev/shm/nccl-WU88OE", "size": 9637888}),
        ("nccl_system_error", "nccl.system_error", {"nccl_version": "2.19.3"}),
        ("torch_rendezvous_timeout", "torch.rendezvous_timeout", {"timeout": "1800s", "port": 48391}),
        ("docker_executable_not_found", "docker.executable_not_found", {"program": "db:create"}),
        ("docker_executable_not_found_runc", "docker.executable_not_found", {"program": "--"}),
        (
            "docker_daemon_permission_denied",
            "docker.daemon_unreachable",
            {"socket": "unix:///var/run/docker.sock"},
        ),
        ("nvrm_rm_init_failed", "driver.rm_init_failed", {"pci": "0000:98:00.0", "code": "0x62:0x65:1792"}),
        ("nvrm_rm_init_failed_legacy", "driver.rm_init_failed", {"code": "0x26:0xffff:1375"}),
        (
            "ray_unschedulable_placement",
            "ray.unschedulable_resources",
            {"request": "{'node:172.16.10.33': 0.001, 'GPU': 1.0}"},
        ),
        ("nccl_ib_async_port_error", "nccl.ib_async_event", {"event": "port error"}),
        ("vllm_worker_proc_died", "vllm.worker_proc_died", {"worker": "VllmWorker-1"}),
        ("vllm_sampler_warmup_oom_ray", "vllm.sampler_warmup_oom", {"requests": 1024}),
        (
            "vllm_memory_profiling_error",
            "vllm.memory_profiling_error",
            {"initial_gib": 30.3, "current_gib": 30.3},
        ),
        (
            "vllm_memory_profiling_error_bytes",
            "vllm.memory_profiling_error",
            {"initial_bytes": 58247258112, "current_bytes": 58247516160},
        ),
        ("ray_port_conflict", "ray.port_conflict", {"component": "worker_ports", "port": 18203}),
        (
            "hub_entry_not_found_httpx",
            "hub.file_not_found",
            {"model": "nari-labs/Dia-1.6B-0626", "file": "model.safetensors"},
        ),
        (
            "hub_revision_not_found",
            "hub.revision_not_found",
            {"model": "sap-ai-research/contexttab", "revision": "v1.0.0"},
        ),
        ("hub_server_error_504", "hub.server_error", {"status": 504, "reason": "Gateway Time-out"}),
        ("ray_raylet_terminated_ip", "ray.raylet_terminated", {"address": "172.29.58.133"}),
        ("ray_node_start_timeout", "ray.node_start_timeout", {"seconds": 60}),
        (
            "vllm_no_model_weights",
            "vllm.no_model_weights",
            {"model": "/llamas/c123ian/irish_eng_transl_2k_test_uuix"},
        ),
        (
            "vllm_no_model_weights_repo",
            "vllm.no_model_weights",
            {"model": "unsloth/Phi-4-mini-instruct-unsloth-bnb-4bit"},
        ),
        ("vllm_bf16_unsupported", "vllm.bf16_unsupported", {"gpu": "Tesla T4", "capability": "7.5"}),
        (
            "ray_task_error_worker",
            "ray.task_error",
            {"exception": "RuntimeError", "task": "RayWorkerVllm.execute_method", "address": "10.19.23.192"},
        ),
        ("ray_gcs_unreachable_ray_head", "ray.gcs_unreachable", {"address": "172.17.0.2:6379"}),
        ("vllm_kv_cache_too_small_wrapped", "vllm.kv_cache_too_small", {"max_len": 100000}),
        ("vllm_argument_not_converted", "vllm.invalid_argument_value", {"option": "--limit-mm-per-prompt"}),
        ("vllm_prompt_too_long_legacy", "vllm.prompt_too_long", {"length": 5016, "max_len": 4096}),
        (
            "vllm_quantization_mismatch",
            "vllm.quantization_mismatch",
            {"config_method": "modelopt_fp4", "arg_method": "modelopt"},
        ),
        ("trust_remote_code_quoted", "vllm.trust_remote_code", {"model": "internlm-chat-7b-v1_1"}),
        (
            "tokenizers_untagged_enum",
            "tokenizers.format_too_new",
            {"kind": "ModelWrapper", "line": 1251019, "column": 3},
        ),
        (
            "hub_unreachable_timeout",
            "hub.unreachable",
            {"host": "huggingface.co", "model": "openai/gpt-oss-120b", "cause": "ConnectTimeoutError"},
        ),
        ("triton_ptxas_sm121a", "cuda.ptxas_unknown_arch", {"arch": "sm_121a"}),
        (
            "ray_object_store_tmp",
            "ray.object_store_in_tmp",
            {"dir": "/tmp", "shm_gib": 0.062, "suggested": "0.07gb"},
        ),
        (
            "torch_gb10_capability_notice",
            "cuda.capability_notice",
            {"gpu": "NVIDIA GB10", "capability": "12.1"},
        ),
        (
            "vllm_mm_item_over_batched_tokens_whisper",
            "vllm.mm_item_over_batched_tokens",
            {"item": 1500, "batched": 448},
        ),
        ("vllm_tp_cannot_be_larger_than_gpus", "vllm.tp_exceeds_gpus", {"tp": 2, "gpus": 1}),
        ("docker_gpu_devices_allow_write", "docker.gpu_device_rules", {"why": "operation not permitted"}),
        ("hub_cannot_load_config_for", "hub.cannot_load_model", {"model": "yisol/IDM-VTON"}),
        ("vllm_unknown_model_type_config_mapping", "vllm.unknown_model_type", {"model_type": "qwen2"}),
    ],
)
def test_figures_come_out_as_values(name, ident, figures):
    found = next(f for f in scan(_sample(name)) if f.id == ident)
    assert {k: found.figures.get(k) for k in figures} == figures


def test_a_title_without_the_figures_leaves_them_out():
    """A wording that names no model or file (vLLM's own trust-remote-code error, the bare
    EntryNotFoundError line) reads without `?` in the title."""
    (f,) = scan(_sample("hub_entry_not_found_error_line"))
    assert f.title == "a file is missing from the repository (404)"
    line = _sample("vllm_trust_remote_code_failed_config").splitlines()[1]
    (f,) = scan(line)
    assert (f.id, f.title) == ("vllm.trust_remote_code", "the model needs --trust-remote-code")


def test_a_bare_key_error_is_no_unknown_model_type_without_the_line_above_it():
    """`KeyError: 'qwen2'` alone is any missing key; after transformers' CONFIG_MAPPING lookup it
    is a model type the image's Transformers does not know."""
    assert scan("KeyError: 'qwen2'") == []
    lines = _sample("vllm_unknown_model_type_config_mapping").splitlines()
    (f,) = scan("\n".join(lines[-5:]))
    assert (f.id, f.figures) == ("vllm.unknown_model_type", {"model_type": "qwen2"})


def test_the_fix_carries_the_figures():
    f = next(f for f in scan(_sample("vllm_max_len_over_kv_cache")) if f.id == "vllm.max_len_over_kv_cache")
    assert "--max-model-len 23648" in f.fix and "29000" in f.title
    g = next(f for f in scan(_sample("hub_forbidden_403")) if f.id == "hub.not_authorized")
    assert "https://huggingface.co/meta-llama/Llama-3.1-8B-Instruct" in g.fix


def test_a_figure_the_line_did_not_carry_is_left_out_of_the_fix():
    f = next(f for f in scan(_sample("vllm_kv_cache_too_small_v1")) if f.id == "vllm.kv_cache_too_small")
    assert "estimated_len" not in f.figures
    assert f.fix.startswith("Lower --max-model-len, or raise --gpu-memory-utilization") and "?" not in f.fix


def test_the_cause_comes_before_what_follows_from_it():
    w = Watch("spark-2")
    w.feed_lines(_sample("vllm_startup_free_memory_nodev").splitlines())
    cause = w.cause()
    assert cause is not None and cause.id == "vllm.startup_free_memory" and cause.node == "spark-2"
    assert [f.id for f in w.ranked()][-1] == "vllm.engine_core_died"


def test_repeats_of_one_failure_are_counted_once():
    w = Watch()
    w.feed_lines(_sample("vllm_placement_group_waiting").splitlines())
    (f,) = w.ranked()
    assert f.count == 2 and f.figures["seconds"] == 30  # the latest wait


HEALTHY = [
    "docker/vllm-apiserver-ready-then-engine-throughput-metrics.txt",
    "docker/vllm-uvicorn-legacy-ready-lines-dgxspark-playbook.txt",
    "docker/vllm-shard-progress-prefix-on-own-line-pp-tp-ep-vllm38476.txt",
    "docker/ray-start-head-tab-separated-docker-logs.txt",
    "nccl/gb10-nccltests-2node-roce-switch-init.txt",
    "nccl/dgxspark-vllm-worker-roce-nccl2.31.txt",
]


@pytest.mark.parametrize("rel", HEALTHY)
def test_healthy_logs_name_no_failure(rel):
    assert [f.id for f in scan((DATA / rel).read_text()) if f.severity != "info"] == []


# Entries that a format reader of diagnose produces (no line patterns): the real outputs in
# tests/data/formats that show each.
READER_SAMPLES = {
    "link.speed_below_rate": "ethtool-below-rate-istoreos1293.txt",
    "link.driver_firmware": "ethtool-i-mlx5-ethq8.txt",
    "link.down": "ethtool-link-down-tg3-lkml.txt",
}
NOT_RECOGNISED = DATA / "not_recognised"


def test_every_entry_matches_a_real_sample_of_its_own():
    """No entry whose wording was guessed: each pattern entry names at least one real sample, and
    each reader entry is produced from a real output. spark-tui's own exit line is matched as
    launch.py writes it."""
    from spark_tui import diagnose
    from spark_tui.core.launch.launch import SERVE_EXIT

    named = {f.id for p in SAMPLES.glob("*.log") for f in scan(p.read_text())}
    named |= {f.id for f in scan(f"{SERVE_EXIT} 1")}
    for ident, name in READER_SAMPLES.items():
        found = diagnose.analyse((DATA / "formats" / name).read_text())["findings"]
        if any(f["id"] == ident for f in found):
            named.add(ident)
    readers = {e.id for e in table().entries if e.reader}
    assert readers <= named
    assert {e.id for e in table().entries if not e.reader} - named == set()


def test_real_lines_that_are_no_failure_stay_not_recognised():
    """Real lines near a known failure's wording (a retry vLLM logs for a local folder that then
    loads, a healthy ConnectX probe, a torch
    connect retry) match nothing: no near match."""
    logs = sorted(NOT_RECOGNISED.glob("*.log"))
    assert len(logs) >= 5
    for p in logs:
        assert p.with_suffix(".source").read_text().startswith("https://github.com/"), p.name
        assert [f.id for f in scan(p.read_text())] == [], p.name


def test_every_family_has_real_samples():
    named = {f.family for p in SAMPLES.glob("*.log") for f in scan(p.read_text())}
    assert (
        set(table().families) - named == set()
    )  # ethtool's link entries are tested in test_diagnose_formats


def _entry(**over) -> str:
    base = {
        "id": "x.y",
        "family": "vllm",
        "severity": "error",
        "title": "t",
        "means": "m",
        "fix": "f",
        "source": "https://github.com/a/b/issues/1",
        "patterns": ["'some literal (?P<n>\\d+)'"],
        "figures": "{n: int}",
    }
    base.update(over)
    lines = [f"  {k}: {v}" if k not in ("patterns",) else f"  {k}: [{', '.join(v)}]" for k, v in base.items()]
    lines[0] = "- " + lines[0].lstrip()
    return "failures:\n" + "\n".join(lines) + "\n"


@pytest.mark.parametrize(
    "over, wording",
    [
        ({"severity": "fatal"}, "severity 'fatal'"),
        ({"family": "gpu"}, "family 'gpu'"),
        ({"source": "somewhere"}, "source must be"),
        ({"patterns": ["'(?:abc|def)'"]}, "no literal of 4+"),
        # the prefilter's `in` is case-sensitive: a case-insensitive part gives it no literal
        ({"patterns": ["'(?i)cuda error'"]}, "no literal of 4+"),
        ({"patterns": ["'(?i:cuda error) x'"]}, "no literal of 4+"),
        ({"patterns": ["'broken ('"]}, "bad regex"),
        ({"figures": "{m: int}"}, "captured by no pattern"),
        ({"fix": "'use {nope}'"}, "no such figure"),
        ({"figures": "{n: number}"}, "figures maps"),
        ({"when": "'n < limit'"}, "when compares two of its number figures"),
        ({"when": "'n == n'"}, "when compares two of its number figures"),
        ({"exceptions": "['Err']"}, "exceptions is a list of exception classes"),
        ({"exceptions": "['raise X(y)']"}, "exceptions is a list of exception classes"),
    ],
)
def test_a_malformed_entry_is_refused_naming_file_and_entry(over, wording):
    with pytest.raises(KnowledgeError) as err:
        parse_table(_entry(**over), "kb.yaml")
    assert str(err.value).startswith("kb.yaml:entry 1 (x.y): ") and wording in str(err.value)


def test_when_tells_two_entries_sharing_a_wording_apart_by_its_figures():
    """vLLM's `(X in the messages, Y in the completion)` is the prompt's fault only when X alone reaches the limit;
    a line without the figures is the entry its words say."""
    wording = "'limit (?P<limit>\\d+) asked(?: (?P<asked>\\d+))?'"
    over = _entry(
        id="x.over", patterns=[wording], figures="{limit: int, asked: int}", when="'asked >= limit'"
    )
    under = _entry(
        id="x.under", patterns=[wording], figures="{limit: int, asked: int}", when="'asked < limit'"
    )
    m = Matcher(parse_table(over + under.removeprefix("failures:\n"), "kb.yaml"))
    assert [f.id for f in m.match("limit 10 asked 12")] == ["x.over"]
    assert [f.id for f in m.match("limit 10 asked 3")] == ["x.under"]
    assert [f.id for f in m.match("limit 10 asked")] == ["x.over", "x.under"]
    real = "This model's maximum context length is 4096 tokens. However, you requested 4118 tokens (3118 in the messages"
    assert [(f.id, f.figures) for f in scan(real + ", 1000 in the completion).")] == [
        ("vllm.max_tokens_too_large", {"max_len": 4096, "length": 3118, "max_tokens": 1000})
    ]
    assert [f.id for f in scan(real.replace("3118", "4100") + ", 18 in the completion).")] == [
        "vllm.prompt_too_long"
    ]


def test_an_exception_class_names_its_entry_only_when_the_lines_words_name_none():
    """Ray prints `ray.exceptions.RuntimeEnvSetupError` alone on a line and the reason below it; huggingface_hub's
    classes carry any message. The class is the failure's kind, so it names its entry (`exceptions:`), but an entry
    named by the line's words comes first, and a line of code or a retry that mentions the class is no failure."""
    assert [f.id for f in scan("ray.exceptions.RuntimeEnvSetupError")] == ["ray.runtime_env_failed"]
    assert [f.id for f in scan("huggingface_hub.errors.GatedRepoError: something new went wrong")] == [
        "hub.gated"
    ]
    # a dotted name: torch's OutOfMemoryError is not Ray's memory monitor
    assert [f.id for f in scan("ray.exceptions.OutOfMemoryError: Task was killed")] == [
        "ray.memory_monitor_kill"
    ]
    assert [f.id for f in scan("torch.OutOfMemoryError: a new wording")] == ["cuda.out_of_memory"]
    for code in (
        "    except GatedRepoError:",
        "    raise GatedRepoError(message, response=response) from e",
        "Retrying call in 0.8 seconds as it raised GetTimeoutError: slow.",
        "NotGatedRepoError: x",
        "GatedRepoError, RepositoryNotFoundError and friends",
    ):
        assert scan(code) == [], code
    # the words name the port in use: torch's DistNetworkError (a lost store connection by its class) gives way
    words = (
        "torch.distributed.DistNetworkError: The server socket has failed to listen on any local network address. "
        "port: 29500, useIpv6: false, code: -98, name: EADDRINUSE, message: address already in use"
    )
    assert "torch.store_connection_lost" not in {f.id for f in scan(words)} and scan(words)


def test_a_literal_is_counted_in_bytes_so_three_cjk_characters_are_enough():
    """The shell's `Killed` in a Chinese locale is three characters, nine bytes: as rare as a long ASCII word."""
    kb = parse_table(_entry(patterns=["'^\\s*已杀死\\s*$'"], figures="{}"), "kb.yaml")
    assert [f.id for f in Matcher(kb).match("已杀死")] == ["x.y"] and Matcher(kb).match("已杀死的进程") == []
    with pytest.raises(KnowledgeError, match="no literal of 4\\+ bytes"):
        parse_table(_entry(patterns=["'^abc$'"], figures="{}"), "kb.yaml")


def test_a_case_insensitive_part_still_matches_any_case():
    """Its letters are left out of the prefilter's literal, so the line is not dropped before the regex runs."""
    kb = parse_table(_entry(patterns=["'(?i:cuda) error (?P<n>\\d+) in launch'"]), "kb.yaml")
    assert [f.id for f in Matcher(kb).match("CUDA error 700 in launch")] == ["x.y"]


def test_a_literal_inside_a_longer_literal_that_fails_still_lets_its_line_through():
    """The prefilter reports every literal a batch holds: a longer one that starts earlier (or shares the start)
    and does not complete must not hide it (pyahocorasick's iter_long did, so the line was never matched)."""
    long = _entry(
        id="x.long",
        patterns=["'] Watchdog caught collective operation timeout: WorkNCCL\\(SeqNum='"],
        figures="{}",
    )
    short = _entry(id="x.short", patterns=["'Watchdog caught collective operation timeout'"], figures="{}")
    two = long + short.removeprefix("failures:\n")
    w = Watch(matcher=Matcher(parse_table(two, "kb.yaml")))
    w.feed_lines(["[Rank 1] Watchdog caught collective operation timeout"])  # the longer one runs off the end
    assert [f.id for f in w.ranked()] == ["x.short"]


def test_the_prefilter_lets_through_exactly_the_lines_holding_a_literal():
    """Lines cut from the packaged table's own literals: a longer literal cut short just after a shorter one it
    holds, or one literal's head glued to another's tail. The batch prefilter keeps exactly the lines that hold one."""
    import random

    m = Matcher()
    needles = sorted({p.needle for e in m.table.entries for p in e.patterns + e.unless})
    inside = [(a, a.index(b) + len(b)) for a in needles for b in needles if b != a and b in a]
    assert inside  # the table has literals holding others: the case the prefilter once dropped
    rng = random.Random(27)
    for _ in range(300):
        lines = []
        for _ in range(rng.randint(1, 5)):
            if rng.random() < 0.5:
                a, end = rng.choice(inside)
                line = "[Rank 1] " + a[: rng.randint(end, len(a))]
            else:
                a, b = rng.choice(needles), rng.choice(needles)
                line = a[: rng.randint(0, len(a))] + b[rng.randint(0, len(b)) :]
            lines.append(line + rng.choice(["", " ok"]))
        assert m.hit_lines(lines) == [i for i, line in enumerate(lines) if any(n in line for n in needles)], (
            lines
        )


def test_a_literal_runs_into_and_out_of_groups_and_across_lookarounds():
    """A group is always matched and a lookaround matches no character: the literal on either side of one is one
    run in every matching line, so the prefilter gets the longer literal."""
    assert needle_of(r"Call to (?P<call>ibv_(?!modify_qp)\w+) failed", "t") == "Call to ibv_"
    assert (
        needle_of(r"(?<!x )GDS_MT: (?P<call>cuFileRead) failed: (?P<error>.+)", "t")
        == "GDS_MT: cuFileRead failed: "
    )
    assert needle_of(r"(?P<n>\d+) bytes(?P<free>, free \d+)", "t") == " bytes, free "
    # an optional part, an alternation or a (?i) part still ends a run
    assert needle_of(r"RPC (?:call|Call) to (?P<m>\w+) timed out", "t") == " timed out"
    assert needle_of(r"(?i:cuda) error (?P<n>\d+)", "t") == " error "


# Words or pieces of words that most logs hold, healthy or not: a pattern whose literal is one of them sends nearly
# every line to its regex. Session 23 measured such a slowdown (18%, Ollama's CUDA codes on the literal `cuda`).
COMMON_WORDS = (
    "Error: ", "error: ", "ERROR ", "Exception: ", " failed: ", "Failed to ", "failed to ", "Cannot ", "cannot ",
    "Call to ", "call to ", "connect to ", "Connection ", "CUDA", "cuda", "torch", "Warning", "WARNING", "INFO",
    "Model", "model", "Worker", "worker", "Process", "process", "memory", "Memory", "Request", "request", "Server",
    "server", "Timeout", "timeout", "Not Found", "not found", "Unable to ", "unable to ", "Invalid ", "invalid ",
    "Traceback", "NCCL INFO ", "NCCL WARN ", "Device", "device", "Address", "address", "Version", "version",
    "Config", "config", "Loading", "loading", "undefined",
)  # fmt: skip


def test_no_pattern_rests_on_a_word_most_logs_hold():
    weak = [
        (e.id, p.needle)
        for e in table().entries
        for p in e.patterns + e.unless
        if any(p.needle in word for word in COMMON_WORDS)
    ]
    assert weak == []


def test_no_pattern_is_written_twice():
    """A pattern twice in one entry, or in two entries, is a merge's leftover: one line, one kind."""
    where: dict[str, list[str]] = {}
    for e in table().entries:
        for p in e.patterns:
            if not p.by_class:
                where.setdefault(p.regex.pattern, []).append(e.id)
    assert {regex: ids for regex, ids in where.items() if len(ids) > 1} == {}


def test_a_healthy_log_sends_few_lines_to_the_regexes():
    """The prefilter's literals are rare in logs that hold no failure: one line in 25 at most reaches the
    regexes and names nothing (a pattern with a weak literal, such as a bare `cuda`, breaks this)."""
    m = Matcher()
    logs = [
        path.read_text()
        for path in sorted((DATA / "docker").glob("*.txt")) + sorted((DATA / "nccl").glob("*.txt"))
    ]
    lines = [
        line
        for text in logs
        if not [f for f in scan(text) if f.severity != "info"]
        for line in text.splitlines()
    ]
    idle = [lines[i] for i in m.hit_lines(lines) if not m.match(lines[i])]
    assert len(lines) > 400 and len(idle) <= len(lines) // 25, idle


def test_the_packaged_table_loads_and_an_id_is_used_once():
    assert len(table().entries) >= 80
    assert list(table().families) == list(FAMILIES)  # one file per family, read in that order
    twice = _entry() + _entry()[len("failures:\n") :]
    with pytest.raises(KnowledgeError, match=r"kb.yaml:entry 2 \(x.y\): id used twice"):
        parse_table(twice, "kb.yaml")


# What log collection puts before a program's line (engine.DECORATION): docker logs -t, compose, torchrun, vLLM's
# logger, a Ray actor, syslog/journald with dmesg's clock, mpirun, glog, Python logging, Ray's C++ logger; vLLM's
# workers, Ray's raylet, Kubernetes' CRI files, loguru, Python logging's default format, pytest, GitHub Actions.
DECORATIONS = [
    "2026-03-09T01:31:29.489253860Z ",
    "vllm-head-1  | ",
    "[rank0]: ",
    "ERROR 05-12 10:11:12 [core.py:123] ",
    "(RayWorkerWrapper pid=4242, ip=10.231.7.13) ",
    "Aug 15 18:15:59 spark-01 vllm[7405]: ",
    "2025-08-15T18:15:59+0000 spark-01 kernel: [  121.336005] ",
    "[1,0]<stderr>:",
    "I1119 10:08:56.123456    4242 plugin.go:123] ",
    "2024-11-19 10:08:56,123 ERROR ",
    "[2023-06-09 01:52:53,319 E 9906 9971] core_worker.cc:135: ",
    "(VllmWorker rank=0 pid=12345) ",
    "(raylet, ip=10.0.0.2) ",
    "2024-05-01T10:00:00.123456789Z stderr F ",
    "2024-06-01 10:00:00.123 | ERROR    | xinference.api:run:42 - ",
    "ERROR:root:",
    "[ERROR] ",
    "E       ",
    "##[error]",
]


@pytest.mark.parametrize("decoration", DECORATIONS)
def test_every_sample_line_keeps_its_name_behind_a_log_collectors_decoration(decoration):
    """A pattern anchored at the line's start (a bare `RuntimeError: Socket Timeout`, `Killed`, `link mlx5_0/1 ...
    state DOWN`) is tried again after the decoration: every line of every sample names the same entries with it."""
    m = Matcher()
    lines = [
        line for p in sorted(SAMPLES.glob("*.log")) for line in p.read_text(errors="replace").splitlines()
    ]
    named = [(line, {f.id for f in m.match(line)}) for line in lines]
    changed = [
        (line, ids) for line, ids in named if ids and {f.id for f in m.match(decoration + line)} != ids
    ]
    assert len([1 for _, ids in named if ids]) > 2000 and changed == []


# A line's figures change from one operator to the next: an address, a host, a model, a device, a rank, a path.
# Each variation puts other figures of the same shape in place (the wildcard 0.0.0.0 and error codes stay: they
# are words, not figures).
FIGURE_VARIATIONS = {
    "IPv4 address": (r"(?<![\d.])(?!0\.0\.0\.0)(?:\d{1,3}\.){3}\d{1,3}(?![\d.])", "172.31.204.17"),
    "Hub endpoint (an HF_ENDPOINT mirror)": (r"(?<=https://)huggingface\.co(?=/)", "hf-mirror.com"),
    "hex address": (r"0x[0-9a-fA-F]{6,}", "0x7f3a9c55d0"),
    "PCI bus id": (r"\b0000:[0-9a-f]{2}:[0-9a-f]{2}\.\d\b", "0000:c1:00.1"),
    "model id": (
        r"(?:(?<=['\" ])|(?<=\.co/))(?:meta-llama|Qwen|mistralai|deepseek-ai|google|microsoft|facebook|nvidia|openai|TheBloke|unsloth|"
        r"bigscience|tiiuae|stabilityai|THUDM|zai-org|moonshotai|lmsys|EleutherAI|BAAI|ibm-granite)/"
        r"[A-Za-z0-9_-]+(?:[.][A-Za-z0-9_-]+)*(?![\w.-]*/)",
        "acme-lab/Foo-Bar-13B-v2",
    ),
    "size": (r"\b\d+\.\d+(?= ?(?:GiB|MiB|GB|MB|KiB))", "987.65"),
    "ConnectX device": (r"\bmlx5_\d+\b", "mlx5_7"),
    "network device": (
        r"\b(?:enp1s0f0np0|enp1s0f1np1|enP2p1s0f0np0|enP2p1s0f1np1|eth0|eth1|ib0)\b",
        "enp9s0f1np1",
    ),
    "rank": (r"(?<=\b[Rr]ank )\d+\b|(?<=\b[Rr]ank)\d+\b|(?<=rank=)\d+", "13"),
    "home directory": (r"/home/[A-Za-z0-9_.-]+/", "/home/op_2/"),
    "process id": (r"(?<=pid=)\d+|(?<=pid )\d+|(?<=PID )\d+", "98765"),
    "port": (r"(?<=:)(?:6379|8000|8265|29500|12345|8080)\b", "47113"),
}


@pytest.mark.parametrize("variation", FIGURE_VARIATIONS)
def test_every_sample_line_keeps_its_name_when_its_figures_change(variation):
    """Patterns are anchored on the program's words, not on the figures one reporter had: the same line from
    another node, model, mirror or rank names the same entries."""
    rx, other = FIGURE_VARIATIONS[variation]
    m = Matcher()
    lines = {
        line for p in sorted(SAMPLES.glob("*.log")) for line in p.read_text(errors="replace").splitlines()
    }
    varied = [(line, re.sub(rx, other, line)) for line in sorted(lines)]
    named = [(line, v, {f.id for f in m.match(line)}) for line, v in varied if v != line]
    named = [(line, v, ids) for line, v, ids in named if ids]
    changed = [
        (line, ids, {f.id for f in m.match(v)}) for line, v, ids in named if {f.id for f in m.match(v)} != ids
    ]
    assert len(named) >= 10 and changed == []


# An exception's class dropped by whoever pasted the line (`RuntimeError: X` -> `X`), the message kept.
EXCEPTION_CLASS = re.compile(
    r"^(?:.*?\s)?(?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception|Exit|Interrupt|Warning|Failure)\b(?:\[[^\]]*\])?:\s+(?=\S)"
)
# Samples whose line names its failure only with the class (or the words before it): the message alone says no
# one failure (README, "What a line names").
NAMED_BY_THEIR_CLASS = {
    # an HTTP status and a request id: any server's answer; huggingface_hub's class says the Hub and what it lacked
    "c16hub_hub_forbidden_cut",
    "c16hub_hub_repo_not_found_lines",
    "gen_hub_rate_limited_hfhub_no_url",
    "hub_entry_not_found",
    "hub_entry_not_found_api_tree",
    "hub_entry_not_found_error_line",
    "hub_gated_401",
    "hub_gated_restricted",
    "hub_remote_entry_not_found_hub1",
    "hub_repo_not_found_401",
    "hub_repo_not_found_404",
    "hub_revision_not_found",
    # an errno's text (`[Errno 12] Cannot allocate memory`, `No such device (os error 19)`): any call's failure
    "fork_enomem",
    "fork_enomem_pool",
    "hub_cache_no_file_locks",
    "hub_safetensors_mmap_mergerfs",
    "hub_safetensors_mmap_rank0",
    # a bare key or Python's own generic words: KeyError is what says a weight was looked up
    "lead_vllm_weight_keyerror_ascend",
    "lead_vllm_weight_keyerror_kv_scale",
    "t21a_weight_keyerror_bitmask",
    "vllm_torch_compile_failed_typeerror",
    # Ray's one message for several errors ('Failed to retrieve object X'): the class says whether the owner died,
    # the object was lost or its fetch timed out; Ray's `System error:` and socket EOF say no one failure either
    "g3_ray_object_reconstruction_failed",
    "ray_owner_died",
    "ray_owner_died_preemption",
    "t17exc_ray_object_fetch_timed_out",
    "ray_system_error_broken_pipe",
    "ray_worker_register_socket_eof_recogdrive",
    # words many programs print (`N is not divisible by M`, `Request timed out.`, `Unsupported model type X`,
    # `Architecture X not supported`, glog's `Check failed:`): the class or the words before it say whose
    "c16vllm_tp_size_not_divisible",
    "c16vllm_tp_size_not_divisible_vocab",
    "g19vllmB_openai_request_timeout_bare_name",
    "tgi2_unsupported_model_type_cogvlm2",
    "tgi2_unsupported_model_type_mistral",
    "torch_store_wait_timeout",
    "vllm_flashinfer_kernel_failed_gb10",
    "vllm_flashinfer_sparse_mla_check",
    "vllm_gguf_architecture_unsupported_legacy",
    "vllm_structured_output_schema_maximum",
    # a socket's `Connection reset by peer`: the TCPStore before the class is what says whose connection (t24h)
    "t24h_tcpstore_reset_title",
    # the class tells the failure from the warning: SGLang logs the same words when its check is turned off
    "srcservers_sglang_memory_unbalanced",
}


def test_every_sample_line_keeps_its_name_without_its_exception_class():
    """A message pasted without its exception's class still names its failure when its own words say it; the
    samples whose class is what says it are listed above, each for its reason."""
    m = Matcher()
    cut, lost = 0, set()
    for name in NAMES:
        for line in _sample(name).splitlines():
            ids = {f.id for f in m.match(line)}
            found = EXCEPTION_CLASS.match(line) if ids else None
            if found is None or len(line) - found.end() < 25:
                continue
            cut += 1
            if not ids & {f.id for f in m.match(line[found.end() :])}:
                lost.add(name)
    assert cut >= 500
    assert lost <= NAMED_BY_THEIR_CLASS, sorted(lost - NAMED_BY_THEIR_CLASS)
    assert NAMED_BY_THEIR_CLASS <= set(NAMES)


# Sample lines cut at a word boundary (a title, a narrow terminal) whose front words still say the failure in the
# program's own words: (sample, words kept of its first named line). Session 24 made these patterns' trailing parts
# (a figure, a hint, the rest of a sentence) optional (u24, then u24b's 200 more drawn with random.Random(25), then
# u24e's 200 with random.Random(28), u24f's 200 with random.Random(29)); a later narrowing shows up here.
CUT_AT_THEIR_END = [
    ("c16dist_nccl_invalid_usage_nccl_tests", 8),
    ("c16dist_ray_client_python_mismatch", 10),
    ("c16hub_docker_compose_gpu_regexes", 7),
    ("c16hub_docker_runtime_hook_not_installed", 8),
    ("c16hub_hub_forbidden_cut", 5),
    ("c16vllm_kv_cache_too_small_wrapped", 10),
    ("c16vllm_sglang_overlap_worker_died", 8),
    ("c17serve_ray_serve_replica_exception", 12),
    ("c17serve_tensorrt_plan_library_version", 14),
    ("c17train_jax_out_of_memory_allocating", 5),
    ("c17train_transformer_engine_fp8_capability", 7),
    ("c17train_transformer_engine_fp8_capability_9x", 6),
    ("c17train_transformers_bf16_amp_unsupported", 10),
    ("c17train_verl_total_available_gpus_less", 8),
    ("cpu_thermal_throttle_dmesg", 9),
    ("cuda_fmha_kernel_sm121_spark", 7),
    ("cuda_invalid_configuration_flashmla", 5),
    ("cuda_launch_failure_legacy", 7),
    ("cuda_libcuda_missing_server", 11),
    ("cuda_oom_cudamalloc_ctx", 8),
    ("cuda_peer_access_unsupported", 8),
    ("cudnn_no_algorithm_conv3d", 7),
    ("cudnn_no_engine_dinov2", 8),
    ("cudnn_version_mismatch_functorch", 11),
    ("cudnn_version_mismatch_kohya", 23),
    ("docker_bind_source_missing_snap", 12),
    ("docker_containerd_failed_to_dial", 8),
    ("docker_gpu_mount_enroot_not_permitted", 6),
    ("docker_layer_untar_legacy", 10),
    ("docker_network_mode_port_conflict", 9),
    ("docker_registry_denied_push", 15),
    ("docker_registry_proxy_refused", 9),
    ("g18vllm_mm_limit_title_glm4", 6),
    ("g19cuda_device_busy_lowercase", 9),
    ("g19docker_bind_source_missing_stack_deploy_cut", 9),
    ("g19docker_crun_setrlimit_memlock", 6),
    ("g19docker_dkms_make_error_nvidia_drm", 5),
    ("g19s18_docker1_container_command_nvidia_smi", 9),
    ("g19s18_hf_repo_id_form_title_trimmed", 7),
    ("g3_cuda_jax_bfc_request", 9),
    ("g3_docker_cert_v1_other_name", 7),
    ("g3_driver_fabricmanager_version_doesnt", 18),
    ("g3_system_disk_print_req_error", 9),
    ("g3va_openai_tool_choice_without_tools", 18),
    ("g3va_sglang_nan_probability", 9),
    ("g3vb_fp8_moe_gate_up_not_divisible_sglang", 12),
    ("g3vb_state_dict_size_mismatch_llama31", 14),
    ("g3vb_state_dict_size_mismatch_t5", 14),
    ("g3vb_tgi_no_local_weights", 6),
    ("g4_cuda_cudnn8_nvrtc_unversioned", 13),
    ("g4_cuda_trt7_engine_other_gpu", 14),
    ("g4va_cutlass_arch_conditional_mma", 6),
    ("g4vc_hybrid_kv_unify_failed", 16),
    ("gen2_system_segfault_ucx", 9),
    ("gen2_system_segfault_ucx_nil", 10),
    ("gen_cuda_assert_710_thc", 7),
    ("gen_docker_daemon_legacy_docker_d", 8),
    ("gen_docker_no_arch_podman_index", 14),
    ("gen_docker_port_desktop_windows", 20),
    ("gen_link_mlx5_cmd_rtr2rts", 8),
    ("gen_sglang_scheduler_dead", 9),
    ("gen_system_thread_limit_openblas", 8),
    ("gsp_firmware_missing", 7),
    ("hub_checkpoint_unexpected_eof", 8),
    ("hub_incorrect_path_or_model_id", 14),
    ("k15a_ray_spill_nonetype", 14),
    ("k15b_cuda_device_mismatch_bare", 12),
    ("k15b_cuda_device_mismatch_got_on", 20),
    ("k15b_cuda_device_mismatch_index_select", 18),
    ("k15b_link_mlx5_cmd_out_err_query", 9),
    ("k15c_compose_undefined_network", 6),
    ("k15c_compose_undefined_service_quoted", 6),
    ("k15c_compose_v1_named_volume", 12),
    ("k15c_sigfpe_ucx_cublaslt", 8),
    ("k15d_nccl_ofi_register_memory_rail", 12),
    ("k24_hub_file_too_large_hf_transfer_or_xet", 12),
    ("k24_ollama_server_busy_max_pending", 6),
    ("kernel_hung_task_nvidia_uvm", 8),
    ("kernel_oops_arm64_rpi5", 8),
    ("kernel_oops_arm_old_pc_is_at", 11),
    ("link_no_userspace_driver", 6),
    ("link_tx_timeout_cpu", 15),
    ("modprobe_nvidia_not_found_cloud", 6),
    ("n20_cute_dsl_tcgen05_sm121a", 13),
    ("n20_cute_dsl_warp_mma_sm121a", 9),
    ("n20_fastsafetensors_bufregister_5016", 5),
    ("nccl_bootstrap_address_comm_id", 12),
    ("nccl_communicator_aborted", 12),
    ("nccl_ib_async_catastrophic_legacy", 10),
    ("nccl_invalid_argument_legacy", 11),
    ("nccl_poll_connect_retry_no_route", 12),
    ("nccl_proxy_service_thread_error", 9),
    ("nccl_shm_fallocate_legacy", 10),
    ("nccl_shm_no_space", 15),
    ("nccl_system_error_pynccl", 11),
    ("nccl_watchdog_work_timeout", 24),
    ("ngc_driver_too_old_tensorrt", 8),
    ("nvidia_module_symbol_uvm_gpl", 5),
    ("nvrm_gpu_is_lost_assert", 14),
    ("oom_cgroup_v1_docker_limit", 8),
    ("page_allocation_failure", 5),
    ("ray_client_timeout_gcs_port", 18),
    ("ray_gcs_died_raylet_check", 16),
    ("ray_gcs_start_failed", 10),
    ("ray_gcs_unreachable_cpp", 11),
    ("ray_init_num_gpus_existing_cluster", 9),
    ("ray_out_of_disk_spilling", 18),
    ("ray_port_conflict", 12),
    ("ray_raylet_oom_summary", 18),
    ("ray_runtime_env_raylet", 16),
    ("ray_session_not_found", 14),
    ("ray_subprocess_exited_title", 8),
    ("ray_unschedulable_placement", 13),
    ("ray_worker_start_timeout_dead", 19),
    ("rcu_stall_zfs_old", 10),
    ("rdma_librdmacm_no_devices", 6),
    ("sglang_sigquit_child", 9),
    ("srchub_hub_endpoint_no_content_length", 5),
    ("srcservers_sglang_watchdog_timeout", 5),
    ("static_tls_ros2", 5),
    ("static_tls_trt_pose", 6),
    ("t16a_api_not_supported_fastertransformer", 9),
    ("t16a_coop_launch_nvshmem_deepep", 7),
    ("t16b_ucx_endpoint_timeout_retry", 16),
    ("t17exc_server_disconnected_http_client", 5),
    ("t20a_processor_multiple_values_ascend", 5),
    ("t20b_completion_error_12_vendor_129", 10),
    ("t20b_elastic_failed_exitcode_6", 12),
    ("t20b_should_dump_flag_tcpstore_reset", 22),
    ("t20e_trtllm_h11_peer_closed", 8),
    ("t20g_daemon_json_directives_cut", 12),
    ("t20h_ggml_loader_reads_gguf_docker", 10),
    ("t20h_ggml_loader_reads_gguf_llama_index", 10),
    ("t21a_fp8_transformers_capability", 10),
    ("t21a_hma_lmcache_connector", 9),
    ("t21a_hma_offloading_connector", 7),
    ("t21c_working_dir_large_file_git_pack", 17),
    ("t21d_nvidia_runtime_find_runc", 10),
    ("t21e_cudnn_mismatch_then_dnn_init", 8),
    ("t21e_libcuda_tf_cuinit_303", 14),
    ("t21e_ptxas_feature_bf16_mamba", 10),
    ("t21g_mistralrs_unsupported_class_title", 5),
    ("t22b_mooncake_no_etcd_plugin", 7),
    ("t22b_torch_store_connect_validate_reset", 14),
    ("t22c_ray_data_operator_abort", 18),
    ("t23b_ompi_mpi_abort_rank0", 8),
    ("t23c_ray_worker_died_retyped", 10),
    ("t23c_verl_register_center_missing", 7),
    ("t23d_es_max_map_count_elk_compose", 12),
    ("t23d_es_max_map_count_likely", 9),
    ("t23d_systemd_old_exec_step_no_unit", 8),
    ("t23e_ggml_gallocr_cuda0_alone", 6),
    ("t23g_bench_initial_test_not_found_title", 12),
    ("t23g_comfyui_node_linux_path", 7),
    ("t23g_ollama_wrong_number_of_tensors", 12),
    ("t23g_triton_trtllm_engine_config_empty", 26),
    ("t23g_trtllm_mpi_size_tp_pp", 6),
    ("t23h_cuda_matx_out_of_memory", 7),
    ("t24g_trtllm_w4afp8_pre_hopper", 6),
    ("tgi2_sharded_needs_flash_attention", 5),
    ("tgi_input_too_long_inputs", 8),
    ("tgi_not_enough_memory_total", 12),
    ("tokenizers_untagged_enum", 10),
    ("torch_cuda_driver_init_failed_error", 8),
    ("torch_elastic_sighup", 5),
    ("torch_gloo_peer_closed_no_address", 5),
    ("torch_gloo_peer_lost", 5),
    ("torch_nccl_no_gpu_transformers", 6),
    ("torch_num_gpus_assert_deferred", 25),
    ("torch_rendezvous_timeout", 10),
    ("torch_store_client_retrying", 14),
    ("torch_store_send_broken_pipe", 21),
    ("transformers_import_failed_bare", 10),
    ("transformers_remote_code_flash_attn_inline", 22),
    ("triton_key_import_inductor", 5),
    ("triton_mlir_pipeline_fastkmeans", 8),
    ("vllm2_swap_space_exhausted_ray_worker", 14),
    ("vllm_custom_all_reduce_failed", 5),
    ("vllm_cutlass_kernel_missing", 12),
    ("vllm_encoder_cache_image", 39),
    ("vllm_engine_variant_v1", 5),
    ("vllm_hybrid_kv_cache_unsupported", 10),
    ("vllm_invalid_repo_id", 6),
    ("vllm_kv_cache_dtype_invalid", 9),
    ("vllm_lora_vocab_size_nemo", 8),
    ("vllm_mamba_block_over_batched_tokens", 13),
    ("vllm_max_tokens_too_large", 8),
    ("vllm_mm_item_over_batched_tokens_whisper", 12),
    ("vllm_mm_limit_found_v060", 12),
    ("vllm_no_chat_template_400", 18),
    ("vllm_no_platform_detected", 8),
    ("vllm_prompt_too_long_v0_scheduler", 8),
    ("vllm_quant_dtype_unsupported_gptq", 8),
    ("vllm_quant_dtype_unsupported_mxfp4", 10),
    ("vllm_ray_bundle_index_invalid", 8),
    ("vllm_structured_output_backend_mismatch", 5),
    ("vllm_task_unsupported_reward", 8),
    ("vllm_torch_compile_inner_exception", 5),
    ("vllm_triton_shared_memory_t4", 14),
    ("vllm_weight_shape_mismatch", 6),
    ("vllm_zmq_cannot_assign", 5),
    ("w15b_vllm_sequence_classification_unsupported", 6),
    ("w16_driver_kmod_builtin_missing_zfs", 6),
    ("w16_driver_kmod_moddep_missing_busybox", 6),
    ("w17_pcie_aer_nonfatal", 10),
    # u24f: 200 more drawn with random.Random(29)
    ("c16cuda_distutils_unable_to_execute_nvcc", 6),
    ("c16cuda_tensorrt_error_code_2_oom", 8),
    ("c16cuda_tensorrt_error_code_2_requested_size", 7),
    ("c16cuda_torch1_tensor_for_argument_on_cpu", 14),
    ("c16hub_docker_cdi_hook_missing", 24),
    ("c16hub_docker_rate_limited_bare", 6),
    ("c17infra_gpu_operator_driver_ctr_no_kernel_build_dir", 6),
    ("c17serve_dify_context_length_messages", 25),
    ("c17serve_openai_client_vllm_read_timeout", 7),
    ("c17train_pip_not_a_supported_wheel", 6),
    ("c17train_xformers_no_operator_not_built", 5),
    ("docker_api_too_new", 10),
    ("docker_compose_devices_unexpected", 6),
    ("docker_gpu_not_in_container_legacy", 9),
    ("docker_manifest_unknown", 8),
    ("docker_mount_not_a_directory_legacy", 36),
    ("docker_registry_dns_build", 7),
    ("docker_registry_proxy_getsockopt", 10),
    ("docker_rlimit_nofile_legacy", 22),
    ("docker_shm_torch_file", 9),
    ("docker_user_not_found", 10),
    ("g18docker_port_desktop_title", 8),
    ("g18docker_singularity_nvccli_missing", 10),
    ("g19cuda_gated_request_pending", 23),
    ("g19s18_nvml_mismatch_title_case", 6),
    ("g19s18_proxy_error_connecting_go_old", 12),
    ("g19vllmA_binary_mismatch_relative_no_colon", 5),
    ("g3_cuda_cupy_pool_to_allocate", 7),
    ("g3_docker_cert_valid_for_other_name", 10),
    ("g3_docker_compose_v1_unreachable", 8),
    ("g3_driver_dkms_dpkg_status10", 10),
    ("g3_system_disk_end_request_ext4_warning", 8),
    ("g3va_rust_os_addr_in_use", 12),
    ("g3vc_transformers_bnb_needs_accelerate", 14),
    ("g4_link_nccl_async_fatal_qp", 13),
    ("g4_link_nccl_async_fatal_qp_access", 16),
    ("g4_ray_driver_announce_port", 9),
    ("g4va_quant_scheme_capability_sentence", 10),
    ("gen2_cuda_numba_cuinit_unknown", 5),
    ("gen_docker_port_desktop_exposing", 14),
    ("gen_nccl_ucx_retry_exceeded_roce", 10),
    ("gen_tgi_shard_size_not_divisible_bloom", 8),
    ("gsp_init_failed_wpr2", 8),
    ("hub_checkpoint_truncated_gen6d", 6),
    ("k15b_link_mlx5_cmd_check_bad_state", 10),
    ("k15c_compose_schema_develop", 6),
    ("k24_llamacpp_v_cache_quantization_requires_flash_attn", 5),
    ("n20_nim_not_multimodal", 5),
    ("nccl_gid_link_local", 6),
    ("nccl_ib_completion_error_plugin_legacy", 15),
    ("nccl_system_error_ray_worker", 12),
    ("nccl_watchdog_hang", 16),
    ("nvrm_gpu_not_supported_legacy", 10),
    ("ray_gcs_reconnect_failed", 14),
    ("ray_not_started_tune", 10),
    ("systemd_oomd_killed_service", 8),
    ("t16b_ucx_net_device_not_available", 15),
    ("t16b_ucx_ud_unhandled_timeout", 13),
    ("t16c_pycharm_sigabrt", 7),
    ("t20e_deerflow_peer_closed", 9),
    ("t20h_bnb_something_unexpected_jetson", 6),
    ("t21c_resource_precision_node_resource", 9),
    ("t22g_trtllm_fp8_fmha_arch_5090", 14),
    ("t23b_mooncake_no_available_rnic_gid_query", 10),
    ("t23c_pynvml_error_unpickle_typeerror", 9),
    ("t23d_bash_ulimit_memlock_denied", 8),
    ("t23i_vllm_hf_image_features_tokens", 8),
    ("t24b_openai_model_not_found_groq", 10),
    ("t24c_torch_libuv_unsupported_retold", 7),
    ("t24g_matryoshka_dimensions_got", 7),
    ("t24g_trtllm_draft_tokens_over_max", 22),
    ("transformers_remote_code_flash_attn_bare", 12),
    ("vllm_chat_api_unsupported", 6),
    ("vllm_gguf_architecture_unsupported_minimax", 6),
    ("vllm_nan_probabilities_ray", 8),
    ("vllm_quant_shard_marlin", 20),
    ("vllm_structured_output_regex_invalid", 7),
    ("vllm_transformers_config_clash_cosmos", 8),
    ("vllm_transformers_config_clash_glm", 8),
    ("w17_no_rdma_dpdk_mlx5", 8),
    ("w17_torch_nccl_alltoall_old_build", 7),
    # session 24 (u24h): 200 more lost tail cuts drawn with random.Random(31)
    ("c16hub_docker_cdi_hook_missing_start", 26),
    ("c17infra_nerdctl_gpus_no_container_cli", 6),
    ("c17train_diffusers_no_file_named_fp16_bin", 6),
    ("c17train_uv_torch_cu128_no_aarch64_wheel", 14),
    ("cuda_os_call_failed_seccomp", 10),
    ("cuda_ptx_toolchain_vllm", 12),
    ("cuda_too_many_resources_driver", 8),
    ("cudnn_libs_missing_xtts", 11),
    ("docker_container_restarting", 12),
    ("docker_layer_verification", 6),
    ("docker_no_gpu_driver", 9),
    ("docker_port_not_available_desktop", 14),
    ("docker_volume_spec_windows_path", 8),
    ("g18ray_worker_import_failed_unpickle", 10),
    ("g19cuda_theano_device_oom", 22),
    ("g19docker_bind_source_missing_escaped_quotes", 11),
    ("g19docker_compose_v1_dockerfile_path_lstat", 12),
    ("g19docker_registry_x509_legacy_common_name", 8),
    ("g3_nccl_remote_error_xla", 12),
    ("g3_ray_driver_put_not_reconstructed", 14),
    ("g3new_hub_expected_size_zero_force", 10),
    ("g3va_vllm_detokenizer_streaminput_typeerror", 10),
    ("g3vc_sglang_request_truncated", 10),
    ("g4_nccl_net_plugin_dlerror", 16),
    ("gen_cuda_libcuda_unversioned_cudnn", 11),
    ("gen_docker_exec_format_shell", 6),
    ("gen_link_orangefs_rtr_rts", 5),
    ("gen_nccl_ring_loop_back", 12),
    ("hub_specific_connection_error_416", 8),
    ("nccl_ibv_reg_mr_failed", 8),
    ("oom_kill_process_sacrifice_child", 8),
    ("ray_actor_creation_task_failed", 19),
    ("t17exc_hub_connect_timeout_class", 8),
    ("t20a_sglang_detokenizer_lowercase_title", 16),
    ("t20c_vllm_build_ptxas_segfault_title", 10),
    ("t20f_ucx_ibv_create_ah_timed_out", 21),
    ("t22h_torch_indices_on_other_device", 11),
    ("t23g_bench_initial_test_forbidden", 10),
    ("t23g_transformers_temperature_zero_old", 8),
    ("t23j_nvshmem_ibgda_no_active_device", 8),
    ("t24a_triton_backend_library_missing", 18),
    ("t24b_aiohttp_connect_call_failed_webui", 8),
    ("t24d_ray_dashboard_log_undecodable", 29),
    ("t24g_vllmrs_quark_unsupported", 10),
    ("vllm_chat_roles_must_alternate", 12),
    ("vllm_flash_attn_dtype_xinference", 7),
    ("vllm_kv_cache_too_small_wrapped", 13),
    ("vllm_local_world_size", 9),
    ("vllm_placement_group_bundle_gpus", 8),
    ("vllm_prompt_too_long_max_tokens_negative", 14),
    ("vllm_quantization_mismatch", 14),
    ("vllm_quantization_scheme_unsupported", 12),
    ("vllm_tool_parser_tokens_missing", 10),
    ("vllm_tp_gpus_per_node_divisible", 10),
    ("vllm_tp_heads_divisible", 10),
    ("vllm_unsupported_architecture_ovis", 12),
    ("w17_pcie_aer_egpu", 6),
    ("w17_ray_runtime_env_local_dir_actor", 17),
    ("gen2_system_thread_limit_rust", 13),
    ("c17dist_mooncake_erdma_register_memory_eio", 8),
    ("torch_default_group_missing_train", 24),
    ("g3vc_transformers_bnb_4bit_min_version", 8),
    ("c16cuda_torch_conv_input_cpu_weight_cuda", 8),
    ("t21a_nixl_mamba_conv_layout", 12),
    ("g3va_mlx_tool_choice_required_no_tools", 13),
    ("c16vllm_sglang_kernel_missing_gb10", 6),
    ("cuda_ext_version_mismatch_wrapped", 8),
    ("docker_user_not_found_compose", 10),
    ("torch_elastic_failed_exitcode", 7),
    ("cuda_device_busy_torch", 6),
    ("c16hub_hub_repo_not_found_llama_stack", 8),
    ("g3vb_cutlass_scaled_mm_less_than_capability", 17),
    ("t22h_torch_rnn_input_parameter_devices", 14),
    ("vllm_attention_sinks_unsupported", 8),
    ("t24i_nvcc_failed_exit_status_dcnv2", 5),
    ("t22h_torch_rnn_devices_fullwidth_colon", 13),
    ("docker_compose_network_external_missing", 6),
    ("t24b_continue_ollama_model_not_found", 8),
    ("gen_system_oom_cgroup_el7", 13),
    ("t20e_openrs_trl_server_not_up", 7),
    ("g3va_ollama_windows_one_usage", 11),
    ("host_apei_memory_error", 10),
    ("g18docker_proxy_tls_to_http_proxy", 12),
    ("t21b_mooncake_store_transfer_fail_ascend", 8),
    ("tgi_not_enough_memory_prefill", 12),
    ("hub_tokenizer_protobuf_missing", 12),
    ("srcinfra_dockerfile_missing", 10),
    ("torch_gloo_no_address_hostname", 9),
    ("hub_tokenizer_tiktoken_missing", 12),
    ("torch_gloo_connect_full_mesh_ray", 8),
    ("g3vc_tgi_sharded_flash_kernels", 7),
    ("vllm_chat_roles_must_alternate_jinja", 5),
    ("pf9b_pci_region_invalid", 8),
    ("torch_store_should_dump_flag", 24),
    ("vllm_unknown_quantization", 7),
    ("t20f_ompi_ucx_create_ah_invalid_argument", 12),
    ("tgi_added_token_not_consecutive", 11),
    ("vllm_model_type_missing_docker", 8),
    ("nccl_duplicate_gpu", 10),
    ("g4_driver_dkms_nvidia_installer", 8),
    ("nccl_poll_connect_no_route", 12),
    ("cuda_headers_missing_pointnet", 10),
    ("t23c_ray_gcs_server_external_redis_unreachable", 19),
    ("ray_actor_creation_task_serve", 16),
    ("cuda_device_assert_index", 7),
    ("w16_vllm_flashinfer_workspace_buffer_overflow", 17),
    ("c16cuda_libcuda_no_nvidiactl", 8),
    ("link_mlx5_cmd_timeout", 7),
    ("t23c_k8s_operator_pod_failed_quota", 12),
    ("vllm_tool_call_parse_failed_full", 13),
    ("k15a_ray_spill_object_ref_missing", 12),
    ("nccl_poll_connect_poll_failed", 8),
    ("docker_api_client_newer", 11),
    ("docker_api_socket_missing", 22),
    ("nccl_shm_attach_failed_p2p", 14),
    ("vllm_mm_limit_exceeded_legacy", 12),
    ("t23a_sampling_best_of_beam", 8),
    ("w16_vllm_flashinfer_workspace_aligned_alloc_error", 22),
]


@pytest.mark.parametrize(("name", "words"), CUT_AT_THEIR_END, ids=[n for n, _ in CUT_AT_THEIR_END])
def test_a_line_cut_at_its_end_keeps_its_name(name, words):
    """A line cut after its front words names what the whole line names, when those words are the program's own
    and say one failure (README, "What a line names"); cut lines are not real lines, so they are no samples."""
    m = Matcher()
    line = next(line for line in _sample(name).splitlines() if m.match(line))
    cut = " ".join(line.split(" ")[:words])
    assert cut != line, f"{name}: {words} words are the whole line"
    ids = {f.id for f in m.match(line)}
    assert ids & {f.id for f in m.match(cut)}, (cut, ids)


# Sample lines whose quoted words, paths and figures a person retypes without their quotes or backticks (an issue
# title, a chat message): `'NCCLCommunicator' object has no attribute 'comm'` -> `NCCLCommunicator object has no
# attribute comm`. Session 24 (u24d) made these patterns' quotes optional; retyped lines are no samples.
RETYPED_WITHOUT_QUOTES = [
    "c16cuda_nvcc_path_not_found",
    "c16cuda_torch13_expected_device_type",
    "c16cuda_torch1_tensor_for_argument_on_cpu",
    "c16cuda_torch1_tensor_for_out_on_cpu",
    "c16dist_nccl_cuda_error_last_error_line",
    "c16hub_docker_compose_gpu_no_capabilities",
    "c16hub_docker_compose_gpu_regexes",
    "c16hub_docker_dockershim_runtime_handler",
    "c16hub_hub_repo_not_found_hint_only",
    "c16hub_hub_repo_not_found_llama_stack",
    "c16vllm_gguf_arch_llama_server",
    "c16vllm_sglang_kernel_not_installed",
    "c16vllm_unknown_attention_backend",
    "c16vllm_unknown_attention_backend_plain",
    "c17dist_lmcache_redis_remote_connection_reset",
    "c17dist_rayserve_controller_replica_stopped",
    "c17infra_nerdctl_gpus_no_container_cli",
    "c17infra_podman_cdi_stale_host_device",
    "c17infra_pyxis_container_name_missing",
    "c17serve_fastchat_worker_read_timeout",
    "c17serve_openai_client_vllm_read_timeout",
    "c17serve_ray_serve_replica_exception",
    "c17serve_ray_serve_replica_exception_llm",
    "c17train_comfyui_xformers_no_operator_blackwell",
    "c17train_jax_ptx_version_does_not_support_target",
    "c17train_uv_torch_cu128_no_aarch64_wheel",
    "c17train_xformers_no_operator_not_built",
    "cuda_device_assert_index",
    "cuda_oom_nvml_assert_handle",
    "cuda_oom_nvml_assert_report",
    "cuda_ptxas_unsupported_version_nvcc",
    "docker_bind_source_missing",
    "docker_bind_source_missing_snap",
    "docker_build_step_apt_exit_100",
    "docker_build_step_mkdir_exit_1",
    "docker_compose_devices_unexpected",
    "docker_containerd_failed_to_dial",
    "docker_daemon_json_invalid",
    "docker_device_missing",
    "docker_executable_not_found_runc",
    "docker_gpu_cdi_unresolvable",
    "docker_gpus_flag_count_not_integer",
    "docker_gpus_flag_unexpected_key",
    "docker_manifest_not_found_containerd",
    "docker_manifest_not_found_vllm_runner",
    "docker_mount_source_readonly",
    "docker_mount_source_readonly_compose",
    "docker_no_gpu_driver_nvidia",
    "docker_nvidia_runtime_not_in_path",
    "docker_podman_name_in_use_by",
    "docker_podman_pod_name_in_use",
    "docker_podman_short_name_no_registries",
    "docker_registry_denied_ghcr",
    "docker_registry_denied_ghcr_bare",
    "docker_registry_denied_ghcr_compose",
    "docker_registry_denied_nvcr",
    "docker_stop_apparmor",
    "docker_volume_name_relative",
    "docker_volume_name_variable",
    "docker_volume_spec_empty_host",
    "docker_volume_spec_unset_var",
    "docker_volume_spec_windows_path",
    "driver_peermem_symbol_version",
    "flashinfer_no_nvcc_file",
    "g18cuda_hub_lock_permission_denied",
    "g18docker_containerd_dial_client",
    "g18docker_env_bash_crlf_build",
    "g18docker_gpu_driver_no_colon_title",
    "g18docker_gpu_driver_trimmed_title",
    "g18docker_name_in_use_compose_run",
    "g18docker_name_in_use_title",
    "g18docker_nvcr_head_unauthorized",
    "g18docker_podman_runtime_nvidia_missing",
    "g18docker_singularity_nvccli_missing",
    "g18ray_worker_import_failed_unpickle",
    "g18vllm_api_parallel_utils_moved",
    "g18vllm_api_ray_utils_name_moved",
    "g18vllm_flashinfer_module_missing_sglang",
    "g18vllm_route_fastapi_detail_not_found",
    "g19cuda_html_checkpoint_title_case",
    "g19cuda_instructlab_incomplete_read",
    "g19cuda_lfs_pointer_title",
    "g19cuda_lfs_pointer_wrapped_exception",
    "g19docker_bind_source_missing_stack_deploy_cut",
    "g19s18_hf_repo_id_form_title_trimmed",
    "g19vllmB_multiproc_executor_io_thread_pool",
    "g3_docker_build_context_missing",
    "g3_docker_build_context_missing_step",
    "g3_docker_daemon_invoke_rc",
    "g3_docker_forbidden_head",
    "g3_docker_image_never_pull",
    "g3_docker_image_never_pull_skaffold",
    "g3_docker_qemu_x86_loader",
    "g3_docker_qemu_x86_loader_podman_build",
    "g3_docker_registry_denied_period",
    "g3_driver_dkms_xbps",
    "g3_hub_checkpoint_html",
    "g3_hub_modelscope_500_retries",
    "g3_hub_modelscope_read_timeout",
    "g3_hub_modelscope_unreachable",
    "g3_hub_repo_id_new_wording",
    "g3_hub_sentencepiece_autotokenizer",
    "g3_hub_sentencepiece_remote_code",
    "g3_ray_serve_replicas_unscheduled",
    "g3_ray_serve_replicas_unscheduled_old",
    "g3_ray_serve_replicas_unscheduled_vllm",
    "g3_system_module_insmod_old",
    "g3_system_module_modules_load",
    "g3_system_oom_unit_result",
    "g3new_openllm_auto_map_missing",
    "g3new_xinference_reasoning_content",
    "g3va_clap3_found_argument",
    "g3va_clap_unexpected_argument",
    "g3va_gguf_converter_arch_double_quoted",
    "g3va_gguf_converter_arch_m2m100",
    "g3va_gptel_tool_choice_without_tools",
    "g3va_llamacpp_unknown_arch_llama4",
    "g3va_mlx_tool_choice_required_no_tools",
    "g3va_ollama_unknown_arch",
    "g3va_openai_tool_choice_without_tools",
    "g3va_sglang_flashinfer_error_building_extension",
    "g3va_sglang_transformers_no_module",
    "g3va_textgen_unknown_arch_chatglm",
    "g3va_tgi_num_heads_num_shards",
    "g3va_vllm_detokenizer_streaminput_typeerror",
    "g3va_vllm_transformers_no_module_telechat",
    "g3vb_llamacpp_unknown_architecture_lmstudio",
    "g3vb_llamacpp_unknown_architecture_ollama",
    "g3vb_state_dict_unexpected_keys_gptq",
    "g3vb_vllm_flash_attn_module_missing",
    "g3vc_transformers_bnb_4bit_latest",
    "g3vc_transformers_bnb_8bit_latest",
    "g3vc_transformers_bnb_needs_accelerate",
    "g4_docker_name_in_use_podman4",
    "g4_driver_dkms_nvidia_installer",
    "g4_hub_transformers_revision_missing",
    "g4_system_erofs_node",
    "g4vb_xinference_mm_limit_image_items",
    "g4vc_flashinfer_error_in_function_sglang",
    "gen2_docker_rate_limited_jib_json",
    "gen2_torch_launch_called_process",
    "gen2_torch_launch_called_process_args",
    "gen_cuda_header_missing_clang",
    "gen_cuda_header_missing_clang_api",
    "gen_docker_daemon_dockerpy_no_socket",
    "gen_docker_daemon_legacy_docker_d",
    "gen_docker_executable_not_found_crun",
    "gen_hub_offline_mirror_endpoint",
    "gen_hub_read_timeout_mirror_cdn",
    "gen_system_read_only_busybox",
    "gen_system_read_only_touch",
    "hub_bad_repo_id",
    "hub_cache_permission_denied",
    "hub_cache_permission_ignored",
    "hub_cannot_load_config_for",
    "hub_cannot_load_configuration",
    "hub_cannot_load_configuration_local",
    "hub_cannot_load_model",
    "hub_config_not_json",
    "hub_download_connection_broken",
    "hub_download_connection_broken_birefnet",
    "hub_download_read_timeout",
    "hub_download_read_timeout_us",
    "hub_entry_not_found_api_tree_httpx",
    "hub_entry_not_found_httpx",
    "hub_hf_transfer_missing",
    "hub_hf_transfer_missing_rank",
    "hub_incorrect_path_or_model_id",
    "hub_incorrect_path_or_model_id_local",
    "hub_lfs_pointer_torch_load",
    "hub_lfs_pointer_vllm",
    "hub_modelscope_missing",
    "hub_tiktoken_vocab_dns",
    "hub_tiktoken_vocab_proxy",
    "hub_tiktoken_vocab_ssl",
    "hub_token_missing",
    "hub_token_missing_oserror",
    "hub_unreachable_network",
    "k15a_vllm_api_asyncllm_engine",
    "k15a_vllm_api_namespace_kv_cache_dtype",
    "k15a_vllm_api_namespace_max_parallel_loading_workers",
    "k15b_cuda_torchvision_nms",
    "k15b_cuda_torchvision_nms_old",
    "k15b_cuda_vllm_rms_norm_cpu_build",
    "k15b_cuda_vllm_rms_norm_hip_build",
    "k15b_cuda_vllm_rms_norm_jetson",
    "k15c_compose_undefined_network",
    "k15c_compose_undefined_service",
    "k15c_compose_undefined_service_quoted",
    "k15c_compose_undefined_volume",
    "k15c_compose_v1_named_volume",
    "k15c_ucx_cuda_transports_unavailable",
    "k15c_ucx_transport_ud_unavailable",
    "k24_docker_schema1_containerd_v21",
    "k24_docker_schema1_ggcr_unsupported_media_type",
    "kernel_module_key_required",
    "lead_vllm_weight_keyerror_ascend",
    "lead_vllm_weight_keyerror_kv_scale",
    "link_ibstatus_no_sysfs",
    "n20_nvcc_unknown_option_clrnet",
    "n20_nvcc_unknown_option_inplace_abn",
    "n20_nvcc_unknown_option_ootd",
    "nccl_cuda_calloc_failed",
    "nccl_cuda_failure_warn",
    "nccl_nvls_bind_multicast",
    "nccl_nvls_cuda_failure",
    "nccl_nvls_cuda_failure_invalid_argument",
    "nccl_nvls_invalid_argument",
    "nvcc_unsupported_arch_100",
    "nvcc_unsupported_arch_120",
    "nvidia_bound_to_nova",
    "nvidia_module_insert_not_implemented",
    "nvidia_module_insert_unknown_symbol",
    "pf9a_engineargs_dashed_kwarg",
    "pf9b_legacy_build_step",
    "podman_cgroup_pids_unavailable",
    "podman_systemd_unit_failed",
    "ptxas_instruction_not_on_target",
    "ptxas_sm121a_bare",
    "ray_driver_not_registered",
    "ray_not_installed_module",
    "ray_not_started_data",
    "ray_not_started_system_error",
    "ray_not_started_tune",
    "ray_port_in_use_dashboard_workers",
    "ray_session_not_found",
    "rdma_no_devices",
    "s24lead_nccl_cuda_failure_operation_not_supported",
    "sglang_fa3_blackwell",
    "srchub_hub_torch_load_needs_torch26",
    "srcinfra_credential_helper_missing",
    "srcinfra_entrypoint_permission_denied",
    "t16a_cusolver_code_vismvsnet",
    "t16b_ucx_connection_reset_unhandled",
    "t16b_ucx_endpoint_timeout_retry",
    "t16b_ucx_net_device_not_available",
    "t16b_ucx_net_devices_not_available_nixl",
    "t16b_ucx_py_connection_reset",
    "t16c_econnreset_node_code",
    "t16c_errno104_requests_tuple",
    "t17exc_hub_name_resolution_cdn",
    "t20a_processor_multiple_values_ascend",
    "t20a_processor_multiple_values_glm4v",
    "t20a_processor_multiple_values_qwen25vl",
    "t20b_driver_not_registered",
    "t20b_should_dump_flag_tcpstore_reset",
    "t20c_nvcc_cicc_killed_cudf_build",
    "t20c_nvcc_cicc_killed_torch_extension",
    "t20c_nvcc_cicc_segfault_amrex",
    "t20c_nvcc_cudafe_killed_cpp20",
    "t20c_nvcc_cudafe_segfault_cuda12",
    "t20c_portainer_spaced_colon_select_driver",
    "t20c_vllm_build_ptxas_segfault_title",
    "t20e_agents_auto_tool_choice_truncated",
    "t20e_jeecgboot_body_field_required",
    "t20e_llamafactory_limit_mm_kwarg_py39",
    "t20e_lm_eval_messages_field_required",
    "t20e_lm_format_enforcer_tool_choice_required",
    "t20e_lmms_eval_llm_not_defined",
    "t20e_mateclaw_body_field_required",
    "t20e_mergekit_lm_eval_llm_not_defined",
    "t20e_openrlhf_llmengine_no_model_executor",
    "t20e_qwen2_tools_extra_forbidden",
    "t20e_spring_ai_body_field_required",
    "t20e_trl_client_plain_vllm_serve_404",
    "t20e_vllm_benchmark_enforce_eager_py38",
    "t20e_vllm_llmengine_no_driver_worker",
    "t20e_xinference_asyncengineargs_limit_mm",
    "t20g_void_dkms_failed",
    "t20g_void_dkms_failed_linux71",
    "t20i_decord_missing",
    "t20i_eagle_llama4_no_lm_head",
    "t20i_eagle_proposer_no_positions",
    "t20i_ernie_vl_decord_missing",
    "t20i_pp_runner_no_drafter",
    "t20i_pp_worker_failed_no_drafter",
    "t20i_ray_classmethodnode_tensor_transport",
    "t21a_unsloth_vllm_engine_gemma3",
    "t21a_unsloth_vllm_engine_qwen2_wrapped",
    "t21a_weight_keyerror_bitmask",
    "t21c_serve_app_deploy_failed_rayllm",
    "t21c_working_dir_large_file_git_pack",
    "t21d_containerd_shim_v1_not_in_path",
    "t21d_crio_kata_shim_not_installed",
    "t21d_ctr_runc_v2_shim_not_installed",
    "t21d_nvidia_runtime_find_runc",
    "t21d_podman_default_runtime_crun_quoted",
    "t21e_download_urllib3_protocol_error",
    "t21e_hub_tls_title_cut",
    "t21e_hub_tls_whoami_local_issuer",
    "t21e_hub_tls_wrapped_indexing",
    "t21e_ptxas_feature_bf16_mamba",
    "t21e_ptxas_feature_gather4_vllm",
    "t21e_ptxas_feature_requires_sm80",
    "t22a_vllm_weight_lm_head_rank0",
    "t22b_lmcache_mooncake_no_setup_lmcache",
    "t22b_nixl_create_backend_unsupported",
    "t22c_job_actor_lookup_failed",
    "t22c_ray_data_operator_abort",
    "t22c_resource_quantity_not_whole",
    "t22e_deepgemm_nvcc_failed_sm100f",
    "t22f_hub_modelscope_try_login",
    "t22f_hub_token_newline_ureq",
    "t22f_vllm_ggml_tensor_missing_from_model",
    "t22f_vllm_llamacpp_tensor_not_found",
    "t22g_lmdeploy_turbomind_missing_title_llava",
    "t22g_lmdeploy_turbomind_module_missing_w4",
    "t22g_openwebui_sse_not_json_title",
    "t22h_torch_generator_device",
    "t22h_torch_generator_device_retyped",
    "t23a_api_generate_inputs_keyword",
    "t23a_extension_missing_vllm_ops_cpu",
    "t23a_extension_missing_vllm_ops_title",
    "t23a_not_installed_pooling_params_title",
    "t23a_not_installed_unknown_location_title",
    "t23a_not_installed_vllm_py_shadow",
    "t23a_request_field_anthropic_relay",
    "t23a_request_field_litellm_anthropic",
    "t23a_task_pooler_llama_encode_title",
    "t23a_task_pooler_qwen3_reranker_title",
    "t23d_systemd_failed_with_result_leads",
    "t23e_bnb_lib_none_nf4",
    "t23e_bnb_lib_none_nf4_comfy",
    "t23e_extension_build_fused_adam",
    "t23e_extension_build_fused_adam_quoted",
    "t23e_lmcache_c_ops_missing",
    "t23e_ptxas_too_much_shared_data_ggml",
    "t23e_ptxas_too_much_shared_data_tvm",
    "t23e_triton_module_missing_node",
    "t23f_gguf_tensor_out_of_file_bounds",
    "t23f_no_weights_index_shard_missing",
    "t23f_no_weights_stale_index_title",
    "t23f_peft_adapter_config_bare_title",
    "t23f_peft_adapter_config_relative",
    "t23f_processor_unrecognized_comfy_json",
    "t23f_processor_unrecognized_image_title",
    "t23f_xinference_download_failed_embedding",
    "t23g_fastchat_register_worker_refused",
    "t23g_llamacpp_gguf_magic_not_gguf_title",
    "t23g_llamacpp_gguf_open_failed",
    "t23g_lmcache_vllm_wrapper_missing",
    "t23g_transformers_temperature_zero_hint",
    "t23g_transformers_temperature_zero_old",
    "t23g_triton_backend_placeholder",
    "t23g_trtllm_engine_key_missing_title",
    "t23g_trtllm_engine_key_name_missing_title",
    "t24a_lighteval_vllm_config_generation_kwarg",
    "t24a_lighteval_vllm_config_kwarg",
    "t24a_triton_backend_library_missing",
    "t24a_triton_libtriton_vllm_missing",
    "t24b_continue_ollama_model_not_found",
    "t24b_evalscope_test_connection_failed",
    "t24b_llamacpp_loading_model_503",
    "t24b_llamacpp_loading_model_wrapped",
    "t24b_lmstudio_messages_field_required",
    "t24c_cuda_initialization_error_nccl_last_error",
    "t24c_nccl_library_load_failed_ncclgetversion",
    "t24c_vllm_nixl_not_installed_bindings",
    "t24c_vllm_nixl_not_installed_lmcache",
    "t24d_compose_v1_container_unhealthy",
    "t24e_meta_accelerate_value_cpu",
    "t24e_meta_accelerate_value_title",
    "t24e_meta_accelerate_value_zh",
    "t24e_offload_disk",
    "t24e_offload_disk_fastchat_worker",
    "t24e_offload_disk_wrapped",
    "t24f_cmake_build_pybind_title",
    "t24f_cmake_build_vllm_targets",
    "t24f_cmake_configure_vllm",
    "t24g_llamacpp_draft_max_removed",
    "t24g_llamacpp_removed_arg_wrapper",
    "t24g_machete_prepack_op_cut",
    "t24g_mrv2_pooling_task_unsupported",
    "t24g_pooler_unsupported_task_score",
    "t24g_request_json_unterminated_agent",
    "t24g_tool_arguments_json_400",
    "t24g_vllmrs_quark_unsupported",
    "tgi_added_token_not_consecutive",
    "tgi_warmup_allocation_oom",
    "torch_store_send_broken_pipe",
    "torch_store_should_dump_flag",
    "transformers_cant_load_weights",
    "triton_key_import_inductor",
    "triton_key_import_lowering",
    "triton_launcher_stddef_missing",
    "triton_ptxas_sm110a",
    "triton_ptxas_unsupported_version",
    "trust_remote_code_quoted",
    "vllm2_triton_backend_stat_loggers",
    "vllm_api_key_401",
    "vllm_async_engine_args_unknown_keyword",
    "vllm_bitsandbytes_missing",
    "vllm_bnb_load_format_mismatch",
    "vllm_chat_template_syntax_error_400",
    "vllm_custom_all_reduce_failed",
    "vllm_custom_all_reduce_failed_legacy",
    "vllm_custom_all_reduce_failed_tp4",
    "vllm_custom_allreduce_invalid_argument",
    "vllm_dtype_float16_model_refused",
    "vllm_engine_args_unknown_keyword",
    "vllm_extension_missing",
    "vllm_flashinfer_nvcc_errors_gdn",
    "vllm_gguf_read_as_config",
    "vllm_inspect_architecture_failed",
    "vllm_invalid_choice",
    "vllm_invalid_choice_legacy",
    "vllm_invalid_choice_load_format",
    "vllm_invalid_choice_quantization_alias",
    "vllm_invalid_choice_quantization_hqq",
    "vllm_invalid_repo_id",
    "vllm_lora_adapter_config_missing",
    "vllm_max_tokens_too_large",
    "vllm_mm_limit_found_v060",
    "vllm_model_type_missing_docker",
    "vllm_model_type_missing_lora_folder",
    "vllm_model_via_option",
    "vllm_multiproc_executor_no_workers",
    "vllm_quantization_mismatch",
    "vllm_quantization_scheme_unsupported",
    "vllm_reasoning_parser_not_found",
    "vllm_remote_code_ray_workers",
    "vllm_task_unsupported_embedding",
    "vllm_task_unsupported_reward",
    "vllm_torch_compile_failed",
    "vllm_torch_compile_failed_typeerror",
    "vllm_torch_compile_inner_exception",
    "vllm_transformers_config_clash_cosmos",
    "vllm_transformers_config_clash_glm",
    "vllm_transformers_mismatch_import",
    "vllm_transformers_mismatch_module",
    "vllm_triton_mlir_error_decode_attention",
    "vllm_unknown_model_type_config_mapping",
    "vllm_unrecognized_config_class",
    "vllm_unrecognized_config_class_qwen25vl",
    "vllm_weight_name_mismatch",
    "vllm_weight_name_mismatch_gemma3",
    "w15c_nvcc_value_sm30",
    "w16_driver_kmod_builtin_missing_zfs",
    "w16_driver_kmod_moddep_missing_busybox",
    "w16_driver_kmod_moddep_missing_old_libkmod",
    "w16_driver_kmod_moddep_missing_synced_tree",
    "w16_link_no_rdma_ucx_tcp_only",
]
QUOTED = re.compile(r"""(?<![\w\\])(['"`])([^'"`\s](?:[^'"`]*?[^'"`\s])?)\1(?!\w)""")


def test_a_line_retyped_without_quotes_keeps_its_name():
    """A named line retyped without its quotes names what the quoted line names (contractions such as
    don't are left alone): the quotes around a figure are no part of the failure's words."""
    m = Matcher()
    lost = []
    for name in RETYPED_WITHOUT_QUOTES:
        line = next(line for line in _sample(name).splitlines() if m.match(line))
        retyped = QUOTED.sub(lambda q: q.group(2), line)
        assert retyped != line, f"{name}: its first named line holds no quoted word"
        if not {f.id for f in m.match(line)} & {f.id for f in m.match(retyped)}:
            lost.append((name, retyped))
    assert not lost, lost


# Sample lines whose first word a title, a terminal or a quote lost (`The`, `Error:`, a program's or a class's name) while
# the words left still say the failure in the program's own words (README, "What a line names"). Session 24 (u24c) made
# those patterns' first word optional or anchored them on the words after it; a later narrowing shows up here.
LOST_THEIR_FIRST_WORD = [
    "c16cuda_bnb_cuda_setup_required_library",
    "c16cuda_dkms_consult_make_log",
    "c16cuda_libcuda_no_nvidiactl",
    "c16cuda_torch_cpu_allocator_not_enough",
    "c16hub_docker_rate_limited_bare",
    "c16hub_docker_rate_limited_upgrade_line",
    "c16hub_hub_diffusers_not_cached",
    "c16hub_hub_repo_not_found_hint_only",
    "c16hub_hub_token_seems_invalid",
    "c17dist_mpi_orte_daemons_ssh_unresolved",
    "c17dist_mpi_tcp_connection_incomplete",
    "cuda_ext_version_mismatch_short",
    "cuda_ext_version_mismatch_wrapped",
    "cuda_fmha_kernel_diffusion",
    "cuda_fmha_kernel_sm121_spark",
    "cuda_fmha_kernel_sm70",
    "cuda_fmha_kernel_unquoted",
    "cuda_fmha_kernel_vllm_h100",
    "cuda_oom_thc_error2",
    "cudnn_libs_missing_whisper_cudnn9",
    "cudnn_no_engine_anydoor",
    "cudnn_version_mismatch_cogat",
    "dmesg_restricted",
    "docker_api_permission_denied",
    "docker_build_step_mkdir_exit_1",
    "docker_compose_dependency_exited",
    "docker_compose_dependency_no_healthcheck",
    "docker_compose_network_external_missing",
    "docker_compose_network_not_found",
    "docker_daemon_json_flag_conflict",
    "docker_daemon_not_running",
    "docker_device_missing",
    "docker_gpu_detection_nvml_unknown",
    "docker_gpu_device_rules_shim",
    "docker_gpu_mount_enroot_not_permitted",
    "docker_gpu_mount_namespace_failed",
    "docker_gpu_mount_stat_failed",
    "docker_gpu_unknown_device_false",
    "docker_gpus_flag_count_not_integer",
    "docker_gpus_flag_unexpected_key",
    "docker_load_invalid_tar_header",
    "docker_load_unexpected_eof",
    "docker_podman_name_in_use_storage",
    "docker_runc_libseccomp_api_get",
    "docker_runc_libseccomp_notify",
    "docker_user_not_found_exec",
    "driver_dkms_autoinstall_failed",
    "driver_dkms_build_failed",
    "driver_not_answering",
    "g18cuda_torch_capability_supports_line",
    "g18docker_gpu_driver_no_colon_title",
    "g18docker_gpu_driver_trimmed_title",
    "g18docker_modprobe_module_nix_store",
    "g18docker_podman_socket_unreachable",
    "g18vllm_tp_heads_divisible_no_figures",
    "g19cuda_weights_unreadable_wrapped",
    "g19dist_ray_oom_kill_title",
    "g19docker_dkms_make_error_nvidia_drm",
    "g19docker_nvrm_legacy_branch_gpu",
    "g19docker_toolkit_detection_open_failed_tls",
    "g19docker_toolkit_driver_service_load_library",
    "g19s18_soft_lockup_title_no_cpu_number",
    "g3_cuda_bitsandbytes_binary_missing",
    "g3_docker_daemon_job_failed",
    "g3_docker_podman_unreachable",
    "g3_driver_dkms_xbps",
    "g3_driver_fabricmanager_version_curly",
    "g3_driver_fabricmanager_version_talos",
    "g3_driver_xid_no_pci_prefix",
    "g3_system_nvme_controller_down_installer",
    "g3va_clap3_found_argument",
    "g3vb_inductor_no_cxx_compiler",
    "g3vb_state_dict_size_mismatch_t5",
    "g3vc_gpustack_unschedulable_list",
    "g3vc_sglang_request_truncated",
    "g3vc_vllm_preempted_in_mode",
    "g4_docker_registry_network_timed_out",
    "g4_driver_dkms_nvidia_installer",
    "g4_hub_retry_429_head",
    "g4va_cutlass_arch_conditional_mma",
    "g4va_quant_scheme_capability_sentence",
    "g4vb_vllm_softcap_type_value_error",
    "gen2_driver_insmod_coreos_installer",
    "gen2_driver_insmod_unknown_symbol",
    "gen_cuda_assert_thcudacheck",
    "gen_docker_daemon_legacy_docker_d",
    "gen_docker_gpu_runtime_no_driver_libcuda",
    "gen_link_nvshmem_ibrc_modify_qp",
    "gen_system_thread_limit_go",
    "gpustack_no_schedulable_worker",
    "hub_cache_lock_stuck",
    "hub_cache_write_problem",
    "hub_gated_restricted_short",
    "hub_hf_transfer_failed",
    "hub_hf_transfer_parallel_failures",
    "hub_hf_transfer_reqwest",
    "hub_tokenizer_protobuf_missing",
    "hub_tokenizer_sentencepiece_missing",
    "hub_tokenizer_tiktoken_missing",
    "k15a_ray_spill_object_ref_missing",
    "k15a_ray_spill_retry",
    "k15b_cuda_torchvision_nms",
    "k15b_link_rdma_link_logical_down",
    "k15c_compose_undefined_network",
    "k15c_compose_undefined_service",
    "k15c_compose_undefined_service_quoted",
    "k15c_compose_undefined_volume",
    "k15c_sigfpe_ray_vllm",
    "k15d_nccl_ofi_register_memory_rail",
    "k24_hub_file_too_large_install_hf_xet",
    "k24_ollama_server_busy_max_pending",
    "kernel_oops_nvidia_audio",
    "lead_tgi_shard_sigill",
    "lead_tgi_shard_sigsegv",
    "link_ibv_devices_list_enosys",
    "link_no_userspace_driver",
    "link_rdma_link_polling",
    "modprobe_nvidia_not_found",
    "n20_fastsafetensors_bufregister_5016",
    "nccl_ibp_completion_error",
    "ngc_driver_not_detected_wsl",
    "ngc_driver_too_old_llamafactory",
    "nvcc_unsupported_arch_100",
    "nvcc_unsupported_arch_120",
    "nvcc_unsupported_arch_build",
    "nvidia_bound_to_nova",
    "nvidia_container_cli_cuda_unknown",
    "nvidia_module_insert_no_device_dkms",
    "nvidia_module_insert_no_device_old",
    "nvidia_smi_device_handle_unknown",
    "nvidia_smi_device_handle_unknown_host",
    "nvidia_smi_no_libnvidia_ml",
    "nvml_blocked_vm",
    "nvml_blocked_wsl",
    "nvml_device_handle_unknown_fabric",
    "pf9a_glog_sigsegv",
    "pf9b_legacy_build_step",
    "ptxas_sm121a_bare",
    "ray_actor_died_plain",
    "ray_actor_died_worker_process",
    "ray_object_all_copies_lost",
    "ray_raylet_address_mismatch_python",
    "ray_redis_port_6379_taken_old_redis_nodezoo",
    "rdma_librdmacm_no_devices",
    "srcinfra_gpu_driver_rpc_timeout",
    "srcinfra_gpu_hook_direct_unsupported",
    "t16c_gdb_core_sigabrt",
    "t16c_gdb_core_sigbus",
    "t16c_gdb_core_sigfpe",
    "t20g_arch_dkms_hook_exited",
    "t20g_arch_dkms_hook_exited_tkg",
    "t20g_nvcli_rpc_failed_request",
    "t20g_void_dkms_failed",
    "t20g_void_dkms_failed_linux71",
    "t20h_bnb_native_library_cpu_so_missing",
    "t20h_bnb_something_unexpected_jetson",
    "t20i_exllama_autogptq_v1",
    "t21b_deepep_dispatch_timeouts",
    "t21c_job_supervisor_start_timeout",
    "t21c_serve_deploy_failed_three_times",
    "t21e_cudnn9_dll_missing_windows",
    "t21e_cudnn9_symbol_runpod",
    "t21g_ollama_sysmem_continue_llama31",
    "t21g_ollama_sysmem_continue_phi3",
    "t22b_mooncake_no_etcd_plugin",
    "t22b_prterun_daemons_not_started",
    "t22e_xformers_cant_load_quoted",
    "t22g_koboldcpp_no_kv_slot_for_ubatch",
    "t22g_ollama_pull_412_glm_ocr",
    "t22h_torch_rnn_devices_fullwidth_colon",
    "t23c_ray_gcs_connect_retyped_with",
    "t23c_ray_worker_died_retyped",
    "t23d_es_max_map_count_likely",
    "t23d_nvml_blocked_shutdown_line",
    "t23d_systemctl_job_failed_other_unit",
    "t23e_fa2_toggled_not_installed_title",
    "t23e_ggml_alloc_tensor_range_cuda0",
    "t23e_ggml_gallocr_cuda0_alone",
    "t23e_ptxas_too_much_shared_data_ggml",
    "t23e_ptxas_too_much_shared_data_retyped",
    "t23e_ptxas_too_much_shared_data_tvm",
    "t23f_xinference_download_failed_embedding",
    "t23g_llamacpp_gguf_open_failed",
    "t23g_ollama_load_timeout_title",
    "t24b_continue_ollama_model_not_found",
    "t24b_ollama_pull_first_capital",
    "t24g_llamacpp_draft_max_removed",
    "t24g_llamacpp_removed_arg_wrapper",
    "t24g_processor_fast_expected_slow",
    "t24g_processor_fast_omni_title",
    "tgi_input_too_long_inputs",
    "thread_limit_libgomp",
    "tokenizers_untagged_enum",
    "transformers_import_failed_bare",
    "transformers_remote_code_flash_attn_bare",
    "triton_ld_cannot_find_lcuda_conda",
    "triton_llvm_cannot_select",
    "triton_llvm_cannot_select_shfl",
    "vllm_cumem_allocator_error",
    "vllm_dtype_float16_model_refused",
    "vllm_engine_iteration_timeout",
    "vllm_kv_cache_preemption_recompute",
    "vllm_max_len_over_model_positions",
    "vllm_mm_limit_exceeded",
    "vllm_mm_placeholder_prompt_updates",
    "vllm_placement_group_gpus_openchat",
    "vllm_prompt_too_long_v0_batched",
    "vllm_served_model_not_found",
    "vllm_sliding_window_partial_qwen25",
    "vllm_spawn_without_main_guard",
    "vllm_structured_output_backend_mismatch",
    "w15b_docker_toolkit_imex_all_docker",
    "w15c_nvcc_value_sm30",
    "w16_docker_rate_limit_unauthenticated_bare",
    "w16_link_rdma_modules_missing_openibd",
    "xid_79",
    "xid_94_contained",
    "xid_nvlink_149",
]


@pytest.mark.parametrize("name", LOST_THEIR_FIRST_WORD)
def test_a_line_that_lost_its_first_word_keeps_its_name(name):
    """A line without its first word names what the whole line names when the words left are the program's own and
    say one failure; cut lines are not real lines, so they are no samples."""
    m = Matcher()
    line = next(line for line in _sample(name).splitlines() if m.match(line))
    cut = " ".join(line.split(" ")[1:])
    ids = {f.id for f in m.match(line)}
    assert ids & {f.id for f in m.match(cut)}, (cut, ids)


# Sample lines whose first two words a title, a terminal or a quote lost (a timestamp's date and time, `ERROR 05-12`, a
# logger's name and level, or a sentence's start) while the words left still say the failure in the program's own words
# (README, "What a line names"). Session 24 (u24i, 200 lost cuts drawn with random.Random(32)) anchored a second
# pattern on the words left; a later narrowing shows up here.
LOST_THEIR_FIRST_TWO_WORDS = [
    ("c16cuda_bnb_cuda_setup_required_library", 0),
    ("c16cuda_ctranslate2_library_not_found", 0),
    ("c16cuda_ctranslate2_library_not_found_cu11", 0),
    ("c16hub_docker_k8s_no_free_ports_taint", 0),
    ("c16hub_hub_repo_not_found_hint_only", 0),
    ("c16hub_hub_repo_not_found_lines", 2),
    ("c16vllm_kv_cache_too_small_wrapped", 2),
    ("c16vllm_sglang_kernel_missing_gb10", 0),
    ("c16vllm_sglang_ranks_load_unbalanced", 0),
    ("c17dist_litgpt_oom_total_capacty", 0),
    ("c17infra_nerdctl_gpus_no_container_cli", 0),
    ("c17train_jax_ptx_version_does_not_support_target", 0),
    ("checkpoint_needs_cuda_cutie", 0),
    ("checkpoint_needs_cuda_deforum", 0),
    ("checkpoint_needs_cuda_dh_live", 0),
    ("checkpoint_needs_cuda_wrapped", 0),
    ("compose_file_missing_old", 0),
    ("cuda_device_assert_index", 0),
    ("cuda_driver_too_old_torch", 0),
    ("cuda_fmha_kernel_diffusion", 0),
    ("cuda_fmha_kernel_sm70", 0),
    ("cuda_fmha_kernel_unquoted", 0),
    ("cuda_fmha_kernel_vllm_h100", 0),
    ("cuda_nvrtc_invalid_arch", 0),
    ("cuda_nvrtc_invalid_arch_bare", 0),
    ("cuda_nvrtc_invalid_arch_maskpls", 0),
    ("cuda_oom_cudamalloc", 1),
    ("cuda_oom_cudamalloc_ctx", 1),
    ("cudnn_libs_missing_whisper_cudnn9", 0),
    ("cudnn_libs_missing_xtts", 1),
    ("dataloader_killed_dcpdn", 0),
    ("dataloader_killed_pytorch", 0),
    ("dataloader_killed_raster_vision", 0),
    ("dataloader_killed_videomamba", 0),
    ("dataloader_killed_yolact", 0),
    ("docker_daemon_json_flag_conflict", 0),
    ("docker_daemon_not_running", 0),
    ("docker_no_arm64_manifest", 0),
    ("docker_pull_access_denied_compose", 0),
    ("g18cuda_no_file_named_no_oserror", 0),
    ("g18cuda_no_file_named_wrapped", 0),
    ("g18cuda_torch_capability_supports_line", 0),
    ("g18ray_worker_import_failed_actor", 0),
    ("g19cuda_sentencepiece_backend_tokenizer", 1),
    ("g19dist_ray_oom_kill_title", 0),
    ("g19docker_compose_no_matching_manifest_capital", 0),
    ("g19docker_toolkit_driver_service_load_library", 1),
    ("g3_cuda_bitsandbytes_binary_missing", 1),
    ("g3_driver_fabricmanager_version_curly", 0),
    ("g3_driver_fabricmanager_version_talos", 0),
    ("g3vb_bf16_torch_autocast", 1),
    ("g3vb_fp8_moe_gate_up_not_divisible_sglang", 0),
    ("g3vb_inductor_no_cxx_compiler", 0),
    ("g3vc_sglang_request_truncated", 0),
    ("g3vc_transformers_bnb_4bit_min_version", 0),
    ("g3vc_transformers_bnb_8bit_latest", 1),
    ("g4_hub_retry_429_head", 0),
    ("g4_hub_transformers_revision_missing", 0),
    ("g4_system_erofs_sed_temp", 0),
    ("g4_system_erofs_sed_temporary", 0),
    ("g4_system_xfs_corruption_shutdown", 0),
    ("g4_torch_monitored_barrier_peer", 0),
    ("g4va_llamacpp_chat_template_parse_failed", 0),
    ("g4vb_trtllm_attention_sinks_backend", 2),
    ("gen_cuda_header_missing_clang_api", 0),
    ("gen_docker_exec_format_shell", 0),
    ("gen_docker_exec_format_shell_path", 0),
    ("gen_driver_open_module_datacenter_only", 0),
    ("gen_driver_open_module_datacenter_only_talos", 0),
    ("gen_hub_repo_not_found_dataset_api", 1),
    ("gen_system_read_only_touch", 0),
    ("gen_system_thread_limit_go", 0),
    ("gpustack_no_schedulable_worker", 0),
    ("gpustack_no_suitable_worker_combination", 0),
    ("hub_download_incomplete", 0),
    ("hub_download_incomplete_url", 0),
    ("hub_gated_restricted_short", 0),
    ("hub_local_entry_capital_local", 0),
    ("hub_local_entry_not_found", 0),
    ("hub_local_entry_not_found_legacy", 0),
    ("hub_offline_snapshot_v1", 0),
    ("hub_repo_not_found_401", 2),
    ("hub_repo_not_found_404", 2),
    ("k15b_cuda_device_mismatch_bare", 0),
    ("k15b_cuda_device_mismatch_cpu", 0),
    ("k15b_cuda_device_mismatch_index_select", 0),
    ("k15b_cuda_device_mismatch_scatter", 0),
    ("k15b_cuda_device_mismatch_vllm_tp", 0),
    ("k15c_compose_v1_named_volume", 0),
    ("k24_torch_expandable_segments_not_shareable", 0),
    ("kernel_oops_nvidia_audio", 0),
    ("link_ibv_devices_list_enosys", 0),
    ("link_no_userspace_driver", 0),
    ("modprobe_nvidia_not_found", 0),
    ("nccl_duplicate_gpu", 1),
    ("nccl_nvls_bind_multicast", 0),
    ("nccl_remote_error", 1),
    ("nvidia_smi_no_libnvidia_ml", 0),
    ("nvml_blocked_vm", 0),
    ("nvml_blocked_wsl", 0),
    ("nvml_device_handle_unknown_fabric", 0),
    ("oom_killer", 0),
    ("oom_killer_invoked_arm64", 0),
    ("oom_killer_no_killable", 1),
    ("ray_core_worker_raylet_lost_windows", 0),
    ("ray_init_twice_perhaps", 1),
    ("ray_init_twice_vllm", 0),
    ("ray_port_in_use_dashboard_workers", 0),
    ("ray_unschedulable_waiting", 1),
    ("rdma_librdmacm_no_devices", 0),
    ("sglang2_kv_pool_no_space_single_request", 0),
    ("sglang2_unsupported_architectures_legacy", 0),
    ("sglang_decode_oom", 0),
    ("srchub_hub_endpoint_no_etag", 0),
    ("t16c_gdb_core_sigfpe", 0),
    ("t20e_lmms_eval_llm_not_defined", 0),
    ("t20e_mergekit_lm_eval_llm_not_defined", 0),
    ("t20h_bnb_native_library_cpu_so_missing", 1),
    ("t21a_fp8_transformers_capability", 0),
    ("t21e_cudnn9_dll_missing_windows", 0),
    ("t22c_af_unix_path_too_long", 0),
    ("t22g_lmdeploy_turbomind_dll_load_failed_windows", 0),
    ("t22g_ollama_pull_412_glm_ocr", 0),
    ("t22g_ollama_pull_412_prerelease", 1),
    ("t22h_llamacpp_rpc_server_crashed", 0),
    ("t23b_nvshmem_roce_version_read_failed", 0),
    ("t23d_es_max_map_count_likely", 0),
    ("t23e_ggml_alloc_tensor_range_cuda0", 0),
    ("t23e_ggml_gallocr_cuda0", 1),
    ("t23e_ggml_gallocr_cuda0_alone", 0),
    ("t23e_ptxas_too_much_shared_data_ggml", 0),
    ("t23e_ptxas_too_much_shared_data_tvm", 0),
    ("t23e_triton_pointer_cpu_mamba", 0),
    ("t23e_triton_pointer_cpu_vim", 0),
    ("t23h_vllm_trtllm_moe_gemm_config_warning", 0),
    ("t23i_vllm_hf_image_features_tokens", 0),
    ("t23i_vllm_hf_image_features_tokens_grpo", 0),
    ("t24e_meta_accelerate_value_cpu", 0),
    ("t24e_meta_accelerate_value_zh", 0),
    ("t24e_offload_disk", 0),
    ("t24e_offload_disk_wrapped", 0),
    ("t24g_llamacpp_grammar_rules_empty", 0),
    ("torch_capability_not_compatible", 1),
    ("torch_num_gpus_assert", 0),
    ("torch_rendezvous_timeout", 0),
    ("torch_store_barrier_timeout", 0),
    ("torch_store_barrier_timeout_count", 0),
    ("transformers_import_failed_bare", 0),
    ("transformers_no_weights_in_directory_old", 0),
    ("transformers_remote_code_flash_attn_bare", 0),
    ("triton_zero_active_drivers_ray", 0),
    ("vllm_chat_api_unsupported", 0),
    ("vllm_cutlass_kernel_missing_required", 0),
    ("vllm_deepgemm_sf_transformation", 0),
    ("vllm_gpu_below_min_capability_triton_p100", 0),
    ("vllm_head_size_flash_attn", 0),
    ("vllm_head_size_mla", 0),
    ("vllm_lora_unsupported_model", 0),
    ("vllm_lora_unsupported_model_qwen2vl", 0),
    ("vllm_max_len_over_kv_cache", 0),
    ("vllm_pipeline_parallel_unsupported", 0),
    ("vllm_quant_shard_fp8_block", 0),
    ("vllm_quantization_mismatch", 0),
    ("vllm_ray_bundle_index_invalid", 0),
    ("vllm_rope_scaling_two_fields_runpod", 0),
    ("vllm_tokenizer_backend_missing", 1),
    ("vllm_tokenizer_backend_missing_internvl", 1),
    ("vllm_trust_remote_code_failed_config", 1),
    ("vllm_unrecognized_config_class", 0),
    ("vllm_unrecognized_config_class_qwen25vl", 0),
    ("vllm_world_size_local_gpus", 0),
    ("w15a_torch_client_socket_placeholder_address", 0),
    ("w15c_nvcc_value_sm30", 0),
    ("w16_vllm_flashinfer_workspace_buffer_overflow", 0),
]


@pytest.mark.parametrize(
    ("name", "nth"), LOST_THEIR_FIRST_TWO_WORDS, ids=[n for n, _ in LOST_THEIR_FIRST_TWO_WORDS]
)
def test_a_line_that_lost_its_first_two_words_keeps_its_name(name, nth):
    """The sample's nth named line without its first two words names what the whole line names when the words left
    are the program's own and say one failure; cut lines are not real lines, so they are no samples."""
    m = Matcher()
    line = [line for line in _sample(name).splitlines() if m.match(line)][nth]
    cut = " ".join(line.split(" ")[2:])
    ids = {f.id for f in m.match(line)}
    assert ids & {f.id for f in m.match(cut)}, (cut, ids)


def test_a_decoration_is_read_past_only_by_patterns_anchored_at_the_lines_start():
    """A lookahead over the whole line reads the decoration on purpose: a Ray worker's bus error is not the
    shared-memory one; and words before the program's own are no decoration."""
    assert [f.id for f in scan("[rank3]: RuntimeError: Socket Timeout")] == ["torch.store_timeout"]
    assert [f.id for f in scan("(RayWorkerWrapper pid=1, ip=10.0.0.2) Fatal Python error: Bus error")] == [
        "ray.worker_sigbus"
    ]
    assert [f.id for f in scan("2026-03-09T01:31:29Z Fatal Python error: Bus error")] == [
        "docker.shm_exhausted"
    ]
    assert scan("the test printed RuntimeError: Socket Timeout") == []
    (f,) = scan("[rank0]: RuntimeError: Socket Timeout")
    assert f.line[slice(*f.span)] == "RuntimeError: Socket Timeout"


def test_an_entry_merged_into_another_is_found_by_its_old_id_and_its_old_id_is_taken():
    """Two entries that named one failure in two programs' words were merged (`aliases`): a saved finding or
    a label naming the old id finds the merged entry, its lines are named with the merged id, and no other
    entry may take the old id."""
    kb = parse_table(_entry(aliases="[x.old, x.older]"), "kb.yaml")
    assert (
        kb.by_id("x.old").id == "x.y"
        and kb.canonical("x.older") == "x.y"
        and kb.canonical("x.other") == "x.other"
    )
    assert [f.id for f in Matcher(kb).match("some literal 7")] == ["x.y"]
    taken = _entry(aliases="[x.old]") + _entry(id="x.old")[len("failures:\n") :]
    with pytest.raises(KnowledgeError, match=r"kb.yaml:entry 2 \(x.old\): id used twice \(also in kb.yaml\)"):
        parse_table(taken, "kb.yaml")
    twice = _entry(aliases="[x.old]") + _entry(id="x.z", aliases="[x.old]")[len("failures:\n") :]
    with pytest.raises(KnowledgeError, match=r"kb.yaml:entry 2 \(x.z\): alias x.old used twice"):
        parse_table(twice, "kb.yaml")
    with pytest.raises(KnowledgeError, match=r"kb.yaml:entry 1 \(x.y\): aliases is a list of ids"):
        parse_table(_entry(aliases="[Not An Id]"), "kb.yaml")
    # the packaged table: a pull refused in containerd's words is the one pull entry, by either name
    assert table().by_id("docker.pull_unauthorized") is table().by_id("docker.pull_access_denied")


def test_a_family_file_holds_only_its_family_and_an_id_once_across_files(tmp_path):
    for family in FAMILIES:
        (tmp_path / f"{family}.yaml").write_text("failures: []\n")
    (tmp_path / "nccl.yaml").write_text(_entry(family="vllm"))
    with pytest.raises(KnowledgeError) as err:
        load_folder(tmp_path, "kb")
    assert str(err.value) == "kb/nccl.yaml:entry 1 (x.y): family vllm in the file of nccl"
    (tmp_path / "nccl.yaml").write_text(_entry(family="nccl"))
    (tmp_path / "ray.yaml").write_text(_entry(family="ray"))
    with pytest.raises(
        KnowledgeError, match=r"^kb/ray.yaml:entry 1 \(x.y\): id used twice \(also in kb/nccl.yaml\)"
    ):
        load_folder(tmp_path, "kb")
    (tmp_path / "ray.yaml").unlink()
    with pytest.raises(KnowledgeError, match=r"^kb/ray.yaml: cannot be read"):
        load_folder(tmp_path, "kb")


def test_up_prints_a_diagnosis_with_its_fix_and_masks_secrets_in_its_figures(capsys):
    from spark_tui.cli.commands import _event_printer
    from spark_tui.core.launch.failure_watch import diagnosis
    from spark_tui.knowledge import Watch

    w = Watch("spark-2")
    w.feed_lines(_sample("hub_gated_401").splitlines())
    event = diagnosis(w.cause())

    class Mask:  # the printer's redactor interface: one secret, masked wherever it appears
        def mask(self, text: str) -> str:
            return text.replace("meta-llama", "***")

        show = mask

    event = event.shown(Mask().show)  # as the core emits it (core/launch/events.py shown_by)
    _event_printer(False, Mask())(event)
    text = capsys.readouterr().out
    assert (
        text.startswith("ERROR spark-2: the model ***/Llama-2-7b is gated")
        and "\n    fix: Accept the licence" in text
    )
    _event_printer(True, Mask())(event)
    line = json.loads(capsys.readouterr().out)
    assert line["event"] == "Diagnosis" and line["figures"] == {"model": "***/Llama-2-7b", "status": 401}


def test_a_workers_oom_is_one_text_whichever_path_names_it():
    """A Ray worker's OOM reaches the head's log under the worker's prefix. The knowledge base
    (reading every line) and the launch's attribution (vLLM's failing rank) can each name it
    first: both give the same text, for the worker, saying it was read in the head's log."""
    from spark_tui.core.launch.failure_watch import FailureWatch, cause_text
    from spark_tui.parsers.vllm import VllmParser

    prefix = "(RayWorkerWrapper pid=4242, ip=10.231.7.13) "
    lines = [
        prefix + "ERROR 12-03 10:00:00 [worker_base.py:620] Error executing method "
        "'determine_available_memory'. This might cause deadlock in distributed execution.",
        prefix + "Traceback (most recent call last):",
        prefix + "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 28.44 GiB. GPU 0 has a "
        "total capacity of 119.70 GiB of which 1.38 GiB is free.",
    ]
    by_kb = FailureWatch(lambda e: None).feed("spark-1", lines)
    assert by_kb is not None
    by_kb.node = "spark-3"  # the launch places it by the prefix's address
    parser = VllmParser()
    for line in lines:
        parser.feed(line)
    failed = parser.summary.failure()
    assert failed is not None and failed[1] == "10.231.7.13"
    by_rank = FailureWatch(lambda e: None).line_cause(failed[0], "spark-3", "spark-1")
    assert by_rank == cause_text(by_kb, read_in="spark-1")
    assert by_rank.startswith(
        "spark-3: CUDA out of memory: tried 28.44 GiB with 1.38 GiB free of 119.7 GiB "
        "(ip=10.231.7.13, read in spark-1's log). Fix: Lower --gpu-memory-utilization"
    ), by_rank
    # The driver's copy of the exception (no prefix) names the worker by the rank's address.
    driver = "(EngineCore_DP0 pid=7) " + lines[2].removeprefix(prefix)
    (copy,) = FailureWatch(lambda e: None).matcher.match(driver)
    copy.node = "spark-3"
    assert (
        cause_text(copy, read_in="spark-1", origin=failed[1]).split(" Fix: ")[0] == by_rank.split(" Fix: ")[0]
    )


def test_a_secondary_read_before_its_cause_in_one_batch_is_told_after_it():
    """docker's log interleaves two streams: our exit line (stdout) can come before the traceback
    (stderr) in one read. The cause is told first, the exit that follows from it after."""
    from spark_tui.core.launch.failure_watch import FailureWatch

    told = []
    lines = ["spark-tui: vllm serve exited with code 1", *_sample("hub_gated_401").splitlines()]
    cause = FailureWatch(told.append).feed("spark-1", lines)
    assert cause is not None and cause.id == "hub.gated"
    assert [d.id for d in told] == ["hub.gated", "vllm.serve_exited"]


def test_a_part_of_a_title_whose_figure_the_line_lacks_is_left_out():
    """`[[ ... ]]` parts are said only with their figures: NCCL's version when the line has it,
    nothing (not a `?`) when it does not."""
    (with_version,) = scan(_sample("nccl_system_error"))
    assert with_version.title == "NCCL 2.19.3: unhandled system error"
    (bare,) = scan("NCCL error: unhandled system error")
    assert bare.title == "NCCL: unhandled system error"
    (warn,) = scan(_sample("nccl_cuda_failure_warn"))
    assert warn.title == "NCCL: a CUDA call failed ('out of memory')"


# A figure said outside `[[ ]]` that some match may lack would read `?` ("Ray marked the node ? dead").
MAY_LACK_N = [
    # the group in an optional part
    {"patterns": ["'some literal(?: (?P<n>\\d+))?'"]},
    # the group in one branch of an alternation
    {"patterns": ["'some literal (?:(?P<n>\\d+)|none)'"]},
    # a repetition that may match nothing
    {"patterns": ["'some literal(?: (?P<n>\\d+))*'"]},
    # a second pattern without the group
    {"patterns": ["'some literal (?P<n>\\d+)'", "'other wording'"]},
    # a figure read from a line that follows the match
    {"patterns": ["'some literal'"], "then": "['count (?P<n>\\d+)']"},
    # a traceback's last line with the class alone carries no figures
    {"exceptions": "['SomeLiteralError']"},
]


@pytest.mark.parametrize("over", MAY_LACK_N)
@pytest.mark.parametrize("key", ["title", "means", "fix"])
def test_a_text_that_says_a_figure_a_match_may_lack_outside_brackets_is_refused(over, key):
    with pytest.raises(
        KnowledgeError, match=rf"^kb\.yaml:entry 1 \(x\.y\): {key} says \{{n\}} outside \[\[ \]\]"
    ):
        parse_table(_entry(**{key: "'the count is {n}'"}, **over), "kb.yaml")


@pytest.mark.parametrize("over", MAY_LACK_N)
def test_a_figure_a_match_may_lack_is_accepted_inside_brackets(over):
    kb = parse_table(
        _entry(title="'the count is known[[ ({n})]]'", fix="'count again[[ from {n}]]'", **over), "kb.yaml"
    )
    (entry,) = kb.entries
    assert entry.title == "the count is known[[ ({n})]]"


def test_a_figure_every_pattern_sets_may_be_said_outside_brackets():
    """Every pattern sets `n` (around an alternation, in a part repeated at least once); `m` is in
    an optional part, so it is said only in `[[ ]]`, and left out for a line without it."""
    patterns = [
        "'some literal (?P<n>\\d+)'",
        "'other wording (?P<n>\\d+|none) left'",
        "'third wording(?: (?P<n>\\d+))+(?: of (?P<m>\\d+))?'",
    ]
    figures = "{n: int, m: int}"
    kb = parse_table(
        _entry(title="'the count is {n}[[ of {m}]]'", patterns=patterns, figures=figures), "kb.yaml"
    )
    assert [f.title for f in Matcher(kb).match("third wording 7 of 9")] == ["the count is 7 of 9"]
    assert [f.title for f in Matcher(kb).match("third wording 7")] == ["the count is 7"]
    assert [f.title for f in Matcher(kb).match("other wording 3 left")] == ["the count is 3"]
    with pytest.raises(KnowledgeError, match=r"title says \{m\} outside \[\[ \]\]"):
        parse_table(_entry(title="'the count is {n} of {m}'", patterns=patterns, figures=figures), "kb.yaml")


def test_no_sample_line_is_told_with_a_question_mark_for_a_figure_it_lacks():
    """A figure the line did not carry is left out of the title, meaning and fix (the table refuses
    a text that would say `?` for it): a `?` comes only from the line or from the table's own words."""
    kb = table()
    for name in NAMES:
        for f in scan(_sample(name)):
            entry = kb.by_id(f.id)
            assert "?" not in f.title or "?" in f.line or "?" in entry.title, (name, f.id, f.title)
            for key in ("means", "fix"):
                text = getattr(f, key)
                assert "?" not in text or "?" in f.line or "?" in getattr(entry, key), (name, f.id, key, text)


def test_a_long_lines_quote_keeps_the_words_that_matched():
    """containerd's refusal carries two long paths before its words: the quoted line (400
    characters kept, 240 in a launch's cause) is cut around the match, not at its start."""
    from spark_tui.core.launch.failure_watch import cause_text

    task = "/run/docker/containerd/daemon/io.containerd.runtime.v2.task/moby/"
    line = (
        "failed to create task for container: failed to create shim task: OCI runtime create failed: "
        f"failed to start shim: symlink {task}{'a' * 64} {task}{'b' * 64}/work: no space left on device: unknown"
    )
    (found,) = scan("x" * 300 + " " + line, "spark-2")
    assert found.id == "docker.no_space" and found.figures["path"] == f"{task}{'b' * 64}/work"
    assert len(found.line) <= 400 and found.line.startswith("…")
    assert found.line[found.span[0] : found.span[1]].endswith("/work: no space left on device")
    cause = cause_text(found)
    quoted = cause[cause.index("(log: ") :]
    assert "no space left on device: unknown)" in quoted and len(quoted) <= 240 + len("(log: )"), cause
    (short,) = scan("CUDA out of memory. Tried to allocate 2.00 GiB", "spark-1")
    assert cause_text(short).endswith("(log: CUDA out of memory. Tried to allocate 2.00 GiB)")
