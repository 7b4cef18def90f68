"""`spark-tui sync image|model` and the `model.complete` check on the namespace test cluster.

The nodes share this machine's filesystem, so each node's Hugging Face cache is its own
directory here, set visibly per node in the cluster file (`volumes:`)."""

import asyncio
import hashlib
import json
import os
import re
import struct
import time
from pathlib import Path

import pytest

from spark_tui.core.launch import events as ev
from spark_tui.core.launch.live import with_detected
from spark_tui.core.models.model_files import manifests
from spark_tui.core.node.nodes import Nodes
from spark_tui.core.report.check import run_checks
from spark_tui.core.sync.sync import sync_image, sync_model
from spark_tui.settings.resolve import Inputs, resolve
from tests.cluster import cluster as tc

pytestmark = pytest.mark.cluster
MODEL = "test/tiny-model"


def config_for(cluster, count, tmp_path, caches: dict[str, Path] | None = None, environ=None):
    """The test cluster file; with `caches`, each node's own Hugging Face cache as its volume;
    `environ`: settings a test sets visibly (SPARK_TUI_...)."""
    path = Path(cluster.cluster_file(count, tmp_path / f"c{count}.yaml"))
    if caches:
        text = path.read_text()
        for name, cache in caches.items():
            text = text.replace(
                f"  - name: {name}\n",
                f"  - name: {name}\n    volumes: ['{cache}:/root/.cache/huggingface']\n",
            )
        path.write_text(text)
    return resolve(Inputs(cluster_file=str(path), user_config="", environ=environ or {}))


def run_sync(config, what="image", cancel_on=None, **kw):
    """Run a sync as the CLI does (detected values first); `cancel_on(event)` True cancels it."""
    got = []

    async def go():
        async with Nodes(config) as nodes:
            cfg, _ = await with_detected(config, nodes)
            fn = sync_image if what == "image" else sync_model
            task = asyncio.ensure_future(fn(cfg, nodes, got.append, **kw))
            while not task.done():
                await asyncio.sleep(0.05)
                if cancel_on is not None and any(cancel_on(e) for e in got):
                    task.cancel()
                    try:
                        await task
                    except asyncio.CancelledError:
                        return None
            return task.result()

    return asyncio.run(go()), got


def layers(cluster, node, image=tc.IMAGE):
    out = cluster.docker(node, "image", "inspect", "--format", "{{json .RootFS.Layers}}", image, check=False)
    return json.loads(out.stdout) if out.returncode == 0 else None


def done(got, node):
    name = getattr(node, "name", node)
    return [e for e in got if isinstance(e, ev.Stage) and e.node == name and e.status == "done"]


def test_image_missing_on_one_node_and_different_on_another_is_synced_and_verified(cluster, tmp_path):
    head, missing, differing, same = cluster.nodes[:4]
    cluster.delete_image(missing)
    cluster.delete_image(differing)
    cluster.import_image(differing, variant="other")
    assert layers(cluster, differing) != layers(cluster, head)
    ok, got = run_sync(config_for(cluster, 4, tmp_path))
    assert ok, got
    for node in (missing, differing):
        assert layers(cluster, node) == layers(cluster, head)
        assert done(got, node)[-1].detail.startswith(f"{tc.IMAGE}: verified, ")
        assert any(e.status == "progress" for e in got if getattr(e, "node", "") == node.name)
    assert done(got, same)[-1].detail == f"{tc.IMAGE}: identical layers already, skipped"
    ok, got = run_sync(config_for(cluster, 4, tmp_path))  # nothing left to do
    assert ok and all("skipped" in e.detail for e in got if isinstance(e, ev.Stage))


def argv_of_every_process() -> list[list[bytes]]:
    out = []
    for proc in Path("/proc").iterdir():
        try:
            out.append((proc / "cmdline").read_bytes().split(b"\0"))
        except OSError:
            pass
    return out


def running_on(cluster, marker: str) -> list[str]:
    """Processes with `marker` in argv in this cluster's nodes (their network namespaces): other
    test runs on the machine have their own, running programs of the same text."""
    nets = {os.readlink(f"/proc/{n.holder_pid}/ns/net") for n in cluster.nodes}
    out = []
    for pid in tc.run(["pgrep", "-f", marker], check=False).stdout.split():
        try:
            if os.readlink(f"/proc/{pid}/ns/net") in nets:
                out.append(pid)
        except OSError:  # ended meanwhile
            pass
    return out


def test_interrupted_image_sync_leaves_no_image_and_simply_runs_again(cluster, tmp_path):
    head, target = cluster.nodes[:2]
    cluster.delete_image(target)
    # 8 MB/s: the image takes most of a minute, time to interrupt mid-way (a tenth is in 5 s).
    cluster.rate_limit(target, "64mbit")
    seen: list[list[bytes]] = []

    def mid_way(e) -> bool:
        if isinstance(e, ev.Stage) and e.status == "progress" and (e.fraction or 0) > 0.1:
            seen.extend(argv_of_every_process())
            return True
        return False

    try:
        result, got = run_sync(config_for(cluster, 2, tmp_path), cancel_on=mid_way)
        assert result is None  # cancelled mid-way
        # Mid-copy, the receiver and the sender run with the sync's id in argv, never its token
        # (32 hex digits): `ps` on a node would show it to every user there.
        programs = [b" ".join(a) for a in seen if any(x.startswith(b"spark-tui-sync-") for x in a)]
        assert len(programs) >= 2, programs
        near = [b" ".join(a) for a in seen if b"spark-tui-sync-" in b" ".join(a)]  # shells too
        assert not [a for a in near if re.search(rb"(?<![0-9a-f])[0-9a-f]{32}(?![0-9a-f])", a)]
        time.sleep(1)
        assert layers(cluster, target) is None  # docker load tagged nothing
        # Neither the receiver nor the sender outlives the cancel (their program text is in argv).
        for marker in ("REFUSED", "every target failed"):
            assert not running_on(cluster, marker), marker
    finally:
        cluster.clear_rate_limit(target)
    ok, got = run_sync(config_for(cluster, 2, tmp_path))
    assert ok and layers(cluster, target) == layers(cluster, head), got


def test_a_receiver_listens_on_its_nodes_data_address_only(cluster, tmp_path):
    """Not on every address of the node: only hosts on the data network can reach it (and of
    those only the source gets past its first check; tests/test_sync_hostile.py). The source's
    TCP to the target is dropped here so that the receiver is still listening when looked at."""
    head, target = cluster.nodes[:2]
    cluster.delete_image(target)
    rule = ["OUTPUT", "-p", "tcp", "-d", target.ip, "-j", "DROP"]
    tc.run(["ip", "netns", "exec", head.netns, "iptables", "-I", *rule])
    listening: list[str] = []

    def listens(e) -> bool:
        if isinstance(e, ev.Stage) and e.node == target.name and e.status == "started":
            ss = tc.run(["ip", "netns", "exec", target.netns, "ss", "-Htlnp"]).stdout
            listening.extend(line for line in ss.splitlines() if "python3" in line)
            return True
        return False

    try:
        result, got = run_sync(config_for(cluster, 2, tmp_path), cancel_on=listens)
    finally:
        tc.run(["ip", "netns", "exec", head.netns, "iptables", "-D", *rule])
    assert result is None and len(listening) == 1, (listening, got)
    assert listening[0].split()[3].startswith(f"{target.ip}:"), listening


def test_sync_stops_when_the_source_cannot_reach_a_target(cluster, tmp_path):
    """No fall-back through this machine: the pair is named and nothing is copied."""
    head, target = cluster.nodes[:2]
    cluster.delete_image(target)
    tc.run(["ip", "netns", "exec", head.netns, "iptables", "-I", "OUTPUT", "-d", target.ip, "-j", "DROP"])
    try:
        ok, got = run_sync(config_for(cluster, 2, tmp_path))
    finally:
        tc.run(["ip", "netns", "exec", head.netns, "iptables", "-D", "OUTPUT", "-d", target.ip, "-j", "DROP"])
    failed = [e for e in got if isinstance(e, ev.Failed)]
    assert not ok and f"{head.name} does not reach {target.name} at {target.ip}" in failed[0].cause
    assert "never through this machine" in failed[0].cause and layers(cluster, target) is None


def test_a_sender_that_cannot_connect_is_named_at_once_and_leaves_no_receiver(cluster, tmp_path):
    """The target answers ping but refuses TCP from the source (a host firewall): the failure
    comes in seconds, not after the receivers' two-minute accept timeout, and nothing stays."""
    head, target = cluster.nodes[:2]
    cluster.delete_image(target)
    rule = ["OUTPUT", "-p", "tcp", "-d", target.ip, "-j", "REJECT", "--reject-with", "tcp-reset"]
    tc.run(["ip", "netns", "exec", head.netns, "iptables", "-I", *rule])
    try:
        start = time.monotonic()
        ok, got = run_sync(config_for(cluster, 2, tmp_path))
        took = time.monotonic() - start
    finally:
        tc.run(["ip", "netns", "exec", head.netns, "iptables", "-D", *rule])
    failed = [e for e in got if isinstance(e, ev.Stage) and e.status == "failed"]
    assert not ok and took < 15, (took, got)
    assert failed[0].node == target.name and f"the sender on {head.name} failed: " in failed[0].detail
    assert "Connection refused" in failed[0].detail
    assert not running_on(cluster, "spark-tui-sync-")
    assert layers(cluster, target) is None


# --- models ------------------------------------------------------------------------------


def safetensors(n_floats: int) -> bytes:
    header = json.dumps(
        {"w": {"dtype": "F32", "shape": [n_floats], "data_offsets": [0, 4 * n_floats]}}
    ).encode()
    return struct.pack("<Q", len(header)) + header + bytes(4 * n_floats)


def write_model(cache: Path, shards: int = 3, floats: int = 300_000) -> Path:
    """A Hugging Face cache entry as huggingface_hub lays it out: blobs named by hash (weights, kept
    with git LFS, by their sha256; small files by git's blob sha1), a snapshot of symlinks,
    refs/main naming the revision, a safetensors index."""
    repo = cache / "hub" / ("models--" + MODEL.replace("/", "--"))
    rev = "5f1b2c3d4e5f60718293a4b5c6d7e8f901234567"
    files = {"config.json": json.dumps({"architectures": ["Qwen3ForCausalLM"]}).encode()}
    names = [f"model-{i:05d}-of-{shards:05d}.safetensors" for i in range(1, shards + 1)]
    files.update({name: safetensors(floats + i) for i, name in enumerate(names)})
    files["model.safetensors.index.json"] = json.dumps(
        {"weight_map": {f"w{i}": n for i, n in enumerate(names)}}
    ).encode()
    (repo / "blobs").mkdir(parents=True)
    (repo / "snapshots" / rev).mkdir(parents=True)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(rev)
    for name, data in files.items():
        if name.endswith(".safetensors"):
            blob = hashlib.sha256(data).hexdigest()
        else:
            blob = hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()
        (repo / "blobs" / blob).write_bytes(data)
        (repo / "snapshots" / rev / name).symlink_to(f"../../blobs/{blob}")
    return repo / "snapshots" / rev


def model_checks(config):
    async def go():
        async with Nodes(config) as nodes:
            return await run_checks(config, nodes)

    return {r.node: r for r in asyncio.run(go()) if r.id == "model.complete"}


def test_model_on_one_node_is_synced_to_three_others_and_then_complete(cluster, tmp_path):
    caches = {n.name: tmp_path / f"hf-{n.name}" for n in cluster.nodes[:4]}
    snapshot = write_model(caches[cluster.nodes[0].name])
    config = config_for(cluster, 4, tmp_path, caches)
    ok, got = run_sync(config, "model")
    assert ok, got
    for node in cluster.nodes[1:4]:
        copy = caches[node.name] / snapshot.relative_to(caches[cluster.nodes[0].name])
        assert sorted(p.name for p in copy.iterdir()) == sorted(p.name for p in snapshot.iterdir())
        assert all(p.is_symlink() and p.resolve().exists() for p in copy.iterdir())
        assert (copy / "model-00002-of-00003.safetensors").read_bytes() == (
            snapshot / "model-00002-of-00003.safetensors"
        ).read_bytes()
        assert done(got, node.name)[-1].detail.startswith(f"{MODEL}: verified, ")
    checks = model_checks(config)
    assert all(checks[n.name].status == "pass" for n in cluster.nodes[:4]), checks


def test_a_source_announcing_more_entries_than_a_cache_entry_holds_is_refused(cluster, tmp_path, monkeypatch):
    """Issue 23, finding 16: no entry limit let a compromised source make targets create files
    without end. The limit (100000) is lowered here to the test model's size."""
    from spark_tui.core.sync import sync

    caches = {n.name: tmp_path / f"hf-{n.name}" for n in cluster.nodes[:2]}
    write_model(caches[cluster.nodes[0].name])  # 15 entries: 5 blobs, 5 links, refs/main, 4 dirs
    monkeypatch.setattr(sync, "MAX_ENTRIES", 14)
    ok, got = run_sync(config_for(cluster, 2, tmp_path, caches), "model")
    failed = [e.cause for e in got if isinstance(e, ev.Failed)]
    assert not ok and failed == [
        f"sync model: {cluster.nodes[0].name}'s copy of {MODEL} holds 15 entries, more than a model's "
        "cache entry does (14): not copied"
    ], got
    assert not caches[cluster.nodes[1].name].exists()


def test_truncated_and_missing_shards_are_named_then_a_resync_sends_only_those(cluster, tmp_path):
    caches = {n.name: tmp_path / f"hf-{n.name}" for n in cluster.nodes[:3]}
    for cache in caches.values():
        write_model(cache)
    config = config_for(cluster, 3, tmp_path, caches)
    a, b, c = cluster.nodes[:3]
    snap_b = next((caches[b.name] / "hub").glob("*/snapshots/*"))
    snap_c = next((caches[c.name] / "hub").glob("*/snapshots/*"))
    blob = (snap_b / "model-00002-of-00003.safetensors").resolve()
    blob.write_bytes(blob.read_bytes()[:500_000])  # an interrupted download
    (snap_c / "model-00003-of-00003.safetensors").resolve().unlink()  # a blob lost
    checks = model_checks(config)
    assert checks[a.name].status == "pass"
    assert checks[b.name].status == "fail"
    whole = len(safetensors(300_001))  # what the shard's own header says it must hold
    assert f"model-00002-of-00003.safetensors truncated: 500000 of {whole} bytes" in checks[b.name].message
    assert (
        checks[c.name].status == "fail"
        and "model-00003-of-00003.safetensors is a symlink to" in checks[c.name].message
    )
    assert "sync model" in checks[b.name].fix
    ok, got = run_sync(config, "model")
    assert ok, got
    # Each node gets the one file it lacks (1.2 MB), not the whole entry (3.6 MB); spark-1 nothing.
    sent = {e.node: e.detail for e in got if isinstance(e, ev.Stage) and e.status == "progress"}
    assert sent == {b.name: f"1/1 MB from {a.name}", c.name: f"1/1 MB from {a.name}"}, sent
    assert all(r.status == "pass" for r in model_checks(config).values())


def test_a_corrupt_file_of_full_length_is_caught_by_its_hash_and_resent(cluster, tmp_path):
    caches = {n.name: tmp_path / f"hf-{n.name}" for n in cluster.nodes[:2]}
    for cache in caches.values():
        write_model(cache)
    a, b = cluster.nodes[:2]
    snap_b = next((caches[b.name] / "hub").glob("*/snapshots/*"))
    shard = (snap_b / "model-00002-of-00003.safetensors").resolve()
    with open(shard, "r+b") as f:  # one flipped byte among the weights: size and header still right
        f.seek(1_000_000)
        f.write(b"\x01")
    config_json = (snap_b / "config.json").resolve()
    config_json.write_text(config_json.read_text().replace("Qwen3", "Qwen4"))
    # Sizes only (the default) cannot see it.
    assert model_checks(config_for(cluster, 2, tmp_path, caches))[b.name].status == "pass"
    hashing = config_for(cluster, 2, tmp_path, caches, {"SPARK_TUI_VERIFY_HASHES": "true"})
    checks = model_checks(hashing)
    assert (
        checks[a.name].status == "pass"
        and "5 file(s) hashed as their blob names say" in checks[a.name].message
    )
    assert checks[b.name].status == "fail"
    assert "model-00002-of-00003.safetensors: sha256 is " in checks[b.name].message
    assert f"its blob name says {shard.name[:12]}... (corrupt)" in checks[b.name].message
    assert "config.json: git blob sha1 is " in checks[b.name].message
    assert checks[b.name].fix == f"spark-tui sync model --from {a.name} --to {b.name} --verify-hashes"
    ok, got = run_sync(hashing, "model")
    assert ok, got
    # Only the two corrupt files went (1.2 MB), and now every file hashes right.
    sent = {e.node: e.detail for e in got if isinstance(e, ev.Stage) and e.status == "progress"}
    assert sent == {b.name: f"1/1 MB from {a.name}"}, sent
    assert model_checks(hashing)[b.name].status == "pass"


def test_a_cancelled_hash_check_stops_reading_on_the_node(cluster, tmp_path):
    """Cancelling a check (the wizard's Esc) closes the hashing session; the node stops reading
    then, not after the rest of the weights (here a 30 GB sparse file: ~20 s of hashing)."""
    node = cluster.nodes[0]
    snapshot = write_model(tmp_path / "hf")
    blob = snapshot.parent.parent / "blobs" / ("0" * 64)
    with open(blob, "wb") as f:
        f.truncate(30 << 30)
    (snapshot / "big.bin").symlink_to(f"../../blobs/{blob.name}")  # hashed first (sorted)
    config = config_for(cluster, 1, tmp_path, {node.name: tmp_path / "hf"}, {"SPARK_TUI_VERIFY_HASHES": "1"})

    def hashing() -> bool:
        return tc.run(["pgrep", "-f", f"{snapshot.parent.parent} hash"], check=False).returncode == 0

    async def go():
        async with Nodes(config) as nodes:
            task = asyncio.ensure_future(manifests(config, nodes))
            deadline = time.monotonic() + 10
            while not hashing():
                assert time.monotonic() < deadline and not task.done(), "hashing never started"
                await asyncio.sleep(0.1)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            cancelled = time.monotonic()
            while hashing() and time.monotonic() - cancelled < 10:
                await asyncio.sleep(0.1)
            return time.monotonic() - cancelled  # the connection is still open here

    assert asyncio.run(go()) < 3


def test_sync_command(cluster, tmp_path, run_cli):
    path = str(tmp_path / "c2.yaml")
    config_for(cluster, 2, tmp_path)
    code, _, err = run_cli("sync", "image", "--cluster", path, "--from", "spark-9")
    assert (
        code == 2
        and err.strip() == "spark-tui: error: --from: no node named 'spark-9' (nodes: spark-1, spark-2)"
    )
    cluster.delete_image(cluster.nodes[1])
    code, out, _ = run_cli("sync", "image", "--cluster", path)
    assert code == 0 and f"{cluster.nodes[1].name} sync_image done 100% {tc.IMAGE}: verified" in " ".join(
        out.split()
    )
