"""The failure table against real lines it was not built from (tests/data/held_out/vllm_hub_ray.tsv).

Each line is named as the file says ('-': still not recognised, listed honestly), and a line keeps its
name under the decorations a reviewer pastes it with: the prefixes vLLM, Ray, Docker and log shippers
put before it, ANSI colours, and Windows line ends."""

from pathlib import Path

import pytest

from spark_tui.knowledge import scan

DATA = Path(__file__).parent / "data"
HELDOUT = DATA / "held_out" / "vllm_hub_ray.tsv"


def _rows() -> list[tuple[str, list[str], str]]:
    rows = []
    for raw in HELDOUT.read_text(encoding="utf-8").splitlines():
        if not raw or raw.startswith("#"):
            continue
        source, ids, line = raw.split("\t", 2)  # a line may hold a TAB of its own (Ray's log format)
        rows.append((source, [] if ids == "-" else ids.split(","), line))
    return rows


ROWS = _rows()

# What log collection puts before a line, as seen in the public threads and real images.
DECORATIONS = [
    "(RayWorkerWrapper pid=4242, ip=10.231.7.13) ",
    "\x1b[36m(EngineCore_DP0 pid=123)\x1b[0m ",
    "(APIServer pid=1) (Worker_TP0 pid=88) ERROR 05-12 10:11:12 [core.py:123] ",
    "2026-03-09T01:31:29.489253860Z ",
    "vllm-head-1  | ",
]


def test_the_held_out_set_is_independent_of_the_samples():
    """No held-out line comes from a thread a sample of tests/data/failures or an entry was made from."""
    from spark_tui.knowledge import table

    built_from = {p.read_text().strip() for p in (DATA / "failures").glob("*.source")}
    built_from |= {s for e in table().entries for s in e.source}
    sources = [source for source, _, _ in ROWS]
    assert len(ROWS) >= 30 and all(s.startswith("https://github.com/") for s in sources)
    assert set(sources) & built_from == set()


@pytest.mark.parametrize(
    "source, ids, line", ROWS, ids=[r[0].removeprefix("https://github.com/") for r in ROWS]
)
def test_held_out_lines_are_named(source, ids, line):
    assert sorted({f.id for f in scan(line)}) == ids


@pytest.mark.parametrize("prefix", DECORATIONS)
def test_a_decorated_line_keeps_its_name(prefix):
    named = [(ids, line) for _, ids, line in ROWS if ids]
    text = "\r\n".join(prefix + line + "\x1b[0m" for _, line in named) + "\r\n"
    found = [sorted({f.id for f in scan(line)}) for line in text.splitlines()]
    assert found == [ids for ids, _ in named]
