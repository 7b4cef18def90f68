"""The failure table against the held-out rounds collected in two blind parts (round 6 onwards):
tests/data/held_out/roundN_A.tsv (vLLM, NCCL/torch.distributed, Ray, ...) and roundN_B.tsv (Docker/toolkit,
CUDA/driver, Hub, links, ...), each with must-not-name lines. Each file's header tells how it was collected and every
score it was given, blind or not. The form and the scorer are in tests/held_out.py."""

import pytest

from spark_tui.knowledge import scan
from tests.held_out import Round, label_ids, well_formed
from tests.helpers import DATA

# The family a `new:` label (a kind the table had no entry for) counts in.
NEW_KINDS = {
    "new:openllm_auto_map_missing": "vllm",
    "new:ray_gcs_unhandled_exception": "ray",
    "new:swap_space_too_large": "vllm",
    "new:xinference_vllm_version_mismatch": "vllm",
    "new:sglang_unrecognized_arguments": "vllm",
    "new:hub_expected_size_wrong": "hub",
    "new:cupy_tcp_store_unavailable": "nccl",
}
PARTS = {
    name: Round(name, NEW_KINDS)
    for name in ("round6_A", "round6_B", "round7_A", "round7_B", "round8_A", "round8_B")
}

# Still missed (source -> its label), per part: a fix shows up as a failing test until it is taken off this list.
GH = "https://github.com/"
MISSED = {
    "round6_A": {
        GH + "bentoml/OpenLLM/issues/641": "new:openllm_auto_map_missing",
        GH + "pytorch/pytorch/issues/23363": "nccl.system_error",
        GH + "ray-project/ray/issues/18979": "-",
        GH + "ray-project/ray/issues/49105": "new:ray_gcs_unhandled_exception",
    },
    "round6_B": {
        GH + "Mellanox/k8s-rdma-shared-dev-plugin/issues/169": "link.no_rdma_devices",
        GH + "madsys-dev/smart/issues/2": "link.qp_rtr_failed",
    },
    "round7_A": {
        GH + "facebookresearch/bitsandbytes/issues/34": "hub.unreachable",
        GH + "lamikr/rocm_sdk_builder/issues/244": "hub.repo_not_found",
        GH + "Ksuriuri/index-tts-vllm/issues/99": "new:swap_space_too_large",
        GH + "vllm-project/vllm/issues/8855": "vllm.rope_scaling_invalid",
        GH + "vllm-project/vllm/issues/18450": "vllm.unknown_model_type",
        GH + "prov-gigapath/prov-gigapath/issues/92": "hub.not_authorized",
        GH + "huggingface/huggingface_hub/issues/3307": "new:hub_expected_size_wrong",
        GH + "xorbitsai/inference/issues/3135": "new:xinference_vllm_version_mismatch",
        GH + "sgl-project/sglang/issues/4116": "new:sglang_unrecognized_arguments",
    },
    "round7_B": {
        GH + "ray-project/ray/issues/15389": "ray.gcs_unreachable",
        GH + "rwth-i6/returnn/issues/1486": "driver.gpu_lost",
        GH + "heidsoft/devops/issues/67": "link.tx_timeout",
    },
    "round8_A": {
        GH + "huggingface/text-generation-inference/issues/814": "tgi.shard_crashed",
        GH + "laekov/fastmoe/issues/126": "nccl.invalid_usage",
        GH + "sgl-project/sglang/pull/27944": "torch.gloo_peer_lost",
        GH + "vllm-project/vllm/issues/5405": "-",
        GH + "ray-project/ray/issues/43756": "new:cupy_tcp_store_unavailable",
        GH + "gpustack/gpustack/issues/5779": "vllm.tp_gpus_per_node_divisible",
        GH + "vllm-project/vllm/issues/52778": "vllm.custom_all_reduce_failed",
        GH + "vllm-project/vllm/issues/6145": "vllm.worker_proc_died",
    },
    "round8_B": {
        GH + "kuielab/sdx23/issues/5": "docker.manifest_unknown",
        GH + "axboe/fio/issues/862": "system.disk_io_error",
        GH + "tmylla/NER_ZH/issues/1": "hub.bad_repo_id",
        GH + "k8snetworkplumbingwg/sriov-network-operator/issues/382": "link.ib_port_not_active",
    },
}
# (named right, rows) now; the headers keep the history. Round 6's first look at 27f00a4: A 36/46, B 40/47; round 7
# at 27f00a4: A 37/50, B 37/50. Blind after session 12's first breadth wave (four engineers who never saw these
# rounds; round 7 A lost two rows its samples now cite): 6 A 36/46, 6 B 40/47, 7 A 36/48, 7 B 38/50 (150 of 191).
# Then post-hoc fixes, made after reading the misses from other threads' wordings (each header says which): no longer
# blind, so the blind figures above stay the measure. Round 8 was scored once, on the session's final table (719f701):
# A 41/49, B 46/50 (87 of 99, 88%; the table at the session's start names 85 of them); nothing was fixed from it.
SCORE = {
    "round6_A": (42, 46),
    "round6_B": (45, 47),
    "round7_A": (39, 48),
    "round7_B": (47, 50),
    "round8_A": (41, 49),
    "round8_B": (46, 50),
}
NAMED = [(name, row) for name, r in PARTS.items() for row in r.rows() if row.source not in MISSED[name]]


@pytest.mark.parametrize("name", PARTS)
def test_a_part_is_independent_of_everything_the_project_cites(name):
    rows = PARTS[name].rows()
    assert len(rows) >= 45 and well_formed(rows)
    assert PARTS[name].cited(__file__) == {}
    assert PARTS[name].unknown_labels() == []


@pytest.mark.parametrize("round_", sorted({name.split("_")[0] for name in PARTS}))
def test_a_rounds_parts_share_no_thread_and_hold_must_not_name_lines(round_):
    a, b = ({r.source for r in PARTS[f"{round_}_{p}"].rows()} for p in "AB")
    assert not a & b
    for part in "AB":
        total = PARTS[f"{round_}_{part}"].score()[1]
        assert total["must-not-name"] >= 9 and len(total) >= 4


def test_no_thread_is_held_out_twice():
    """Across the rounds in this form (4 onwards; a round's independence check leaves the other rounds out)."""
    rounds = [
        Round(path.stem) for path in sorted((DATA / "held_out").glob("round*.tsv")) if path.stem != "round3"
    ]
    sources = [r.source for one in rounds for r in one.rows()]
    assert len(rounds) >= 6 and len(sources) == len(set(sources))


@pytest.mark.parametrize(("name", "row"), NAMED, ids=[r.source.removeprefix(GH) for _, r in NAMED])
def test_a_held_out_line_is_named(name, row):
    assert {f.id for f in scan(row.line)} == label_ids(row.label), row.what


@pytest.mark.parametrize("name", PARTS)
def test_a_parts_misses_are_the_listed_ones(name):
    right, total, _, missed = PARTS[name].score()
    assert missed == MISSED[name]
    assert (right, sum(total.values())) == SCORE[name]
