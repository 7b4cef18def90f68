"""Sync throughput, in one run on the test cluster: `spark-tui sync image` and `sync model`
against the manual ways run from this machine (`docker save | ssh B docker load` through this
machine; `rsync -e ssh` from A to here, then here to B) and against raw TCP copies of the same
bytes between the same two nodes (the model's blobs sent with sendfile; on B written to a file as
`nc -l > FILE` would, and dropped: the link alone). For the image also Docker's own ceiling:
`docker save` on A piped straight into `docker load` on B on this machine, no network, no SSH.

Every way is timed whole, as an operator would time it from this machine, `rounds` times (5 in
bench.run) interleaved, each after the dirty pages are written out (`sync`): the 2-core test
machine's page cache otherwise makes whichever copy comes after a big write look slow. Reported
as the median MB/s (with the range) and ratios of medians."""

from __future__ import annotations

import asyncio
import os
import shlex
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

BIG = "spark-test/bench-big:latest"
# The receiving end of the raw copies: argv = bind address, and a file to write or none.
RAW_RECV = """import os, socket, sys
s = socket.socket(); s.bind((sys.argv[1], 0)); s.listen(1)
print(s.getsockname()[1], flush=True)
c, _ = s.accept(); n = 0; buf = bytearray(1 << 20)
out = os.open(sys.argv[2], os.O_WRONLY | os.O_CREAT | os.O_TRUNC) if sys.argv[2:] else None
while True:
    got = c.recv_into(buf)
    if not got:
        break
    if out is not None:
        os.write(out, memoryview(buf)[:got])
    n += got
print(n, flush=True)"""
RAW_SEND = """import os, socket, sys
c = socket.create_connection((sys.argv[1], int(sys.argv[2])))
for path in sys.argv[3:]:
    with open(path, "rb") as f:
        c.sendfile(f)
c.close()"""


def _rate(mb: float, fn: Callable[[], object], before: Callable[[], object] = lambda: None) -> float:
    """MB/s of one whole run of `fn`, timed after `before` and a flush of dirty pages."""
    before()
    os.sync()
    start = time.perf_counter()
    fn()
    return mb / (time.perf_counter() - start)


def _summary(rates: list[float]) -> dict:
    return {
        "mb_s": round(statistics.median(rates), 1),
        "min": round(min(rates), 1),
        "max": round(max(rates), 1),
    }


def bench_sync(cluster, image_mb: int = 200, model_mb: int = 200, rounds: int = 3) -> dict:
    from spark_tui.core.launch.live import with_detected
    from spark_tui.core.node.nodes import Nodes
    from spark_tui.core.sync.sync import sync_image, sync_model
    from spark_tui.settings.resolve import Inputs, resolve
    from tests.cluster import cluster as tc
    from tests.test_sync import write_model

    a, b = cluster.nodes[:2]
    cluster.import_image(a, BIG, variant=f"big-{image_mb}")
    image_size = int(cluster.docker(a, "image", "inspect", "--format", "{{.Size}}", BIG).stdout) / 1e6

    def ssh(node, command: str) -> list[str]:
        return cluster.ssh_argv(node, command)

    def drop_image():
        cluster.docker(b, "rmi", "-f", BIG, check=False)

    with tempfile.TemporaryDirectory() as tmp:
        caches = {a.name: Path(tmp) / "hf-a", b.name: Path(tmp) / "hf-b"}
        path = Path(cluster.cluster_file(2, Path(tmp) / "bench.yaml"))
        text = path.read_text()
        for name, cache in caches.items():
            text = text.replace(
                f"  - name: {name}\n",
                f"  - name: {name}\n    volumes: ['{cache}:/root/.cache/huggingface']\n",
            )
        path.write_text(text.replace("image: " + tc.IMAGE, "image: " + BIG))
        config = resolve(Inputs(cluster_file=str(path), user_config="", environ={}))

        def spark_tui(fn):
            async def go():
                async with Nodes(config) as nodes:
                    cfg, _ = await with_detected(config, nodes)
                    return await fn(cfg, nodes, lambda e: None)

            assert asyncio.run(go())

        def manual_image():
            save = subprocess.Popen(ssh(a, f"docker save {BIG}"), stdout=subprocess.PIPE)
            subprocess.run(ssh(b, "docker load"), stdin=save.stdout, check=True, capture_output=True)
            save.wait()

        def docker_pipe():
            save = subprocess.Popen(["docker", "-H", a.docker_host, "save", BIG], stdout=subprocess.PIPE)
            subprocess.run(
                ["docker", "-H", b.docker_host, "load"], stdin=save.stdout, check=True, capture_output=True
            )
            save.wait()

        # The model: a Hugging Face entry of model_mb MB in 4 shards.
        write_model(caches[a.name], shards=4, floats=model_mb * (1 << 20) // 16)
        # The blobs only: the snapshot's symlinks point at them (is_file() follows links).
        blobs = [p for p in (caches[a.name] / "hub").rglob("*") if p.is_file() and not p.is_symlink()]
        model_size = sum(p.stat().st_size for p in blobs) / 1e6
        repo = next((caches[a.name] / "hub").iterdir())
        here = Path(tmp) / "via-here"
        options = shlex.join(cluster.ssh_argv(a)[:-1])  # ssh options without the target

        def drop_model():
            subprocess.run(["rm", "-rf", str(caches[b.name]), str(here)], check=True)

        def rsync():
            subprocess.run(["rsync", "-a", "-e", options, f"root@{a.ip}:{repo}/", f"{here}/"], check=True)
            target = caches[b.name] / "hub" / repo.name
            subprocess.run(ssh(b, f"mkdir -p {shlex.quote(str(target))}"), check=True)
            subprocess.run(["rsync", "-a", "-e", options, f"{here}/", f"root@{b.ip}:{target}/"], check=True)

        files = " ".join(shlex.quote(str(p)) for p in blobs)

        def raw_copy(into: str) -> Callable[[], None]:
            def copy():
                recv = subprocess.Popen(
                    ssh(b, f"python3 -c {shlex.quote(RAW_RECV)} {b.ip} {into}"),
                    stdout=subprocess.PIPE,
                    text=True,
                )
                assert recv.stdout is not None
                port = recv.stdout.readline().strip()
                subprocess.run(
                    ssh(a, f"python3 -c {shlex.quote(RAW_SEND)} {b.ip} {port} {files}"), check=True
                )
                assert int(recv.stdout.readline()) == round(model_size * 1e6)
                recv.wait()

            return copy

        raw_file = shlex.quote(str(Path(tmp) / "raw-copy"))
        ways: dict[str, tuple[float, Callable[[], object], Callable[[], object]]] = {
            "image_sync": (image_size, lambda: spark_tui(sync_image), drop_image),
            "image_manual": (image_size, manual_image, drop_image),
            "image_docker_pipe": (image_size, docker_pipe, drop_image),
            "model_sync": (model_size, lambda: spark_tui(sync_model), drop_model),
            "model_rsync_via_here": (model_size, rsync, drop_model),
            "raw_copy": (model_size, raw_copy(raw_file), lambda: None),
            "raw_link": (model_size, raw_copy(""), lambda: None),
        }
        rates: dict[str, list[float]] = {name: [] for name in ways}
        for _ in range(rounds):
            for name, (mb, fn, before) in ways.items():
                rates[name].append(_rate(mb, fn, before))
        drop_image()
    cluster.docker(a, "rmi", "-f", BIG, check=False)
    med = {name: statistics.median(r) for name, r in rates.items()}
    out: dict = {"image_mb": round(image_size, 1), "model_mb": round(model_size, 1), "rounds": rounds}
    out.update({name: _summary(r) for name, r in rates.items()})
    out["ratios"] = {
        "image_sync_over_manual": round(med["image_sync"] / med["image_manual"], 2),
        "image_sync_over_docker_pipe": round(med["image_sync"] / med["image_docker_pipe"], 2),
        "image_sync_over_raw_copy": round(med["image_sync"] / med["raw_copy"], 2),
        "image_sync_over_raw_link": round(med["image_sync"] / med["raw_link"], 2),
        "model_sync_over_rsync": round(med["model_sync"] / med["model_rsync_via_here"], 2),
        "model_sync_over_raw_copy": round(med["model_sync"] / med["raw_copy"], 2),
        "model_sync_over_raw_link": round(med["model_sync"] / med["raw_link"], 2),
    }
    return out


def sync_table(sy: dict) -> tuple[str, list[list]]:
    """bench_sync's result as the title and rows of run.py's table."""
    ra = sy["ratios"]

    def mbs(name: str) -> str:
        return f"{sy[name]['mb_s']} ({sy[name]['min']}-{sy[name]['max']})"

    title = (
        f"sync between two nodes (MB/s, median of {sy['rounds']} (range); raw copies of the model's "
        f"{sy['model_mb']} MB: into a file on B {mbs('raw_copy')}, dropped on B (the link) {mbs('raw_link')})"
    )
    return title, [
        ["what", "sync", "the other way", "sync / other", "sync / raw copy", "sync / raw link"],
        [
            f"image ({sy['image_mb']} MB)",
            mbs("image_sync"),
            f"{mbs('image_manual')} docker save | ssh docker load, through here",
            ra["image_sync_over_manual"],
            ra["image_sync_over_raw_copy"],
            ra["image_sync_over_raw_link"],
        ],
        [
            "image",
            "",
            f"{mbs('image_docker_pipe')} docker save | docker load, here, no network (Docker's ceiling)",
            ra["image_sync_over_docker_pipe"],
            "",
            "",
        ],
        [
            f"model ({sy['model_mb']} MB)",
            mbs("model_sync"),
            f"{mbs('model_rsync_via_here')} rsync -e ssh, A -> here -> B",
            ra["model_sync_over_rsync"],
            ra["model_sync_over_raw_copy"],
            ra["model_sync_over_raw_link"],
        ],
    ]
