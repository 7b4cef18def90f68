"""The failure table against round 4's held-out real lines (tests/data/held_out/round4.tsv; the form and the
scorer are in tests/held_out.py)."""

import pytest

from spark_tui.knowledge import scan
from tests.held_out import Round, label_ids, well_formed

ROUND = Round("round4", new_kind_family={"new:ray_lost_raylet_connection": "ray"})
ROWS = ROUND.rows()

# Still missed (source -> the label it should be named as; `new:` ids do not exist yet).
MISSED = {
    "https://github.com/vllm-project/vllm/issues/4315": "vllm.unknown_model_type",
    "https://github.com/ray-project/ray/issues/6662": "new:ray_lost_raylet_connection",
    "https://github.com/MrYxJ/calculate-flops.pytorch/issues/51": "hub.repo_not_found",
    "https://github.com/aistudynow/Comfyui-HunyuanFoley/issues/6": "hub.cannot_load_model",
    # the same torch line ("No CUDA GPUs are available") was labelled vllm.no_device here and cuda.no_cuda_device by
    # two later collectors (round 7 A); session 12 names torch's own lines in the CUDA family, whatever runs them
    "https://github.com/ray-project/ray/issues/51193": "vllm.no_device",
}
NAMED = [r for r in ROWS if r.source not in MISSED]


def test_round4_is_independent_of_everything_the_project_cites():
    assert len(ROWS) >= 70 and well_formed(ROWS)
    assert ROUND.cited(__file__) == {}
    assert ROUND.unknown_labels() == []


def test_round4_is_spread_like_an_operators_pastes():
    total = ROUND.score()[1]
    assert total["vllm"] >= 20 and total["must-not-name"] >= 8
    assert min(total[f] for f in ("nccl", "ray", "docker", "cuda", "hub")) >= 8


@pytest.mark.parametrize("row", NAMED, ids=[r.source.removeprefix("https://github.com/") for r in NAMED])
def test_round4_lines_are_named(row):
    assert {f.id for f in scan(row.line)} == label_ids(row.label), row.what


def test_round4_misses_are_the_listed_ones():
    right, total, _, missed = ROUND.score()
    assert missed == MISSED
    # first look at 9ef66b4: 58 of 74 (78%); blind after session 10's breadth work: 63 of 73 (86%);
    # after session 11's generic entries and the fixes of round 4's misses, two rows relabelled (post-hoc,
    # the tsv header says why): 69 of 73 (95%); session 12, torch's no-GPU line moved to the CUDA family: 68 of 73
    assert (right, sum(total.values())) == (68, 73)
