"""A pattern's `(?#cut)` (failures/README.md, "Patterns"): a line cut anywhere after the marker's words (an issue
title, an excerpt, a narrow terminal) is named, with the figures of the words before it; a line whose words go on
otherwise, or stop before the marker, is not."""

import pytest

from spark_tui.knowledge import KnowledgeError, Matcher
from spark_tui.knowledge.table import parse_table

# vLLM's start-up check, marked after `less than`: the longest literal of the whole pattern lies after the marker,
# so the prefilter must use the words before it (a cut line does not hold the rest)
TABLE = r"""failures:
- id: x.free_memory
  family: vllm
  severity: error
  title: t
  means: m
  fix: f
  source: [https://github.com/vllm-project/vllm/issues/1]
  figures: {free_gib: float, wanted_gib: float}
  patterns:
    - 'Free memory on device \((?P<free_gib>[\d.]+)/[\d.]+ GiB\) on startup is less than(?#cut) desired GPU memory utilization \([\d.]+, (?P<wanted_gib>[\d.]+) GiB\)'
- id: x.anchored
  family: vllm
  severity: error
  title: t
  means: m
  fix: f
  source: [https://github.com/vllm-project/vllm/issues/2]
  patterns:
    - '^Engine core initialization(?#cut) failed\. See root cause above\.'
"""
HEAD = "ValueError: Free memory on device (8.0/64.0 GiB) on startup is less than"


def _named(line: str) -> dict[str, dict]:
    return {f.id: f.figures for f in Matcher(parse_table(TABLE, "kb.yaml")).match(line)}


@pytest.mark.parametrize(
    "tail",
    [
        "",  # cut right at the marker
        " desired",  # cut after a word (a blind line of round 29 was)
        " desired GPU memory util",  # cut inside a word
        " desired GPU memory utilization (0.9, 57",  # inside the figures
        " desired GPU...",  # a person's ellipsis
        " desired GPU memory\u2026",
    ],
)
def test_a_line_cut_after_the_marker_is_named_with_the_figures_before_it(tail):
    assert _named(HEAD + tail) == {"x.free_memory": {"free_gib": 8.0}}


def test_the_whole_line_is_named_with_all_its_figures():
    line = HEAD + " desired GPU memory utilization (0.9, 57.6 GiB). Decrease GPU memory utilization"
    assert _named(line) == {"x.free_memory": {"free_gib": 8.0, "wanted_gib": 57.6}}


@pytest.mark.parametrize(
    "line",
    [
        HEAD + " expected, which is fine",  # the words go on otherwise: no cut, another message
        HEAD + " desired GPU memory utilization (0.9 of everything)",
        "ValueError: Free memory on device (8.0/64.0 GiB) on startup is less",  # cut before the marker
        "Free memory on device (110.37/121.69 GiB) on startup.",  # vLLM's healthy INFO line
    ],
)
def test_a_line_that_is_no_cut_of_the_words_is_not_named(line):
    assert _named(line) == {}


def test_a_quoted_excerpt_cut_after_the_marker_is_named():
    assert _named(f'the log says "{HEAD} desired GPU"') == {"x.free_memory": {"free_gib": 8.0}}


def test_an_anchored_pattern_is_cut_after_a_log_prefix_too():
    assert _named(
        "(EngineCore_DP0 pid=1) ERROR 01-22 12:06:34 [core.py:1] Engine core initialization fail"
    ) == {"x.anchored": {}}
    assert _named("Engine core initialization failed. See root cause above.") == {"x.anchored": {}}
    assert _named("Engine core initialization succeeded") == {}


@pytest.mark.parametrize(
    "pattern, wording",
    [
        (r"'(?:Free memory(?#cut) on device)'", "outside any group"),
        (r"'Free memory(?#cut) on(?#cut) device'", "stands once"),
        (r"'Free memory on device(?#cut)'", "has words after it"),
        (r"'(?#cut)Free memory on device'", "no literal of 4\\+ bytes"),
    ],
)
def test_a_misplaced_marker_is_refused_with_where_it_is(pattern, wording):
    text = TABLE.split("- id: x.anchored")[0].replace(
        TABLE.split("patterns:\n    - ")[1].split("\n")[0], pattern
    )
    with pytest.raises(KnowledgeError, match=rf"kb.yaml:entry 1 \(x.free_memory\).*{wording}"):
        parse_table(text.replace("figures: {free_gib: float, wanted_gib: float}", "figures: {}"), "kb.yaml")
