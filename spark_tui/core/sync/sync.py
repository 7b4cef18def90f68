"""`spark-tui sync image|model`: copy the effective image, or the model's cache entry, from a node
that has it to the nodes that lack it, node to node over the data network, then verify.

Never through this machine (often a laptop on Wi-Fi): it only starts the node programs of
core/node/sync_programs.py over SSH and reads their progress. Nodes already holding identical
layers (or complete files) are skipped. When a target cannot reach the source's data address,
sync says so and stops: no silent fall-back through this machine. Events are the launch's
(Stage per node with a fraction, Failed), so `up`'s printer and bars serve here too.
"""

from __future__ import annotations

import asyncio
import json
import secrets
import time
from collections.abc import Awaitable, Callable

import docker

from spark_tui.core.launch.events import Failed, Stage, StageName, StageStatus, shown_by
from spark_tui.core.models.model_files import Manifest, manifests, problems
from spark_tui.core.node.errors import NodeError, why
from spark_tui.core.node.nodes import Nodes
from spark_tui.core.node.redact import Redactor
from spark_tui.core.node.sync_programs import RECEIVE_FILES, SEND_FILES, SEND_STREAM
from spark_tui.core.sync.sync_image_program import RECEIVE
from spark_tui.errors import SyncError
from spark_tui.parsers.text import count
from spark_tui.settings.resolve import Config

Emit = Callable[[object], object]
PORT_WAIT = 30.0  # seconds for a receiver to say which port it listens on
RECEIVER_GRACE = 3.0  # seconds receivers get to end after their sender failed
HEADER_BYTES = 200  # what SEND_FILES adds per entry (its JSON header line), about
# A model's cache entry holds tens to a few thousand entries; a source announcing more is refused
# (a compromised node could otherwise make the targets create files without end).
MAX_ENTRIES = 100_000


def stream_cap(size: int) -> int:
    """The most bytes an image's `docker save` stream may carry: its layers' tars hold the image's
    bytes plus headers (about 8% more for the test image's small files), so twice plus 256 MiB
    is never reached by a real image and stops a source that streams without end."""
    return 2 * size + (256 << 20)


class _Run:
    """One sync: its events, its token (the programs read it on stdin), its id (no secret: in the
    programs' argv, for `pkill -f`) and the nodes where programs to stop on a cancel may run."""

    def __init__(self, config: Config, nodes: Nodes, emit: Emit, stage: StageName):
        self.config, self.nodes, self.stage = config, nodes, stage
        self.emit = shown_by(Redactor(lambda: self.config).show, emit)  # the core emits shown text
        self.token = secrets.token_hex(16)
        self.id = f"spark-tui-sync-{secrets.token_hex(4)}"
        self.t0 = time.monotonic()
        self.touched: set[str] = set()

    def event(self, node: str, status: StageStatus, detail: str = "", fraction: float | None = None) -> None:
        self.emit(Stage(node, self.stage, status, detail, time.monotonic() - self.t0, fraction))

    def ip(self, name: str) -> str:
        node = self.config.node(name)
        return node["data_ip"] or node["host"]

    async def check_paths(self, source: str, targets: list[str]) -> None:
        """The source must reach every target's data address (it connects to them)."""
        wanted = [self.ip(t) for t in targets]
        reached = await self.nodes.reaches(source, *wanted)
        if reached is None:
            raise SyncError(f"{source}: could not be asked whether it reaches the targets")
        cut = [t for t, ip in zip(targets, wanted, strict=True) if ip not in reached]
        if cut:
            raise SyncError(
                f"{source} does not reach {', '.join(f'{t} at {self.ip(t)}' for t in cut)} over the data "
                "network; sync copies node to node only (never through this machine): fix the link first"
            )

    async def receiver(
        self, target: str, source: str, command: list[str], port: asyncio.Future, given: str = ""
    ):
        """Start the receiver on `target`: `command` with its program's arguments (bind address,
        sync id, source address) at `{args}`; the token on its stdin, then `given`."""

        def line(text: str) -> None:
            parts = text.split()
            number = count(parts[1]) if len(parts) == 2 else None
            if parts[:1] == ["PORT"] and number is not None and not port.done():
                port.set_result(number)

        self.touched.add(target)
        args = [self.ip(target), self.id, self.ip(source)]
        i = command.index("{args}")
        argv = command[:i] + args + command[i + 1 :]
        return await self.nodes.transports[target].stream(argv, line, self.token + "\n" + given)

    async def ports(self, waits: dict[str, asyncio.Future], tasks: dict[str, asyncio.Task]) -> dict[str, int]:
        out = {}
        for target, fut in waits.items():
            done, _ = await asyncio.wait(
                {fut, tasks[target]}, timeout=PORT_WAIT, return_when="FIRST_COMPLETED"
            )
            if fut in done:
                out[target] = fut.result()
                continue
            res = tasks[target].result() if tasks[target] in done else None
            raise SyncError(
                f"{target}: the receiver did not start"
                + (
                    f": {res.problem('python3') or res.stderr.strip()[-200:]}"
                    if res is not None
                    else f" within {PORT_WAIT:.0f} s"
                )
            )
        return out

    def verdict(self, ok: bool, holds: str) -> bool:
        if not ok:
            self.emit(Failed(f"{self.stage.replace('_', ' ')}: not every target holds {holds}"))
        return ok

    async def stop_remote(self) -> None:
        """Best effort after a cancel: end what still runs with this sync's id."""
        for name in self.touched:
            try:
                await self.nodes.transports[name].run(["pkill", "-f", self.id], timeout=10)
            except (NodeError, TimeoutError, OSError):
                pass


async def _guarded(run: _Run, what: str, body: Callable[[], Awaitable[bool]]) -> bool:
    """A sync's refusals as a Failed event; a cancel ends what it started on the nodes."""
    try:
        return await body()
    except SyncError as exc:
        run.emit(Failed(f"sync {what}: {exc}"))
        return False
    except (asyncio.CancelledError, KeyboardInterrupt):
        await asyncio.shield(run.stop_remote())
        raise


# --- images ------------------------------------------------------------------------------


async def _image_layers(nodes: Nodes, name: str, image: str) -> tuple | None:
    """The image's layer digests and size on a node, None when absent."""
    try:
        img = await nodes.docker(name, lambda client: client.images.get(image))
    except docker.errors.ImageNotFound:
        return None
    return tuple((img.attrs.get("RootFS") or {}).get("Layers") or []), img.attrs.get("Size") or 0


async def sync_image(
    config: Config, nodes: Nodes, emit: Emit, source: str | None = None, targets: list[str] | None = None
) -> bool:
    run = _Run(config, nodes, emit, "sync_image")
    return await _guarded(run, "image", lambda: _sync_image(run, source, targets))


async def _sync_image(run: _Run, source: str | None, targets: list[str] | None) -> bool:
    config, nodes, image = run.config, run.nodes, run.config["image"]
    names = [n.name for n in sorted(config.nodes, key=lambda n: not n.is_head)]
    found = await nodes.each(lambda n: _image_layers(nodes, n, image), names)
    broken = [
        f"{n}: docker engine unreachable: {why(v)[:160]}"
        for n, v in found.items()
        if isinstance(v, NodeError)
    ]
    if broken:
        raise SyncError(broken[0])
    source = source or next((n for n in names if found[n] is not None), None)
    if source is None:
        raise SyncError(f"no node holds {image}: pull or build it on one node first")
    held = found[source]
    if not isinstance(held, tuple):
        raise SyncError(f"{source} does not hold {image}; choose --from a node that does")
    layers, size = held
    wanted = [t for t in (targets or names) if t != source]
    todo = []
    for t in wanted:
        have = found[t]
        if isinstance(have, tuple) and have[0] == layers:
            run.event(t, "done", f"{image}: identical layers already, skipped", 1.0)
        else:
            todo.append(t)
    if not todo:
        return True
    await run.check_paths(source, todo)
    # `docker load` tags nothing unless the whole stream arrived: an interrupted copy leaves no image.
    # The receiver lets through only an archive naming `image`, and at most stream_cap() bytes of it.
    cap = str(stream_cap(size))
    results = await _transfer(
        run,
        source,
        todo,
        lambda t: [
            "python3",
            "-c",
            RECEIVE,
            "{args}",
            f"unix://{config.node(t)['docker_socket']}",
            image,
            cap,
        ],
        ["python3", "-c", SEND_STREAM, f"unix://{config.node(source)['docker_socket']}", image],
        size,
    )
    ok = True
    for t in todo:
        res = results.get(t)
        after = await _image_layers(nodes, t, image)
        if isinstance(res, str):
            run.event(t, "failed", res)
            ok = False
        elif isinstance(after, tuple) and after[0] == layers:
            run.event(t, "done", f"{image}: verified, {len(layers)} layers as on {source}", 1.0)
        else:
            run.event(t, "failed", f"{image} on {t} after the copy: layers differ from {source}")
            ok = False
    return run.verdict(ok, f"{image} as {source} does")


def _last_line(output: str) -> str:
    """What a node program said last (its error, as a rule), shortened."""
    lines = output.strip().splitlines()
    return lines[-1][:200] if lines else "no output"


async def _transfer(
    run: _Run,
    source: str,
    targets: list[str],
    receiver: Callable[[str], list[str]],
    sender: list[str],
    total: int,
    stdin: str = "",
    given: str = "",
) -> dict[str, object]:
    """Receivers on the targets and one sender on the source (`sender` + sync id), started
    together: the sender learns the token and the receivers' addresses on its stdin once they
    listen, then reads `stdin`; each receiver reads `given` after the token. Per target its
    receiver's Result, or why it failed."""
    loop = asyncio.get_running_loop()
    waits = {t: loop.create_future() for t in targets}
    tasks = {t: asyncio.ensure_future(run.receiver(t, source, receiver(t), waits[t], given)) for t in targets}
    failed: dict[str, str] = {}
    addr: dict[str, str] = {}  # HOST:PORT -> target, once the receivers listen

    def progress(text: str) -> None:
        parts = text.split(maxsplit=2)
        if parts[:1] == ["SENT"] and len(parts) > 1 and count(parts[1]) is not None:
            sent = count(parts[1]) or 0
            for t in targets:
                if t not in failed:
                    frac = min(1.0, sent / total) if total else None
                    run.event(t, "progress", f"{sent / 1e6:,.0f}/{total / 1e6:,.0f} MB from {source}", frac)
        elif parts[:1] == ["FAIL"] and len(parts) > 1 and parts[1] in addr:
            failed[addr[parts[1]]] = f"connection from {source} lost: {parts[2] if len(parts) > 2 else ''}"

    run.touched.add(source)
    sender_input: asyncio.Future[str] = loop.create_future()
    sending = asyncio.ensure_future(
        run.nodes.transports[source].stream(sender + [run.id], progress, sender_input)
    )
    try:
        ports = await run.ports(waits, tasks)
        addr.update({f"{run.ip(t)}:{p}": t for t, p in ports.items()})
        for t in targets:
            run.event(t, "started", f"from {source} over the data network")
        sender_input.set_result(f"{run.token}\n{' '.join(addr)}\n{stdin}")
        sent = await sending
        if sent.exit_status != 0:
            # A sender that ended before it connected leaves receivers waiting for it: end them.
            _, waiting = await asyncio.wait(tasks.values(), timeout=RECEIVER_GRACE)
            if waiting:
                for task in waiting:
                    task.cancel()
                await asyncio.gather(*waiting, return_exceptions=True)
                await run.stop_remote()
        out: dict[str, object] = {}
        for t in targets:
            if tasks[t].cancelled():
                out[t] = (
                    f"the sender on {source} failed: {sent.problem('python3') or _last_line(sent.stderr)}"
                )
                continue
            res = await tasks[t]
            if t in failed:
                out[t] = failed[t]
            elif res.exit_status != 0 or sent.exit_status != 0:
                out[t] = f"copy to {t} failed: {_last_line(res.stderr or res.stdout or sent.stderr)}"
            else:
                out[t] = res
        return out
    finally:
        for task in [*tasks.values(), sending]:
            if not task.done():
                task.cancel()


# --- models ------------------------------------------------------------------------------


def _needed(src: Manifest, dst: Manifest) -> list[str]:
    """Paths under the entry the target lacks or holds differently (files by size, symlinks by
    target, and with `verify_hashes` files whose content is not what their blob name says);
    complete files are skipped, so a re-run resumes."""
    out = []
    for rel, (kind, size, link, _) in sorted(src.files.items()):
        have = dst.files.get(rel)
        if kind == "f" and (have is None or have[0] != "f" or have[1] != size or rel in dst.bad):
            out.append(rel)
        elif kind == "l" and (have is None or have[0] != "l" or have[2] != link):
            out.append(rel)
    return out


async def sync_model(
    config: Config, nodes: Nodes, emit: Emit, source: str | None = None, targets: list[str] | None = None
) -> bool:
    run = _Run(config, nodes, emit, "sync_model")
    return await _guarded(run, "model", lambda: _sync_model(run, source, targets))


async def _sync_model(run: _Run, source: str | None, targets: list[str] | None) -> bool:
    config, nodes, model = run.config, run.nodes, run.config["model"]
    if not model:
        raise SyncError("no model set")
    if model.startswith(("/", ".")):
        raise SyncError(f"model {model} is a path in the container, not a Hugging Face cache entry")
    found = await manifests(config, nodes)
    broken = [m.error for m in found.values() if m.error]
    if broken:
        raise SyncError(broken[0])
    order = [n.name for n in sorted(config.nodes, key=lambda n: not n.is_head)]
    complete = [n for n in order if not problems(found[n], [])]
    source = source or next(iter(complete), None)
    if source is None:
        raise SyncError(f"no node holds a complete copy of {model}: download it on one node first")
    src = found[source]
    if len(src.files) > MAX_ENTRIES:
        raise SyncError(
            f"{source}'s copy of {model} holds {len(src.files)} entries, more than a model's cache entry "
            f"does ({MAX_ENTRIES}): not copied"
        )
    if problems(src, []):
        raise SyncError(f"{source}'s copy of {model} is not complete: {problems(src, [])[0]}")
    plans = {}
    for t in [t for t in (targets or order) if t != source]:
        need = _needed(src, found[t])
        if need:
            plans[t] = need
        else:
            how = "hashed" if config["verify_hashes"] else "by size; --verify-hashes compares contents"
            run.event(t, "done", f"{model}: every file already as on {source} ({how}), skipped", 1.0)
    if not plans:
        return True
    await run.check_paths(source, list(plans))
    # One sender per target: each gets only what it lacks.

    async def send_to(t: str) -> dict[str, object]:
        need = plans[t]
        return await _transfer(
            run,
            source,
            [t],
            lambda t: ["python3", "-c", RECEIVE_FILES, "{args}", found[t].directory],
            ["python3", "-c", SEND_FILES, src.directory],
            sum((src.files[r][1] if src.files[r][0] == "f" else 0) + HEADER_BYTES for r in need),
            json.dumps(need),
            # What the receiver accepts: these entries, each once, as the manifest announced.
            json.dumps({r: src.files[r][:3] for r in need}),
        )

    results = await nodes.each(send_to, plans)
    after = await manifests(config, nodes, list(plans))
    ok = True
    for t, r in results.items():
        res = str(r) if isinstance(r, NodeError) else r[t]
        left = _needed(src, after[t]) if not after[t].error else ["(manifest unreadable)"]
        if isinstance(res, str):
            run.event(t, "failed", res)
            ok = False
        elif left or after[t].ref != src.ref:
            run.event(t, "failed", f"{model} on {t} after the copy: {len(left)} file(s) still differ")
            ok = False
        else:
            run.event(t, "done", f"{model}: verified, {len(src.files)} entries as on {source}", 1.0)
    return run.verdict(ok, f"{model} as {source} does")
