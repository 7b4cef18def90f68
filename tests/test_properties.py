"""Nothing a node prints may crash us: every parser and probe section, fed arbitrary text.

Hypothesis runs derandomized with a bounded number of examples, so CI is stable and fast; the
strategies mix random text with fragments of the real formats so that parsers get past their
first checks (a line that looks like NCCL, a CSV row, an `ip -j` array, a `ray status` header).
"""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from spark_tui import diagnose
from spark_tui.core.models import memory_fit
from spark_tui.core.models.model_files import Manifest
from spark_tui.core.node import probes
from spark_tui.core.node.logs import split_timestamp
from spark_tui.parsers import docker_text, gpu, nccl, netif, vllm

FRAGMENTS = [
    "spark-1:123:123 [0] NCCL INFO ",
    "NET/IB : Using [0]rocep1s0f1:1/RoCE",
    "Bootstrap: Using enp1s0f1np1:10.0.0.1<0>",
    "Init START",
    "Init COMPLETE",
    "commId 0x",
    "nranks ",
    "(RayWorkerWrapper pid=1, ip=10.0.0.2) ",
    "NCCL WARN ",
    "Loading safetensors checkpoint shards: ",
    "% Completed | ",
    "/",
    "Uvicorn running on http://",
    "Starting vLLM API server 0 on ",
    "Active:",
    "Total Usage:",
    "Healthy:",
    " 1 node_ab",
    " 0.0/2.0 GPU",
    "Local node IP: ",
    "OutOfMemoryError",
    "Tensor parallel size (",
    "exceeds available GPUs (",
    "[N/A]",
    ", ",
    "MiB",
    "NVIDIA GB10",
    "Not Supported",
    "|",
    "+---",
    '[{"ifname":',
    '"addr_info":[',
    "]}",
    " port 1 ==> ",
    " (Up)",
    "hca_id:\t",
    "MemTotal:",
    " kB",
    "@@spark-tui@@ ",
    "\r",
    "\t",
    "\x1b[31m",
    "\x00",
    "\ufffd",
    "\n",
    ": ",
    "=",
    "NVIDIA-SMI has failed",
    # Numbers that are no numbers to int(): digits str.isdigit() accepts but int() refuses,
    # other scripts' digits, and runs longer than int()'s 4300-digit limit.
    "²",
    "³",
    "٣",
    "\u0f33",
    "1" * 4301,
    "9" * 40,
    "1e400",
    "/speed ",
    "port:\t",
    "active_mtu:",
    "state:",
    " mtu ",
    "rank ",
    "nranks ",
    "nNodes ",
]
text = st.lists(st.one_of(st.text(max_size=40), st.sampled_from(FRAGMENTS)), max_size=40).map("".join)
lines = st.lists(text, max_size=30)
SETTINGS = settings(
    max_examples=300, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


@SETTINGS
@given(lines)
def test_nccl_parser_never_raises(ls):
    p = nccl.NcclParser()
    for line in ls:
        p.feed(line, 1.0)
    p.summary.verdicts(2.0, 1.0)


@SETTINGS
@given(lines)
def test_vllm_parser_never_raises(ls):
    p = vllm.VllmParser()
    for line in ls:
        p.feed(line)
    p.summary.verdicts()


@SETTINGS
@given(text)
def test_text_parsers_never_raise(t):
    vllm.parse_ray_status(t)
    gpu.parse_table(t)
    gpu.parse_csv(t)
    gpu.parse_csv(t, probes.GPU_FIELDS)
    gpu.parse_meminfo(t)
    gpu.driver_failure(t)
    netif.parse_ip_addr(t)
    netif.parse_ip_brief(t)
    netif.parse_ip_json(t)
    netif.parse_ibdev2netdev(t)
    netif.parse_ibv_devinfo(t)
    docker_text.parse_ps_table(t)
    memory_fit.parse_guard("spark-1", t)
    split_timestamp(t)


@SETTINGS
@given(
    st.dictionaries(
        st.sampled_from(
            ["hostname", "uname", "home", "ip", "ibdev", "speed", "smi", "apps", "meminfo", "ibdir"]
        ),
        text,
    )
)
def test_probe_sections_never_raise(sections):
    mark = probes.new_marker()
    output = "".join(f"{mark} {name}\n{body}\n" for name, body in sections.items())
    probes.parse_probe(output, "10.0.0.1", None, mark)
    probes.parse_probe(output, None, "enp1s0f1np1", mark)


@SETTINGS
@given(st.binary(max_size=400))
def test_diagnose_reads_any_bytes(raw):
    t = raw.decode("utf-8", errors="replace")
    for kind in (None, "nccl", "vllm", "gpu", "netif"):
        diagnose.as_text(diagnose.analyse(t, kind))


json_scalar = st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=20))
addr = st.fixed_dictionaries(
    {},
    optional={
        "family": st.sampled_from(["inet", "inet6", "x"]),
        "local": json_scalar,
        "prefixlen": json_scalar,
    },
)
ip_item = st.fixed_dictionaries(
    {},
    optional={
        "ifname": json_scalar,
        "operstate": json_scalar,
        "mtu": json_scalar,
        "altnames": st.one_of(json_scalar, st.lists(json_scalar)),
        "addr_info": st.one_of(json_scalar, st.lists(st.one_of(addr, json_scalar))),
    },
)


@SETTINGS
@given(st.lists(st.one_of(ip_item, json_scalar), max_size=5))
def test_ip_json_shaped_output_with_any_values(items):
    import json

    mark = probes.new_marker()
    output = f"{mark} ip\n{json.dumps(items)}\n{mark} ibdev\nrocep1s0f1 port 1 ==> x (Up)\n"
    probes.parse_probe(output, "10.0.0.1", None, mark)


METRIC_FRAGMENTS = [
    "vllm:num_requests_running",
    "vllm:kv_cache_usage_perc",
    "vllm:generation_tokens_total",
    "vllm:time_to_first_token_seconds_bucket",
    "vllm:cache_config_info",
    "http_requests_total",
    '{engine="0",le="',
    '+Inf"}',
    'model_name="m"}',
    "# HELP ",
    "# TYPE ",
    " counter",
    " 1.0",
    " NaN",
    " -1e300",
    "\n",
    "{",
    "}",
    '"',
    "\\",
    "Engine 000: Avg prompt throughput: ",
    " tokens/s, Avg generation throughput: ",
    "Running: 1 reqs, Waiting: 0 reqs, GPU KV cache usage: ",
    "%, Prefix cache hit rate: ",
]
metrics_text = st.lists(st.one_of(st.text(max_size=20), st.sampled_from(METRIC_FRAGMENTS)), max_size=60).map(
    "".join
)


@SETTINGS
@given(metrics_text, metrics_text)
def test_metrics_reading_raises_only_its_own_one_line_error(first, second):
    """Any answer becomes figures or a MetricsError of one line, never another exception."""
    from spark_tui.core.serving.serving_metrics import MetricsWindow
    from spark_tui.parsers.vllm_metrics import MetricsError, Reader, parse_stat_lines

    reader, window = Reader(), MetricsWindow(60.0)
    for at, text in ((0.0, first), (5.0, second)):
        try:
            window.add(reader.parse(text, at))
        except MetricsError as exc:
            assert "\n" not in str(exc)
            continue
        for fig in window.figures(None).figures.values():
            fig.text()
    parse_stat_lines(first.splitlines())


@SETTINGS
@given(
    st.dictionaries(
        st.sampled_from(
            ["clocks_event_reasons", "clocks_throttle_reasons", "net", "rdma", "vmstat", "meminfo", "kmsg"]
        ),
        text,
    )
)
def test_node_load_sections_never_raise(sections):
    from spark_tui.core.serving.node_load import NodeLoadTracker

    tracker = NodeLoadTracker("spark-1", "enp1s0f1np1")
    mark = probes.new_marker()
    output = "".join(f"{mark} {name}\n{body}\n" for name, body in sections.items())
    for at in (0.0, 5.0):
        tracker.read(output, at, mark).line()


names = st.sampled_from(["snapshots/r/a", "snapshots/r/b", "snapshots/r/c/d", "blobs/x", "blobs/y"])
targets = st.sampled_from(["a", "b", "../r/a", "c/d", "../../blobs/x", "../../../blobs/y", "..", ".", "d"])
entry = st.one_of(
    st.tuples(st.just("l"), st.just(0), targets, st.booleans()).map(list),
    st.tuples(st.just("f"), st.integers(min_value=0), st.just(""), st.just(True)).map(list),
    st.tuples(st.just("d"), st.just(0), st.just(""), st.just(True)).map(list),
)


@SETTINGS
@given(st.dictionaries(names, entry), names)
def test_manifest_size_ends_on_any_links_cycles_included(files, rel):
    """Links are the node's word: chains, cycles and links to themselves all end in a size or None."""
    m = Manifest("spark-1", "/x", exists=True, ref="r", files=files)
    size = m.size(rel)
    assert size is None or isinstance(size, int)
