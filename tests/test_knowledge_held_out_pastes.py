"""`diagnose` against the held-out rounds of whole pastes (tests/data/held_out/pastesN.tsv indexing
tests/data/held_out/pastesN/*.txt): real pastes from public threads the project never cited, each labelled blind
with the one failure it is about (or `-` for a healthy paste) before any scoring. The header of each index tells how
it was collected and every score it was given. The scorer is tests/held_out.py's PasteRound."""

import re

import pytest

from spark_tui.knowledge import table
from tests.held_out import PasteRound
from tests.helpers import DATA

# Still missed, per round (file -> (label, the cause diagnose names first)): a fix shows up as a failing test until it
# is taken off this list.
MISSED = {
    "pastes1": {},
    "pastes2": {
        "06_skypilot2608.txt": ("new:ray_gpu_resource_misreported", "-"),
        "17_vllm8908.txt": ("vllm.placement_group_waiting", "ray.unschedulable_resources"),
        "22_AReaL639.txt": ("nccl.ib_no_device", "-"),
        "25_gpustack1845.txt": ("vllm.prompt_too_long", "-"),
        "26_k8s-rdma-sriov-dev-plugin32.txt": ("link.qp_rtr_failed", "-"),
    },
    "pastes3": {
        # post-hoc, session 26 t26c: the hook's inner `requirement error: invalid expression` now names the entry added
        # for it (docker.gpu_requirement_invalid); the label predates that entry
        "02_LocalAI4789.txt": ("docker.gpu_prestart_hook_failed", "docker.gpu_requirement_invalid"),
        "05_recipes653.txt": ("vllm.max_len_over_kv_cache", "vllm.kv_cache_too_small"),
        "10_textgen4326.txt": ("hub.gated", "hub.invalid_token"),
        "15_sglang34226.txt": ("sglang.unrecognized_arguments", "vllm.unrecognized_arguments"),
        "18_ray14535.txt": ("ray.object_store_in_tmp", "-"),
        "28_text-generation-inference1394.txt": ("tgi.unsupported_model_type", "-"),
        "32_awsome-distributed-ai192.txt": ("nccl.connect_failed", "nccl.system_error"),
    },
    "pastes4": {
        "15_gpu-burn89.txt": ("cuda.no_cuda_device", "-"),
        "23_text-generation-inference1319.txt": ("new:download_hangs_without_error", "-"),
        "31_vllm1351.txt": ("vllm.prompt_too_long", "-"),
    },
    "pastes5": {
        "01_Qwen3110.txt": ("vllm.max_len_over_kv_cache", "-"),
        "02_ray53919.txt": ("new:ray_gpu_not_detected", "-"),
        "07_TorchPod43.txt": ("new:cuda_forward_compat_unsupported_gpu", "cuda.driver_too_old"),
        "13_TorchAL4.txt": ("cuda.capability_not_compatible", "cuda.no_kernel_image"),
        "18_chat.petals.dev35.txt": ("hub.gated", "hub.repo_not_found"),
        "22_eGon-data1225.txt": ("system.process_killed", "-"),
        "28_nccl1099.txt": ("nccl.system_error", "-"),
        "34_unsloth9919.txt": ("new:unified_memory_oversized_load", "-"),
    },
    "pastes6": {
        # session 29 ph29a: vllm.api_version_mismatch since reads an ImportError from sglang's modules too (the kind this
        # paste's label asked for); the label, a new: kind, stays a miss
        "04_LlamaFactory7458.txt": ("new:sglang_api_version_mismatch", "vllm.api_version_mismatch"),
        "06_llama.vim36.txt": ("new:llamacpp_invalid_argument", "vllm.unrecognized_arguments"),
        "12_kuberay2676.txt": (
            "new:ray_job_agent_unavailable",
            "ray.job_agent_unavailable",
        ),  # session 27 ph27b: the entry since added
        # session 32 s32c: 13_rill-flow100's line, cut inside its last word (`... in the manifest list entrie`), is named
        # since docker.no_arm64_manifest's pattern holds a cut mark after the platform
    },
    "pastes7": {
        "16_ai-performance-engineering8.txt": ("new:nvidia_smi_usage_error", "-"),
    },
    "pastes8": {},
    "pastes9": {
        "01_llama.cpp3744.txt": ("llamacpp.model_file_unreadable", "-"),
        "15_jan7324.txt": ("new:jan_model_process_error", "-"),
    },
    "pastes10": {},
}
# (pastes whose cause diagnose names first, pastes whose label it names anywhere, pastes), per round.
# pastes1: scored once, blind, on session 17's final table: 30 of 36 (83%); the session's starting table (4d7e1ad)
# gives the same 30. Post-hoc, session 18: 35 (rows 11 and 21 relabelled to the entries added for their kinds).
# pastes2: collected blind at the start of session 18, five pastes dropped as cited by the session's samples, scored
# once on the session's final table: 23 of 31 (74%) first, 24 anywhere; the starting table (95450f3c) gives the same.
# Post-hoc: UCX's "device X is not enabled, enable it in UCX_NET_DEVICES" named link.ucx_unreachable: 24 of 31.
# Post-hoc, session 19: gpu-burn's "system not yet initialized" named cuda.system_not_ready (g19cuda): 25 of 31.
# pastes3 and pastes4: collected blind at the start of session 19 (pastes4 excluding pastes3's threads), one paste of
# pastes3 dropped as a thread round 4 already held out, scored once on the session's final table: 27 of 35 and 27 of 31
# first (54 of 66, 82%), 28 and 27 anywhere; the starting table (0e65981b) gives 27 and 26 (pastes4's singularity#1351,
# nvidia-container-cli's mount conflict, named since the audit made its reason any reason).
# Session 20: an entry may compare two of its figures (`when`), so vLLM's `(X in the messages, Y in the completion)`
# is vllm.max_tokens_too_large when X alone fits the limit: pastes1's 34_gpustack929 and pastes2's 24_chatgpt-web372
# are right post-hoc (36 of 36, 26 of 31).
# Session 20's entry for RDMA character devices missing in a container (helper n20, from other threads) names pastes3's
# 14_k8s-rdma-shared-dev-plugin192, relabelled to it from its new: kind: 28 of 35.
# pastes5: collected blind at the start of session 20 while round 18 was, two pastes dropped as threads round 18 holds
# as lines, scored once on the session's final table (84dc8774): 26 of 34 first (76%), 27 anywhere; the starting table
# (42e3a09c) gives the same.
# post-hoc, session 21 t21c: Ray's ValueError refusing an object store larger than /dev/shm is named
# ray.object_store_in_tmp (t21c's training row of that wording widened the entry): pastes4's 22_modin3151 is right (28 of 31).
# pastes7: collected blind at the start of session 22 (even-numbered threads, 20 of the 24 asked: the search budget ran
# out), scored once on the session's final table: 18 of 20 first (90%), 18 anywhere; the starting table (34de6db0) gives
# the same.
# pastes8: collected blind at the start of session 23 (even-numbered threads, 20 of the 24 asked: the search budget ran
# out again), scored once on the session's final table (275f03e8): 20 of 20 first; the starting table (f5fe2d25) too.
# pastes9: collected blind at the start of session 24 (even-numbered threads, 18 of the 24 asked: the search budget ran
# out), scored once on the session's final table (f9a9ee0f): 16 of 18 first, 16 anywhere; the starting table (7233a34c)
# gives the same.
# pastes10: collected blind at the start of session 25 (even-numbered threads, 10 of the 20 asked: about five in six
# candidates were cited and the collector's 55 look-ups ran out), scored once on the session's final table (5f278dde):
# 10 of 10 first; the starting table (dea46ff6) too.
SCORE = {
    "pastes1": (36, 36, 36),
    "pastes2": (26, 27, 31),
    "pastes3": (28, 29, 35),
    "pastes4": (28, 28, 31),
    "pastes5": (26, 27, 34),
    "pastes6": (29, 29, 32),  # session 32 s32c: 13_rill-flow100 named (a cut line)
    "pastes7": (
        19,
        19,
        20,
    ),  # session 32 s32b: 13_DeepSpeed3916 named (torch.rendezvous_port_in_use, a shapes fix)
    "pastes8": (20, 20, 20),
    "pastes9": (16, 16, 18),
    "pastes10": (10, 10, 10),
}
ROUNDS = {name: PasteRound(name) for name in SCORE}
PASTES = [(name, row) for name, one in ROUNDS.items() for row in one.rows()]


def test_every_paste_round_is_tested_and_no_thread_is_in_two():
    assert {path.stem for path in (DATA / "held_out").glob("pastes*.tsv")} == set(ROUNDS)
    sources = [row.source for _, row in PASTES]
    assert len(sources) == len(set(sources))


@pytest.mark.parametrize("name", ROUNDS)
def test_a_paste_round_is_independent_of_everything_the_project_cites(name):
    one = ROUNDS[name]
    rows = one.rows()
    sources = [r.source for r in rows]
    # pastes7-10 hold 10-20: their collectors' share of the session's search budget ran out
    least = {"pastes7": 18, "pastes8": 18, "pastes9": 18, "pastes10": 10}.get(name, 30)
    assert len(rows) >= least and len(set(sources)) == len(sources)
    assert all(re.fullmatch(r"https://github\.com/[^/]+/[^/]+/(issues|pull)/\d+", s) for s in sources)
    assert {r.file for r in rows} == {p.name for p in (one.path.parent / one.name).iterdir()}
    assert one.cited(__file__) == {}
    ids = {ident for e in table().entries for ident in (e.id, *e.aliases)}
    assert [
        r.label for r in rows if r.label != "-" and not r.label.startswith("new:") and r.label not in ids
    ] == []


@pytest.mark.parametrize(("name", "row"), PASTES, ids=[f"{name}:{row.file}" for name, row in PASTES])
def test_a_paste_never_crashes_diagnose(name, row):
    cause, named = ROUNDS[name].cause(row)
    assert cause == "-" or cause in named


@pytest.mark.parametrize("name", ROUNDS)
def test_a_paste_rounds_misses_are_the_listed_ones(name):
    first, anywhere, missed = ROUNDS[name].score()
    assert missed == MISSED[name]
    assert (first, anywhere, len(ROUNDS[name].rows())) == SCORE[name]
