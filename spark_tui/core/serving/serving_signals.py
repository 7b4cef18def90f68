"""Named signals while serving: why serving got slow, each with its node and evidence, like the
launch verdicts. Read from the recent serving figures (head) and node samples (every node)."""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from spark_tui.core.serving.node_load import NodeLoad
from spark_tui.core.serving.serving_metrics import ServingFigures

# Bands (this project's choices, not published figures): vLLM preempts when no block is free, so
# "full" is near 100%; a twin "idle" carries under 2% of its pair while the pair moves > 1 MB/s.
KV_FULL_PCT = 95.0
TWIN_BUSY_BPS = 1e6
TWIN_IDLE_SHARE = 0.02
MEM_FALL_GIB = 2.0  # MemAvailable down this much across the recent samples
DECODE_FALL = 0.6  # decode tokens/s below this share of its own recent median
LEVEL_SAMPLES = 5  # scrapes that make "its own recent level"


@dataclass
class Signal:
    id: str
    node: str
    level: str  # warn | fail
    text: str  # what, in a few words
    evidence: str  # the figures and the series or program they came from

    def line(self) -> str:
        return f"{self.level.upper()} {self.node} {self.text}: {self.evidence}"


def _fig(f: ServingFigures, key: str) -> tuple[float | None, str]:
    got = f.figures.get(key)
    return (got.value, got.source) if got else (None, "")


def serving_signals(head: str, history: Sequence[ServingFigures]) -> list[Signal]:
    if not history:
        return []
    cur = history[-1]
    out = []
    kv, kv_src = _fig(cur, "kv_pct")
    waiting, wait_src = _fig(cur, "waiting")
    if kv is not None and waiting and kv >= KV_FULL_PCT:
        out.append(
            Signal(
                "kv_full",
                head,
                "warn",
                "KV cache full with requests waiting",
                f"KV {kv:.0f}% ({kv_src}), {waiting:.0f} waiting ({wait_src})",
            )
        )
    rates = [_fig(f, "preempt_ps")[0] for f in list(history)[-3:]]
    pre, pre_src = _fig(cur, "preempt_ps")
    if pre and sum(1 for r in rates if r) >= min(2, len(rates)):
        out.append(
            Signal(
                "preemptions",
                head,
                "warn",
                "preemptions climbing",
                f"{pre:.2f}/s ({pre_src}), KV {kv or 0:.0f}%",
            )
        )
    return out


def node_signals(loads: Mapping[str, Sequence[NodeLoad]]) -> list[Signal]:
    out = []
    for node, samples in loads.items():
        if not samples:
            continue
        cur = samples[-1]
        for g in cur.gpus:
            if g.active:
                out.append(
                    Signal(
                        "throttling",
                        node,
                        "warn",
                        f"GPU {g.index} clocks slowed: {', '.join(g.active)}",
                        f"nvidia-smi {g.reasons_field}: {', '.join(g.active)} Active; SM "
                        f"{g.sm_mhz if g.sm_mhz is not None else 'N/A'} MHz, "
                        f"{g.temperature_c if g.temperature_c is not None else 'N/A'}°C, "
                        f"{g.power_w if g.power_w is not None else 'N/A'} W",
                    )
                )
        by_name = {link.name: link for link in cur.links if not link.rdma}
        for link in by_name.values():
            other = by_name.get(link.twin or "")
            if other is None or link.name > other.name:
                continue  # each pair once
            a, b = link.total_bps, other.total_bps
            if a is None or b is None or a + b < TWIN_BUSY_BPS:
                continue
            busy, idle = (link, other) if a >= b else (other, link)
            if (idle.total_bps or 0) < TWIN_IDLE_SHARE * (busy.total_bps or 0):
                out.append(
                    Signal(
                        "twin_idle",
                        node,
                        "warn",
                        f"one twin carries the traffic, {idle.name} is idle",
                        f"{busy.name} {(busy.total_bps or 0) / 1e6:.1f} MB/s, {idle.name} "
                        f"{(idle.total_bps or 0) / 1e6:.2f} MB/s (/proc/net/dev); NCCL may use one HCA",
                    )
                )
        if cur.swap_out_ps:
            out.append(
                Signal(
                    "swapping",
                    node,
                    "warn",
                    "swapping out while serving",
                    f"{cur.swap_out_ps:.0f} pages/s (pswpout)",
                )
            )
        avail = [s.mem_available_gib for s in samples if s.mem_available_gib is not None]
        if len(avail) >= 3 and avail[0] - avail[-1] >= MEM_FALL_GIB and avail[-1] <= min(avail):
            span = samples[-1].at - samples[0].at
            out.append(
                Signal(
                    "mem_falling",
                    node,
                    "warn",
                    "MemAvailable falling while serving",
                    f"{avail[0]:.1f} → {avail[-1]:.1f} GiB in {span:.0f}s (/proc/meminfo)",
                )
            )
        new = {k: v for k, v in cur.kernel_new.items() if v}
        if new and cur.kernel is not None:
            counted = ", ".join(f"{v} {k}" for k, v in new.items())
            level = "fail" if "Xid" in new else "warn"
            out.append(
                Signal("kernel", node, level, f"kernel: {counted} since watching began", cur.kernel.last)
            )
    return out


def decode_falling(head: str, history: Sequence[ServingFigures], events: list[Signal]) -> Signal | None:
    """Decode tokens/s below its own recent level while as many requests run (not just less load),
    with what the nodes showed at the same time."""
    past = [f for f in list(history)[:-1] if f.get("decode_tps")][-LEVEL_SAMPLES * 2 :]
    if len(past) < LEVEL_SAMPLES or not history:
        return None
    cur = history[-1]
    now, src = _fig(cur, "decode_tps")
    running = cur.get("running")
    level = statistics.median(f.get("decode_tps") or 0.0 for f in past)
    usual_running = statistics.median(f.get("running") or 0.0 for f in past)
    if now is None or level <= 0 or now >= DECODE_FALL * level:
        return None
    if running is not None and running < usual_running:
        return None  # fewer requests, fewer tokens: not a slowdown
    same_time = "; ".join(f"{e.node}: {e.text}" for e in events) or "no node event at the same time"
    return Signal(
        "decode_falling",
        head,
        "warn",
        f"decode tokens/s fell {100 * (1 - now / level):.0f}% against its recent level",
        f"{now:.0f} tok/s now vs {level:.0f} ({src}), {running or 0:.0f} running; at the same time: {same_time}",
    )


def all_signals(
    head: str, history: Sequence[ServingFigures], loads: Mapping[str, Sequence[NodeLoad]]
) -> list[Signal]:
    events = node_signals(loads)
    out = serving_signals(head, history) + events
    falling = decode_falling(head, history, events)
    return out + ([falling] if falling else [])
