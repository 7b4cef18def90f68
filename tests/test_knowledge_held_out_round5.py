"""The failure table against round 5's held-out real lines (tests/data/held_out/round5.tsv).

A row is right when the ids the engine names for its line are exactly its label (`-`: nothing named; a `new:` label
can only be met by an entry that does not exist yet). `score` is the scorer the round was measured with; the lines the
table still misses are listed by name (MISSED), so a fix shows up as a failing test until the list is updated, and a
regression as a failing line."""

import re
from collections import Counter
from pathlib import Path

import pytest

from spark_tui.knowledge import scan, table

TESTS = Path(__file__).parent
DATA = TESTS / "data"
HELDOUT = DATA / "held_out" / "round5.tsv"
CORPUS = Path("/work/shared/corpus")  # the shared corpus of the development machine; absent elsewhere

# Still missed (source -> the label it should be named as; `new:` ids do not exist yet). The five blind misses were
# fixed post-hoc (branch post5, from other threads' wordings; see the header of round5.tsv): none left.
MISSED: dict[str, str] = {}

# The family a row was collected for, by its label (new kinds by name, the rest by the id's prefix).
# (the two new kinds got entries post-hoc, vllm.*, and their rows were relabelled: none left)
NEW_KIND_FAMILY: dict[str, str] = {}
PREFIX_FAMILY = {"torch": "nccl", "driver": "cuda", "safetensors": "hub", "tokenizers": "hub"}


def _rows() -> list[tuple[str, str, str, str]]:
    rows = []
    for raw in HELDOUT.read_text(encoding="utf-8").splitlines():
        if not raw or raw.startswith("#"):
            continue
        source, label, _what, line = raw.split("\t", 3)
        rows.append((source, label, _what, line))
    return rows


ROWS = _rows()


def label_ids(label: str) -> set[str]:
    return set() if label == "-" else set(label.split(","))


def family(label: str) -> str:
    first = label.split(",")[0]
    if first == "-":
        return "must-not-name"
    if first in NEW_KIND_FAMILY:
        return NEW_KIND_FAMILY[first]
    prefix = first.split(".")[0]
    return PREFIX_FAMILY.get(prefix, prefix)


def score(rows=ROWS, name=scan) -> tuple[int, Counter, Counter, dict[str, str]]:
    """(rows named as labelled, rows per family, right rows per family, {source: label} of the misses)."""
    total: Counter = Counter()
    right: Counter = Counter()
    missed = {}
    for source, label, _what, line in rows:
        fam = family(label)
        total[fam] += 1
        if {f.id for f in name(line)} == label_ids(label):
            right[fam] += 1
        else:
            missed[source] = label
    return sum(right.values()), total, right, missed


def _thread_pattern(source: str) -> re.Pattern[str]:
    """The thread cited as a URL (issues, pull or discussions) or as repo#N, the corpus INDEX's short form."""
    owner, repo, _kind, number = source.removeprefix("https://github.com/").split("/")[:4]
    return re.compile(
        rf"(?:{re.escape(owner)}/{re.escape(repo)}/(?:issues|pull|discussions)/{number}"
        rf"|(?<![\w.-]){re.escape(repo)}#{number})(?!\d)",
        re.IGNORECASE,
    )


def _project_texts() -> dict[str, str]:
    mine = {HELDOUT.resolve(), Path(__file__).resolve()}
    roots = [TESTS, TESTS.parent / "spark_tui" / "knowledge"] + ([CORPUS] if CORPUS.is_dir() else [])
    texts = {}
    for root in roots:
        for path in root.rglob("*"):
            if path.is_file() and path.resolve() not in mine and "__pycache__" not in path.parts:
                texts[str(path)] = path.read_text(encoding="utf-8", errors="replace")
    return texts


def test_round5_is_independent_of_everything_the_project_cites():
    sources = [source for source, _, _, _ in ROWS]
    assert len(ROWS) >= 70 and len(set(sources)) == len(sources)
    assert all(re.fullmatch(r"https://github\.com/[^/]+/[^/]+/(issues|pull)/\d+", s) for s in sources)
    entry_sources = {s for e in table().entries for s in e.source}
    texts = _project_texts()
    assert any(path.endswith(".source") for path in texts)  # the samples were read
    cited = {}
    for source in sources:
        pattern = _thread_pattern(source)
        hits = [path for path, text in texts.items() if pattern.search(text)]
        hits += [s for s in entry_sources if pattern.search(s)]
        if hits:
            cited[source] = hits
    assert cited == {}


def test_round5_labels_are_entries_or_declared_new_kinds():
    ids = {e.id for e in table().entries}
    for _, label, _, _ in ROWS:
        for one in label_ids(label):
            assert one in ids or one.startswith("new:"), one


def test_round5_is_spread_like_an_operators_pastes():
    total = score()[1]
    assert total["vllm"] >= 15 and total["must-not-name"] >= 9
    assert min(total[f] for f in ("nccl", "ray", "docker", "cuda", "hub")) >= 7


NAMED = [r for r in ROWS if r[0] not in MISSED]


@pytest.mark.parametrize(
    "source, label, what, line", NAMED, ids=[r[0].removeprefix("https://github.com/") for r in NAMED]
)
def test_round5_lines_are_named(source, label, what, line):
    assert {f.id for f in scan(line)} == label_ids(label), what


def test_round5_misses_are_the_listed_ones():
    right, total, _, missed = score()
    assert missed == MISSED
    # first look at a1cde1b: 67 of 73 (92%); blind after session 11's breadth work, three rows that became cited
    # dropped: 65 of 70 (93%); after the post-hoc fixes of the five misses (no longer blind): 70 of 70
    assert (right, sum(total.values())) == (70, 70)
