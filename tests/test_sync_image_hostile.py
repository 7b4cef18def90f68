"""`sync image`'s receiver against a compromised source (issue 23, finding 16): the real receiver
program on this machine, loading into a namespace test node's real docker engine, fed a real
`docker save` stream that a hostile source has edited."""

from __future__ import annotations

import io
import json
import shutil
import socket
import subprocess
import sys
import tarfile
import time
from pathlib import Path

import pytest

from spark_tui.core.launch import events as ev
from spark_tui.core.sync.sync import stream_cap
from spark_tui.core.sync.sync_image_program import RECEIVE
from tests.cluster import cluster as tc

pytestmark = pytest.mark.cluster
TOKEN = "0123456789abcdef"
VICTIM = "victim/app:latest"  # an image the target already holds, which the stream must not retag


def saved(node, tmp_path) -> bytes:
    path = tmp_path / "saved.tar"
    tc.run(["docker", "-H", node.docker_host, "save", "-o", str(path), tc.IMAGE])
    return path.read_bytes()


def edited(tar: bytes, how: str) -> bytes:
    """The saved archive with manifest.json's RepoTags naming VICTIM too, placed as `how` says:
    where docker looks for it, under a long name only a PAX header gives, or reached through a
    link to the archive's top."""
    src = tarfile.open(fileobj=io.BytesIO(tar))
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w", format=tarfile.PAX_FORMAT) as dst:
        for member in src.getmembers():
            f = src.extractfile(member) if member.isfile() else None
            data = f.read() if f is not None else None
            if member.name == "manifest.json" and data is not None:
                doc = json.loads(data)
                doc[0]["RepoTags"].append(VICTIM)
                data = json.dumps(doc).encode()
                member.size = len(data)
                if how == "pax-path":
                    member.name = "a/" * 40 + "../" * 40 + "manifest.json"  # over 100 characters
                elif how == "through-a-link":
                    link = tarfile.TarInfo("d")
                    link.type, link.linkname = tarfile.SYMTYPE, "."
                    dst.addfile(link)
                    member.name = "d/manifest.json"
            dst.addfile(member, io.BytesIO(data) if data is not None else None)
    return out.getvalue()


def receive(node, stream: bytes, cap: int, pause: float = 0) -> tuple[int, str]:
    """The image receiver on loopback, loading into `node`'s engine; `stream` sent as the source
    (`pause` seconds after the token, as `docker save` of a big image takes before its first byte)."""
    receiver = subprocess.Popen(
        [sys.executable, "-c", RECEIVE, "127.0.0.1", "spark-tui-sync-test", "127.0.0.1", node.docker_host]
        + [tc.IMAGE, str(cap)],
        stdin=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert receiver.stdin is not None and receiver.stderr is not None
    receiver.stdin.write(TOKEN + "\n")
    receiver.stdin.close()
    port = int(receiver.stderr.readline().split()[1])
    with socket.create_connection(("127.0.0.1", port)) as s:
        try:
            s.sendall(TOKEN.encode() + b"\n")
            time.sleep(pause)
            s.sendall(stream)
        except OSError:  # refused part-way
            pass
    err = receiver.stderr.read()
    return receiver.wait(timeout=60), err


def image_id(cluster, node, image):
    out = cluster.docker(node, "image", "inspect", "--format", "{{.Id}}", image, check=False)
    return out.stdout.strip() if out.returncode == 0 else None


@pytest.mark.parametrize("how", ["manifest", "pax-path", "through-a-link", "too-long", "unchanged", "late"])
def test_an_image_stream_retags_nothing_but_the_image_asked_for(cluster, tmp_path, how):
    head, target = cluster.nodes[:2]
    cluster.import_image(target, image=VICTIM, variant="other")
    victim = image_id(cluster, target, VICTIM)
    cluster.delete_image(target)
    try:
        tar = saved(head, tmp_path)
        stream = tar if how in ("too-long", "unchanged", "late") else edited(tar, how)
        cap = len(tar) - 1 if how == "too-long" else stream_cap(len(tar))
        code, err = receive(target, stream, cap, pause=12 if how == "late" else 0)  # past the token's 10 s
        assert image_id(cluster, target, VICTIM) == victim  # never retagged
        if how in ("unchanged", "late"):
            assert code == 0 and "REJECTED" not in err, err
            assert image_id(cluster, target, tc.IMAGE) == image_id(cluster, head, tc.IMAGE)
            return
        assert code == 1 and image_id(cluster, target, tc.IMAGE) is None, err  # nothing loaded
        said = err.strip().splitlines()[-1]
        assert (
            said
            == {
                "manifest": f"REJECTED the stream's manifest.json names {VICTIM}; only {tc.IMAGE} was asked for",
                "pax-path": f"REJECTED the stream's manifest.json names {VICTIM}; only {tc.IMAGE} was asked for",
                "through-a-link": "REJECTED a member under the link 'd'",
                "too-long": f"REJECTED more than {len(tar) - 1} bytes, the most this image may take",
            }[how]
        )
    finally:
        cluster.delete_image(target, VICTIM)


# A compromised source: its `docker save` adds VICTIM to the archive's tags (the node's own
# /usr/local/bin comes first on its PATH).
HOSTILE_DOCKER = """#!/usr/bin/env python3
import io, json, os, subprocess, sys, tarfile
if os.environ.get("HOSTILE_DOCKER_INSIDE"):  # never a fork bomb, whatever REAL turns out to be
    raise SystemExit("the hostile docker wrapper called itself")
os.environ["HOSTILE_DOCKER_INSIDE"] = "1"
args = sys.argv[1:]
if "save" not in args:
    os.execv(REAL, [REAL, *args])
saved = tarfile.open(fileobj=io.BytesIO(subprocess.run([REAL, *args], stdout=subprocess.PIPE, check=True).stdout))
out = tarfile.open(fileobj=sys.stdout.buffer, mode="w|", format=tarfile.PAX_FORMAT)
for member in saved.getmembers():
    f = saved.extractfile(member) if member.isfile() else None
    data = f.read() if f is not None else None
    if member.name == "manifest.json":
        doc = json.loads(data)
        doc[0]["RepoTags"].append(VICTIM)
        data = json.dumps(doc).encode()
        member.size = len(data)
    out.addfile(member, io.BytesIO(data) if data is not None else None)
out.close()
"""


def test_a_compromised_source_cannot_retag_an_image_on_the_target_and_the_sync_says_so(cluster, tmp_path):
    from tests.test_sync import config_for, run_sync

    head, target = cluster.nodes[:2]
    cluster.import_image(target, image=VICTIM, variant="other")
    victim = image_id(cluster, target, VICTIM)
    cluster.delete_image(target)
    wrapper = Path(head.dir) / "bin" / "docker"
    real = shutil.which("docker", path="/usr/bin:/bin")  # not /usr/local/bin: the node's own, the wrapper
    assert real is not None
    wrapper.write_text(HOSTILE_DOCKER.replace("REAL", repr(real)).replace("VICTIM", repr(VICTIM)))
    wrapper.chmod(0o755)
    try:
        ok, got = run_sync(config_for(cluster, 2, tmp_path))
        assert image_id(cluster, target, VICTIM) == victim and image_id(cluster, target, tc.IMAGE) is None
    finally:
        wrapper.unlink()
        cluster.delete_image(target, VICTIM)
    failed = [e for e in got if isinstance(e, ev.Stage) and e.status == "failed"]
    assert not ok and [(e.node, e.detail) for e in failed] == [
        (
            target.name,
            f"copy to {target.name} failed: REJECTED the stream's manifest.json names {VICTIM}; "
            f"only {tc.IMAGE} was asked for",
        )
    ], got
