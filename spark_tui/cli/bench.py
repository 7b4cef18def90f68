"""`spark-tui bench`: the headless face of core/bench/loadgen.py, core/bench_run.py and the results store."""

from __future__ import annotations

import json
import sys
from typing import Any

from spark_tui.errors import ConfigError


def concurrency_levels(text: str) -> tuple[int, ...]:
    """`1,4,16` -> (1, 4, 16); bad input is a ConfigError naming the flag."""
    levels = []
    for part in text.split(","):
        part = part.strip()
        if not (part.isascii() and part.isdigit()) or not 1 <= int(part) <= 1024:
            raise ConfigError("--concurrency", f"{part!r} is not a concurrency level (1..1024), in {text!r}")
        levels.append(int(part))
    return tuple(levels)


def cmd_bench(args) -> int:
    import asyncio
    import os

    from spark_tui.core import bench_run
    from spark_tui.core.bench.bench_store import Store, StoreError

    if args.duration is not None and args.requests is not None:
        raise ConfigError("command line", "--duration and --requests exclude each other: give one")
    for flag, value in (("--prompt-tokens", args.prompt_tokens), ("--output-tokens", args.output_tokens)):
        if value < 1:
            raise ConfigError(flag, f"{value} is below 1")
    path = args.db or bench_run.store_path(os.environ)
    try:
        store = Store(__import__("pathlib").Path(path))
    except StoreError as exc:
        print(f"spark-tui: error: {exc}", file=sys.stderr)
        return 2
    try:
        if args.history:
            return _history(store, args.json)
        from spark_tui.cli.commands import open_cluster

        cluster = open_cluster(args, detect=False)  # measure() detects with what it asks
        if args.import_file:
            return _import(store, cluster, args)
        params = bench_run.params_for(
            cluster.config,
            concurrency=concurrency_levels(args.concurrency),
            prompt_tokens=args.prompt_tokens,
            output_tokens=args.output_tokens,
            duration=None if args.requests is not None else (args.duration or 20.0),
            requests=args.requests,
        )
        prov, levels = asyncio.run(_measure(cluster, params, args.json))
        outcome = bench_run.record(store, prov, params, levels, "spark-tui bench")
    except bench_run.BenchError as exc:
        print(f"spark-tui: bench: {exc}", file=sys.stderr)
        return 1
    except StoreError as exc:
        print(f"spark-tui: error: {exc}", file=sys.stderr)
        return 2
    finally:
        store.close()
    _show(outcome, args.json, args.compare)
    return 1 if any(lv.errors for lv in levels) else 0


async def _measure(cluster, params, quiet: bool):
    from spark_tui.core import bench_run

    bar = _Progress(params, quiet)
    async with cluster:
        try:
            return await bench_run.measure(cluster.config, cluster.nodes, params, bar.update)
        finally:
            bar.close()


class _Progress:
    """One live line on stderr per level: requests done, errors, tokens (Rich, no markup)."""

    def __init__(self, params, quiet: bool):
        from rich.console import Console

        self.console = Console(stderr=True, markup=False, highlight=False)
        self.quiet = quiet or not self.console.is_terminal
        self.status: Any = None

    def update(self, concurrency: int, done: int, errors: int, tokens: int) -> None:
        if self.quiet:
            return
        text = f"bench c={concurrency}: {done} requests, {errors} errors, {tokens} tokens"
        if self.status is None:
            self.status = self.console.status(text)
            self.status.start()
        else:
            self.status.update(text)

    def close(self) -> None:
        if self.status is not None:
            self.status.stop()


def _show(outcome, as_json: bool, compare: bool) -> None:
    from spark_tui.core import bench_run

    run = outcome.run
    if as_json:
        doc = {"run": run.id, "provenance": run.provenance, "params": run.params, "levels": run.levels}
        if compare:
            doc["compare"] = {
                "previous": _against(run, outcome.previous),
                "other_setup": _against(run, outcome.other),
            }
        json.dump(doc, sys.stdout, indent=2, default=str)
        sys.stdout.write("\n")
        return
    prov = run.provenance
    print(
        f"bench run {run.id}: {prov.get('model')} on {prov.get('nodes')} node(s), {prov.get('executor')}, "
        f"image {prov.get('image')} ({str(prov.get('image_id') or '?')[:19]}), vLLM {prov.get('vllm') or '?'}"
    )
    print(
        f"{'conc':>5} {'reqs':>5} {'err':>4} {'out tok/s':>10} {'in tok/s':>9} {'req tok/s':>9} "
        f"{'TTFT p50/p95 ms':>16} {'ITL p50/p95 ms':>15} {'e2e p50/p95 s':>14}"
    )
    for lv in outcome.levels:
        print(
            f"{lv.concurrency:>5} {lv.requests:>5} {sum(lv.errors.values()):>4} {lv.output_tps:>10.1f} "
            f"{lv.input_tps:>9.1f} {_num(lv.request_tps_p50, 1, 1):>9} "
            f"{_pair(lv.ttft_p50, lv.ttft_p95, 1000):>16} {_pair(lv.itl_p50, lv.itl_p95, 1000):>15} "
            f"{_pair(lv.e2e_p50, lv.e2e_p95, 1, 2):>14}"
        )
        if lv.errors:
            print("      errors: " + ", ".join(f"{k} {v}" for k, v in sorted(lv.errors.items())))
    if len(outcome.levels) > 1:
        print(_plot(outcome.levels))
    if compare:
        for line in bench_run.compare_lines(run, outcome.previous, "previous run, same setup"):
            print(line)
        for line in bench_run.compare_lines(
            run, outcome.other, "last run with another image or configuration"
        ):
            print(line)


def _against(run, other):
    from spark_tui.core.bench.bench_store import provenance_diff

    if other is None:
        return None
    return {
        "run": other.id,
        "levels": other.levels,
        "differs": [
            {"key": k, "was": a, "now": b} for k, a, b in provenance_diff(other.provenance, run.provenance)
        ],
    }


def _plot(levels) -> str:
    import plotext as plt

    plt.clear_figure()
    plt.plotsize(60, 12)
    plt.theme("clear")
    xs = [lv.concurrency for lv in levels]
    plt.plot(xs, [lv.output_tps for lv in levels], marker="dot")
    plt.xticks(xs)
    plt.title("output tokens/s by concurrency")
    return plt.build()


def _num(value, scale: float, digits: int = 0) -> str:
    return "-" if value is None else f"{value * scale:.{digits}f}"


def _pair(a, b, scale: float, digits: int = 0) -> str:
    return f"{_num(a, scale, digits)}/{_num(b, scale, digits)}"


def _history(store, as_json: bool) -> int:
    runs = store.history()
    if as_json:
        json.dump([r.__dict__ for r in runs], sys.stdout, indent=2, default=str)
        sys.stdout.write("\n")
        return 0
    from spark_tui.core.bench_run import _when

    for r in runs:
        best = max((lv.get("output_tps") or 0 for lv in r.levels), default=0)
        p = r.provenance
        print(
            f"{r.id:>4} {_when(r.at)}  {r.origin:<18} {p.get('model')}  image {str(p.get('image_id') or '?')[7:19]}"
            f"  vLLM {p.get('vllm') or '?'}  {p.get('nodes')} node(s)  best {best:.1f} tok/s"
        )
    if not runs:
        print("no bench runs recorded yet")
    return 0


def _import(store, cluster, args) -> int:
    import asyncio

    from spark_tui.core import bench_run

    try:
        with open(args.import_file, encoding="utf-8") as fh:
            doc = json.load(fh)
        params, levels = bench_run.import_vllm_result(doc, args.import_file)
    except (OSError, ValueError) as exc:
        raise ConfigError(args.import_file, str(exc).removeprefix(f"{args.import_file}: ")) from None

    async def prov():
        async with cluster:
            return await bench_run.provenance(cluster.config, cluster.nodes)

    run = store.add("vllm bench serve", asyncio.run(prov()), params, levels, note=args.import_file)
    print(f"imported {args.import_file} as run {run.id} under the running deployment's provenance")
    return 0
