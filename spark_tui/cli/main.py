"""The `spark-tui` command. Flags come from the settings registry; nothing here lists settings.

Kept import-light: `--help` and `--version` must not pull in Textual, asyncssh or docker.
"""

from __future__ import annotations

import argparse
import sys

from spark_tui import __version__
from spark_tui.cli import bench, commands, upgrade
from spark_tui.errors import ConfigError
from spark_tui.settings import kinds
from spark_tui.settings.registry import CLUSTER_SETTINGS

EXIT_BAD_INPUT = 2


class _Parser(argparse.ArgumentParser):
    """argparse that reports bad input as one line, exit code 2. No abbreviations: a prefix is not
    a flag (`--fabric` is check's own flag, not a prefix of `--fabric-tool`), and a flag added later
    must never change what an abbreviation meant."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)

    def error(self, message: str):  # noqa: D401 - argparse API
        raise ConfigError("command line", message)


class _Record(argparse.Action):
    """Keep every occurrence of a setting flag, so a repeated flag is an error, not last-wins."""

    def __call__(self, parser, namespace, values, option_string=None):
        if isinstance(self.const, bool):
            values = self.const
        seen = list(getattr(namespace, self.dest, None) or [])
        seen.append((values, option_string))
        setattr(namespace, self.dest, seen)


class _SettingsNamespace(argparse.Namespace):
    """Accumulates setting flags across the top-level parser and the subcommand's parser.

    argparse copies a subcommand's values over the top level's, so `--image a config
    --image b` would silently drop `a`; here both are kept and the repeat is reported.
    """

    def __setattr__(self, name, value):
        if name.startswith("set_") and isinstance(value, list):
            old = self.__dict__.get(name) or []
            value = old + [v for v in value if not any(v is o for o in old)]
        super().__setattr__(name, value)


def _add_setting_flags(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("settings (each also SPARK_TUI_<KEY> or a YAML key)")
    for s in CLUSTER_SETTINGS:
        assert s.flag is not None  # every cluster and user setting has a flag
        names = [s.flag] + ([s.short_flag] if s.short_flag else [])
        help_ = s.doc.replace("%", "%%")
        # SUPPRESS: a subcommand's parser must not reset a flag given before the subcommand.
        if isinstance(s.kind, kinds.Bool):
            no_flag = "--no-" + s.flag[2:]
            group.add_argument(
                s.flag,
                dest=s.dest,
                action=_Record,
                nargs=0,
                const=True,
                default=argparse.SUPPRESS,
                help=help_,
            )
            group.add_argument(
                no_flag,
                dest=s.dest,
                action=_Record,
                nargs=0,
                const=False,
                default=argparse.SUPPRESS,
                help=argparse.SUPPRESS,
            )
        else:
            metavar = "K=V" if isinstance(s.kind, kinds.EnvMap) else s.kind.name.upper()
            group.add_argument(
                *names, dest=s.dest, action=_Record, default=argparse.SUPPRESS, metavar=metavar, help=help_
            )
        if s.file_flag:
            group.add_argument(
                s.file_flag,
                dest=s.file_dest,
                action=_Record,
                default=argparse.SUPPRESS,
                metavar="PATH",
                help=f"{s.flag} read from file PATH (- for standard input): not in ps or shell history",
            )


def build_parser() -> argparse.ArgumentParser:
    common = _Parser(add_help=False)
    _add_setting_flags(common)

    parser = _Parser(
        prog="spark-tui",
        description="Terminal cockpit for multi-node vLLM on DGX Spark. With no command, opens the cockpit.",
        parents=[common],
    )
    parser.add_argument("--version", action="version", version=f"spark-tui {__version__}")
    parser.set_defaults(func=commands.cmd_cockpit)  # no command: the cockpit
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    def command(name: str, help_: str) -> argparse.ArgumentParser:
        """A subcommand and its handler: `cmd_<name>` in the commands, bench or upgrade module
        (each imports its heavy parts only when it runs)."""
        p = sub.add_parser(name, help=help_, description=help_, parents=[common])
        handler = f"cmd_{name.replace('-', '_')}"
        p.set_defaults(
            func=next(getattr(m, handler) for m in (commands, bench, upgrade) if hasattr(m, handler))
        )
        return p

    p = command("config", "Show every setting: effective value, where it came from, what was overridden.")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    command("info", "Print every path spark-tui reads or writes.")
    p = command(
        "diagnose",
        "Analyse pasted logs and command outputs offline (NCCL, vLLM/Ray, nvidia-smi, interfaces, ibstat, "
        "show_gids, docker ps); several inputs are also compared with each other.",
    )
    p.add_argument(
        "files",
        nargs="+",
        metavar="FILE",
        help="files to read (a directory: every file in it; - : standard input)",
    )
    p.add_argument(
        "--kind",
        choices=("nccl", "vllm", "gpu", "netif", "ibstat", "gids", "docker-ps"),
        help="what the input holds (default: detected per input)",
    )
    p.add_argument("--json", action="store_true")
    p = command(
        "check", "Check everything a launch depends on, on every node, in parallel (exit 1 on any failure)."
    )
    p.add_argument("--json", action="store_true")
    p.add_argument(
        "--fabric",
        action="store_true",
        help="also measure the data links, head to each worker and per twin (fabric_tool, fabric_seconds, "
        "fabric_timeout)",
    )
    p = command(
        "plan",
        "Show the exact container spec per node `up` would create (values it detects on the nodes included) "
        "and the equivalent docker run line (secrets masked).",
    )
    p.add_argument("--json", action="store_true")
    p.add_argument(
        "--offline",
        action="store_true",
        help="do not ask the nodes: detected values and ~ stay unresolved (shown as such)",
    )
    p = command(
        "images",
        "Every image on the nodes and what it can run: vLLM version, Ray, native multi-node, "
        "the model's architecture (asked once per image ID, cached; an image is asked by running "
        "it in a confined container, by default only the effective image and images that look like vLLM).",
    )
    p.add_argument("--json", action="store_true")
    p.add_argument(
        "--all",
        action="store_true",
        help="run every image to ask it, not only the effective one and those that look like vLLM",
    )
    p = command(
        "sync",
        "Copy the effective image, or the model's cache entry, from a node that has it to the nodes "
        "that lack it, node to node over the data network (never through this machine), then verify.",
    )
    p.add_argument("what", choices=("image", "model"))
    p.add_argument(
        "--from",
        dest="source",
        metavar="NODE",
        help="the node to copy from (default: the head, else the first that has it)",
    )
    p.add_argument(
        "--to",
        dest="targets",
        metavar="NODE",
        action="append",
        help="a node to copy to (repeatable; default: every other node)",
    )
    p.add_argument("--json", action="store_true", help="events as JSON lines")
    p = command(
        "report",
        "Write one Markdown file for an issue thread: versions, the resolved config with provenance, check, "
        "status, NCCL per node and the last lines of each container's log (secrets masked).",
    )
    p.add_argument(
        "--out", metavar="FILE", help="where to write (default: spark-tui-report-CLUSTER-TIME.md here)"
    )
    p.add_argument(
        "--lines", type=int, default=200, metavar="N", help="log lines per container (default 200)"
    )
    p.add_argument("--fabric", action="store_true", help="the check section measures the data links too")
    p = command(
        "bench",
        "Measure what the running cluster serves (streamed completions at each concurrency level: TTFT, ITL, "
        "tokens/s, errors) and keep the result with its provenance; compare with earlier runs.",
    )
    p.add_argument("--concurrency", default="1,4,16", metavar="LIST", help="levels, e.g. 1,4,16 (default)")
    p.add_argument("--prompt-tokens", type=int, default=256, metavar="N", help="prompt length (default 256)")
    p.add_argument(
        "--output-tokens", type=int, default=128, metavar="N", help="tokens per answer (default 128)"
    )
    p.add_argument("--duration", type=float, metavar="S", help="seconds per level (default 20)")
    p.add_argument("--requests", type=int, metavar="N", help="requests per level, instead of --duration")
    p.add_argument("--json", action="store_true")
    p.add_argument(
        "--compare",
        action="store_true",
        help="set the run against the previous one with the same setup and the last one with another image "
        "or configuration, with what differs",
    )
    p.add_argument("--history", action="store_true", help="list recorded runs (no load is sent)")
    p.add_argument(
        "--import",
        dest="import_file",
        metavar="FILE",
        help="record a `vllm bench serve --save-result` JSON under the running deployment's provenance",
    )
    p.add_argument(
        "--db", metavar="FILE", help="results database (default $XDG_STATE_HOME/spark-tui/bench.sqlite)"
    )
    p = command(
        "upgrade",
        "Try IMAGE in place of the running deployment's: record it as known-good (with a bench run), sync "
        "IMAGE to every node, check it, tear down, launch IMAGE, bench it with the same load; keep it when "
        "nothing regressed beyond the upgrade.* settings, else relaunch the known-good (also on Ctrl-C or "
        "any failure; a lost node is waited for up to upgrade.restore_wait, else named). Outcome, both "
        "bench runs and what each node holds go into the results database. Exit 0 kept, 1 not kept with "
        "something serving, 3 nothing serving at the end.",
    )
    p.add_argument("image", metavar="IMAGE", help="the candidate image")
    p.add_argument("--concurrency", default="1,4", metavar="LIST", help="bench levels (default 1,4)")
    p.add_argument("--prompt-tokens", type=int, default=256, metavar="N", help="prompt length (default 256)")
    p.add_argument(
        "--output-tokens", type=int, default=128, metavar="N", help="tokens per answer (default 128)"
    )
    p.add_argument("--duration", type=float, metavar="S", help="bench seconds per level (default 10)")
    p.add_argument(
        "--requests", type=int, metavar="N", help="bench requests per level, instead of --duration"
    )
    p.add_argument("--json", action="store_true", help="events as JSON lines")
    p.add_argument(
        "--db", metavar="FILE", help="results database (default $XDG_STATE_HOME/spark-tui/bench.sqlite)"
    )
    p = command("up", "Launch vLLM across the nodes; roll back everything on any failure.")
    p.add_argument("--json", action="store_true", help="events as JSON lines")
    p = command("down", "Stop and remove the cluster's containers on every node.")
    p.add_argument("--yes", "-y", action="store_true", help="do not ask")
    p.add_argument("--json", action="store_true", help="events as JSON lines")
    p = command("status", "Snapshot of every node: reachability, interfaces, GPU memory, containers.")
    p.add_argument("--json", action="store_true")
    p.add_argument("--watch", action="store_true", help="repeat every refresh_interval seconds")
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    try:
        parser = build_parser()
        args = parser.parse_args(argv, namespace=_SettingsNamespace())
        return _run(args)
    except ConfigError as exc:
        print(f"spark-tui: error: {exc.source}: {exc.message}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        print("spark-tui: interrupted", file=sys.stderr)
        return 130


def _run(args: argparse.Namespace) -> int:
    return args.func(args)
