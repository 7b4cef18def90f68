"""vLLM's `/metrics` (Prometheus text) read into a Scrape, and vLLM's periodic stat line.

Parsing is prometheus_client's own parser. Before it, lines are kept only when they belong to a
series a serving view uses (the `vllm:` families and FastAPI's `http_requests_total`): a real
`/metrics` carries hundreds of other lines (python_gc_*, process_*, request-size histograms) whose
parsing would be most of the cost (bench/serving.py measures both).

Series are read by what the scrape contains, never mapped by version number: vLLM renamed
several (docs: shared/reference/vllm-metrics.md), so each figure lists the names that may carry it.
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from dataclasses import dataclass, field

from prometheus_client.parser import text_string_to_metric_families

from spark_tui.errors import MetricsError

# Families (as the exposition names them, before _total/_bucket suffixes) kept for parsing.
WANTED = (
    "vllm:num_requests_running",
    "vllm:num_requests_waiting",
    "vllm:kv_cache_usage_perc",
    "vllm:gpu_cache_usage_perc",
    "vllm:prompt_tokens",
    "vllm:generation_tokens",
    "vllm:num_preemptions",
    "vllm:prefix_cache_queries",
    "vllm:prefix_cache_hits",
    "vllm:gpu_prefix_cache_queries",
    "vllm:gpu_prefix_cache_hits",
    "vllm:gpu_prefix_cache_hit_rate",
    "vllm:spec_decode_num_drafts",
    "vllm:spec_decode_num_draft_tokens",
    "vllm:spec_decode_num_accepted_tokens",
    "vllm:request_success",
    "vllm:time_to_first_token_seconds",
    "vllm:inter_token_latency_seconds",
    "vllm:time_per_output_token_seconds",
    "vllm:e2e_request_latency_seconds",
    "vllm:cache_config_info",
    "http_requests_total",
)
_SUFFIXES = ("_total", "_created", "_bucket", "_count", "_sum", "_info")
_WANTED = frozenset(WANTED)


@dataclass
class Scrape:
    """One /metrics answer: values summed over engines (DP ranks), by sample name."""

    at: float  # time.monotonic() of the answer
    values: dict[str, float] = field(default_factory=dict)
    peaks: dict[str, float] = field(default_factory=dict)  # the largest over engines (KV usage)
    by_label: dict[str, dict[str, float]] = field(default_factory=dict)  # sample -> label value -> sum
    buckets: dict[str, dict[float, float]] = field(default_factory=dict)  # histogram -> le -> cumulative
    cache_info: dict[str, str] = field(default_factory=dict)  # vllm:cache_config_info's labels
    names: set[str] = field(default_factory=set)  # every kept family name present
    families: int = 0  # families in the whole answer (for "no vLLM series among N")

    def has(self, name: str) -> bool:
        return name in self.names


def _base(name: str) -> str:
    for suffix in _SUFFIXES:
        if name.endswith(suffix) and name[: -len(suffix)] in _WANTED:
            return name[: -len(suffix)]
    return name


# By which label a labelled counter is split.
SPLIT_BY = {"vllm:request_success_total": "finished_reason", "http_requests_total": "status"}
_PREFIXES = ("vllm:", "http_requests_total")
_SKIP = ("_created", "_sum", "_count")  # samples no figure reads: half of a histogram's lines


class Reader:
    """Parses successive scrapes of one server. A series (name and labels) is handed to
    prometheus_client's parser the first time it appears; later scrapes of the same series reuse
    what it said and read only the new value (the parser costs ~30 us a line, mostly labels)."""

    def __init__(self) -> None:
        self._series: dict[str, tuple[str, dict[str, str]]] = {}

    def _parsed(self, lines: list[str]) -> list[tuple[str, dict[str, str], float]]:
        out, fresh = [], []
        for line in lines:
            key, _, value = line.rpartition(" ")
            known = self._series.get(key)
            if known is None:
                fresh.append(line)
                continue
            try:
                out.append((known[0], known[1], float(value)))
            except ValueError:
                fresh.append(line)  # not a plain value (a timestamp after it?): the parser decides
        if fresh:
            try:
                families = list(text_string_to_metric_families("\n".join(fresh) + "\n"))
            except (ValueError, IndexError, KeyError) as exc:
                raise MetricsError(f"not Prometheus text ({str(exc)[:80]})") from None
            samples = [s for fam in families for s in fam.samples]
            for line, s in zip(fresh, samples, strict=False):
                if len(samples) == len(fresh) and s.timestamp is None:
                    self._series[line.rpartition(" ")[0]] = (s.name, s.labels)
                out.append((s.name, s.labels, float(s.value)))
        return out

    def parse(self, text: str, at: float) -> Scrape:
        """Raises MetricsError (one line) when the text is not Prometheus exposition."""
        scrape = Scrape(at)
        kept: list[str] = []
        families: set[str] = set()
        for line in text.splitlines():
            if not line:
                continue
            if line[0] == "#":
                parts = line.split(None, 3)
                if len(parts) > 2 and parts[1] in ("HELP", "TYPE"):
                    families.add(parts[2])
                    base = _base(parts[2])
                    if base in _WANTED:
                        scrape.names.add(base)  # declared counts as exposed, even before a sample
                continue
            if not line.startswith(_PREFIXES):
                continue
            brace = line.find("{")
            name = line[:brace] if brace > 0 else line.partition(" ")[0]
            base = _base(name)
            if base in _WANTED:
                scrape.names.add(base)
                if not name.endswith(_SKIP):
                    kept.append(line)
        scrape.families = len(families)
        if not families and not kept and text.strip():
            raise MetricsError("no metric families in it")
        for name, labels, value in self._parsed(kept):
            if math.isnan(value):
                continue
            if name == "vllm:cache_config_info":
                scrape.cache_info = {k: v for k, v in labels.items() if k not in ("engine", "model_name")}
                continue
            if name.endswith("_bucket"):
                le = float(labels.get("le", "inf"))
                hist = scrape.buckets.setdefault(name[: -len("_bucket")], {})
                hist[le] = hist.get(le, 0.0) + value
                continue
            scrape.values[name] = scrape.values.get(name, 0.0) + value
            scrape.peaks[name] = max(scrape.peaks.get(name, value), value)
            split = SPLIT_BY.get(name)
            if split:
                per = scrape.by_label.setdefault(name, defaultdict(float))
                per[labels.get(split, "?")] += value
        return scrape


def parse(text: str, at: float) -> Scrape:
    """One scrape parsed on its own (no series remembered from earlier ones)."""
    return Reader().parse(text, at)


def looks_like_exposition(text: str) -> bool:
    """A cheap look at the first non-blank line: HTML, JSON or an error page is not exposition."""
    for line in text.splitlines():
        line = line.strip()
        if line:
            return not line.startswith(("<", "{", "[")) and bool(re.match(r"^(#|[A-Za-z_:][\w:]*[{ ])", line))
    return False


def quantile(q: float, buckets: list[tuple[float, float]]) -> float | None:
    """histogram_quantile as Prometheus computes it: linear inside the bucket holding rank q.
    `buckets`: (upper bound, cumulative count) sorted by bound, ending at +Inf. None: no samples."""
    if not buckets or buckets[-1][1] <= 0:
        return None
    total = buckets[-1][1]
    rank = q * total
    lower_bound, lower_count = 0.0, 0.0
    for bound, count in buckets:
        if count >= rank:
            if math.isinf(bound):
                return lower_bound  # above the last finite bound: the best the buckets can say
            width = count - lower_count
            if width <= 0:
                return bound
            return lower_bound + (bound - lower_bound) * (rank - lower_count) / width
        lower_bound, lower_count = bound, count
    return lower_bound


# vLLM's LoggingStatLogger line (V1, ~0.9 on):
# "Engine 000: Avg prompt throughput: 10922.8 tokens/s, Avg generation throughput: 4.0 tokens/s,
#  Running: 1 reqs, Waiting: 0 reqs, GPU KV cache usage: 2.1%, Prefix cache hit rate: 0.0%"
# V0 said "Pending:" and had "Swapped:"; its prefix cache rate came on its own line.
STAT_LINE = re.compile(
    r"(?:Engine (?P<engine>\d+): )?Avg prompt throughput: (?P<prompt>[\d.]+) tokens/s, "
    r"Avg generation throughput: (?P<gen>[\d.]+) tokens/s, Running: (?P<running>\d+) reqs, "
    r"(?:Swapped: \d+ reqs, )?(?:Waiting|Pending): (?P<waiting>\d+) reqs, GPU KV cache usage: (?P<kv>[\d.]+)%"
    r"(?:, Prefix cache hit rate: (?P<prefix>[\d.]+)%)?"
)
SPEC_LINE = re.compile(
    r"SpecDecoding metrics: Mean acceptance length: (?P<mal>[\d.]+).*?"
    r"(?:Avg Draft acceptance rate: (?P<rate>[\d.]+)%)?$"
)


@dataclass
class StatLine:
    """One periodic stat line of vLLM's log (the fallback when /metrics cannot be read)."""

    prompt_tps: float
    decode_tps: float
    running: int
    waiting: int
    kv_pct: float
    prefix_hit_pct: float | None
    engine: str | None
    acceptance_pct: float | None = None
    mean_accept_len: float | None = None


def parse_stat_lines(lines: list[str]) -> StatLine | None:
    """The newest stat line among `lines` (with the spec-decode line that follows it, if any)."""
    found: StatLine | None = None
    for line in lines:
        m = STAT_LINE.search(line)
        if m:
            prefix = m.group("prefix")
            found = StatLine(
                float(m.group("prompt")),
                float(m.group("gen")),
                int(m.group("running")),
                int(m.group("waiting")),
                float(m.group("kv")),
                float(prefix) if prefix is not None else None,
                m.group("engine"),
            )
            continue
        s = SPEC_LINE.search(line)
        if s and found is not None:
            found.mean_accept_len = float(s.group("mal"))
            if s.group("rate"):
                found.acceptance_pct = float(s.group("rate"))
    return found
