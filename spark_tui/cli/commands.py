"""Headless commands. Each takes parsed args and returns an exit code."""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import TYPE_CHECKING

from spark_tui import paths
from spark_tui.settings.flags import load_config

if TYPE_CHECKING:  # the CLI stays import-light: these only name types
    from spark_tui.core.node.nodes import Nodes
    from spark_tui.core.node.probes import NodeSnapshot
    from spark_tui.settings.model import Config


class open_cluster:  # noqa: N801 - used as a function: `async with open_cluster(args) as cluster`
    """load → nodes → detect: the one way a command opens its cluster.

    The configuration is read at once (bad input: one line, exit 2, before any node is asked);
    `async with` connects and, with `detect`, takes the values the nodes show (`detect()` again
    for another round). `.config` is always the live one, which the nodes hold."""

    def __init__(self, args: argparse.Namespace, detect: bool = True):
        from spark_tui.settings.flags import load_config

        self._loaded = load_config(args)
        self._detect = detect
        self._nodes: Nodes | None = None
        self.snaps: list[NodeSnapshot] = []  # the last detection's node snapshots

    @property
    def config(self) -> Config:
        return self._nodes.config if self._nodes is not None else self._loaded

    @property
    def nodes(self) -> Nodes:
        assert self._nodes is not None, "the nodes are there inside `async with`"
        return self._nodes

    async def detect(self) -> list[NodeSnapshot]:
        """Snapshot every node; the configuration takes what they show (core/launch/live.py)."""
        from spark_tui.core.launch.live import with_detected

        _, self.snaps = await with_detected(self.config, self.nodes)
        return self.snaps

    async def __aenter__(self) -> open_cluster:
        from spark_tui.core.node.nodes import Nodes

        nodes = self._nodes = Nodes(self._loaded)
        if self._detect:
            try:
                await self.detect()
            except BaseException:
                await nodes.close()
                raise
        return self

    async def __aexit__(self, *exc) -> None:
        await self.nodes.close()


def _masked(data, redactor):
    """`data` (dicts, lists, strings, numbers; anything else as its text) with every string masked
    through the redactor: the one rule every JSON output follows. JSON escapes controls itself."""
    if isinstance(data, str):
        return redactor.mask(data) if redactor is not None else data
    if isinstance(data, dict):
        return {_masked(str(k), redactor): _masked(v, redactor) for k, v in data.items()}
    if isinstance(data, (list, tuple, set, frozenset)):
        return [_masked(v, redactor) for v in data]
    if data is None or isinstance(data, (bool, int, float)):
        return data
    return _masked(str(data), redactor)


def _print_json(data, redactor) -> None:
    """Every `--json` output goes through here, masked by `redactor` (core/node/redact.py; None only
    where no configuration is read: `diagnose`, whose pasted env is masked by name as it is parsed)."""
    json.dump(_masked(data, redactor), sys.stdout, indent=2)
    sys.stdout.write("\n")


def _redactor(config_of):
    from spark_tui.core.node.redact import Redactor

    return Redactor(config_of)


def cmd_config(args) -> int:
    from spark_tui.settings import provenance as report

    config = load_config(args)
    if args.json:
        _print_json(report.as_dict(config), _redactor(lambda: config))
    else:
        print(report.as_text(config))
    return 0


def cmd_info(args) -> int:
    config = load_config(args)
    env = os.environ
    user_cfg = paths.user_config_file(env)
    rows = [
        ("user config", user_cfg, "read" if os.path.exists(user_cfg) else "absent"),
        (
            "cluster file",
            next((f for f in config.files_read if f != user_cfg), "(none: this machine)"),
            "read",
        ),
        ("themes (built in)", str(paths.PACKAGE_THEMES), "read"),
        ("themes (user)", paths.user_themes_dir(env), "read"),
        ("state / logs", paths.state_dir(env), "written"),
        ("cache", paths.cache_dir(env), "written"),
    ]
    for node in config.nodes:
        if not node.local:
            rows.append(
                (
                    f"known_hosts ({node.name})",
                    os.path.expanduser(node["known_hosts"]),
                    "read" + (", added to (accept-new)" if node["host_key_policy"] == "accept-new" else ""),
                )
            )
    width = max(len(r[0]) for r in rows)
    for name, path, use in rows:
        print(f"{name.ljust(width)}  {path}  [{use}]")
    return 0


def cmd_cockpit(args) -> int:
    """`spark-tui` with no command: the Textual cockpit for the resolved cluster."""
    app = build_app(args)  # bad config, keys or theme: one line, exit 2, before any screen
    if not sys.stdout.isatty() or not sys.stdin.isatty():
        from spark_tui.errors import ConfigError

        raise ConfigError(
            "terminal", "the cockpit needs a terminal; use the headless commands (spark-tui --help)"
        )
    app.run()
    return 0


def build_app(args, environ=None):
    """The cockpit for parsed args; bad input (config, keys, theme) raises ConfigError before any screen."""
    from spark_tui.core.cockpit import CockpitCore
    from spark_tui.ui.app import SparkApp

    return SparkApp(CockpitCore(load_config(args, environ)))


def cmd_diagnose(args) -> int:
    from spark_tui import diagnose
    from spark_tui.errors import ConfigError
    from spark_tui.parsers.text import inert

    inputs: list[tuple[str, str]] = []
    for name in args.files:
        if name == "-":
            inputs.append(("-", sys.stdin.buffer.read(64 << 20).decode("utf-8", errors="replace")))
            continue
        paths = sorted(p for p in _files_in(name)) if os.path.isdir(name) else [name]
        for path in paths:
            try:
                with open(path, "rb") as fh:
                    inputs.append((path, fh.read(64 << 20).decode("utf-8", errors="replace")))
            except OSError as exc:
                raise ConfigError(path, f"cannot read: {exc.strerror}") from None
    if not inputs:
        raise ConfigError(args.files[0], "no file to read there")
    if len(inputs) == 1 and not os.path.isdir(args.files[0]):
        result = diagnose.analyse(inputs[0][1], args.kind)
    else:
        result = diagnose.analyse_many(inputs, args.kind)
    if args.json:
        _print_json(result, None)
    else:
        print("\n".join(inert(line) for line in diagnose.as_text(result).splitlines()))
    return 0


def _files_in(folder: str) -> list[str]:
    return [os.path.join(folder, f) for f in os.listdir(folder) if os.path.isfile(os.path.join(folder, f))]


def cmd_status(args) -> int:
    import asyncio
    import dataclasses

    from spark_tui.core.node.redact import Redactor
    from spark_tui.core.report.status_text import render

    cluster = open_cluster(args, detect=False)
    nccl_seen: dict = {}  # `--watch` reads each container's log head once (see cluster_state)
    watches: dict = {}  # the serving watch, kept across `--watch` rounds for its rates

    async def once():
        """One look at every node: the snapshot that resolves the detected values also feeds the
        report, and drift compares with the plan those values make (like with like)."""
        from spark_tui.core.report.cluster_state import as_lines, cluster_state

        snaps = await cluster.detect()
        config = cluster.config
        state = await cluster_state(config, cluster.nodes, snaps, nccl_seen, watches)
        if args.json:
            found = dataclasses.asdict(state)
            found.pop("serving_lines")
            _print_json({"nodes": [dataclasses.asdict(s) for s in snaps], **found}, _redactor(lambda: config))
        else:
            # The nodes' words (process command lines, log lines quoted in a failure), shown by the
            # one rule: inert, then masked (this output masked nothing before, unlike --json).
            show = Redactor(lambda: config).show
            print("\n".join(show(line) for line in render(snaps, config).splitlines()))
            print()
            print("\n".join(show(line) for line in as_lines(state, config)))
        return snaps

    async def main():
        async with cluster:
            try:
                snaps = await once()
                while args.watch:
                    await asyncio.sleep(cluster.config["refresh_interval"])
                    print("\x1b[2J\x1b[H" if sys.stdout.isatty() else "", end="")
                    snaps = await once()
            finally:
                if "watch" in watches:
                    await watches["watch"].close()
            return snaps

    snaps = asyncio.run(main())
    for w in cluster.config.warnings:
        print(f"warning: {w}", file=sys.stderr)
    return 0 if all(s.reachable and not s.docker_error for s in snaps) else 1


def cmd_images(args) -> int:
    """Every image on the nodes: which nodes hold it, its vLLM, Ray, native multi-node support and
    whether its vLLM knows the model's architecture; the effective image marked with its source."""
    import asyncio
    import dataclasses

    from spark_tui.core.image_table import as_table, listing
    from spark_tui.core.launch.live import unreachable_lines
    from spark_tui.parsers.text import inert

    cluster = open_cluster(args)  # detected: ~ in the cache volume is the node's home

    async def main():
        async with cluster:
            return cluster.snaps, await listing(cluster.config, cluster.nodes, run_all=args.all)

    snaps, found = asyncio.run(main())
    config = cluster.config
    if args.json:
        executor = config["executor"]
        _print_json(
            {
                "executor": executor,
                "model": dataclasses.asdict(found.model) | {"data": None},
                "images": [
                    dataclasses.asdict(e)
                    | {
                        "native": e.facts.native if e.facts else None,
                        "arch_ok": e.arch_ok(found.model),
                        "problems": [whole for _, whole in e.problems(executor, found.model)],
                    }
                    for e in found.entries
                ],
            },
            _redactor(lambda: config),
        )
    else:
        print("\n".join(inert(line) for line in as_table(config, found.entries, found.model)))
    for line in unreachable_lines(snaps):
        print(f"warning: {line}", file=sys.stderr)
    return 0


def cmd_plan(args) -> int:
    """The container spec `up` would create on each node: the nodes are asked for the values
    `up` detects, so the plan holds them too (labelled as detected, with the evidence)."""
    import asyncio
    import dataclasses

    from spark_tui.core.launch import plan
    from spark_tui.core.launch.live import detected_lines, image_entrypoints, unreachable_lines
    from spark_tui.core.node import labels
    from spark_tui.parsers.text import inert
    from spark_tui.secret_names import mask_args

    cluster = open_cluster(args)

    async def main():
        async with cluster:
            return cluster.snaps, await image_entrypoints(cluster.config, cluster.nodes)

    snaps, entrypoints = ([], {}) if args.offline else asyncio.run(main())
    config = cluster.config
    specs = plan.build(config)
    problems = unreachable_lines(snaps)
    if args.offline:
        print(
            "note: nodes not asked (--offline): values up detects (netdev, hca, ~) are not in this plan",
            file=sys.stderr,
        )
    if args.json:
        data = []
        for spec in specs:
            d = dataclasses.asdict(spec)
            d["env"] = [{"name": e.name, "value": e.shown(), "source": e.derived_from} for e in spec.env]
            d["command"] = mask_args(spec.command)  # `--api-key` in vllm_args
            d["entrypoint"], d["cmd"] = spec.entrypoint, mask_args(spec.cmd)
            d["entrypoint_note"] = entrypoints.get(spec.node, "")
            d["volume_notes"] = plan.volume_notes(config.node(spec.node), spec)
            d["docker_run"] = spec.docker_run()
            d["env_not_set"] = [{"name": name, "why": why} for name, why in spec.env_not_set]
            d["launch_labels"] = [labels.LAUNCHED_BY, labels.LAUNCHED_AT]  # set by up: who and when
            data.append(d)
        _print_json(
            {"warnings": config.warnings, "unreachable": problems, "containers": data},
            _redactor(lambda: config),
        )
    else:
        for line in detected_lines(config):
            print(line, file=sys.stderr)
        # Detected values (interface names, $HOME) are the nodes' words: inert on the terminal.
        print("\n".join(inert(line) for line in plan.as_text(specs, config, entrypoints).splitlines()))
    for line in problems:
        print(f"warning: {line}", file=sys.stderr)
    return 1 if problems else 0


def _event_printer(as_json: bool, redactor):
    """Launch, sync and teardown events, one line per change (or JSON lines), in their own words:
    the core emits them shown (inert, masked). JSON goes through the one JSON rule all the same."""
    import dataclasses

    def emit(event) -> None:
        if as_json:  # JSON escapes controls itself; secrets are masked all the same
            fields = _masked(dataclasses.asdict(event), redactor)
            print(json.dumps({"event": type(event).__name__, **fields}), flush=True)
            return
        print(event.say(), flush=True)

    return emit


def cmd_up(args) -> int:
    import asyncio

    from spark_tui.core.launch.drift import drift
    from spark_tui.core.launch.launch import Launch
    from spark_tui.core.node.redact import Redactor

    cluster = open_cluster(args)
    redactor = Redactor(lambda: cluster.config)  # follows the configuration as detection updates it
    for w in cluster.config.warnings:
        print(f"warning: {w}", file=sys.stderr)
    bars = None
    if not args.json and sys.stdout.isatty():
        # A person watching: live bars per node and stage; the other events printed above them.
        from spark_tui.cli.bars import StageBars

        bars = StageBars()
        emit = bars.emit
    else:
        emit = _event_printer(args.json, redactor)

    async def main() -> int:
        from spark_tui.core.launch.live import detected_lines

        # Unset netdev/hca and ~ take what the nodes show, labelled "detected" in the provenance.
        async with cluster:
            nodes, snaps = cluster.nodes, cluster.snaps
            for line in detected_lines(cluster.config):
                print(line, file=sys.stderr)
            has_gpu = {s.node: bool(s.gpu and s.gpu.present) for s in snaps}
            supervised = cluster.config["restart"] == "on-failure"
            # Supervised, the kernel logs stay followed from the launch on: a GPU fault while
            # serving is named for its node (core/launch/supervise.py).
            launch = Launch(
                cluster.config, nodes, emit, has_gpu, snapshots=snaps, follow_after_ready=supervised
            )
            if not await launch.run():
                return 1
            try:
                items = await drift(cluster.config, nodes, live=True)
                for item in items:
                    emit(item)
            except BaseException:
                await launch.kernels.stop()
                raise
            if supervised:
                return await _supervise(cluster.config, nodes, emit, launch.kernels)
            return 1 if items else 0

    if bars is None:
        return asyncio.run(main())
    with bars:
        return asyncio.run(main())


async def _supervise(config, nodes, emit, kernels=None) -> int:
    """`up` with restart on-failure stays attached: it watches and relaunches (core/launch/supervise.py),
    following the nodes' kernel logs (`kernels`: the launch's follow, handed over at READY).
    Ctrl-C ends the watching; the deployment keeps serving."""
    from spark_tui.core.launch.supervise import Supervisor

    supervisor = Supervisor(config, nodes, emit, kernels=kernels)
    print(
        f"{supervisor.headline()}: Ctrl-C stops supervising, the deployment keeps serving",
        file=sys.stderr,
        flush=True,
    )
    ended = await supervisor.run()
    return 0 if ended in ("removed", "exited") else 1


def cmd_report(args) -> int:
    import asyncio
    import datetime as dt

    from spark_tui.core.report.bundle import build
    from spark_tui.errors import ConfigError

    cluster = open_cluster(args, detect=False)  # the report detects with the rest it asks
    config = cluster.config
    if args.lines < 0:
        raise ConfigError("--lines", f"must be 0 or more, got {args.lines}")
    out = args.out or f"spark-tui-report-{config['name']}-{dt.datetime.now():%Y%m%d-%H%M%S}.md"
    folder = os.path.dirname(os.path.abspath(out))
    if not os.path.isdir(folder) or not os.access(folder, os.W_OK):
        raise ConfigError("--out", f"cannot write in {folder}")  # before asking any node

    async def main() -> str:
        async with cluster:
            return await build(cluster.config, cluster.nodes, args.lines, fabric=args.fabric)

    text = asyncio.run(main())
    tmp = out + ".part"
    with open(tmp, "w") as fh:
        fh.write(text)
    os.replace(tmp, out)  # whole or not at all
    print(f"report written to {out} ({len(text.splitlines())} lines)")
    return 0


def cmd_sync(args) -> int:
    import asyncio

    from spark_tui.core.node.redact import Redactor
    from spark_tui.core.sync.sync import sync_image, sync_model
    from spark_tui.errors import ConfigError

    cluster = open_cluster(args)  # detected: the cache volume's ~ is each node's home
    names = [n.name for n in cluster.config.nodes]
    for flag, value in [("--from", args.source)] + [("--to", t) for t in args.targets or []]:
        if value is not None and value not in names:
            raise ConfigError(flag, f"no node named {value!r} (nodes: {', '.join(names)})")
    bars = None
    if not args.json and sys.stdout.isatty():
        from spark_tui.cli.bars import StageBars

        bars = StageBars()
        emit = bars.emit
    else:
        emit = _event_printer(args.json, Redactor(lambda: cluster.config))

    async def main() -> bool:
        async with cluster:
            run = sync_image if args.what == "image" else sync_model
            return await run(cluster.config, cluster.nodes, emit, args.source, args.targets)

    if bars is None:
        return 0 if asyncio.run(main()) else 1
    with bars:
        return 0 if asyncio.run(main()) else 1


def cmd_down(args) -> int:
    import asyncio

    from spark_tui.core.launch.teardown import teardown
    from spark_tui.errors import ConfigError

    cluster = open_cluster(args, detect=False)
    config = cluster.config
    if not args.yes:
        if not sys.stdin.isatty():
            raise ConfigError("--yes", "no terminal to ask for confirmation; pass --yes to tear down")
        names = ", ".join(n.name for n in config.nodes)
        answer = input(
            f"Remove container {config['container_name']} of cluster {config['name']} on {names}? [y/N] "
        )
        if answer.strip().lower() not in ("y", "yes"):
            print("nothing done")
            return 1

    from spark_tui.core.node.redact import Redactor

    async def main() -> bool:
        async with cluster:
            return await teardown(config, cluster.nodes, _event_printer(args.json, Redactor(lambda: config)))

    return 0 if asyncio.run(main()) else 1


def cmd_check(args) -> int:
    import asyncio
    import dataclasses

    from spark_tui.core.report.check import run_checks
    from spark_tui.parsers.text import inert

    cluster = open_cluster(args, detect=False)  # the checks detect, as up does
    marks = {"pass": "PASS", "warn": "WARN", "fail": "FAIL", "skipped": "SKIP"}

    def show(r) -> None:
        if not args.json:
            # Messages quote what nodes print (process names, interface names): shown inert.
            print(
                f"[{marks[r.status]}] {r.node:<10} {r.id:<20} {inert(r.message)}"
                + (f"\n       fix: {inert(r.fix)}" if r.fix and r.status != "pass" else ""),
                flush=True,
            )

    async def main():
        async with cluster:
            return await run_checks(cluster.config, cluster.nodes, show, fabric=args.fabric)

    results = asyncio.run(main())
    failed = [r for r in results if r.status == "fail"]
    if args.json:
        _print_json(
            {"ok": not failed, "results": [dataclasses.asdict(r) for r in results]},
            _redactor(lambda: cluster.config),
        )
    else:
        print(
            f"{len(results)} checks: {sum(r.status == 'pass' for r in results)} pass, "
            f"{sum(r.status == 'warn' for r in results)} warn, {len(failed)} fail"
        )
    return 1 if failed else 0
