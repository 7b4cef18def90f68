"""The one object the cockpit talks to: every operation it offers, as core calls.

The Textual app holds a CockpitCore and nothing else from the core; widgets never see
SSH, Docker or parsers. Operations report through `emit` with the typed events of
core/events.py, core/logs.py and core/check.py, the same ones the headless CLI prints.
"""

from __future__ import annotations

from typing import Callable

from spark_tui.core.check import CheckResult, run_checks
from spark_tui.core.launch import Launch, drift, teardown
from spark_tui.core.logs import LogFollower
from spark_tui.core.monitor import ImageRow, Monitor, NodeView
from spark_tui.core.nodes import Nodes
from spark_tui.core.probes import detected_values
from spark_tui.settings.resolve import Config

# Re-resolve the configuration with interactive edits and detected values: the CLI's
# load_config bound to its parsed flags, so edits sit above flags as the 7th layer.
Reconfigure = Callable[[dict, dict], Config]


class CockpitCore:
    def __init__(self, config: Config, reconfigure: Reconfigure):
        self.config = config
        self._reconfigure = reconfigure
        self.interactive: dict[str, object] = {}
        self.detected: dict = {}
        self.nodes = Nodes(config)
        self.monitor = Monitor(config, self.nodes)

    def _use(self, config: Config) -> None:
        self.config = config
        self.nodes.config = config
        self.monitor.config = config

    def edit(self, key: str, value: object) -> Config:
        """An interactive edit (the wizard): a bad value raises ConfigError and changes nothing."""
        edits = dict(self.interactive)
        if value is None:
            edits.pop(key, None)
        else:
            edits[key] = value
        config = self._reconfigure(edits, self.detected)
        self.interactive = edits
        self._use(config)
        return config

    async def refresh(self, node: str) -> NodeView:
        return await self.monitor.refresh(node)

    async def images(self) -> list[ImageRow]:
        return await self.monitor.images()

    async def check(self, emit: Callable[[CheckResult], None]) -> list[CheckResult]:
        return await run_checks(self.config, self.nodes, emit)

    async def launch(self, emit) -> bool:
        """Detected netdev/hca first (labelled as such), then the launch, then drift."""
        snaps = await self.nodes.snapshot_all()
        has_gpu = {s.node: bool(s.gpu and s.gpu.present) for s in snaps}
        detected = detected_values(self.config, snaps)
        if detected:
            self.detected = detected
            self._use(self._reconfigure(self.interactive, detected))
        ok = await Launch(self.config, self.nodes, emit, has_gpu).run()
        if ok:
            for item in await drift(self.config, self.nodes):
                emit(item)
        return ok

    async def teardown_targets(self) -> dict[str, list[str] | str]:
        return await self.monitor.teardown_targets()

    async def teardown(self, emit) -> bool:
        return await teardown(self.config, self.nodes, emit)

    def follower(self, node: str, container: str, emit, tail: int | str = 500) -> LogFollower:
        return LogFollower(self.nodes, node, container, emit, tail)

    async def close(self) -> None:
        await self.nodes.close()
