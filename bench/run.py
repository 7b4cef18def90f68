"""Benchmarks: `python -m bench.run [--quick] [--nodes 1,2,4,8] [--op-nodes 1,2,4] [--out bench/results]`.

Each benchmark prints a table and writes JSON. Compared figures are measured in the
same run and reported as ratios. Brings up its own namespace test cluster (root).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.knowledge import KnowledgeFeed, paired_ratio  # noqa: E402
from spark_tui.parsers import nccl, vllm  # noqa: E402

DATA = ROOT / "tests" / "data"
CHUNK_LINES = 500

# What a shell launcher runs per node, one `ssh` process each (the same probes as PROBE_SCRIPT).
SSH_COMMANDS = [
    "hostname",
    "uname -m -r",
    "ip -j addr",
    "ibdev2netdev",
    "nvidia-smi --query-gpu=index,name,utilization.gpu,temperature.gpu,power.draw,memory.used,memory.total --format=csv,noheader,nounits",
    "nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv,noheader,nounits",
    "cat /proc/meminfo",
    "docker info --format '{{.ServerVersion}} {{.Driver}}'",
    "docker ps -a --format '{{json .}}'",
]


def corpus_lines(kind: str) -> list[str]:
    folder = "nccl" if kind == "nccl" else "docker"
    lines = []
    for path in sorted((DATA / folder).glob("*.txt")):
        lines += path.read_text().splitlines()
    return lines


def bench_parsers(target_lines: int, repeats: int = 1) -> dict:
    """Lines per second on one core; the median of `repeats` runs (this 2-core machine is noisy).
    `knowledge` is the failure table read over the vLLM log (bench/knowledge.py)."""
    out: dict = {}
    for kind, make in (("nccl", nccl.NcclParser), ("vllm", vllm.VllmParser), ("knowledge", KnowledgeFeed)):
        base = corpus_lines(kind)
        lines = (base * (target_lines // len(base) + 1))[:target_lines]
        rates = []
        chunks = [lines[i : i + CHUNK_LINES] for i in range(0, len(lines), CHUNK_LINES)]
        for _ in range(repeats):
            parser = make()
            # As the log views feed them: chunks of lines as a docker log read returns them.
            feed = parser.feed_lines if hasattr(parser, "feed_lines") else None
            start = time.perf_counter()
            if feed is not None:
                for chunk in chunks:
                    feed(chunk)
            else:
                for line in lines:
                    parser.feed(line)
            rates.append(len(lines) / (time.perf_counter() - start))
        out[kind] = {
            "lines": len(lines),
            "runs": repeats,
            "lines_per_s": round(statistics.median(rates)),
            "min_lines_per_s": round(min(rates)),
            "max_lines_per_s": round(max(rates)),
        }
    vllm_lines = (corpus_lines("vllm") * (target_lines // len(corpus_lines("vllm")) + 1))[:target_lines]
    out["knowledge"]["vs_vllm_parser"] = paired_ratio(vllm_lines, CHUNK_LINES, max(repeats, 1))
    return out


def _config_for(cluster, count: int, env: dict | None = None):
    from spark_tui.settings.resolve import Inputs, resolve
    from tests.cluster import cluster as tc

    path = cluster.cluster_file(count, cluster.root / f"bench-{count}.yaml")
    # The sandbox's two limits (privileged, ulimit_nofile), as the launching tests set them.
    flags = {key: (value, f"--{key}") for key, value in tc.SANDBOX.items()}
    if env:
        flags["env"] = (env, "--env")
    return resolve(Inputs(cluster_file=path, user_config="", environ={}, flags=flags))


def machine_busy_s() -> float:
    """CPU seconds used so far by everything on this machine (/proc/stat, all cores)."""
    with open("/proc/stat") as fh:
        fields = [int(v) for v in fh.readline().split()[1:]]
    idle = fields[3] + fields[4]  # idle + iowait
    return (sum(fields[:8]) - idle) / os.sysconf("SC_CLK_TCK")


def _persistent_refreshes(cluster, counts: list[int], repeats: int) -> dict[int, dict]:
    """Full snapshots over persistent connections, taken interleaved (1, 2, 4, 1, 2, 4, ...)
    so that this shared machine's changing speed weighs on every N alike.

    Per N: median wall ms, spark-tui's own CPU ms and the whole machine's CPU ms per refresh
    (the client plus the nodes' sshd, shells, stand-ins and dockerd, all on these cores)."""
    from spark_tui.core.node.nodes import Nodes

    async def measure():
        groups = {count: Nodes(_config_for(cluster, count)) for count in counts}
        times: dict[int, list[float]] = {count: [] for count in counts}
        cpu = {count: 0.0 for count in counts}
        busy = {count: 0.0 for count in counts}
        try:
            for nodes in groups.values():
                await nodes.snapshot_all()  # connect and open tunnels once
            for _ in range(repeats):
                for count, nodes in groups.items():
                    start, cpu0, busy0 = time.perf_counter(), time.process_time(), machine_busy_s()
                    snaps = await nodes.snapshot_all()
                    times[count].append(time.perf_counter() - start)
                    cpu[count] += time.process_time() - cpu0
                    busy[count] += machine_busy_s() - busy0
                    assert all(s.reachable and not s.docker_error for s in snaps), snaps
        finally:
            for nodes in groups.values():
                await nodes.close()
        return {
            count: {
                "persistent_ms": round(statistics.median(times[count]) * 1000, 1),
                "client_cpu_ms": round(cpu[count] / repeats * 1000, 1),
                "machine_cpu_ms": round(busy[count] / repeats * 1000, 1),
            }
            for count in counts
        }

    results = asyncio.run(measure())
    cores = os.cpu_count() or 1
    one = results[counts[0]]["persistent_ms"]
    for r in results.values():
        r["vs_1_node"] = round(r["persistent_ms"] / one, 2)
        # No client can finish a refresh sooner than the machine's cores can do its CPU work.
        r["cpu_floor_ms"] = round(r["machine_cpu_ms"] / cores, 1)
    return results


def bench_refresh(cluster, counts: list[int], repeats: int, ssh_runs: int = 3) -> dict:
    """One full snapshot of N nodes, persistent connections vs one `ssh` process per command
    (seconds per node, so `ssh_runs` of it, median)."""
    results = _persistent_refreshes(cluster, counts, repeats)
    for count, r in results.items():
        ssh_times = []
        for _ in range(ssh_runs):
            start = time.perf_counter()
            for node in cluster.nodes[:count]:
                for cmd in SSH_COMMANDS:
                    subprocess.run(cluster.ssh_argv(node, cmd), capture_output=True, check=True)
            ssh_times.append(time.perf_counter() - start)
        r["ssh_per_command_ms"] = round(statistics.median(ssh_times) * 1000, 1)
        r["ssh_over_persistent"] = round(r["ssh_per_command_ms"] / r["persistent_ms"], 1)
    return results


def bench_node_wait(cluster, counts: list[int], repeats: int, wait_s: float) -> dict:
    """Refresh and check when each node's nvidia-smi waits `wait_s` per call before answering.

    On a real cluster each node's probe is paid on that node's own hardware; here the nodes'
    work is CPU on the client's own 2 cores. With it turned into waiting, this shows whether the
    client itself serialises anything: N nodes should then cost what one does."""
    nodes = cluster.nodes[: max(counts)]
    for node in nodes:
        cluster.set_standin(node, SMI_WAIT=str(wait_s))
    try:
        refresh = _persistent_refreshes(cluster, counts, repeats)
        check = _checks(cluster, counts, max(1, repeats // 4))
    finally:
        for node in nodes:
            cluster.set_standin(node, SMI_WAIT="")
    return {"wait_per_nvidia_smi_s": wait_s, "refresh": refresh, "check": check}


def _checks(cluster, counts: list[int], repeats: int) -> dict[int, dict]:
    """`check` on N nodes over connections already up: median wall ms, and vs 1 node."""
    from spark_tui.core.node.nodes import Nodes
    from spark_tui.core.report.check import run_checks

    out = {}
    for count in counts:
        config = _config_for(cluster, count)

        async def measure(config=config):  # run within this iteration
            times = []
            async with Nodes(config) as nodes:
                await nodes.snapshot_all()
                for _ in range(repeats):
                    start = time.perf_counter()
                    results = await run_checks(config, nodes)
                    times.append(time.perf_counter() - start)
                    assert not [r for r in results if r.status == "fail"], results
            return statistics.median(times)

        out[count] = {"check_ms": round(asyncio.run(measure()) * 1000, 1)}
    for r in out.values():
        r["vs_1_node"] = round(r["check_ms"] / out[counts[0]]["check_ms"], 2)
    return out


def bench_operations(cluster, counts: list[int], checks: int = 5, cycles: int = 3) -> dict:
    """Wall time of check, up (to ready) and down on N nodes: parallel means N costs about what 1 does.

    check runs `checks` times, up and down `cycles` times; medians. Next to each: spark-tui's own
    CPU and the whole machine's (the nodes' sshd, shells, dockerd and containerd share its cores)."""
    from spark_tui.core.launch.launch import Launch
    from spark_tui.core.launch.live import with_detected
    from spark_tui.core.launch.teardown import teardown
    from spark_tui.core.node.nodes import Nodes
    from spark_tui.core.report.check import run_checks

    cores = os.cpu_count() or 1
    out = {}
    for count in counts:
        config = _config_for(cluster, count, env={"SPARK_TEST_SHARD_DELAY": "0"})

        async def timed(samples: dict, name: str, coro):
            start, cpu, busy = time.perf_counter(), time.process_time(), machine_busy_s()
            result = await coro
            samples.setdefault(name, []).append(
                (time.perf_counter() - start, time.process_time() - cpu, machine_busy_s() - busy)
            )
            return result

        async def ops(config=config):  # run within this iteration
            samples: dict[str, list[tuple[float, float, float]]] = {}
            async with Nodes(config) as nodes:
                # Connections up (as in the cockpit) and the values the nodes show, as `up` uses them.
                live, _ = await with_detected(config, nodes)
                for _ in range(checks):
                    results = await timed(samples, "check", run_checks(live, nodes))
                    assert not [r for r in results if r.status == "fail"], results
                for _ in range(cycles):
                    assert await timed(
                        samples,
                        "up",
                        Launch(live, nodes, lambda e: None, {n.name: True for n in live.nodes}).run(),
                    )
                    assert await timed(samples, "down", teardown(live, nodes, lambda e: None))
            return samples

        row = {}
        for name, runs in asyncio.run(ops()).items():
            row[f"{name}_ms"] = round(statistics.median(r[0] for r in runs) * 1000, 1)
            row[f"{name}_client_cpu_ms"] = round(statistics.mean(r[1] for r in runs) * 1000, 1)
            row[f"{name}_cpu_floor_ms"] = round(statistics.mean(r[2] for r in runs) * 1000 / cores, 1)
        out[count] = row
    base = out[counts[0]]
    for r in out.values():
        for name in ("check", "up", "down"):
            r[f"{name}_vs_1"] = round(r[f"{name}_ms"] / base[f"{name}_ms"], 2)
    return out


def build_cockpit(build_app, cluster, count: int):
    """The cockpit as `spark-tui --cluster FILE` builds it, for the first-frame benchmark."""
    from spark_tui.cli.main import _SettingsNamespace, build_parser

    path = cluster.cluster_file(count, cluster.root / f"bench-cockpit-{count}.yaml")
    args = build_parser().parse_args(["--cluster", path], namespace=_SettingsNamespace())
    return build_app(args, {"HOME": str(cluster.root)})


def bench_startup(repeats: int) -> dict:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        subprocess.run(
            [sys.executable, "-m", "spark_tui", "--help"], capture_output=True, check=True, cwd=ROOT
        )
        times.append(time.perf_counter() - start)
    return {"help_s": round(statistics.median(times), 3)}


def table(title: str, rows: list[list]) -> str:
    widths = [max(len(str(r[i])) for r in rows) for i in range(len(rows[0]))]
    lines = [title] + [
        "  " + "  ".join(str(c).ljust(w) for c, w in zip(r, widths, strict=False)) for r in rows
    ]
    return "\n".join(lines)


def run(
    cluster=None,
    quick: bool = False,
    counts: list[int] | None = None,
    op_counts: list[int] | None = None,
    out_dir: Path | None = None,
) -> dict:
    """`counts`: node counts for the refresh benchmarks; `op_counts`: for check, up and down."""
    counts = counts or ([1] if quick else [1, 2, 4, 8])
    op_counts = op_counts or ([1] if quick else [1, 2, 4])
    results: dict = {
        "parsers": bench_parsers(5_000 if quick else 400_000, 1 if quick else 7),
        "startup": bench_startup(1 if quick else 5),
    }
    own = None
    if cluster is None:
        from tests.cluster import cluster as tc

        start = time.perf_counter()
        own = cluster = tc.up(max(counts + op_counts))
        results["cluster_up_s"] = round(time.perf_counter() - start, 2)
    from bench import cockpit

    results["pane_render"] = cockpit.bench_pane_render(20 if quick else 200)
    from bench import serving

    results["serving_scrape"] = serving.bench_scrape(20 if quick else 200)
    results["serving_keys"] = serving.bench_serving_keys(2.0 if quick else 20.0)
    results["logs_screen"] = cockpit.bench_logs(
        10_000 if quick else 1_000_000,
        flood_seconds=0.5 if quick else 10.0,
        buffer_lines=2_000 if quick else 100_000,
    )
    try:
        results["refresh"] = bench_refresh(cluster, counts, 1 if quick else 40, 1 if quick else 3)
        results["node_wait"] = bench_node_wait(cluster, counts, 1 if quick else 20, 0.025)
        results["operations"] = bench_operations(cluster, op_counts)
        import tempfile

        from bench.verdicts import bench_time_to_verdict

        with tempfile.TemporaryDirectory() as tmp:
            results["time_to_verdict"] = bench_time_to_verdict(cluster, Path(tmp))
        from bench.images import bench_inspection

        results["image_inspection"] = bench_inspection(
            cluster, min(2, len(cluster.nodes)), 3 if quick else 20
        )
        from bench.sync import bench_sync

        results["sync"] = bench_sync(cluster, 20 if quick else 200, 20 if quick else 1600, 1 if quick else 5)
        results["startup"].update(
            cockpit.bench_first_frame(lambda build: build_cockpit(build, cluster, min(2, len(cluster.nodes))))
        )
    finally:
        if own is not None:
            from tests.cluster import cluster as tc

            tc.down()
    print(
        table(
            "parsers (one core, median of runs)",
            [["parser", "lines", "lines/s median", "min", "max"]]
            + [
                [k, v["lines"], v["lines_per_s"], v["min_lines_per_s"], v["max_lines_per_s"]]
                for k, v in results["parsers"].items()
            ],
        )
    )
    print(
        table(
            "refresh: one full snapshot (medians; CPU per refresh)",
            [
                [
                    "nodes",
                    "persistent ms",
                    "ssh-per-command ms",
                    "vs 1 node",
                    "ssh / persistent",
                    "client CPU ms",
                    "machine CPU ms",
                    "CPU floor ms",
                ]
            ]
            + [
                [
                    n,
                    r["persistent_ms"],
                    r["ssh_per_command_ms"],
                    r["vs_1_node"],
                    r["ssh_over_persistent"],
                    r["client_cpu_ms"],
                    r["machine_cpu_ms"],
                    r["cpu_floor_ms"],
                ]
                for n, r in results["refresh"].items()
            ],
        )
    )
    nw = results["node_wait"]
    print(
        table(
            f"refresh and check when each nvidia-smi call waits {nw['wait_per_nvidia_smi_s']} s on the node (medians)",
            [["nodes", "refresh ms", "vs 1 node", "client CPU ms", "machine CPU ms", "check ms", "vs 1 node"]]
            + [
                [
                    n,
                    r["persistent_ms"],
                    r["vs_1_node"],
                    r["client_cpu_ms"],
                    r["machine_cpu_ms"],
                    nw["check"][n]["check_ms"],
                    nw["check"][n]["vs_1_node"],
                ]
                for n, r in nw["refresh"].items()
            ],
        )
    )
    print(
        table(
            "check / up / down (medians, ms; CPU floor = the machine's CPU for it / its cores)",
            [
                [
                    "nodes",
                    "check",
                    "vs 1",
                    "client CPU",
                    "CPU floor",
                    "up",
                    "vs 1",
                    "down",
                    "vs 1",
                    "client CPU",
                    "CPU floor",
                ]
            ]
            + [
                [
                    n,
                    r["check_ms"],
                    r["check_vs_1"],
                    r["check_client_cpu_ms"],
                    r["check_cpu_floor_ms"],
                    r["up_ms"],
                    r["up_vs_1"],
                    r["down_ms"],
                    r["down_vs_1"],
                    r["down_client_cpu_ms"],
                    r["down_cpu_floor_ms"],
                ]
                for n, r in results["operations"].items()
            ],
        )
    )
    st = results["startup"]
    print(
        table(
            "startup",
            [
                ["what", "seconds"],
                ["spark-tui --help", st["help_s"]],
                ["cockpit: first dashboard frame (headless)", st.get("first_frame_s", "-")],
                ["cockpit: every pane live (2 nodes over SSH)", st.get("all_panes_live_s", "-")],
            ],
        )
    )
    tv = results["time_to_verdict"]
    print(
        table(
            "time to verdict, default timeouts (s from the evidence on the node; target < 10)",
            [["failure", "s to verdict", "s from up", "verdict"]]
            + [[k, r["seconds_to_verdict"], r["seconds_from_up"], r["cause"][:70]] for k, r in tv.items()],
        )
    )
    print(
        table(
            "image inspection per node (first: one probe container; cached: the facts file)",
            [["node", "first ms", "cached ms", "first / cached"]]
            + [
                [n, r["first_ms"], r["cached_ms"], r["first_over_cached"]]
                for n, r in results["image_inspection"].items()
            ],
        )
    )
    pr = results["pane_render"]
    print(
        table(
            "node pane draw per refresh (ms, median)",
            [
                ["text sections", "with the memory plot", "plot / text"],
                [pr["text_ms"], pr["with_plot_ms"], pr["plot_over_text"]],
            ],
        )
    )
    print(table(*serving.scrape_table(results["serving_scrape"])))
    sk = results["serving_keys"]
    print(
        table(
            f"serving screen: key latency while scraping every {sk['scrape_interval_s']} s ({sk['scrapes']} scrapes)",
            [
                ["key p50 (ms)", "p95", "max", "presses"],
                [sk["key_p50_ms"], sk["key_p95_ms"], sk["key_max_ms"], sk["key_presses"]],
            ],
        )
    )
    from bench.sync import sync_table

    print(table(*sync_table(results["sync"])))
    lg = results["logs_screen"]
    print(
        table(
            "logs screen (headless)",
            [
                ["figure", "value"],
                ["lines rendered / s", lg["lines_per_s"]],
                [f"RSS growth over {lg['lines']:,} lines (MB)", lg["rss_growth_mb"]],
                ["RSS growth by fifths (MB)", " ".join(map(str, lg["rss_growth_curve_mb"]))],
                [
                    f"key p50 / p95 / max during {lg['flood_lines_per_s']:,} lines/s (ms)",
                    f"{lg['key_p50_ms']} / {lg['key_p95_ms']} / {lg['key_max_ms']}",
                ],
            ],
        )
    )
    if out_dir is not None:
        out_dir.mkdir(parents=True, exist_ok=True)
        (out_dir / "results.json").write_text(json.dumps(results, indent=2))
    return results


def main() -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.run")
    ap.add_argument("--quick", action="store_true", help="tiny sizes (what the test suite runs)")
    ap.add_argument("--nodes", default="1,2,4,8", help="node counts for the refresh benchmarks")
    ap.add_argument("--op-nodes", default="1,2,4", help="node counts for check, up and down")
    ap.add_argument("--out", default=str(ROOT / "bench" / "results"))
    args = ap.parse_args()
    # The image facts cache of this run only: a first inspection must really be a first one.
    import tempfile

    os.environ["XDG_CACHE_HOME"] = tempfile.mkdtemp(prefix="spark-tui-bench-cache-")
    counts = None if args.quick else [int(n) for n in args.nodes.split(",")]
    op_counts = None if args.quick else [int(n) for n in args.op_nodes.split(",")]
    run(quick=args.quick, counts=counts, op_counts=op_counts, out_dir=Path(args.out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
