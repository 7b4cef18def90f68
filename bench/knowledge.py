"""The failure knowledge base read like a parser: lines per second of `Watch.feed_lines` over the
same vLLM log the vLLM parser is measured on (bench_parsers), so the two figures compare."""

from __future__ import annotations

from spark_tui.knowledge import Watch


class KnowledgeFeed:
    """A Watch with the parsers' interface: every line through the whole failure table."""

    def __init__(self) -> None:
        self.watch = Watch("bench")

    def feed_lines(self, lines) -> None:
        self.watch.feed_lines(lines)
