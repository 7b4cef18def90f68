"""Real lines cut the way blind lines arrive keep their names: the rows of tests/data/cut_lines/*.tsv (its README says
the form). Each row names a real line kept in tests/data and a cut of it; the cut names what the whole line names."""

import pytest

from spark_tui.knowledge import Matcher, default_matcher
from tests.helpers import DATA

CUTS = DATA / "cut_lines"


def _rows() -> list[tuple[str, str, str, int]]:
    rows = []
    for path in sorted(CUTS.glob("*.tsv")):
        for n, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if raw.strip() and not raw.startswith("#"):
                where, how, words = raw.split("\t")
                rows.append((f"{path.name}:{n}", where, how, int(words)))
    return rows


ROWS = _rows()


def _line(where: str, m: Matcher) -> str:
    """The real line a row cuts: a source-message row's line, or a sample's first line naming one of its ids."""
    if "#" in where:
        name, row = where.split("#")
        raw = (DATA / "source_messages" / name).read_text(encoding="utf-8").splitlines()[int(row) - 1]
        return raw.split("\t", 3)[3]
    want = set((DATA / "failures" / f"{where}.expect").read_text().split())
    lines = (DATA / "failures" / f"{where}.log").read_text(encoding="utf-8").splitlines()
    return next(line for line in lines if want & {f.id for f in m.match(line)})


@pytest.mark.parametrize(("row", "where", "how", "words"), ROWS, ids=[r[0] for r in ROWS])
def test_a_real_line_cut_keeps_its_name(row, where, how, words):
    m = default_matcher()
    line = _line(where, m)
    parts = line.split(" ")
    assert how in ("end", "drop"), f"{row}: how is end or drop"
    cut = " ".join(parts[:words] if how == "end" else parts[words:])
    assert cut.strip() and cut != line, f"{row}: the cut is the whole line or nothing"
    ids = {f.id for f in m.match(line)}
    assert ids, f"{row}: the whole line names nothing"
    assert ids & {f.id for f in m.match(cut)}, (cut, ids)


def test_the_rows_cut_real_lines():
    """The cut rows exist and every row names a file that exists (a row's typo would otherwise make no test)."""
    for row, where, _how, _words in ROWS:
        name = where.split("#")[0]
        path = DATA / "source_messages" / name if "#" in where else DATA / "failures" / f"{name}.log"
        assert path.is_file(), f"{row}: {path} does not exist"
