"""Catch-all entries (`generic: true`): named for a line only when no other entry names it, so a
line is named once, by the entry that says what happened."""

import pytest

from spark_tui.errors import KnowledgeError
from spark_tui.knowledge import Matcher, Watch, scan
from spark_tui.knowledge.table import parse_table, table

TABLE = """failures:
- id: x.catch_all
  family: vllm
  severity: error
  generic: true
  title: any config error
  means: m
  fix: f
  source: https://github.com/a/b/issues/1
  patterns: ['Value error, (?P<error>.+?) \\[type=value_error']
  figures: {error: str}
- id: x.specific
  family: vllm
  severity: error
  title: tp over gpus
  means: m
  fix: f
  source: https://github.com/a/b/issues/2
  patterns: ['Tensor parallel size \\((?P<tp>\\d+)\\) cannot be larger']
  figures: {tp: int}
- id: x.other_catch_all
  family: cuda
  severity: error
  generic: true
  title: t
  means: m
  fix: f
  source: https://github.com/a/b/issues/3
  patterns: ['type=value_error']
"""


def _ids(matcher: Matcher, line: str) -> list[str]:
    return [f.id for f in matcher.match(line)]


def test_a_generic_entry_gives_way_to_a_specific_one_on_the_same_line():
    m = Matcher(parse_table(TABLE, "kb.yaml"))
    line = "Value error, Tensor parallel size (2) cannot be larger than the number of GPUs (1). [type=value_error"
    assert _ids(m, line) == ["x.specific"]


def test_a_generic_entry_alone_on_its_line_is_named_and_two_generics_both_are():
    m = Matcher(parse_table(TABLE, "kb.yaml"))
    assert _ids(m, "Value error, max_model_len is too big [type=value_error, input") == [
        "x.catch_all",
        "x.other_catch_all",
    ]


def test_a_generic_entry_of_another_line_stays_named():
    """Only the line's own matches count: the header line of the same error keeps its name."""
    w = Watch(matcher=Matcher(parse_table(TABLE, "kb.yaml")))
    w.feed_lines(["Value error, bad dtype [type=value_error", "Tensor parallel size (4) cannot be larger"])
    assert sorted(f.id for f in w.ranked()) == ["x.catch_all", "x.other_catch_all", "x.specific"]


def test_generic_is_true_or_false():
    with pytest.raises(KnowledgeError, match=r"kb.yaml:entry 1 \(x.catch_all\): generic is true or false"):
        parse_table(TABLE.replace("generic: true", "generic: maybe", 1), "kb.yaml")


@pytest.mark.parametrize(
    "ident",
    [
        "vllm.config_invalid",
        "cuda.kernel_image_invalid",
        "cuda.cudnn_error",
        "nccl.cuda_error",
        "vllm.cuda_graph_capture_failed",  # SGLang's "Capture cuda graph failed: <the cause>"
    ],
)
def test_the_packaged_catch_alls_are_generic(ident):
    assert table().by_id(ident).generic


@pytest.mark.parametrize(
    "line, ident",
    [
        (  # a pydantic config error that says what is wrong
            "  Value error, rope_scaling should have a 'rope_type' key [type=value_error, input_value=ArgsKwargs((), "
            "{'model': ...rocessor_plugin': None}), input_type=ArgsKwargs]",
            "vllm.rope_scaling_invalid",
        ),
        (  # DeepGEMM's JIT on a GB10: not any invalid kernel image
            "RuntimeError: CUDA driver error (.../jit/handle.hpp:141): 200 (CUDA_ERROR_INVALID_IMAGE, device kernel "
            "image is invalid)",
            "vllm.deepgemm_unsupported_gpu",
        ),
        (
            "transport/nvls.cc:251 NCCL WARN Cuda failure 1 'invalid argument'",
            "nccl.nvls_failed",
        ),
    ],
)
def test_real_lines_are_named_once_by_the_specific_entry(line, ident):
    assert [f.id for f in scan(line)] == [ident]


def test_no_real_sample_line_names_a_generic_entry_beside_another():
    from tests.helpers import DATA

    m = Matcher()
    both = []
    for p in sorted((DATA / "failures").glob("*.log")):
        for line in p.read_text().splitlines():
            found = m.match(line)
            if len(found) > 1 and any(table().by_id(f.id).generic for f in found):
                both.append((p.stem, [f.id for f in found]))
    assert both == []
