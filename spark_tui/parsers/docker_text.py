"""Docker outputs operators paste (`docker ps --format table`), and what looks like a model server.

spark-tui itself talks to Docker through the SDK; these read what people paste into issues.
"""

from __future__ import annotations

import re

# Names and images of what serves models: a container like these holds memory a load needs.
INFERENCE = re.compile(r"vllm|ray|sglang|nim|tgi|text-generation|llama|ollama|trtllm|tensorrt", re.I)


def looks_like_inference(text: str) -> bool:
    return bool(INFERENCE.search(text))


def parse_ps_table(text: str) -> list[dict[str, str]]:
    """Columns are found from the header's word positions; empty cells may be padded with spaces."""
    lines = [line for line in text.splitlines() if line.strip()]
    # Anything before the header (a docker CLI warning, say) is not a row.
    start = next((i for i, line in enumerate(lines) if re.match(r"^(?:CONTAINER ID|NAMES)\s", line)), 0)
    lines = lines[start:]
    if not lines:
        return []
    header = lines[0]
    starts = [m.start() for m in re.finditer(r"\S+(?: \S+)*", header)]
    names = [header[s:].split("  ")[0].strip() for s in starts]
    rows = []
    for line in lines[1:]:
        cells = [line[a:b].strip() for a, b in zip(starts, starts[1:] + [len(line) + 1], strict=True)]
        rows.append(dict(zip(names, cells, strict=False)))
    return rows
