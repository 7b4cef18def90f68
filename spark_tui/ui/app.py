"""The cockpit app: owns the CockpitCore, refreshes every node on its own, routes keys to screens.

Screens: dashboard (panes per node), wizard (image -> check -> review -> launch), logs,
the teardown confirmation and help. The app holds no SSH, Docker or parsing logic; it
calls the core and shows the typed events it emits.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from functools import partial

from textual import work
from textual.app import App
from textual.command import DiscoveryHit, Hit, Hits, Provider

from spark_tui.core import events as ev
from spark_tui.core.cockpit import CockpitAPI
from spark_tui.core.monitor import NodeView, failed_view
from spark_tui.core.serving_watch import ServingLook
from spark_tui.settings.keys import validate_keymap
from spark_tui.ui import themes
from spark_tui.ui.keys_ui import bindings_for
from spark_tui.ui.messages import JobDone, NodeRefreshed, ServingRefreshed, TeardownProgress
from spark_tui.ui.screens.dashboard import DashboardScreen
from spark_tui.ui.screens.dialogs import ConfirmTeardown, HelpScreen
from spark_tui.ui.screens.logs import ALL, LogsScreen
from spark_tui.ui.screens.serving import ServingScreen
from spark_tui.ui.screens.upgrade import UpgradeScreen
from spark_tui.ui.screens.wizard import WizardScreen


class SparkCommands(Provider):
    """ctrl+p: launch, teardown, check, logs for a node, theme."""

    def _commands(self) -> list[tuple[str, Callable[[], object], str]]:
        app: SparkApp = self.app  # type: ignore[assignment]
        out: list[tuple[str, Callable[[], object], str]] = [
            ("Launch wizard", app.action_wizard, "image, check, review, launch"),
            ("Tear down", app.action_teardown, "stop and remove the cluster's containers (asks first)"),
            ("Run check", partial(app.open_wizard, "check"), "every check on every node"),
            ("Logs: all nodes", partial(app.open_logs, ALL), "follow every spark-tui container, merged"),
            ("Serving figures", app.action_serving, "tokens/s, latency, KV, queue, node signals"),
            ("Upgrade image", app.action_upgrade, "try a candidate image: kept, or rolled back"),
        ]
        out += [
            (f"Logs: node {n.name}", partial(app.open_logs, n.name), f"follow {n.name}'s container")
            for n in app.core.config.nodes
        ]
        out += [
            (f"Theme: {name}", partial(setattr, app, "theme", name), "switch theme")
            for name in sorted(app.spark_themes)
        ]
        return out

    async def discover(self) -> Hits:
        for name, action, help_ in self._commands():
            yield DiscoveryHit(name, action, help=help_)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for name, action, help_ in self._commands():
            score = matcher.match(name)
            if score > 0:
                yield Hit(score, matcher.highlight(name), action, help=help_)


class SparkApp(App):
    CSS_PATH = "app.tcss"
    TITLE = "spark-tui"
    BINDINGS = bindings_for("app")
    COMMANDS = App.COMMANDS | {SparkCommands}

    def __init__(self, core: CockpitAPI, live_refresh: bool = True):
        super().__init__()
        self.core = core
        self.live_refresh = live_refresh
        self.views: dict[str, NodeView] = {}
        self.serving_look: ServingLook | None = None
        self._wake = asyncio.Event()
        config = core.config
        self.readonly = bool(config["readonly"])
        self.spark_themes = themes.load_all()
        self.keymap = validate_keymap(
            dict(config["keys"]), lambda k: config.values["keys"].item_sources.get(k, "keys")
        )
        if config["theme"] not in self.spark_themes:
            from spark_tui.errors import ConfigError

            raise ConfigError(
                str(config.values["theme"].source),
                f"no theme {config['theme']!r} (themes: {', '.join(sorted(self.spark_themes))})",
            )

    # --- start-up ---------------------------------------------------------------------

    def on_mount(self) -> None:
        for theme in self.spark_themes.values():
            self.register_theme(theme)
        self.theme = self.core.config["theme"]
        self.set_keymap(self.keymap)
        config = self.core.config
        self.sub_title = f"{config['name']}: {len(config.nodes)} node(s)" + (
            "  [readonly]" if self.readonly else ""
        )
        rows = [(n.name, n["host"], "head" if n.is_head else "worker") for n in config.nodes]
        self.dashboard = DashboardScreen(rows, self._warning_banner())
        self.push_screen(self.dashboard)
        if self.live_refresh:
            for n in config.nodes:
                self.refresh_node(n.name)
            self.watch_serving()

    def _warning_banner(self) -> str:
        return "\n".join(f"! {w}" for w in self.core.config.warnings)

    @work(group="refresh")
    async def refresh_node(self, name: str) -> None:
        """One loop per node: a slow or dead node never delays another node's pane."""
        while True:
            try:
                view = await self.core.refresh(name)
            except Exception as exc:  # one refresh's failure is shown in the pane; the loop goes on
                view = failed_view(self.core.config, name, exc)
            self.post_message(NodeRefreshed(view))
            try:
                await asyncio.wait_for(self._wake.wait(), self.core.config["refresh_interval"])
            except TimeoutError:
                pass

    @work(group="refresh")
    async def watch_serving(self) -> None:
        """Every metrics_interval: the serving figures once the head's container runs (the core
        answers None before, without asking anything)."""
        while True:
            look = await self.core.serving()
            if look is not None or self.serving_look is not None:
                self.post_message(ServingRefreshed(look))
            await asyncio.sleep(self.core.config["metrics_interval"])

    def on_serving_refreshed(self, message: ServingRefreshed) -> None:
        self.serving_look = message.look
        self.dashboard.show_serving(message.look)
        if isinstance(self.screen, ServingScreen):
            self.screen.show(message.look)

    def action_upgrade(self) -> None:
        if not isinstance(self.screen, UpgradeScreen):
            self.push_screen(UpgradeScreen(self.core, readonly=self.readonly))

    def action_serving(self) -> None:
        if not isinstance(self.screen, ServingScreen):
            self.push_screen(ServingScreen(self.serving_look))

    def on_node_refreshed(self, message: NodeRefreshed) -> None:
        message.view.nccl_tail = [self.redact(line) for line in message.view.nccl_tail]
        self.views[message.view.node] = message.view
        try:
            self.dashboard.show(message.view)
        except Exception as exc:  # a view the pane cannot draw: its error instead, never the app's end
            self.dashboard.show(failed_view(self.core.config, message.view.node, exc))

    async def on_unmount(self) -> None:
        self.workers.cancel_group(self, "refresh")
        await self.core.close()

    # --- actions ----------------------------------------------------------------------

    def action_help(self) -> None:
        self.push_screen(HelpScreen(self.keymap))

    def action_refresh(self) -> None:
        if hasattr(self.screen, "refresh_view"):
            self.screen.refresh_view()
            return
        # Wake every node loop now; they go back to waiting refresh_interval afterwards.
        self._wake.set()
        self._wake = asyncio.Event()

    def action_wizard(self) -> None:
        self.open_wizard("image")

    def open_wizard(self, step: str) -> None:
        if isinstance(self.screen, WizardScreen):
            return
        self.push_screen(WizardScreen(self.core, readonly=self.readonly, start=step))

    def action_logs(self) -> None:
        self.open_logs(ALL)

    def open_logs(self, source: str) -> None:
        if isinstance(self.screen, LogsScreen):
            self.pop_screen()
        self.push_screen(LogsScreen(self.core, self.log_sources(), source, redact=self.redact))

    def log_sources(self) -> list[tuple[str, str]]:
        """Every node's spark-tui container (by the cluster label), as last refreshed."""
        name = self.core.config["name"]
        return [(v.node, c.name) for v in self.views.values() for c in v.own_containers(name)] or [
            (n.name, self.core.config["container_name"]) for n in self.core.config.nodes
        ]

    def redact(self, line: str) -> str:
        """Secrets never reach the screen or a saved log (the core's rule: core/redact.py):
        made inert first, so a secret split by an escape sequence is masked too."""
        return self.core.redact.show(line)

    @work(exclusive=True, group="teardown")
    async def action_teardown(self) -> None:
        if self.readonly:
            self.notify("readonly: teardown is disabled", severity="error")
            return
        targets = await self.core.teardown_targets()
        if not await self.push_screen_wait(ConfirmTeardown(self.core.config["name"], targets)):
            self.notify("teardown cancelled")
            return
        self.notify("tearing down...")
        ok = await self.core.teardown(lambda e: self.post_message(TeardownProgress(e)))
        self.post_message(JobDone("teardown", ok))
        self.action_refresh()

    def on_teardown_progress(self, message: TeardownProgress) -> None:
        e = message.event
        if isinstance(e, ev.Removed):
            self.notify(f"removed {e.container} on {e.node}", markup=False)
        elif isinstance(e, ev.StillHolding):
            self.notify(
                f"{e.node} STILL HOLDS {e.container}: {e.reason}", severity="error", timeout=15, markup=False
            )

    def on_job_done(self, message: JobDone) -> None:
        if message.job == "teardown":
            self.notify(
                "teardown complete"
                if message.ok
                else "teardown incomplete: a node still holds its container",
                severity="information" if message.ok else "error",
            )
