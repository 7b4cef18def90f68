"""The one object the cockpit talks to: every operation it offers, as core calls.

The Textual app holds a CockpitCore and nothing else from the core; widgets never see
SSH, Docker or parsers. Operations report through `emit` with the typed events of
core/launch/events.py, core/node/logs.py and core/report/check.py, the same ones the headless CLI prints.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Protocol

from spark_tui.core.image_table import ImageListing, listing
from spark_tui.core.launch.drift import drift
from spark_tui.core.launch.events import KernelSaid, LaunchEvent, TeardownEvent, shown_by
from spark_tui.core.launch.kernel_watch import KernelWatch
from spark_tui.core.launch.launch import Launch
from spark_tui.core.launch.live import with_detected
from spark_tui.core.launch.supervise import Supervisor
from spark_tui.core.launch.teardown import teardown
from spark_tui.core.monitor import Monitor, NodeView
from spark_tui.core.node.logs import LogFollower, LogLines, StreamState
from spark_tui.core.node.nodes import Nodes
from spark_tui.core.node.probes import detected_values
from spark_tui.core.node.redact import Redactor
from spark_tui.core.report.check import CheckResult, run_checks
from spark_tui.core.serving.deployment import find as find_deployment
from spark_tui.core.serving.serving_watch import ServingLook, ServingWatch
from spark_tui.core.sync.sync import sync_image, sync_model
from spark_tui.core.upgrade import UpgradeOutcome
from spark_tui.settings.model import NOTHING_DETECTED
from spark_tui.settings.registry import BY_KEY, CONNECTION_KEYS
from spark_tui.settings.resolve import Config, check_cockpit_settings, relayer


class Follower(Protocol):
    """A log stream of one container (core/node/logs.py LogFollower)."""

    def start(self) -> object: ...

    async def stop(self) -> None: ...


class CockpitAPI(Protocol):
    """Everything the cockpit asks of the core. CockpitCore is the real one; the snapshot tests'
    frozen core answers the same calls (tests check it against this protocol)."""

    @property
    def config(self) -> Config: ...

    redact: Redactor

    def edit(self, key: str, value: object) -> Config: ...

    async def refresh(self, node: str) -> NodeView: ...

    async def images(self, run_all: bool = False) -> ImageListing: ...

    async def check(
        self, emit: Callable[[CheckResult], object], fabric: bool = False
    ) -> list[CheckResult]: ...

    async def launch(self, emit: Callable[[LaunchEvent], object]) -> bool: ...

    def supervision(self) -> str: ...

    async def supervise(self, emit: Callable[[LaunchEvent], object]) -> str: ...

    async def sync(self, what: str, emit: Callable[[object], object]) -> bool: ...

    async def teardown_targets(self) -> dict[str, list[str] | str]: ...

    def running_image(self) -> str: ...

    async def upgrade(self, image: str, emit: Callable[[object], object]) -> UpgradeOutcome: ...

    async def teardown(self, emit: Callable[[TeardownEvent], object]) -> bool: ...

    async def serving(self) -> ServingLook | None: ...

    def follower(
        self,
        node: str,
        container: str,
        emit: Callable[[LogLines | StreamState], object],
        tail: int | str = 500,
    ) -> Follower: ...

    async def close(self) -> None: ...


KERNEL_KEPT = 50  # kernel findings the serving view keeps (each node's pane shows its own)


class CockpitCore:
    """Edits and detected values re-layer the configuration read once (resolve.relayer: no file
    is read again); the live configuration is the one the nodes hold, which every part reads."""

    def __init__(self, config: Config):
        self.nodes = Nodes(config)
        self.monitor = Monitor(self.nodes)
        self._retired: list = []  # transports replaced by an edit, closed on the next async call
        self._watch: ServingWatch | None = None
        self.redact = Redactor(lambda: self.nodes.config)  # every line from a node passes it before display
        # The nodes' kernel logs while the deployment serves: a launch from here hands its follow
        # over at READY; a deployment found serving gets one. What they name, shown by the core.
        self._kernels: KernelWatch | None = None
        # Launches, upgrades and supervision under way: they follow the kernel logs themselves.
        self._followed_elsewhere = 0
        self.kernel_said: list[KernelSaid] = []  # shown, oldest first
        self._kernel_emit = shown_by(self.redact.show, self._kernel_event)

    @property
    def config(self) -> Config:
        return self.nodes.config

    def _use(self, config: Config) -> None:
        """The new live configuration; a node whose connection settings (the registry's
        connection role) changed gets a new connection, so the value shown is the one used."""
        old = self.nodes.config
        self.nodes.config = config
        for node in config.nodes:
            before = old.node(node.name)
            if any(before[k] != node[k] for k in CONNECTION_KEYS):
                self._retired.append(self.nodes.replace_transport(node))

    async def _close_retired(self) -> None:
        retired, self._retired = self._retired, []
        for transport in retired:
            await transport.close()

    def edit(self, key: str, value: object) -> Config:
        """An interactive edit (the wizard): a bad value raises ConfigError and changes nothing."""
        edits = dict(self.config.interactive)
        if value is None:
            edits.pop(key, None)
        else:
            edits[key] = value
        config = relayer(self.config, interactive=edits)
        if key in BY_KEY and BY_KEY[key].role == "cockpit":
            check_cockpit_settings(config)  # a key map or theme given here is checked like one read
        self._use(config)
        return config

    async def refresh(self, node: str) -> NodeView:
        """One node's view. What the node shows for values left to detection (netdev, hca, its
        home) enters the configuration at once, so drift marks compare with what `up` would run."""
        await self._close_retired()
        view = await self.monitor.refresh(node)
        if view.snapshot.reachable:
            known = self.config.detected
            found = detected_values(self.config, [view.snapshot]).get(node, NOTHING_DETECTED)
            # model.complete is asked by a launch (core/launch/live.py), not by each refresh: kept.
            was = known.get(node, NOTHING_DETECTED)
            found = dataclasses.replace(found, model_complete=was.model_complete)
            if found != was:
                detected = {k: v for k, v in known.items() if k != node}
                if found:
                    detected[node] = found
                self._use(relayer(self.config, detected=detected))
                view.drifted = self.monitor.drift_marks(node, view.snapshot)
        return view

    async def images(self, run_all: bool = False) -> ImageListing:
        """Every image with its facts; run_all asks every image, as `images --all` does."""
        return await listing(self.config, self.nodes, await self.monitor.images(), run_all=run_all)

    async def check(self, emit: Callable[[CheckResult], object], fabric: bool = False) -> list[CheckResult]:
        return await run_checks(self.config, self.nodes, emit, fabric=fabric)

    async def launch(self, emit: Callable[[LaunchEvent], object]) -> bool:
        """Detected values first (labelled as such), then the launch, then drift."""
        await self._close_retired()
        await self._stop_kernels()
        self._followed_elsewhere += 1
        try:
            _, snaps = await with_detected(self.config, self.nodes)
            has_gpu = {s.node: bool(s.gpu and s.gpu.present) for s in snaps}
            launch = Launch(self.config, self.nodes, emit, has_gpu, snapshots=snaps, follow_after_ready=True)
            ok = await launch.run()
        finally:
            self._followed_elsewhere -= 1
        if ok:
            # The launch's kernel follow, from READY on: its findings go to the serving view.
            launch.kernels.emit = self._kernel_emit
            self._kernels = launch.kernels
            for item in await drift(self.config, self.nodes, live=True):
                emit(item)
        return ok

    def supervision(self) -> str:
        """What supervising the deployment launched from here means, or "" when `restart` is not
        on-failure (nothing is supervised)."""
        if self.config["restart"] != "on-failure":
            return ""
        return Supervisor(self.config, self.nodes, lambda _e: None).headline()

    async def supervise(self, emit: Callable[[LaunchEvent], object]) -> str:
        """`restart: on-failure` for a launch from the cockpit: the Supervisor `up` runs (memory
        check before each restart, a restart loop stopped and named), its events the CLI's; until
        the deployment ends: why ("removed", "exited", "loop", "refused"; "" when not supervised).
        The cockpit cancels it before it tears down, launches or upgrades itself."""
        if self.config["restart"] != "on-failure":
            return ""
        # The supervisor follows the kernel logs while it watches (its relaunches too), for the
        # serving view: it takes the follow the launch handed over.
        kernels, self._kernels = self._kernels, None
        self._followed_elsewhere += 1
        try:
            supervisor = Supervisor(
                self.config, self.nodes, emit, kernels=kernels, kernel_emit=self._kernel_event
            )
            return await supervisor.run()
        finally:
            self._followed_elsewhere -= 1

    async def sync(self, what: str, emit: Callable[[object], object]) -> bool:
        """`spark-tui sync image|model` for the wizard: node to node, verified."""
        run = sync_image if what == "image" else sync_model
        return await run(self.config, self.nodes, emit)

    async def teardown_targets(self) -> dict[str, list[str] | str]:
        return await self.monitor.teardown_targets()

    def running_image(self) -> str:
        """The image this cluster's container runs on the head, as the last refresh saw it ("" when
        none): the wizard offers an upgrade, not a teardown, when another image is chosen over it."""
        snap = self.monitor.last_snapshot(self.config.head.name)
        name, cluster = self.config["container_name"], self.config["name"]
        for c in snap.containers if snap is not None else []:
            if c.name == name and c.cluster == cluster and c.state == "running":
                return c.image_ref
        return ""

    async def upgrade(self, image: str, emit: Callable[[object], object]) -> UpgradeOutcome:
        """`spark-tui upgrade IMAGE` with its default load, results in the default database.
        A database that cannot be opened refuses the upgrade before anything is touched."""
        import os
        from pathlib import Path

        from spark_tui.core import bench_run
        from spark_tui.core.bench.bench_store import Store, StoreError
        from spark_tui.core.upgrade import UpgradeRun, candidate_config, default_params
        from spark_tui.errors import ConfigError

        await self._close_retired()
        try:
            candidate_config(self.config, image)
            store = Store(Path(bench_run.store_path(os.environ)))
        except (ConfigError, StoreError) as exc:
            good = self.config["image"]
            outcome = UpgradeOutcome("refused", str(exc), image, good, serving=good)
            emit(outcome)
            return outcome
        await self._stop_kernels()
        self._followed_elsewhere += 1
        try:
            run = UpgradeRun(self.config, self.nodes, emit, image, store, default_params(self.config))
            return await run.run()
        finally:
            self._followed_elsewhere -= 1
            store.close()

    async def teardown(self, emit: Callable[[TeardownEvent], object]) -> bool:
        return await teardown(self.config, self.nodes, emit)

    async def serving(self) -> ServingLook | None:
        """Once this cluster's container runs on the head (as the last refresh saw it): the head's
        /metrics and every node's load, sampled together. None before."""
        await self._close_retired()
        head = self.config.head.name
        snap = self.monitor.last_snapshot(head)
        name, cluster = self.config["container_name"], self.config["name"]
        if snap is None or not any(
            c.name == name and c.cluster == cluster and c.state == "running" for c in snap.containers
        ):
            await self._stop_kernels()  # nothing serves: nothing to follow
            return None
        if self._kernels is None and not self._followed_elsewhere:
            self._kernels = KernelWatch(self.nodes, self._kernel_emit, serving=True)
            await self._kernels.start()
        if self._watch is None or self._watch.config is not self.config:
            if self._watch is not None:
                await self._watch.close()  # made for an earlier configuration (an edit, a new transport)
            self._watch = ServingWatch(self.config, self.nodes)
        look = await self._watch.look()
        # Found by the labels, as `status` finds it: a cockpit started after the launch shows it too.
        snaps = [self.monitor.last_snapshot(n.name) for n in self.config.nodes]
        look.deployment = find_deployment(self.config, [s for s in snaps if s is not None])
        look.kernel = list(self.kernel_said)
        return look

    def _kernel_event(self, event: KernelSaid) -> None:
        """A finding in a node's kernel log while serving (or its follow lost): kept for the
        serving view, each once, the last KERNEL_KEPT."""
        self.kernel_said = (self.kernel_said + [event])[-KERNEL_KEPT:]

    async def _stop_kernels(self) -> None:
        kernels, self._kernels = self._kernels, None
        if kernels is not None:
            await kernels.stop()

    def follower(
        self,
        node: str,
        container: str,
        emit: Callable[[LogLines | StreamState], object],
        tail: int | str = 500,
    ) -> LogFollower:
        return LogFollower(self.nodes, node, container, emit, tail)

    async def close(self) -> None:
        await self._stop_kernels()
        await self._close_retired()
        if self._watch is not None:
            await self._watch.close()
        await self.nodes.close()
