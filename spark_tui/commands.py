"""Headless commands. Each takes parsed args and returns an exit code."""

from __future__ import annotations

import json
import os
import sys

from spark_tui import paths
from spark_tui.cli import load_config


def _print_json(data) -> None:
    json.dump(data, sys.stdout, indent=2, default=str)
    sys.stdout.write("\n")


def cmd_config(args) -> int:
    from spark_tui.settings import report

    config = load_config(args)
    if args.json:
        _print_json(report.as_dict(config))
    else:
        print(report.as_text(config))
    return 0


def cmd_info(args) -> int:
    config = load_config(args)
    env = os.environ
    user_cfg = paths.user_config_file(env)
    rows = [
        ("user config", user_cfg, "read" if os.path.exists(user_cfg) else "absent"),
        ("cluster file", next((f for f in config.files_read if f != user_cfg), "(none: this machine)"), "read"),
        ("themes (built in)", str(paths.PACKAGE_THEMES), "read"),
        ("themes (user)", paths.user_themes_dir(env), "read"),
        ("state / logs", paths.state_dir(env), "written"),
        ("cache", paths.cache_dir(env), "written"),
    ]
    for node in config.nodes:
        if not node.local:
            rows.append((f"known_hosts ({node.name})", os.path.expanduser(node["known_hosts"]), "read" + (", added to (accept-new)" if node["host_key_policy"] == "accept-new" else "")))
    width = max(len(r[0]) for r in rows)
    for name, path, use in rows:
        print(f"{name.ljust(width)}  {path}  [{use}]")
    return 0


def cmd_cockpit(args) -> int:
    from spark_tui.ui.app import run_cockpit

    return run_cockpit(load_config(args))


def cmd_diagnose(args) -> int:
    from spark_tui import diagnose
    from spark_tui.errors import ConfigError

    try:
        raw = sys.stdin.buffer.read() if args.file == "-" else open(args.file, "rb").read(64 << 20)
    except OSError as exc:
        raise ConfigError(args.file, f"cannot read: {exc.strerror}") from None
    result = diagnose.analyse(raw.decode("utf-8", errors="replace"), args.kind)
    if args.json:
        _print_json(result)
    else:
        from spark_tui.parsers.text import inert

        print("\n".join(inert(line) for line in diagnose.as_text(result).splitlines()))
    return 0


def cmd_status(args) -> int:
    import asyncio
    import dataclasses
    import time

    from spark_tui.core.nodes import Nodes
    from spark_tui.status_text import render

    config = load_config(args)

    async def once(nodes):
        snaps = await nodes.snapshot_all()
        if args.json:
            _print_json([dataclasses.asdict(s) for s in snaps])
        else:
            print(render(snaps, config))
        return snaps

    async def main():
        async with Nodes(config) as nodes:
            snaps = await once(nodes)
            while args.watch:
                await asyncio.sleep(config["refresh_interval"])
                print("\x1b[2J\x1b[H" if sys.stdout.isatty() else "", end="")
                snaps = await once(nodes)
            return snaps

    snaps = asyncio.run(main())
    for w in config.warnings:
        print(f"warning: {w}", file=sys.stderr)
    return 0 if all(s.reachable and not s.docker_error for s in snaps) else 1
