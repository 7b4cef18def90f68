"""Sync throughput, in one run on the test cluster: `spark-tui sync image` and `sync model`
against the manual ways run from this machine (`docker save | ssh B docker load` through this
machine; `rsync -e ssh` from A to here, then here to B) and against a raw TCP copy between the
same two nodes (the link's practical ceiling here). Reported as MB/s and ratios."""

from __future__ import annotations

import asyncio
import shlex
import subprocess
import tempfile
import time
from pathlib import Path

BIG = "spark-test/bench-big:latest"
RAW_RECV = "import socket,sys\ns=socket.socket();s.bind((sys.argv[1],0));s.listen(1)\nprint(s.getsockname()[1],flush=True)\nc,_=s.accept();n=0\nwhile True:\n b=c.recv(1<<20)\n if not b:break\n n+=len(b)\nprint(n,flush=True)"
RAW_SEND = "import socket,sys\nc=socket.create_connection((sys.argv[1],int(sys.argv[2])));b=bytes(1<<20)\nfor _ in range(int(sys.argv[3])):c.sendall(b)\nc.close()"


def _ssh(cluster, node, command: str) -> list[str]:
    return cluster.ssh_argv(node, command)


def _timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def bench_sync(cluster, image_mb: int = 200, model_mb: int = 200) -> dict:
    from spark_tui.core.live import with_detected
    from spark_tui.core.nodes import Nodes
    from spark_tui.core.sync import sync_image, sync_model
    from spark_tui.settings.resolve import Inputs, resolve
    from tests.cluster import cluster as tc
    from tests.test_sync import write_model

    a, b = cluster.nodes[:2]
    cluster.import_image(a, BIG, variant=f"big-{image_mb}")
    size = int(cluster.docker(a, "image", "inspect", "--format", "{{.Size}}", BIG).stdout) / 1e6
    out: dict = {"image_mb": round(size, 1)}

    def drop_b():
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

        def run(fn):
            async def go():
                async with Nodes(config) as nodes:
                    cfg, _ = await with_detected(config, nodes)
                    return await fn(cfg, nodes, lambda e: None)

            assert asyncio.run(go())

        # image: spark-tui, then the manual way through this machine
        drop_b()
        t_sync = _timed(lambda: run(sync_image))
        drop_b()

        def manual():
            save = subprocess.Popen(_ssh(cluster, a, f"docker save {BIG}"), stdout=subprocess.PIPE)
            subprocess.run(
                _ssh(cluster, b, "docker load"), stdin=save.stdout, check=True, capture_output=True
            )
            save.wait()

        t_manual = _timed(manual)
        drop_b()
        out["image"] = {
            "sync_mb_s": round(size / t_sync, 1),
            "manual_mb_s": round(size / t_manual, 1),
            "sync_over_manual": round(t_manual / t_sync, 2),
        }
        # model: a Hugging Face entry of model_mb MB in 4 shards
        write_model(caches[a.name], shards=4, floats=model_mb * (1 << 20) // 16)
        # The blobs only: the snapshot's symlinks point at them (is_file() follows links, counting each twice).
        model_bytes = (
            sum(
                p.stat().st_size
                for p in (caches[a.name] / "hub").rglob("*")
                if p.is_file() and not p.is_symlink()
            )
            / 1e6
        )
        t_msync = _timed(lambda: run(sync_model))
        subprocess.run(["rm", "-rf", str(caches[b.name])], check=True)
        repo = next((caches[a.name] / "hub").iterdir())
        here = Path(tmp) / "via-here"
        ssh = shlex.join(cluster.ssh_argv(a)[:-1])  # ssh options without the target

        def rsync():
            subprocess.run(["rsync", "-a", "-e", ssh, f"root@{a.ip}:{repo}/", f"{here}/"], check=True)
            target = caches[b.name] / "hub" / repo.name
            subprocess.run(_ssh(cluster, b, f"mkdir -p {shlex.quote(str(target))}"), check=True)
            subprocess.run(["rsync", "-a", "-e", ssh, f"{here}/", f"root@{b.ip}:{target}/"], check=True)

        t_rsync = _timed(rsync)
        out["model"] = {
            "model_mb": round(model_bytes, 1),
            "sync_mb_s": round(model_bytes / t_msync, 1),
            "rsync_via_here_mb_s": round(model_bytes / t_rsync, 1),
            "sync_over_rsync": round(t_rsync / t_msync, 2),
        }
    # raw TCP between the same two nodes: the ceiling
    recv = subprocess.Popen(
        _ssh(cluster, b, f"python3 -c {shlex.quote(RAW_RECV)} {b.ip}"), stdout=subprocess.PIPE, text=True
    )
    assert recv.stdout is not None
    port = recv.stdout.readline().strip()
    mb = max(image_mb, model_mb)
    t_raw = _timed(
        lambda: subprocess.run(
            _ssh(cluster, a, f"python3 -c {shlex.quote(RAW_SEND)} {b.ip} {port} {mb}"), check=True
        )
    )
    recv.wait()
    raw = mb * (1 << 20) / 1e6 / t_raw
    out["raw_tcp_mb_s"] = round(raw, 1)
    out["image"]["sync_over_raw"] = round(out["image"]["sync_mb_s"] / raw, 2)
    out["model"]["sync_over_raw"] = round(out["model"]["sync_mb_s"] / raw, 2)
    cluster.docker(a, "rmi", "-f", BIG, check=False)
    return out
