"""Whole pastes in `spark-tui diagnose`: the failure a paste is about is named first.

tests/data/pastes/NAME.txt is the main code block of a public thread (a launch log, a `docker run` and its
error, a traceback with the log lines around it), copied as it was pasted: prompts, timestamps, log
collectors' prefixes, quote markers and backticks included. NAME.source is the thread, NAME.cause the
entry the thread's resolution names (`-`: a healthy output, where no error may be named).

A paste is right when its first error finding (the first finding when none is an error) is its cause:
the ranking puts primary failures before what follows from them (an engine that died, a shard that
failed to start, a watchdog that took the process down), so a consequence printed after the cause
never takes its place."""

from __future__ import annotations

import pytest

from spark_tui import diagnose
from spark_tui.diagnose.paste import WRAP_WIDTH, clean, unwrap
from spark_tui.knowledge import table
from tests.held_out import named
from tests.helpers import DATA

PASTES = DATA / "pastes"
# Every paste, named: a paste added or lost shows up here.
FILES = (
    "d17_cuda-unknown-error-conda-prompt-dbgpt107.txt",
    "d17_dgx-spark-two-node-store-timeout-sparkvllm335.txt",
    "d17_docker-cuda-requirement-vllm5635.txt",
    "d17_docker-cuda-unknown-error-whisper3.txt",
    "d17_docker-gpus-chroot-toolkit679.txt",
    "d17_docker-pull-platform-arm64-whispercpp2081.txt",
    "d17_docker-run-no-arm64-manifest-deeptutor74.txt",
    "d17_docker-runtime-driver-error-nvdocker1252.txt",
    "d17_healthy-nccl-tests-broadcast-no-ibverbs-nccltests82.txt",
    "d17_healthy-ray-start-head-ray24130.txt",
    "d17_healthy-vllm-docker-timestamps-vllm16107.txt",
    "d17_healthy-vllm-rocm-startup-r9700-4.txt",
    "d17_hub-401-llama2-script-dockerllama2chat6.txt",
    "d17_hub-gated-private-gpt1876.txt",
    "d17_hub-local-entry-not-found-modelscope1267.txt",
    "d17_hub-read-timeout-space-stylganex32.txt",
    "d17_nccl-invalid-argument-backticks-openchat121.txt",
    "d17_nccl-modify-qp-mpirun-prefix-nccl302.txt",
    "d17_nvml-mismatch-machineshop60.txt",
    "d17_sglang-prefill-oom-sglang34676.txt",
    "d17_tgi-nccl-watchdog-docker-timestamps-tgi1383.txt",
    "d17_tgi-shard-oom-single-v100-tgi866.txt",
    "d17_torch-nccl-unique-id-ray-llamafactory8641.txt",
    "d17_torchrun-rendezvous-zsh-pytorch64926.txt",
    "d17_tritonserver-driver-insufficient-lmdeploy263.txt",
    "d17_vllm-bind-port-after-startup-vllm9225.txt",
    "d17_vllm-nccl-system-error-gpustack2680.txt",
    "d17_vllm-oom-serving-club3090-16.txt",
    "d17_vllm-startup-free-memory-dockerode811.txt",
    "d17_vllm-triton-ptx-version-sm120a-nixpkgs406675.txt",
    "d18_cuda-device-busy-then-chatglm-load-failed-gptacademic1194.txt",
    "d18_cuda-device-busy-torchrun-accelerate-uncertaintybench3.txt",
    "d18_cuda-device-side-assert-index-kernel-llamafactory4218.txt",
    "d18_cuda-init-unknown-compose-prefix-no-number-llamacpp1866.txt",
    "d18_cuda-oom-numbered-list-lines-chatchat310.txt",
    "d18_cuda-oom-ollama-docker-ggml-assert-ollama1674.txt",
    "d18_docker-run-libnvidia-ml-hook-after-reboot-nvdocker1711.txt",
    "d18_docker-run-no-space-with-df-jetson1569.txt",
    "d18_healthy-ray-start-head-osx-prompt-with-space-ray34081.txt",
    "d18_healthy-vllm-kv-cache-sampling-params-vllm20707.txt",
    "d18_healthy-vllm-routes-strix-halo-toolbox12.txt",
    "d18_healthy-vllm-startup-cuda-graphs-vllm29335.txt",
    "d18_healthy-vllm-tp2-startup-no-prefix-vllm24162.txt",
    "d18_hub-gated-compose-prefix-second-line-xinference433.txt",
    "d18_hub-gated-llama2-quickstart-log-fence-vllm3963.txt",
    "d18_hub-gated-llama3-lone-backtick-lines-localgpt799.txt",
    "d18_nccl-system-error-torchrun-two-nodes-nccl697.txt",
    "d18_nccl-watchdog-backtick-inline-msswift2443.txt",
    "d18_nccl-watchdog-mpirun-host-prefix-llamafactory5558.txt",
    "d18_nccl-watchdog-terminate-megatron-two-nodes-paimegatron508.txt",
    "d18_nccl-watchdog-xtuner-single-node-xtuner792.txt",
    "d18_ray-raylet-oom-kill-summary-ray45894.txt",
    "d18_sglang-two-h20-nodes-compose-underscore-prefix-sglang23602.txt",
    "d18_sglang-weights-leave-no-kv-cache-h200-inferencex2128.txt",
    "d18_tgi-hf-transfer-docker-timestamps-double-tgi982.txt",
    "d18_torch-nccl-unique-id-yolov5-barrier-yolov5-12213.txt",
    "d18_vllm-bf16-p40-inline-backticks-pascalpkgs21.txt",
    "d18_vllm-flashinfer-arch-check-wrapped-80-columns-odysseus207b.txt",
    "d18_vllm-free-memory-wrapped-80-columns-odysseus207.txt",
    "d18_vllm-serve-tp4-a10-oom-command-lines-qwen3-1387.txt",
)
NAMES = sorted(f.removesuffix(".txt") for f in FILES)


def cause_of(name: str) -> str:
    return (PASTES / f"{name}.cause").read_text().strip()


def test_every_paste_has_its_thread_and_its_cause():
    assert len(NAMES) >= 30 and sorted(p.stem for p in PASTES.glob("*.txt")) == NAMES
    for name in NAMES:
        source = (PASTES / f"{name}.source").read_text().strip()
        assert source.startswith("https://github.com/"), name
        cause = cause_of(name)
        assert cause == "-" or table().by_id(cause) is not None, f"{name}: no entry {cause}"
    assert {p.stem for p in PASTES.glob("*.source")} == set(NAMES)
    assert {p.stem for p in PASTES.glob("*.cause")} == set(NAMES)


@pytest.mark.parametrize("name", [n for n in NAMES if cause_of(n) != "-"])
def test_a_failing_paste_names_its_cause_first(name):
    first, _, everything = named((PASTES / f"{name}.txt").read_text(encoding="utf-8", errors="replace"))
    assert table().canonical(first) == table().canonical(cause_of(name)), (
        f"{name}: first {first}, all {everything}"
    )


@pytest.mark.parametrize("name", [n for n in NAMES if cause_of(n) == "-"])
def test_a_healthy_paste_names_no_error(name):
    _, errors, _ = named((PASTES / f"{name}.txt").read_text(encoding="utf-8", errors="replace"))
    assert errors == [], name


def test_an_engine_that_died_is_named_after_what_killed_it():
    """EngineCore's traceback and the API server's 'Engine core initialization failed' follow the cause."""
    first, errors, _ = named((PASTES / "d17_vllm-nccl-system-error-gpustack2680.txt").read_text())
    assert first == "nccl.system_error"
    assert errors.index("vllm.engine_core_died") > errors.index("nccl.system_error")


def test_a_tgi_shard_that_failed_to_start_comes_after_its_out_of_memory():
    first, errors, _ = named((PASTES / "d17_tgi-shard-oom-single-v100-tgi866.txt").read_text())
    assert first == "cuda.out_of_memory"
    assert "tgi.shard_crashed" in errors


def test_the_watchdog_that_took_the_process_down_comes_after_the_timeout_it_caught():
    first, errors, _ = named((PASTES / "d17_tgi-nccl-watchdog-docker-timestamps-tgi1383.txt").read_text())
    assert first == "nccl.watchdog_timeout"
    assert "nccl.watchdog_abort" in errors


def test_a_quoted_paste_reads_as_the_log_it_quotes():
    """Every line behind a `> ` marker (a reply quoting the log): diagnose reads the log."""
    text = (PASTES / "d17_vllm-startup-free-memory-dockerode811.txt").read_text()
    assert all(line.startswith("> ") for line in text.splitlines())
    assert named(text)[0] == "vllm.startup_free_memory"
    assert not any(line.startswith(">") for line in clean(text).text.splitlines())


@pytest.mark.parametrize(
    "name, command",
    [
        ("d17_nvml-mismatch-machineshop60", "nvidia-smi"),
        ("d17_docker-pull-platform-arm64-whispercpp2081", "docker pull --platform linux/arm64"),
        ("d17_cuda-unknown-error-conda-prompt-dbgpt107", "python pilot/server/llmserver.py"),
        ("d17_healthy-nccl-tests-broadcast-no-ibverbs-nccltests82", "mpirun --bind-to none"),
    ],
)
def test_the_prompt_line_of_a_paste_is_kept_as_its_command(name, command):
    """`user@host:~$ cmd`, `$ cmd`, a conda env before the prompt: the command, not a log line."""
    cleaned = clean((PASTES / f"{name}.txt").read_text())
    assert cleaned.command.startswith(command)
    assert command not in cleaned.text


def test_a_warning_of_nccl_without_rdma_is_no_error_in_a_healthy_run():
    """nccl-tests over sockets print `NCCL WARN Failed to open libibverbs.so`: a warning, the run is fine."""
    first, errors, everything = named(
        (PASTES / "d17_healthy-nccl-tests-broadcast-no-ibverbs-nccltests82.txt").read_text()
    )
    assert errors == []
    assert first == "nccl.libibverbs_missing" and everything == ["nccl.libibverbs_missing"]


def test_a_triton_too_old_for_the_gpu_is_named_by_the_ptx_it_writes():
    """ptxas refuses `PTX .version 8.4` for sm_120a: the compiler does not know the GPU, before the engine died."""
    text = (PASTES / "d17_vllm-triton-ptx-version-sm120a-nixpkgs406675.txt").read_text()
    findings = diagnose.analyse(text)["findings"]
    assert [f["id"] for f in findings] == ["cuda.ptxas_unknown_arch", "vllm.engine_core_died"]
    assert findings[0]["figures"]["arch"] == "sm_120a"


def test_a_log_prefix_in_parentheses_is_no_environment_before_a_prompt():
    """`(APIServer pid=1) ...` and `(EngineCore pid=112) ...` are vLLM's process prefixes: kept as log lines."""
    text = (PASTES / "d17_vllm-oom-serving-club3090-16.txt").read_text()
    cleaned = clean(text)
    assert cleaned.commands == []
    assert cleaned.text.splitlines() == text.splitlines()


def test_no_paste_keeps_a_markdown_fence():
    """The fence lines of the thread's code block are not part of the paste."""
    lines = [line for n in NAMES for line in (PASTES / f"{n}.txt").read_text().splitlines()]
    assert not any(line.lstrip().startswith("```") for line in lines)


def test_a_log_wrapped_at_80_columns_reads_as_the_lines_its_program_printed():
    """A vLLM line copied from an 80-column terminal comes in pieces cut mid-word; diagnose joins them."""
    text = (PASTES / "d18_vllm-free-memory-wrapped-80-columns-odysseus207.txt").read_text()
    assert [len(line) for line in text.splitlines()][:2] == [WRAP_WIDTH, WRAP_WIDTH]
    lines = clean(text).text.splitlines()
    assert len(lines) == 1
    assert (
        "(13.33/15.47 GiB) on startup is less than desired GPU memory utilization (0.9, 13.92 GiB). Decrease"
        in lines[0]
    )
    assert named(text)[0] == "vllm.startup_free_memory"


def test_a_wrapped_line_cut_at_a_space_gets_its_space_back():
    """The terminal cut `See root cause` after `root `; the copy dropped the trailing space (79
    columns), so the two pieces are joined with one. Lines of odysseus-dev/odysseus#207 (the log's
    tail and the comment that quoted its cause)."""
    lines = [
        "(EngineCore pid=42103) ValueError: Free memory on device cuda:0 (13.33/15.47 GiB",
        ") on startup is less than desired GPU memory utilization (0.9, 13.92 GiB). Decre",
        "ase GPU memory utilization or reduce GPU memory used by other processes. ",
        "(APIServer pid=42065) RuntimeError: Engine core initialization failed. See root",
        "cause above. Failed core proc(s): {}",
    ]
    joined = unwrap(lines)
    assert len(joined) == 2
    assert joined[1] == (
        "(APIServer pid=42065) RuntimeError: Engine core initialization failed. See root cause above. "
        "Failed core proc(s): {}"
    )


def test_a_line_that_starts_a_record_is_never_taken_for_the_rest_of_a_wrapped_one():
    """A full-width line followed by a new process-prefixed line stays two lines."""
    text = (PASTES / "d18_vllm-flashinfer-arch-check-wrapped-80-columns-odysseus207b.txt").read_text()
    lines = clean(text).text.splitlines()
    assert len(lines) == 2 and all(line.startswith("(EngineCore pid=45912)") for line in lines)
    assert lines[1].endswith("RuntimeError: FlashInfer requires GPUs with sm75 or higher")


def test_a_paste_that_shows_no_wrap_keeps_its_lines():
    """Only a paste with several lines exactly 80 wide and none wider is unwrapped, and of it only
    lines that do not begin a record: every other real sample keeps each of its lines (an nvidia-smi
    table, a df listing, a long vLLM config line, aligned rows 80 wide such as nvitop's NVML probe)."""
    samples = [p for d in ("pastes", "failures", "held_out") for p in sorted((DATA / d).rglob("*.txt"))]
    samples += sorted((DATA / "failures").glob("*.log"))
    assert len(samples) > 300
    for path in samples:
        lines = path.read_text(encoding="utf-8", errors="replace").replace("\r", "\n").splitlines()
        if "wrapped-80-columns" not in path.name:
            assert unwrap(lines) == lines, path.name
    rows = (DATA / "failures" / "t16a_nvml_not_supported_gb10_probe.log").read_text().splitlines()
    assert [len(line) for line in rows].count(WRAP_WIDTH) == 2


def test_a_flashinfer_arch_check_is_named_as_the_missing_architecture_not_an_old_gpu():
    """`FlashInfer requires GPUs with sm75 or higher` comes from FlashInfer's check of its target
    architectures: GB10 (sm121) and sm120 get it when the list is empty, so it is no GPU-too-old."""
    text = (PASTES / "d18_vllm-flashinfer-arch-check-wrapped-80-columns-odysseus207b.txt").read_text()
    first, errors, _ = named(text)
    assert first == "cuda.no_arch_for_jit" and "vllm.gpu_below_min_capability" not in errors


def test_a_prompt_that_shows_its_git_branch_is_kept_as_its_command():
    """`(test) user@host:~/ray1 user/branch$ ray start --head`: the branch after the folder is part of the prompt."""
    cleaned = clean((PASTES / "d18_healthy-ray-start-head-osx-prompt-with-space-ray34081.txt").read_text())
    assert cleaned.command == "ray start --head"
    assert "ray start --head" not in cleaned.text


def test_a_compose_prefix_without_an_index_is_dropped_and_a_loggers_level_column_kept():
    """`docker compose logs` of a service with a container_name prints no `-1` index (intel/llm-scaler#154,
    AEON-7/...#5 in tests/data/failures); loguru's `INFO     | ` is a logger's column, not a container."""
    log = (DATA / "failures" / "vllm_worker_proc_died_compose.log").read_text()
    cleaned = clean(log)
    assert cleaned.services == {"eap-llm-server-on-arc"}
    assert diagnose.analyse(log)["compose_services"] == ["eap-llm-server-on-arc"]
    assert "(compose services: eap-llm-server-on-arc)" in diagnose.as_text(diagnose.analyse(log))
    assert cleaned.text.splitlines()[1].startswith("ERROR 11-08 11:01:29 [multiproc_executor.py:135] Worker")
    spark = clean((DATA / "failures" / "docker_gpu_not_in_container_spark_compose.log").read_text())
    assert "aeon-ultimate-xs" in spark.services and "== CUDA ==" in spark.text.splitlines()
    loguru = "2024-05-01 10:00:00.123 | INFO     | server:main:12 - ready\nINFO     | worker started"
    assert clean(loguru).text == loguru and clean(loguru).services == set()
    assert "compose_services" not in diagnose.analyse(loguru)


TRAINING_T20P = DATA / "training" / "pastes_t20p"


@pytest.mark.parametrize(
    "path",
    [
        PASTES / "d17_healthy-nccl-tests-broadcast-no-ibverbs-nccltests82.txt",
        # nccl-tests#107: all_reduce_perf over mpirun on two hosts, its table header printed twice
        TRAINING_T20P / "14_nccl-tests107.txt",
    ],
    ids=lambda p: p.stem,
)
def test_the_column_header_of_an_nccl_tests_table_is_no_failure_line(path):
    """nccl-tests name a results column `error` (`#  size  count  type  redop  time  algbw  busbw  error`):
    the header is not listed as a line that reads like a failure."""
    result = diagnose.analyse(path.read_text())
    assert not any("algbw" in line for line in result.get("not_recognised", []))
    assert not any("does not recognise" in v["text"] for v in result["verdicts"])


def test_the_header_of_a_spawned_childs_traceback_is_no_failure_line():
    """fairseq#826: torch.multiprocessing.spawn prints `-- Process 3 terminated with the following error:`
    before the child's traceback; the failure is NCCL's refused connection above it, and the header is
    no line of its own to list as not recognised."""
    result = diagnose.analyse((TRAINING_T20P / "09_fairseq826.txt").read_text())
    assert [f["id"] for f in result["findings"]] == ["nccl.connect_failed"]
    assert "not_recognised" not in result
