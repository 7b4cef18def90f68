"""The failure table against round 5's held-out real lines (tests/data/held_out/round5.tsv; the form and the
scorer are in tests/held_out.py)."""

import pytest

from spark_tui.knowledge import scan
from tests.held_out import Round, label_ids, well_formed

# No `new:` label is left: the two new kinds got entries post-hoc and their rows were relabelled.
ROUND = Round("round5")
ROWS = ROUND.rows()

# Still missed (source -> the label it should be named as). The five blind misses were fixed post-hoc from other
# threads' wordings (the header of round5.tsv says which): none left.
MISSED: dict[str, str] = {}
NAMED = [r for r in ROWS if r.source not in MISSED]


def test_round5_is_independent_of_everything_the_project_cites():
    assert len(ROWS) >= 70 and well_formed(ROWS)
    assert ROUND.cited(__file__) == {}
    assert ROUND.unknown_labels() == []


def test_round5_is_spread_like_an_operators_pastes():
    total = ROUND.score()[1]
    assert total["vllm"] >= 15 and total["must-not-name"] >= 9
    assert min(total[f] for f in ("nccl", "ray", "docker", "cuda", "hub")) >= 7


@pytest.mark.parametrize("row", NAMED, ids=[r.source.removeprefix("https://github.com/") for r in NAMED])
def test_round5_lines_are_named(row):
    assert {f.id for f in scan(row.line)} == label_ids(row.label), row.what


def test_round5_misses_are_the_listed_ones():
    right, total, _, missed = ROUND.score()
    assert missed == MISSED
    # first look at a1cde1b: 67 of 73 (92%); blind after session 11's breadth work, three rows that became cited
    # dropped: 65 of 70 (93%); after the post-hoc fixes of the five misses (no longer blind): 70 of 70
    assert (right, sum(total.values())) == (70, 70)
