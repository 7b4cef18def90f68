"""The failure table against messages read in the source of the programs that print them
(tests/data/source_messages/<program>.tsv; the form is told in that folder's README.md): each names exactly its label."""

import re

import pytest

from spark_tui.knowledge import scan, table
from tests.held_out import Row, label_ids
from tests.helpers import DATA

FOLDER = DATA / "source_messages"
SOURCE = re.compile(r"https://github\.com/[^/\s]+/[^/\s]+/blob/[0-9A-Za-z._-]+/[^\s#]+(#L\d+)?")


def _rows() -> list[tuple[str, Row]]:
    rows = []
    for path in sorted(FOLDER.glob("*.tsv")):
        for raw in path.read_text(encoding="utf-8").splitlines():
            if raw and not raw.startswith("#"):
                rows.append((path.stem, Row(*raw.split("\t", 3))))
    return rows


ROWS = _rows()


def test_every_row_is_well_formed():
    ids = {e.id for e in table().entries}
    assert ROWS, "no source messages were read"
    for program, row in ROWS:
        assert SOURCE.fullmatch(row.source), f"{program}: {row.source} is not a blob URL"
        assert row.what.strip() and row.line.strip(), f"{program}: {row.source} lacks its text"
        assert label_ids(row.label) <= ids, f"{program}: {row.label} names an unknown entry"
    lines = [(program, row.line) for program, row in ROWS]
    assert len(set(lines)) == len(lines), "a message is listed twice in one program's file"


@pytest.mark.parametrize(
    ("program", "row"), ROWS, ids=[f"{p}:{r.source.rsplit('/', 1)[-1]}" for p, r in ROWS]
)
def test_message_names_its_label(program, row):
    assert {f.id for f in scan(row.line)} == label_ids(row.label), row.line
