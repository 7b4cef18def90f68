"""`spark-tui upgrade IMAGE`: the headless face of core/upgrade.py.

Exit 0 when the candidate is kept, 1 when it is refused or rolled back (something serves: the
known-good, as its endpoint answers), 3 when nothing serves at the end (a lost node the restore
waited for in vain: the verdict names it and what each node holds), 2 for bad input (flags, a
corrupt or locked results database), 130 on Ctrl-C (after the restore).
"""

from __future__ import annotations

import json
import sys

from spark_tui.cli.bench import concurrency_levels
from spark_tui.errors import ConfigError


def run_upgrade(args, event_line, masked) -> int:
    """`event_line` and `masked`: cli/commands.py's text of launch, sync and teardown events and its
    JSON masking (passed in: this module never imports cli/commands.py, which dispatches here)."""
    import asyncio
    import os
    from pathlib import Path

    from spark_tui.cli.commands import open_cluster
    from spark_tui.core import bench_run
    from spark_tui.core.bench.bench_store import Store, StoreError
    from spark_tui.core.node.redact import Redactor
    from spark_tui.core.upgrade import UpgradeOutcome, UpgradeRun, event_text

    if args.duration is not None and args.requests is not None:
        raise ConfigError("command line", "--duration and --requests exclude each other: give one")
    for flag, value in (("--prompt-tokens", args.prompt_tokens), ("--output-tokens", args.output_tokens)):
        if value < 1:
            raise ConfigError(flag, f"{value} is below 1")
    cluster = open_cluster(args, detect=False)  # the upgrade detects on the nodes itself
    config = cluster.config
    from spark_tui.core.upgrade import candidate_config

    candidate_config(config, args.image)  # a malformed IMAGE is bad input before any node is asked
    redactor = Redactor(lambda: config)
    params = bench_run.params_for(
        config,
        concurrency=concurrency_levels(args.concurrency),
        prompt_tokens=args.prompt_tokens,
        output_tokens=args.output_tokens,
        duration=None if args.requests is not None else (args.duration or 10.0),
        requests=args.requests,
    )
    try:
        store = Store(Path(args.db or bench_run.store_path(os.environ)))
    except StoreError as exc:
        print(f"spark-tui: error: {exc}", file=sys.stderr)
        return 2

    def emit(event) -> None:
        import dataclasses

        if args.json:
            fields = masked(dataclasses.asdict(event), redactor)
            print(json.dumps({"event": type(event).__name__, **fields}), flush=True)
            return
        line = event_text(event, redactor.show) or event_line(event, redactor.show)
        if line is not None:
            print(line, flush=True)

    outcome: list[UpgradeOutcome] = []

    async def main() -> None:
        async with cluster:
            outcome.append(await UpgradeRun(config, cluster.nodes, emit, args.image, store, params).run())

    try:
        asyncio.run(main())
    finally:
        store.close()
    if outcome and outcome[0].verdict == "kept":
        return 0
    return 3 if outcome and not outcome[0].serving else 1


def cmd_upgrade(args) -> int:
    from spark_tui.cli.commands import _masked

    # launch, sync and teardown events say themselves (already shown by the core)
    return run_upgrade(args, lambda event, _show: event.say(), _masked)
