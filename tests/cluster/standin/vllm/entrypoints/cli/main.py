"""`vllm`: the console script, parsing its arguments with argparse as vLLM does. An unknown option
or a second positional is argparse's own "unrecognized arguments" (exit 2), so an image
ENTRYPOINT ["vllm", "serve"] in front of another command fails as the real one does; the native
multi-node flags exist only from vLLM 0.11.1 on (PR 23691)."""

from __future__ import annotations

import argparse
import sys

from vllm import __version__

NATIVE_SINCE = (0, 11, 1)
SUBCOMMANDS = ("chat", "complete", "serve", "bench", "collect-env", "run-batch")


def _version_tuple(text: str) -> tuple[int, ...]:
    parts = []
    for piece in text.split("+")[0].split(".")[:3]:
        digits = "".join(c for c in piece if c.isdigit())
        parts.append(int(digits or 0))
    return tuple(parts)


def _flag(value: str) -> bool:
    return value.lower() in ("1", "true", "yes")


def add_serve_args(serve: argparse.ArgumentParser) -> None:
    """The options of `vllm serve` spark-tui and operators use (the real parser has hundreds)."""
    serve.add_argument("model_tag", nargs="?", help="The model tag to serve")
    serve.add_argument("--model", default=None)
    serve.add_argument("--host", default=None)
    serve.add_argument("--port", type=int, default=8000)
    serve.add_argument("--served-model-name", nargs="+", default=None)
    serve.add_argument("--tensor-parallel-size", "-tp", type=int, default=1)
    serve.add_argument("--pipeline-parallel-size", "-pp", type=int, default=1)
    serve.add_argument("--data-parallel-size", "-dp", type=int, default=1)
    serve.add_argument("--distributed-executor-backend", choices=("ray", "mp", "uni", "external_launcher"))
    serve.add_argument("--gpu-memory-utilization", type=float, default=0.9)
    serve.add_argument("--max-model-len", type=int, default=None)
    serve.add_argument("--max-num-seqs", type=int, default=None)
    serve.add_argument("--max-num-batched-tokens", type=int, default=None)
    serve.add_argument("--dtype", default="auto")
    serve.add_argument("--kv-cache-dtype", default="auto")
    serve.add_argument("--quantization", "-q", default=None)
    serve.add_argument("--load-format", default="auto")
    serve.add_argument("--download-dir", default=None)
    serve.add_argument("--chat-template", default=None)
    serve.add_argument("--tokenizer", default=None)
    serve.add_argument("--api-key", default=None)
    serve.add_argument("--swap-space", type=float, default=4)
    serve.add_argument("--seed", type=int, default=None)
    serve.add_argument("--uvicorn-log-level", default="info")
    serve.add_argument("--enforce-eager", action="store_true")
    serve.add_argument("--trust-remote-code", action="store_true")
    serve.add_argument("--enable-prefix-caching", action=argparse.BooleanOptionalAction, default=None)
    serve.add_argument("--enable-chunked-prefill", action=argparse.BooleanOptionalAction, default=None)
    serve.add_argument("--disable-log-requests", action="store_true")
    serve.add_argument("--disable-log-stats", action="store_true")
    serve.add_argument("--enable-auto-tool-choice", action="store_true")
    serve.add_argument("--tool-call-parser", default=None)
    serve.add_argument("--reasoning-parser", default=None)
    if _version_tuple(__version__) >= NATIVE_SINCE:
        serve.add_argument("--nnodes", "-n", type=int, default=1)
        serve.add_argument("--node-rank", "-r", type=int, default=0)
        serve.add_argument("--master-addr", default="127.0.0.1")
        serve.add_argument("--master-port", type=int, default=29501)
        serve.add_argument("--headless", action="store_true")


def make_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="vllm", description="vLLM CLI")
    parser.add_argument("-v", "--version", action="version", version=__version__)
    sub = parser.add_subparsers(required=False, dest="subparser")
    for name in SUBCOMMANDS:
        child = sub.add_parser(name, usage=f"vllm {name} [model_tag] [options]" if name == "serve" else None)
        if name == "serve":
            add_serve_args(child)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = make_parser()
    args = parser.parse_args(argv)
    if args.subparser != "serve":
        parser.print_help()
        return 0 if args.subparser is None else 1
    from vllm.standin.serve import serve

    args.model = args.model_tag or args.model or "Qwen/Qwen3-0.6B"
    for native in ("nnodes", "node_rank", "master_addr", "master_port", "headless"):
        if not hasattr(args, native):
            setattr(args, native, {"nnodes": 1, "node_rank": 0, "master_port": 29501}.get(native))
    return serve(args)


if __name__ == "__main__":
    sys.exit(main())
