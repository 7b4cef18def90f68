"""Docker outputs operators paste (`docker ps --format table`), and what looks like a model server.

spark-tui itself talks to Docker through the SDK; these read what people paste into issues.
"""

from __future__ import annotations

import re

# Names and images of what serves models: a container like these holds memory a load needs.
INFERENCE = re.compile(r"vllm|ray|sglang|nim|tgi|text-generation|llama|ollama|trtllm|tensorrt", re.I)


def looks_like_inference(text: str) -> bool:
    return bool(INFERENCE.search(text))


# `docker ps`'s header (the default table, or a `--format table` one starting at NAMES) and a row of the
# default table, which begins with the container's short ID (also how rows pasted without a header are known).
PS_HEADER = re.compile(r"^(?:CONTAINER ID|NAMES)\s")
PS_ROW = re.compile(r"^[0-9a-f]{12}\s{2,}\S")
DEFAULT_COLUMNS = ("CONTAINER ID", "IMAGE", "COMMAND", "CREATED", "STATUS", "PORTS", "NAMES")


def parse_ps_table(text: str) -> list[dict[str, str]]:
    """Every `docker ps` table of a paste, each read by its own header (a shell session holds several, with
    other commands' output between them: diagnose's cleaning has taken the prompt lines out), and rows pasted
    without a header read as the default columns.

    Cells are found at the header's word positions (empty cells are padded with spaces); a row whose cells do
    not start at those positions (a paste that lost spaces) is split at runs of 2+ spaces instead, docker's own
    separator, when that gives the header's count of cells (or one fewer, the PORTS cell empty)."""
    rows: list[dict[str, str]] = []
    columns: tuple[list[int], list[str]] | None = None
    for line in text.splitlines():
        if not line.strip():
            continue
        if PS_HEADER.match(line):
            starts = [m.start() for m in re.finditer(r"\S+(?: \S+)*", line)]
            columns = (starts, [line[s:].split("  ")[0].strip() for s in starts])
            continue
        if columns is None:
            if not PS_ROW.match(line):
                continue  # before any header: a row only when it starts with a container ID
            rows.append(_split_cells(line, None, list(DEFAULT_COLUMNS)))
            continue
        if columns[1][0] == "CONTAINER ID" and not PS_ROW.match(line):
            continue  # the default table's rows start with the container's ID: another command's output
        rows.append(_split_cells(line, *columns))
    return rows


def _split_cells(line: str, starts: list[int] | None, names: list[str]) -> dict[str, str]:
    by_position = None
    if starts is not None:
        bounds = zip(starts, starts[1:] + [len(line) + 1], strict=True)
        by_position = [line[a:b].strip() for a, b in bounds]
        cuts_a_word = any(0 < s < len(line) and line[s - 1] != " " and line[s] != " " for s in starts[1:])
        if not cuts_a_word and not any(re.search(r"\s{2,}", cell) for cell in by_position):
            return dict(zip(names, by_position, strict=False))
    cells = re.split(r"\s{2,}", line.strip())
    if len(cells) == len(names) - 1 and "PORTS" in names:
        cells.insert(names.index("PORTS"), "")
    if len(cells) == len(names) or by_position is None:
        return dict(zip(names, cells, strict=False))
    return dict(zip(names, by_position, strict=False))
