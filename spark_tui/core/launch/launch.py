"""Launch with readiness, complete rollback, teardown and drift detection.

Every step emits a typed event (core/launch/events.py) through `emit`; nothing here prints.
Blocking Docker SDK calls run in threads; the SDK reaches each node's engine through
that node's SSH tunnel.
"""

from __future__ import annotations

import asyncio
import datetime
import getpass
import os
import re
import shlex
import socket
import time
from collections import deque
from collections.abc import Callable
from typing import Any, TypeVar

import docker

from spark_tui.core.launch import plan as planmod
from spark_tui.core.launch import serving
from spark_tui.core.launch.events import (
    Failed,
    Memory,
    NcclNet,
    Ready,
    Removed,
    Stage,
    StageName,
    StageStatus,
    StillHolding,
    shown_by,
)
from spark_tui.core.launch.failure_watch import FailureWatch, cause_text, diagnosis
from spark_tui.core.launch.kernel_watch import KernelWatch
from spark_tui.core.launch.live import with_detected
from spark_tui.core.launch.nccl_nodes import NcclWatch, node_of
from spark_tui.core.models.memory_fit import MemoryGuard, MemoryReading
from spark_tui.core.node import engines, labels
from spark_tui.core.node.backoff import retry_wait
from spark_tui.core.node.errors import EngineError, HostKeyError, NodeError, engine_said
from spark_tui.core.node.logs import LogCursor
from spark_tui.core.node.nodes import Nodes
from spark_tui.core.node.probes import NodeSnapshot
from spark_tui.core.node.redact import Redactor
from spark_tui.errors import LaunchError
from spark_tui.parsers.nccl import NcclParser, NcclSummary
from spark_tui.parsers.vllm import (
    GCS_UNREACHABLE,
    NAMED_ERROR,
    RAY_NODE_REGISTERED,
    VllmParser,
    VllmSummary,
    parse_ray_status,
    ray_version_mismatch,
)
from spark_tui.secret_names import mask_args
from spark_tui.settings.resolve import Config

Emit = Callable[[Any], object]  # takes the events of core/launch/events.py
T = TypeVar("T")
# Tries of a look at a node's engine before a dropped connection counts as the engine lost.
LOOK_TRIES = 3
SERVE_EXIT = "spark-tui: vllm serve exited with code"
# Seconds between HTTP readiness probes before the log says the server started.
ASK_WITHOUT_HINT = 5.0
# Seconds an error line that names no exception yet (vLLM's "Error executing method ...") waits
# for the traceback's last line, which says what failed (a Ray worker's lines arrive in bursts).
ERROR_SETTLE = 2.0
# The line of an exited container's log that says why it exited.
EXIT_REASON = re.compile(r": error: |Error\b|error:|not found|No such file|Killed|denied", re.I)


def _unsaid(s: NcclSummary) -> bool:
    """A node's own log has not yet said its transport or that its ranks' init completed."""
    return s.transport is None or not s.init_start or s.init_complete < s.init_start


def launched_labels() -> dict[str, str]:
    """Who launched and when (UTC), for the labels a later `status` reads back."""
    try:
        user = getpass.getuser()
    except (KeyError, OSError):  # no login name: a container or a uid without a passwd entry
        user = f"uid {os.getuid()}"
    return {
        labels.LAUNCHED_BY: f"{user}@{socket.gethostname()}",
        labels.LAUNCHED_AT: datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
    }


def _create_kwargs(spec: planmod.ContainerSpec, has_gpu: bool, extra_labels: dict | None = None) -> dict:
    kwargs = dict(
        image=spec.image,
        entrypoint=spec.entrypoint,
        command=spec.cmd,
        name=spec.name,
        labels={**spec.labels, **(extra_labels or {})},
        environment={e.name: e.value for e in spec.env},
        network_mode=spec.network,
        ipc_mode=spec.ipc,
        privileged=spec.privileged,
        shm_size=spec.shm_size,
        detach=True,
        ulimits=[docker.types.Ulimit(name=n, soft=s, hard=h) for n, (s, h) in spec.ulimits.items()],
        volumes=[v for v in spec.volumes],
    )
    if spec.cap_add:
        kwargs["cap_add"] = spec.cap_add
    if spec.devices:
        kwargs["devices"] = [f"{d}:{d}" for d in spec.devices]
    if spec.memory_limit:
        kwargs["mem_limit"] = spec.memory_limit
    if spec.pids_limit:
        kwargs["pids_limit"] = spec.pids_limit
    if spec.gpus == "all" or (spec.gpus == "auto" and has_gpu):
        kwargs["device_requests"] = [docker.types.DeviceRequest(count=-1, capabilities=[["gpu"]])]
    return kwargs


class Launch:
    """One `spark-tui up`. Tracks what it started so a failure removes exactly that."""

    @property
    def config(self) -> Config:
        """The one holder of the live configuration is `Nodes`; a launch reads and sets it there."""
        return self.nodes.config

    @config.setter
    def config(self, config: Config) -> None:
        self.nodes.config = config

    def __init__(
        self,
        config: Config,
        nodes: Nodes,
        emit: Emit,
        has_gpu: dict[str, bool] | None = None,
        snapshots: list[NodeSnapshot] | None = None,
        follow_after_ready: bool = False,
    ):
        """`snapshots`: the nodes as the caller just saw them, `config` resolved with what they
        showed (core/launch/live.py); without them the launch looks at the nodes itself first.
        `follow_after_ready`: the kernel logs stay followed after READY (`kernels`, in serving
        mode: nothing missed between READY and the watch); the caller stops them."""
        self.follow_after_ready = follow_after_ready
        self.nodes = nodes
        self.config = config  # held by the nodes: what this launch runs is the live configuration
        self.snapshots = snapshots
        self.emit = shown_by(Redactor(lambda: self.config).show, emit)  # the core emits shown text
        self.specs = {s.node: s for s in planmod.build(config)}
        self.has_gpu = has_gpu or {}
        self.started: list[tuple[str, str]] = []  # (node, container id)
        self._creating: dict[asyncio.Future, str] = {}  # creates under way: their node
        self.launched = launched_labels()
        self.t0 = time.monotonic()
        self._shown: dict[tuple[str, str], tuple] = {}  # (node, stage) -> what was last emitted for it
        self.hostnames: dict[str, str] = {}  # a node's hostname -> its name
        self.snaps: list[NodeSnapshot] = []
        # Every log line read goes through the failure knowledge base: a named error ends the launch.
        self.kb = FailureWatch(self.emit)
        self._error_seen: float | None = None  # when vLLM's first unnamed error line was read
        # Each node's kernel log from the launch's start: GPU faults (Xid) are said there only.
        self.kernels = KernelWatch(self.nodes, self.emit, self.kb)

    def _stage(
        self,
        node: str,
        stage: StageName,
        status: StageStatus,
        detail: str = "",
        fraction: float | None = None,
    ) -> None:
        """Emit a stage event only when something changed: polls repeat the same progress."""
        if self._shown.get((node, stage)) == (status, detail, fraction):
            return
        self._shown[(node, stage)] = (status, detail, fraction)
        self.emit(Stage(node, stage, status, detail, time.monotonic() - self.t0, fraction))

    async def run(self) -> bool:
        try:
            # The configuration as the nodes make it (detected netdev, hca, ~), whoever built it.
            snaps = self.snapshots
            if snaps is None:
                self.config, snaps = await with_detected(self.config, self.nodes)
            self.specs = {s.node: s for s in planmod.build(self.config)}
            for snap in snaps:
                self.has_gpu.setdefault(snap.node, bool(snap.gpu and snap.gpu.present))
            # NCCL names a rank's host by its hostname: map those back to nodes.
            self.hostnames = {snap.host.hostname: snap.node for snap in snaps if snap.host.hostname}
            self.snaps = snaps
            await self._preflight()
            await self._watch_kernels()
            start = {"solo": self._solo, "ray": self._ray, "native": self._native}
            await start[self.config["executor"]]()
            endpoint, watch = await self._wait_ready()
            if self.follow_after_ready:
                self.kernels.serve()  # the caller's now (supervision, the cockpit's serving view)
            else:
                await self._stop_kernels()
            nets = [NcclNet(n.node, n.level, n.line()) for n in watch.nets().values()]
            self.emit(
                Ready(endpoint, self.config["served_model_name"] or "", time.monotonic() - self.t0, nets)
            )
            return True
        except LaunchError as exc:
            self.emit(Failed(exc.cause, exc.log_lines))
        except EngineError as exc:
            self.emit(Failed(f"docker API failed during launch: {exc}"))
        except NodeError as exc:
            self.emit(Failed(str(exc)))
        except (docker.errors.APIError, docker.errors.ContainerError) as exc:
            self.emit(Failed(f"docker API failed during launch: {exc}"))
        except (asyncio.CancelledError, KeyboardInterrupt):
            self.emit(Failed("interrupted"))
            await asyncio.shield(self._stop_kernels())
            await asyncio.shield(self.rollback())
            raise
        except Exception as exc:  # a bug of ours, or an answer nobody foresaw: still roll back
            self.emit(Failed(f"internal error ({type(exc).__name__}: {str(exc)[:200]}); rolled back"))
        await self._stop_kernels()
        await self.rollback()
        return False

    async def _watch_kernels(self) -> None:
        """Follow every node's kernel log from now on (a follow whose connection drops is resumed).
        A node whose kernel log this user may not read (dmesg restricted, no journal group) is said
        once as a warning; the launch goes on."""
        await self.kernels.start()

    async def _stop_kernels(self) -> None:
        await self.kernels.stop()

    def _kernel_fault(self) -> None:
        """A fault the nodes' kernels logged since the last look (an Xid, the OOM killer), named
        for its node; a warning (NV_ERR_NO_MEMORY) is told once and the launch goes on."""
        for node, lines in self.kernels.take().items():
            named = self.kb.feed(node, lines)
            if named is not None:
                raise LaunchError(cause_text(named, log="kernel log"), lines[-20:])

    async def _preflight(self) -> None:
        name = self.config["container_name"]
        for spec in self.specs.values():
            if spec.unexpanded:
                # Docker would take `~/...` for a volume name and refuse it: stop before anything starts.
                raise LaunchError(
                    f"{spec.node}: cannot expand ~ in volume {spec.unexpanded[0]}: the node's home "
                    f"directory is not known (was {spec.node} reachable when the plan was made?)"
                )

        async def free_and_holding(node: str) -> None:
            try:
                existing = await self.nodes.docker(node, lambda client: engines.exact_container(client, name))
            except EngineError as exc:
                raise LaunchError(f"{node}: docker engine unreachable: {exc.reason}") from None
            if existing is not None:
                image = existing.attrs["Config"].get("Image", "?")
                raise LaunchError(
                    f"{node}: a container named {name} already exists ({existing.status}, image {image}); "
                    f"spark-tui never reuses it: remove it with `spark-tui down` or docker rm"
                )
            try:
                await self.nodes.docker(node, lambda client: client.images.get(self.specs[node].image))
            except docker.errors.ImageNotFound:
                raise LaunchError(
                    f"{node}: image {self.specs[node].image} is not on this node; "
                    f"copy it there (spark-tui sync image --to {node}) or pull it"
                ) from None

        await self.nodes.every(free_and_holding)

    async def _start(self, node: str) -> None:
        spec = self.specs[node]
        self._stage(node, "container", "started", spec.image)
        kwargs = _create_kwargs(spec, self.has_gpu.get(node, False), self.launched)
        try:
            # The engine finishes a create it began even if this launch is interrupted meanwhile:
            # the rollback waits for it and removes what it made (core/launch: rollback).
            create = asyncio.ensure_future(
                self.nodes.docker(node, lambda client: client.containers.create(**kwargs))
            )
            self._creating[create] = node
            container = await asyncio.shield(create)
            del self._creating[create]
            self.started.append((node, container.id))
            await self.nodes.docker(node, lambda client: client.api.start(container.id))
        except EngineError as exc:
            raise LaunchError(f"{node}: docker engine lost during launch: {exc.reason}") from None
        except docker.errors.DockerException as exc:
            if "executable file not found" in str(exc):
                program = spec.entrypoint[0]
                fix = (
                    "; executor ray needs Ray in the image: use executor native or an image with Ray"
                    if program == "ray"
                    else ""
                )
                raise LaunchError(
                    f"{node}: `{program}` is not in image {spec.image}{fix} (docker: {exc})"
                ) from None
            # The engine's refusal in the table's words when it knows them (no GPU runtime, a
            # missing device, a cgroup mount, a full disk): node, cause and fix, as for a log line.
            # Its own words (the SDK's `explanation`) are quoted, not the HTTP status around them.
            said = str(getattr(exc, "explanation", None) or exc)
            known = [f for f in self.kb.matcher.match(said) if f.severity == "error" and not f.secondary]
            if known:
                known[0].node = node
                self.emit(diagnosis(known[0]))
                raise LaunchError(cause_text(known[0], log="docker")) from None
            raise LaunchError(f"{node}: container failed to start: {exc}") from None
        self._stage(node, "container", "done", container.short_id)

    async def _logs(self, node: str, **kwargs) -> list[str]:
        """Lines of the container this launch started on `node` (Docker SDK `logs` arguments;
        by default the last 400)."""
        cid = next(c for n, c in self.started if n == node)
        kwargs = kwargs or {"tail": 400}
        try:
            raw = await self._look(node, lambda client: client.containers.get(cid).logs(**kwargs))
        except docker.errors.APIError:
            return []
        return raw.decode(errors="replace").splitlines()

    async def _look(self, node: str, read: Callable[[docker.DockerClient], T]) -> T:
        """`read(client)` on the node's engine, for a look that changes nothing: one that fails as
        the node's SSH connection drops (a blip, sshd restarted) is asked again on the connection
        made anew (the connection layer's backoff), LOOK_TRIES in all, before the engine counts as
        lost. The kernel log's follow is resumed the same way (core/node/kernel_log.py)."""
        for attempt in range(1, LOOK_TRIES + 1):
            try:
                return await self.nodes.docker(node, read)
            except HostKeyError:
                raise
            except NodeError:
                if attempt == LOOK_TRIES:
                    raise
                await asyncio.sleep(retry_wait(attempt, self.nodes.transports[node]))
        raise AssertionError("unreachable")

    async def _state(self, node: str) -> tuple[str, int | None]:
        """The container's status and, once it exited, its exit code."""
        cid = next(c for n, c in self.started if n == node)
        try:
            c = await self._look(node, lambda client: client.containers.get(cid))
        except docker.errors.NotFound:
            return "removed", None
        except (EngineError, docker.errors.APIError) as exc:
            raise LaunchError(f"{node}: docker engine lost during launch: {engine_said(exc)}") from None
        return c.status, (c.attrs.get("State") or {}).get("ExitCode")

    async def _until(self, what: str, timeout: float, check) -> None:
        deadline = time.monotonic() + timeout
        while True:
            self._kernel_fault()
            if await check():
                return
            if time.monotonic() > deadline:
                raise LaunchError(f"{what}: not reached within {timeout:.0f} s (timeouts setting)")
            await asyncio.sleep(0.25)

    async def _alive_or_fail(self, node: str) -> None:
        state, code = await self._state(node)
        if state not in ("running", "created"):
            tail = await self._logs(node)
            lines = tail[-20:]
            how = f"exited with code {code}" if state == "exited" and code is not None else f"is {state}"
            self.kb.feed(node, tail)
            named = self.kb.cause(node)
            if named is not None:
                origin = self._node_of(named.line)
                if origin and origin != node:  # a Ray worker's line, read in this node's log
                    named.node = origin
                    raise LaunchError(f"{cause_text(named, read_in=node)}; {node}: container {how}", lines)
                raise LaunchError(cause_text(named, how), lines)
            # The line that says why, quoted as the program printed it (argparse, a Python error).
            why = ray_version_mismatch(lines) or next(
                (line for line in reversed(lines) if EXIT_REASON.search(line)), lines[-1] if lines else ""
            )
            raise LaunchError(f"{node}: container {how}" + (f": {why.strip()[:200]}" if why else ""), lines)

    async def _ray(self) -> None:
        head = self.config.head.name
        workers = [n.name for n in self.config.nodes if not n.is_head]
        await self._start(head)

        async def head_up():
            await self._alive_or_fail(head)
            return any("Ray runtime started" in line for line in await self._logs(head))

        await self._until("Ray head start", self.config.timeouts.container, head_up)
        await self.nodes.every(self._start, workers)
        want_nodes = len(self.config.nodes)
        want_gpus = self.config["tensor_parallel_size"] * self.config["pipeline_parallel_size"]
        cid = self.started[0][1]
        cursors = {w: LogCursor() for w in workers}

        async def joined():
            await self._head_alive_in_join(head)
            for w in workers:
                await self._alive_or_fail(w)
                # A worker says it cannot reach the head's GCS on every retry: that is the verdict,
                # not the join timeout minutes later.
                fresh = cursors[w].fresh(await self._logs(w, **cursors[w].read_args("all")))
                for line in fresh:
                    if GCS_UNREACHABLE.search(line):
                        await self._cannot_join(w, line)
                named = self.kb.feed(w, fresh)
                if named is not None:
                    raise LaunchError(cause_text(named), fresh[-20:])
            # containers.get is a blocking HTTP call through the tunnel: in a thread, through the door.
            res = await self.nodes.docker(
                head, lambda client: client.containers.get(cid).exec_run(["ray", "status"])
            )
            st = parse_ray_status(res.output.decode(errors="replace"))
            self._stage(
                "cluster",
                "ray_join",
                "progress",
                f"{st.active_nodes}/{want_nodes} nodes, {st.gpus_total:g} GPUs",
                st.active_nodes / want_nodes,
            )
            return st.active_nodes >= want_nodes and st.gpus_total >= want_gpus

        await self._until("Ray: every node and GPU joined", self.config.timeouts.ray_join, joined)
        await self._ray_addresses(head, cid)
        self._stage("cluster", "ray_join", "done", f"{want_nodes} nodes")
        serve = planmod.vllm_serve_args(self.config)
        # Output goes to the container's main streams so `docker logs` shows vLLM too. The container
        # lives on (Ray holds it) when vllm serve dies, so its exit is written to the log as well.
        # Per-node NCCL/UCX/IP variables stay per node (vLLM would copy the head's to every worker).
        script = (
            planmod.keep_per_node_script()
            + f'{shlex.join(serve)} >/proc/1/fd/1 2>/proc/1/fd/2; echo "{SERVE_EXIT} $?" >/proc/1/fd/2'
        )
        await self.nodes.docker(
            head, lambda client: client.containers.get(cid).exec_run(["sh", "-c", script], detach=True)
        )
        self._stage(head, "vllm", "started", shlex.join(mask_args(serve)))  # `--api-key` in vllm_args

    async def _ray_addresses(self, head: str, cid: str) -> None:
        """Every node Ray registered must be at a data address: one under another address (a
        node's management port: another launcher's leftover, or a Ray given the SSH address) gets
        vLLM's workers and NCCL on the wrong network. Ray's own record: the head's GCS log."""
        log = "/tmp/ray/session_latest/logs/gcs_server.out"
        res = await self.nodes.docker(head, lambda client: client.containers.get(cid).exec_run(["cat", log]))
        if res.exit_code != 0:
            return  # an older layout of Ray's session directory: nothing to compare
        data = {n["data_ip"] for n in self.config.nodes if n["data_ip"]}
        stray = sorted(set(RAY_NODE_REGISTERED.findall(res.output.decode(errors="replace"))) - data)
        if not stray:
            return
        owner = {
            cidr.split("/")[0]: (snap.node, name)
            for snap in self.snaps
            for name, iface in snap.interfaces.items()
            for cidr in iface.ipv4
        }
        parts = []
        for addr in stray:
            if addr in owner:
                node, ifname = owner[addr]
                data_ip = next((n["data_ip"] for n in self.config.nodes if n.name == node), "?")
                parts.append(
                    f"{node}: a Ray node registered under {addr} ({ifname}), not its data address {data_ip}"
                )
            else:
                parts.append(f"a Ray node registered under {addr}, no node's data address")
        raise LaunchError(
            "; ".join(parts) + " (another launcher's Ray, or one given another address: stop it)",
            (await self._logs(head))[-20:],
        )

    async def _head_alive_in_join(self, head: str) -> None:
        """A worker of another Ray version crashes the head's GCS (Ray 2.49 fails a check on the
        2.48 raylet's address) and the head exits saying nothing: then name every node's Ray."""
        state, _ = await self._state(head)
        if state not in ("running", "created"):
            versions = await self._ray_versions()
            if len(set(versions.values())) > 1:
                said = ", ".join(f"{node} has Ray {v}" for node, v in versions.items())
                raise LaunchError(
                    f"{head}: Ray's head exited while the workers joined: Ray versions differ ({said}); "
                    "a Ray cluster needs one Ray version on every node (the same image)",
                    (await self._logs(head))[-20:],
                )
            await self._alive_or_fail(head)

    async def _ray_versions(self) -> dict[str, str]:
        """Each node's Ray version as its image says it (`ray --version`, a short container)."""

        async def ray_version(node: str) -> str:
            try:
                out = await self.nodes.docker(
                    node,
                    lambda client: client.containers.run(
                        self.specs[node].image,
                        ["--version"],
                        entrypoint=["ray"],
                        remove=True,
                        network_mode="none",
                    ),
                )
            except docker.errors.ContainerError:  # no `ray` in the image, or it failed
                return "?"
            m = re.search(r"version (\S+)", out.decode(errors="replace"))
            return m.group(1) if m else "?"

        found = await self.nodes.each(ray_version)
        return {node: "?" if isinstance(v, NodeError) else v for node, v in found.items()}

    async def _cannot_join(self, worker: str, line: str) -> None:
        """Name the worker that cannot reach the head's Ray GCS, with its line and whether the
        worker reaches the head's data address at all."""
        head = self.config.head
        head_ip = head["data_ip"] or ""
        reached = await self.nodes.reaches(worker, head_ip) if head_ip else None
        network = (
            f"{worker} does not reach {head.name} at {head_ip} over the data network (ping)"
            if reached is not None and head_ip not in reached
            else f"{worker} reaches {head.name} at {head_ip}, but not the GCS port "
            f"{self.config['master_port']} (a firewall, or another address for the head?)"
            if reached is not None
            else "the worker could not be asked whether it reaches the head"
        )
        raise LaunchError(
            f"{worker}: Ray worker cannot join the head's GCS: {line.strip()[:200]}; {network}",
            (await self._logs(worker))[-20:],
        )

    async def _nccl_ranks(self) -> str:
        """Which ranks started init and did not complete it, on which node, and whether those
        nodes reach the head's data address. Ranks of Ray workers are in the head's log (by the
        actor's ip=), native ranks in each node's own log: every node's log is read once here."""
        merged = NcclParser()
        for node in self.config.nodes:
            if any(n == node.name for n, _ in self.started):
                merged.feed_lines(await self._logs(node.name, tail=2000))
        s = merged.summary
        by_address = {n["data_ip"]: n.name for n in self.config.nodes if n["data_ip"]}

        def node_of(origin: str) -> str:
            return by_address.get(origin) or self.hostnames.get(origin) or origin

        pending = {rank: node_of(origin) for rank, origin in s.pending_ranks().items()}
        missing = [r for r in range(s.nranks or 0) if r not in s.rank_origin]
        parts = [f"rank {r} on {where} started, never completed" for r, where in pending.items()]
        parts += [f"rank {r} never started" for r in missing]
        head = self.config.head
        for name in sorted(
            {where for where in pending.values() if where != head.name and where in by_address.values()}
        ):
            reached = await self.nodes.reaches(name, head["data_ip"] or "")
            if reached is not None:
                verb = "reaches" if head["data_ip"] in reached else "does NOT reach"
                parts.append(f"{name} {verb} {head.name} at {head['data_ip']}")
        return "; ".join(parts) or "no rank lines in the logs (NCCL_DEBUG=INFO shows them)"

    async def _solo(self) -> None:
        """One node: its container runs `vllm serve` itself (the ENTRYPOINT), nothing to join; the
        readiness, memory guard and failure naming that follow are the cluster launch's own."""
        await self._start(self.config.head.name)

    async def _native(self) -> None:
        workers = [n.name for n in self.config.nodes if not n.is_head]
        await self.nodes.every(self._start, workers)
        await self._start(self.config.head.name)

    async def _wait_ready(self) -> tuple[str, NcclWatch]:
        head = self.config.head
        watch = NcclWatch(self.config, self.snaps)
        nccl, vllm_p = watch.parser(head.name), VllmParser()
        # Each poll reads only what a log gained since the last one (a model load logs for
        # many minutes; re-reading the whole log every poll grew with its length).
        cursor = LogCursor()
        # Native ranks log into their own node's container; Ray workers' ranks into the head's.
        others = {} if self.config["executor"] == "ray" else {n.name: LogCursor() for n in self.config.nodes}
        others.pop(head.name, None)
        others_due = 0.0  # their logs are read once a second, until each says its transport and init
        recent: deque[str] = deque(maxlen=20)
        recent_nccl: deque[str] = deque(maxlen=10)
        nccl_deadline = time.monotonic() + self.config.timeouts.nccl_init
        last_ask = time.monotonic()
        guard = MemoryGuard(self.config, self.nodes)

        async def ready():
            for node in self.config.nodes:
                await self._alive_or_fail(node.name)
            now = time.monotonic()
            for reading in await guard.read(now):
                self._memory(reading)
                stop = guard.verdict(reading)
                if stop:
                    raise LaunchError(stop, (await self._logs(head.name))[-10:])
            exited = ""
            fresh = cursor.fresh(await self._logs(head.name, **cursor.read_args("all")))
            for line in fresh:
                if nccl.feed(line, now):
                    recent_nccl.append(line)
                vllm_p.feed(line)
                recent.append(line)
                if line.startswith(SERVE_EXIT):
                    exited = line.removeprefix("spark-tui: ").strip()
            # Ray workers' output reaches the head's log under their actor prefix (ip=...).
            named = self.kb.feed(head.name, fresh)
            if named is not None:
                named.node = (
                    self._node_of(named.line) or self._rank_node(vllm_p.summary, head.name) or named.node
                )
                rank = vllm_p.summary.failure()
                origin = rank[1] if rank else ""
                raise LaunchError(cause_text(named, read_in=head.name, origin=origin), list(recent))
            nonlocal others_due
            if others and now >= others_due:
                others_due = now + 1.0
                failed = []

                async def read(name: str, other: LogCursor) -> None:
                    lines = other.fresh(await self._logs(name, **other.read_args("all")))
                    if _unsaid(watch.parser(name).summary):
                        watch.parser(name).feed_lines(lines)
                    found = self.kb.feed(name, lines)
                    if found is not None:
                        failed.append((found, lines[-20:]))

                await self.nodes.every(lambda n: read(n, others[n]), others)
                if failed:
                    raise LaunchError(cause_text(failed[0][0]), failed[0][1])
            for net in watch.changed():  # a transport the moment a node's lines show it
                self.emit(NcclNet(net.node, net.level, net.text()))
            s, v = nccl.summary, vllm_p.summary
            if v.oom or (v.errors and any("Error" in e or ": error:" in e for e in v.errors)):
                if self._settled(v, now):
                    raise LaunchError(self._vllm_failed(v, head.name), list(recent))
            if exited:
                raise LaunchError(self._vllm_failed(v, head.name, exited), list(recent))
            if s.init_start and s.init_complete < s.init_start:
                self._stage(
                    "cluster",
                    "nccl_init",
                    "progress",
                    f"{s.init_complete}/{s.init_start}",
                    s.init_complete / s.init_start,
                )
                if time.monotonic() > nccl_deadline:
                    raise LaunchError(
                        f"NCCL init started but not complete after {self.config.timeouts.nccl_init:.0f} s "
                        f"({s.init_complete}/{s.init_start}): " + await self._nccl_ranks(),
                        list(recent_nccl),
                    )
                return False
            if v.shards_total:
                self._stage(
                    head.name, "shards", "progress", f"{v.shards_done}/{v.shards_total}", v.shard_fraction
                )
            # HTTP decides. The log only says when to start asking (`Application startup complete`,
            # or an older Uvicorn line); without such a line, ask every few seconds anyway.
            nonlocal last_ask
            if not (v.ready or now - last_ask >= ASK_WITHOUT_HINT):
                return False
            last_ask = now
            answer = await serving.ask(self.config, self.nodes.transports[head.name])
            return answer.ready

        try:
            await self._until("vLLM ready (/health and /v1/models)", self.config.timeouts.ready, ready)
        except LaunchError as exc:
            # A timeout with warnings in the logs (a placement group waiting, a Socket fallback):
            # they are what the operator should read first.
            warned = self.kb.warnings()
            if warned and "not reached within" in exc.cause:
                exc.cause += "; the logs said: " + "; ".join(
                    f"{f.node}: {f.title} (fix: {f.fix})" for f in warned[:3]
                )
            raise
        for name, other in others.items():  # their last lines: each node's init as READY says it
            watch.parser(name).feed_lines(other.fresh(await self._logs(name, **other.read_args("all"))))
        return serving.endpoint(self.config), watch

    def _rank_node(self, v: VllmSummary, log_node: str) -> str | None:
        """The worker whose rank failed, when vLLM's failure line places it on another node
        (a RayTaskError's remote traceback has no `ip=` of its own)."""
        found = v.failure()
        node = node_of(self.config, found[1], log_node, self.snaps) if found else log_node
        return node if node != log_node else None

    def _settled(self, v: VllmSummary, now: float) -> bool:
        """Whether vLLM's failure can be named now: an out-of-memory line or a named exception can;
        an error line that names none yet waits up to ERROR_SETTLE s for the line that does, so the
        cause does not depend on where a poll cut the worker's burst of lines."""
        found = v.failure()
        if v.oom or (found and NAMED_ERROR.search(found[0])):
            return True
        if self._error_seen is None:
            self._error_seen = now
        return now - self._error_seen >= ERROR_SETTLE

    def _vllm_failed(self, v: VllmSummary, log_node: str, exited: str = "") -> str:
        """Why vLLM failed, named for the node whose rank raised it: a Ray worker's lines arrive
        in the head's log, and their prefix (or RayTaskError) gives the worker's address. A line
        the knowledge base knows is told in its words (as when it names the line itself)."""
        line, origin = v.failure() or ("", "")
        node = node_of(self.config, origin, log_node, self.snaps)
        said = f": {line[:200]}" if line else ""
        if node == log_node:
            return f"{log_node}: {exited or 'vLLM failed'}{said}"
        known = self.kb.line_cause(line, node, log_node, origin)
        if known is not None:
            return known + (f"; {log_node}: {exited}" if exited else "")
        where = f"(ip={origin}, read in {log_node}'s log)"
        return f"{node}: vLLM failed on {node}'s rank {where}{said}" + (
            f"; {log_node}: {exited}" if exited else ""
        )

    def _node_of(self, line: str) -> str | None:
        """The node a Ray actor's line came from (its `ip=` prefix), by data address."""
        m = re.search(r"\bip=([\d.]+)", line)
        if m is None:
            return None
        return next((n.name for n in self.config.nodes if n["data_ip"] == m.group(1)), None)

    def _memory(self, r: MemoryReading) -> None:
        """A node's memory during the load, emitted when it moved by 1 GiB or more."""
        shown = self._shown.get((r.node, "memory"))
        if shown is not None and abs(shown[0] - r.available_mib) < 1024:
            return
        self._shown[(r.node, "memory")] = (r.available_mib,)
        self.emit(Memory(r.node, r.total_mib, r.available_mib, time.monotonic() - self.t0))

    async def rollback(self) -> None:
        """Remove everything this launch started, on every node."""
        if self._creating:  # interrupted while an engine was creating: what it made goes too
            await asyncio.wait(list(self._creating), timeout=60)
            for create, node in self._creating.items():
                if create.done() and not create.cancelled() and create.exception() is None:
                    self.started.append((node, create.result().id))
            self._creating.clear()
        self._stage("cluster", "rollback", "started", f"{len(self.started)} container(s)")

        cid_of = dict(self.started)  # one container per node

        async def remove(node: str) -> None:
            cid = cid_of[node]
            try:
                c = await self.nodes.docker(node, lambda client: client.containers.get(cid))
                image = c.attrs["Config"].get("Image", "")
                await self.nodes.docker(node, lambda client: client.api.remove_container(cid, force=True))
                self.emit(Removed(node, c.name, image))
            except docker.errors.NotFound:
                pass

        for node, failed in (await self.nodes.each(remove, cid_of)).items():
            if isinstance(failed, NodeError):
                self.emit(StillHolding(node, cid_of[node][:12], f"could not remove: {engine_said(failed)}"))
        self._stage("cluster", "rollback", "done")
