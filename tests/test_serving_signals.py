"""Named signals: each names its node and its evidence, and stays quiet when the figures are normal."""

from __future__ import annotations

from pathlib import Path

from spark_tui.core.serving.node_load import NodeLoadTracker
from spark_tui.core.serving.serving_metrics import Figure, MetricsWindow, ServingFigures
from spark_tui.core.serving.serving_signals import all_signals, decode_falling, node_signals, serving_signals
from spark_tui.parsers.vllm_metrics import parse
from tests.test_node_load import GB10_ROW, MARK, NO_MEMORY, XID, probe_text

DATA = Path(__file__).parent / "data" / "metrics"
CALM = GB10_ROW.replace("0x0000000000000020", "0x0000000000000000").replace(
    "[N/A], Active", "[N/A], Not Active"
)


def figures(decode: float, running: float, at: float) -> ServingFigures:
    f = ServingFigures("metrics", "0.12.0", at=at)
    f.figures["decode_tps"] = Figure(
        "decode_tps", "decode", decode, "tok/s", "rate(vllm:generation_tokens_total[5s])"
    )
    f.figures["running"] = Figure("running", "running", running, "req", "vllm:num_requests_running")
    return f


def test_kv_full_with_waiting_and_preemptions_name_the_head_and_series():
    w = MetricsWindow(60.0)
    w.add(parse((DATA / "vllm-0.11-new-names-t0.txt").read_text(), 0.0))
    w.add(parse((DATA / "vllm-0.11-new-names-t1.txt").read_text(), 5.0))
    got = {s.id: s for s in serving_signals("spark-1", [w.figures("0.11.0")])}
    assert got["kv_full"].node == "spark-1"
    assert (
        got["kv_full"].evidence == "KV 97% (vllm:kv_cache_usage_perc), 5 waiting (vllm:num_requests_waiting)"
    )
    assert got["preemptions"].evidence.startswith("0.80/s (rate(vllm:num_preemptions_total[5s]))")
    calm = MetricsWindow(60.0)
    calm.add(parse((DATA / "vllm-0.9-old-names-t0.txt").read_text(), 0.0))
    calm.add(parse((DATA / "vllm-0.9-old-names-t1.txt").read_text(), 5.0))
    assert serving_signals("spark-1", [calm.figures("0.9.2")]) == []  # KV 30%, no preemptions


def test_node_events_throttling_twin_idle_swap_memory_kernel():
    t = NodeLoadTracker("spark-2", "enp1s0f1np1")
    net0 = "enp1s0f1np1 0 0\nenP2p1s0f1np1 0 0"
    first = t.read(probe_text(GB10_ROW, net=net0, kmsg=NO_MEMORY, swap=0), 0.0, MARK)
    net1 = "enp1s0f1np1 50000000 50000000\nenP2p1s0f1np1 1000 1000"
    text = probe_text(GB10_ROW, net=net1, kmsg="\n".join([NO_MEMORY, XID]), swap=5000)
    second = t.read(text.replace("MemAvailable:   20971520 kB", "MemAvailable:   16777216 kB"), 10.0, MARK)
    got = {s.id: s for s in node_signals({"spark-2": [second]})}
    assert set(got) == {"throttling", "twin_idle", "swapping", "kernel"}
    assert (
        got["throttling"].text == "GPU 0 clocks slowed: thermal slowdown"
        and got["throttling"].node == "spark-2"
    )
    assert "clocks_event_reasons: thermal slowdown Active; SM 1113.0 MHz" in got["throttling"].evidence
    assert got["twin_idle"].text == "one twin carries the traffic, enP2p1s0f1np1 is idle"
    assert got["swapping"].evidence == "500 pages/s (pswpout)"
    assert got["kernel"].level == "fail" and got["kernel"].evidence == XID  # an Xid since watching began
    third = t.read(text.replace("MemAvailable:   20971520 kB", "MemAvailable:   15728640 kB"), 20.0, MARK)
    falling = {s.id: s for s in node_signals({"spark-2": [first, second, third]})}
    assert falling["mem_falling"].evidence == "20.0 → 15.0 GiB in 20s (/proc/meminfo)"
    quiet = NodeLoadTracker("spark-3")
    quiet.read(probe_text(CALM, net=net0), 0.0, MARK)
    assert node_signals({"spark-3": [quiet.read(probe_text(CALM, net=net0), 5.0, MARK)]}) == []


def test_decode_falling_against_its_own_level_with_node_events():
    history = [figures(200.0, 8, i * 5.0) for i in range(8)] + [figures(90.0, 8, 45.0)]
    throttled = NodeLoadTracker("spark-2").read(probe_text(GB10_ROW), 0.0, MARK)
    signals = all_signals("spark-1", history, {"spark-2": [throttled]})
    fell = next(s for s in signals if s.id == "decode_falling")
    assert fell.node == "spark-1" and fell.text == "decode tokens/s fell 55% against its recent level"
    assert (
        "90 tok/s now vs 200" in fell.evidence
        and "spark-2: GPU 0 clocks slowed: thermal slowdown" in fell.evidence
    )
    # Fewer requests running: less decode is less load, not a slowdown.
    assert decode_falling("spark-1", history[:-1] + [figures(90.0, 3, 45.0)], []) is None
    # Too little history for a level.
    assert decode_falling("spark-1", history[-3:], []) is None
