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
        # a public thread or page: GitHub, the kernel's mailing-list archive for kernel lines, a forum, a blog
        assert re.match(r"https://[\w.-]+\.[a-z]{2,}/\S", source), name


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
    loads, a healthy ConnectX probe, torch 1.13's connect attempt on IPv6 localhost) match nothing: no near match."""
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
        ({"title": "'it failed [catch-all]'"}, "generic: true"),
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
    # a person who elided the message pasted the class with `...` (round 23 B's `LocalEntryNotFoundError ...`)
    for elided in (
        "LocalEntryNotFoundError ...",
        "huggingface_hub.errors.LocalEntryNotFoundError: ...",
        "GatedRepoError …",
    ):
        assert len(scan(elided)) == 1 and scan(elided)[0].id.startswith("hub."), elided
    for code in (
        "    except GatedRepoError:",
        "    raise GatedRepoError(message, response=response) from e",
        "Retrying call in 0.8 seconds as it raised GetTimeoutError: slow.",
        "NotGatedRepoError: x",
        "GatedRepoError, RepositoryNotFoundError and friends",
        "GatedRepoError ... and other classes",
    ):
        assert scan(code) == [], code
    # the words name the port in use: torch's DistNetworkError (a lost store connection by its class) gives way
    words = (
        "torch.distributed.DistNetworkError: The server socket has failed to listen on any local network address. "
        "port: 29500, useIpv6: false, code: -98, name: EADDRINUSE, message: address already in use"
    )
    assert "torch.store_connection_lost" not in {f.id for f in scan(words)} and scan(words)


def test_a_message_inside_a_string_literal_is_read_as_printed():
    """A client carries an OpenAI-compatible server's error body (`Error code: 400 - {...}`), a JSON log field holds a
    traceback: the message's quotes arrive escaped (once or twice) and its lines joined by `\\n`. Its words are read
    as printed, each of its lines on its own, and the words found are shown in the line as it came."""
    inner = '"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set'
    body = json.dumps({"object": "error", "message": inner, "type": "BadRequestError", "code": 400})
    for line in (
        "openai.BadRequestError: Error code: 400 - " + body,
        "Error: " + json.dumps({"detail": body}),
    ):
        (f,) = scan(line)
        assert f.id == "vllm.auto_tool_choice_disabled"
        assert "tool choice requires --enable-auto-tool-choice" in f.line[slice(*f.span)]
    traceback = 'Traceback (most recent call last):\n  File "x.py", line 1, in <module>\n' + (
        "RuntimeError: CUDA error: no kernel image is available for execution on the device\n"
    )
    assert [f.id for f in scan(json.dumps({"level": "error", "exception": traceback}))] == [
        "cuda.no_kernel_image"
    ]
    # the same escapes around words that say nothing wrong name nothing
    healthy = 'Loading "Qwen/Qwen3-8B"\nRoute: /v1/chat/completions, Methods: POST\n\tdone'
    assert scan(json.dumps({"message": healthy})) == []


def test_a_message_escaped_by_json_as_ascii_is_read_as_printed():
    """JSON's default ensure_ascii writes every character beyond ASCII as `\\uXXXX`: a curly apostrophe, a Chinese
    locale's words, an emoji. The message is read as printed, with the figures it carries; a control character or
    half of a surrogate pair is read as a space and never reaches a figure."""
    fabric = (
        "fabric manager NVIDIA GPU driver interface version 550.90.07 don\u2019t match with driver version "
        "550.107.02. Please update with matching NVIDIA driver package"
    )
    (plain,) = scan(fabric)
    for line in (
        json.dumps({"level": "error", "msg": fabric}),
        json.dumps({"error": {"message": "\U0001f680\x00 " + fabric}}),
    ):
        assert "\\u" in line
        (f,) = scan(line)
        assert (
            (f.id, f.figures)
            == (plain.id, plain.figures)
            == ("driver.fabricmanager_version_mismatch", f.figures)
        )
        assert f.figures and all(str(v).isascii() for v in f.figures.values())
        assert "550.107.02" in f.line[slice(*f.span)]
    assert [
        f.id
        for f in scan(
            json.dumps({"msg": "python:\u6bb5\u9519\u8bef\uff08\u6838\u5fc3\u5df2\u8f6c\u50a8\uff09"})
        )
    ] == ["system.segfault"]
    # the same escapes around words that say nothing wrong name nothing
    assert scan(json.dumps({"msg": "\u6a21\u578b\u52a0\u8f7d\u5b8c\u6210 \ud83d\ude80 ready"})) == []


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


def test_the_prefilter_finds_a_literals_line_after_lines_of_characters_outside_ascii():
    """The automaton reports where a literal starts in the joined batch: counted in characters, as the lines are,
    so lines of CJK text, emoji or a locale's words before it do not shift the hit onto another line."""
    m = Matcher()
    lines = [
        "推理服务启动中 🚀 ✓ 一切正常",
        "ÄÖÜ äöü ß — ok",
        "RuntimeError: CUDA error: out of memory",
        "进程已结束",
    ]
    assert m.hit_lines(lines) == [2]
    assert [i for i in m.hit_lines(lines * 3) if i % 4 != 2] == []


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
# workers, Ray's raylet, Kubernetes' CRI files, loguru, Python logging's default format, pytest, GitHub Actions,
# BuildKit's plain progress; a paste's quote, list and shell-prompt markers, an issue title's `[Bug]: `.
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
    "#12 3.456 ",
    "> ",
    "- ",
    "1. ",
    "$ ",
    "[Bug]: ",
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


# How people and programs quote a message inside a line of their own: a retold error in quotes, backticks or bold,
# a JSON log field or error body, logfmt (Docker's daemon, Go programs), a Python repr, an app's words before it.
QUOTINGS = {
    "double quotes": lambda line: f'"{line}"',
    "backticks": lambda line: f"`{line}`",
    "JSON error body": lambda line: (
        '{"error": {"message": ' + json.dumps(line) + ', "type": "BadRequestError"}}'
    ),
    "JSON log field": lambda line: '{"level":"error","ts":1700000000.1,"msg":' + json.dumps(line) + "}",
    "logfmt": lambda line: (
        'time="2025-03-01T10:00:00Z" level=error msg="' + line.replace("\\", "\\\\").replace('"', '\\"') + '"'
    ),
    "Python repr": lambda line: "openai.APIError: " + repr({"detail": line}),
    "app's words": lambda line: "Failed to start the model: " + line,
}


@pytest.mark.parametrize("quoting", QUOTINGS)
def test_a_sample_line_quoted_inside_another_keeps_its_names(quoting):
    """A pattern anchored at a message's start or end (`^Couldn't allocate MR$`) meets the message inside quotes,
    a JSON or logfmt field, a repr or after an app's `: `: at most one sample line in a hundred loses a name (the
    rest are lines whose own quotes a wrapper cannot keep apart from its own)."""
    m = Matcher()
    lines = {
        line
        for p in sorted(SAMPLES.glob("*.log"))
        for line in p.read_text(errors="replace").splitlines()
        if line and not line[0].isspace()
    }
    named = [(line, {f.id for f in m.match(line)}) for line in sorted(lines)]
    named = [(line, ids) for line, ids in named if ids]
    wrap = QUOTINGS[quoting]
    lost = [(line, ids) for line, ids in named if not {f.id for f in m.match(wrap(line))} >= ids]
    assert len(named) > 2000 and len(lost) <= len(named) // 100, lost[:20]


def test_a_quoted_message_is_read_on_its_own_only_when_nothing_names_the_line():
    """The message inside a line's quotes is read as a line of its own, its span the message's words; not when the
    line as a whole names an entry, not inside a call's arguments, and not after an exception's class."""
    for line in (
        '"Couldn\'t allocate MR"',
        "Error: Couldn't allocate MR",
        'time="2025-03-01T10:00:00Z" level=error msg="Couldn\'t allocate MR" pid=3',
    ):
        (f,) = scan(line)
        assert (f.id, f.line[slice(*f.span)]) == ("link.perftest_mr_failed", "Couldn't allocate MR")
    assert [f.id for f in scan("the bench printed Couldn't allocate MR")] == []
    # the Hub's wrapper names the failure; httpx's words quoted inside it add nothing
    hub = "'All connection attempts failed' thrown while requesting GET https://huggingface.co/api/models/Qwen/Qwen3-8B"
    assert [f.id for f in scan(hub)] == ["hub.unreachable"]
    assert scan('    raise TuneError("Trials did not complete", incomplete_trials)') == []
    # a 403 of a disabled repository is not an authorization error, though the bare `403 Client Error. (...` is one
    # (session 27, t27d: its own entry, hub.repo_disabled, named by the class)
    assert [
        f.id
        for f in scan(
            "huggingface_hub.errors.DisabledRepoError: 403 Client Error. (Request ID: Root=1-6934a1b2)"
        )
    ] == ["hub.repo_disabled"]
    assert [f.id for f in scan("403 Client Error. (Request ID: Root=1-6934a1b2)")] == ["hub.not_authorized"]
    # after an app's words the bare message is read on its own; after another exception's class it is that class's
    assert [f.id for f in scan("Upload failed: 403 Client Error. (Request ID: Root=1-6934a1b2)")] == [
        "hub.not_authorized"
    ]
    assert scan("acme.errors.QuotaError: 403 Client Error. (Request ID: Root=1-6934a1b2)") == []


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
