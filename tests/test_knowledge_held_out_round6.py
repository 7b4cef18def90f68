"""The failure table against round 6's held-out real lines, collected blind by two engineers in two parts
(tests/data/held_out/round6_A.tsv: vLLM, NCCL/torch.distributed, Ray; round6_B.tsv: Docker/toolkit, CUDA/driver,
Hub, links; each with must-not-name lines). The form and the scorer are in tests/held_out.py."""

import pytest

from spark_tui.knowledge import scan
from tests.held_out import Round, label_ids, well_formed

NEW_KINDS = {
    "new:tgi_flash_attention_required": "vllm",
    "new:openllm_auto_map_missing": "vllm",
    "new:cpu_swap_space_exhausted": "vllm",
    "new:ray_gcs_unhandled_exception": "ray",
}
PARTS = {"A": Round("round6_A", NEW_KINDS), "B": Round("round6_B")}
ROWS = [(part, row) for part, r in PARTS.items() for row in r.rows()]

# Still missed (source -> its label), per part. The first look at 27f00a4 missed these (the headers say what was
# named instead); a fix shows up as a failing test until it is taken off this list.
MISSED = {
    "A": {
        "https://github.com/huggingface/text-generation-inference/issues/686": "new:tgi_flash_attention_required",
        "https://github.com/bentoml/OpenLLM/issues/641": "new:openllm_auto_map_missing",
        "https://github.com/rllm-org/rllm/issues/62": "new:cpu_swap_space_exhausted",
        "https://github.com/ray-project/ray/issues/49105": "new:ray_gcs_unhandled_exception",
        "https://github.com/vllm-project/llm-compressor/issues/959": "vllm.weight_name_mismatch",
        "https://github.com/huggingface/text-generation-inference/issues/1627": "tgi.shard_crashed",
        "https://github.com/pytorch/pytorch/issues/23363": "nccl.system_error",
        "https://github.com/ray-project/ray/issues/8329": "ray.internal_check_failed",
        "https://github.com/sgl-project/sglang/issues/5883": "torch.gloo_timeout",
        "https://github.com/ray-project/ray/issues/18979": "-",
    },
    "B": {
        "https://github.com/huggingface/huggingface_hub/issues/2936": "hub.rate_limited",
        "https://github.com/uccl-project/uccl/issues/641": "link.qp_rtr_failed",
        "https://github.com/Mellanox/k8s-rdma-shared-dev-plugin/issues/169": "link.no_rdma_devices",
        "https://github.com/madsys-dev/smart/issues/2": "link.qp_rtr_failed",
        "https://github.com/vllm-project/vllm/issues/1369": "cuda.runtime_library_missing",
        "https://github.com/ogx-ai/llama-stack-apps/issues/112": "docker.port_allocated",
        "https://github.com/runpod/containers/issues/56": "cuda.libcuda_missing",
    },
}
NAMED = [(part, row) for part, row in ROWS if row.source not in MISSED[part]]


@pytest.mark.parametrize("part", PARTS)
def test_round6_is_independent_of_everything_the_project_cites(part):
    rows = PARTS[part].rows()
    assert len(rows) >= 45 and well_formed(rows)
    assert PARTS[part].cited(__file__) == {}
    assert PARTS[part].unknown_labels() == []


def test_round6_parts_share_no_thread_and_are_spread_like_an_operators_pastes():
    a, b = ({r.source for r in PARTS[p].rows()} for p in PARTS)
    assert not a & b
    total_a, total_b = PARTS["A"].score()[1], PARTS["B"].score()[1]
    assert total_a["vllm"] >= 15 and min(total_a["nccl"], total_a["ray"]) >= 9
    assert min(total_b[f] for f in ("docker", "cuda", "hub", "link")) >= 5
    assert min(total_a["must-not-name"], total_b["must-not-name"]) >= 9


@pytest.mark.parametrize(
    ("part", "row"), NAMED, ids=[r.source.removeprefix("https://github.com/") for _, r in NAMED]
)
def test_round6_lines_are_named(part, row):
    assert {f.id for f in scan(row.line)} == label_ids(row.label), row.what


@pytest.mark.parametrize("part", PARTS)
def test_round6_misses_are_the_listed_ones(part):
    right, total, _, missed = PARTS[part].score()
    assert missed == MISSED[part]
    # first look at 27f00a4, labels frozen before the table ran: A 36 of 46, B 40 of 47 (76 of 93, 82%)
    assert (right, sum(total.values())) == {"A": (36, 46), "B": (40, 47)}[part]
