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


def paired_ratio(lines: list[str], chunk: int, repeats: int) -> float:
    """The failure table's speed over the vLLM parser's, each repeat timing both back to back on
    the same lines (this shared machine's speed drifts within a run): the median of the ratios."""
    import statistics
    import time

    from spark_tui.parsers.vllm import VllmParser

    chunks = [lines[i : i + chunk] for i in range(0, len(lines), chunk)]
    ratios = []
    for _ in range(repeats):
        parser, kb = VllmParser(), KnowledgeFeed()
        start = time.perf_counter()
        for line in lines:
            parser.feed(line)
        parser_s = time.perf_counter() - start
        start = time.perf_counter()
        for c in chunks:
            kb.feed_lines(c)
        ratios.append(parser_s / (time.perf_counter() - start))
    return round(statistics.median(ratios), 2)
