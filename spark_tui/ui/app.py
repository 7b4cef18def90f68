"""The cockpit app: owns the CockpitCore, refreshes every node on its own, routes keys to screens.

Screens: dashboard (panes per node), wizard (image -> check -> review -> launch), logs,
the teardown confirmation and help. The app holds no SSH, Docker or parsing logic; it
calls the core and shows the typed events it emits.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from functools import partial

from rich.text import Text
from textual import on, work
from textual.app import App
from textual.command import DiscoveryHit, Hit, Hits, Provider
from textual.worker import Worker, WorkerState

from spark_tui.core.cockpit import CockpitAPI
from spark_tui.core.launch import events as ev
from spark_tui.core.monitor import NodeView, failed_view
from spark_tui.core.node.probes import not_understood
from spark_tui.core.serving.serving_watch import ServingLook
from spark_tui.parsers.text import inert
from spark_tui.settings.keys import validate_keymap
from spark_tui.ui import themes
from spark_tui.ui.keys_ui import bindings_for
from spark_tui.ui.messages import (
    JobDone,
    JobStarted,
    NodeRefreshed,
    ServingRefreshed,
    SupervisionEnded,
    SupervisionEvent,
    TeardownProgress,
)
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
        self._node_loops: dict[Worker, str] = {}  # each node's refresh loop, by its worker
        self._serving_failure: str | None = None  # the serving loop's failure last notified
        self._kernel_told: list = []  # kernel findings while serving already notified
        self.supervision: list[Text] = []  # what supervising said: its headline, then its last events
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

    def refresh_node(self, name: str, wait_first: bool = False) -> None:
        """One loop per node: a slow or dead node never delays another node's pane. A refresh
        that raises ends its loop; worker_failed shows the error in the pane and starts it again."""
        worker = self.run_worker(
            self._node_loop(name, wait_first), name=f"refresh {name}", group="refresh", exit_on_error=False
        )
        self._node_loops[worker] = name

    async def _node_loop(self, name: str, wait_first: bool) -> None:
        if wait_first:
            await self._next_round()
        while True:
            self.post_message(NodeRefreshed(await self.core.refresh(name)))
            await self._next_round()

    async def _next_round(self) -> None:
        """refresh_interval, or less when the refresh key wakes every loop."""
        try:
            await asyncio.wait_for(self._wake.wait(), self.core.config["refresh_interval"])
        except TimeoutError:
            pass

    @work(group="refresh", name="serving figures", exit_on_error=False)
    async def watch_serving(self, wait_first: bool = False) -> None:
        """Every metrics_interval: the serving figures once the head's container runs (the core
        answers None before, without asking anything). A round that raises ends this loop;
        worker_failed shows the error and starts it again."""
        if wait_first:
            await asyncio.sleep(self.core.config["metrics_interval"])
        while True:
            look = await self.core.serving()
            self._serving_failure = None
            if look is not None or self.serving_look is not None:
                self.post_message(ServingRefreshed(look))
            await asyncio.sleep(self.core.config["metrics_interval"])

    @on(Worker.StateChanged)
    def worker_failed(self, event: Worker.StateChanged) -> None:
        """Every worker's failure, in one place (the steps' checks, syncs, image listing and
        launch, the refresh loops, teardown): named, shown as inert and masked text, never the
        cockpit's end. A refresh loop shows it where it draws and starts again a round later."""
        worker = event.worker
        if event.state != WorkerState.ERROR or worker.error is None:
            return
        node = self._node_loops.pop(worker, None)
        if node is not None:
            self.post_message(NodeRefreshed(failed_view(self.core.config, node, worker.error)))
            self.refresh_node(node, wait_first=True)
            return
        name = worker.name or "a task"
        text = self.redact(f"{name} failed: {not_understood(worker.error)}")
        if name == "serving figures":
            self.watch_serving(wait_first=True)
            if text == self._serving_failure:
                return  # failing the same way every round: said once, until a round succeeds
            self._serving_failure = text
        self.notify(text, title="error", severity="error", timeout=20, markup=False)

    def on_serving_refreshed(self, message: ServingRefreshed) -> None:
        look = message.look
        # What a node's kernel log named while serving: told once as it arrives (the pane keeps
        # the last few), in the CLI's words, shown by the core.
        for k in look.kernel if look is not None else []:
            if any(k is seen for seen in self._kernel_told):
                continue
            self._kernel_told = (self._kernel_told + [k])[-100:]
            error = isinstance(k, ev.Diagnosis) and k.severity == "error"
            self.notify(
                k.say(),
                title=f"{k.node}: kernel log",
                severity="error" if error else "warning",
                timeout=30,
                markup=False,
            )
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
        self.views[message.view.node] = message.view
        try:
            self.dashboard.show(message.view)
        except Exception as exc:  # a view the pane cannot draw: its error instead, never the app's end
            self.dashboard.show(failed_view(self.core.config, message.view.node, exc))

    # --- supervision (restart: on-failure) of what the cockpit launched ---------------------

    def start_supervision(self) -> None:
        """After a launch (or an upgrade) from here: the core's Supervisor, as `up` runs it."""
        headline = self.core.supervision()
        if not headline:
            return
        self.workers.cancel_group(self, "supervise")
        self.supervision = [
            Text(
                f"{headline}: ends with a teardown, a launch or an upgrade from here, or when the cockpit "
                "quits; the deployment keeps serving",
                style="bold",
            )
        ]
        self.dashboard.show_supervision(Text("\n").join(self.supervision))
        self.supervise()

    @work(exclusive=True, group="supervise", name="supervision", exit_on_error=False)
    async def supervise(self) -> None:
        ended = await self.core.supervise(lambda e: self.post_message(SupervisionEvent(e)))
        self.post_message(SupervisionEnded(ended))

    def stop_supervision(self, why: str) -> None:
        if not self.supervision:
            return
        self.workers.cancel_group(self, "supervise")
        self._supervision_line(Text(f"supervision ended: {why}", style="dim"))

    def _supervision_line(self, line: Text) -> None:
        """The headline stays; the last five events under it."""
        self.supervision = self.supervision[:1] + (self.supervision[1:] + [line])[-5:]
        self.dashboard.show_supervision(Text("\n").join(self.supervision))

    def on_supervision_event(self, message: SupervisionEvent) -> None:
        e = message.event  # in its own words (the CLI's), shown by the core
        if isinstance(e, ev.Restart):
            self._supervision_line(Text(inert(e.say()), style="bold yellow"))
            self.notify(e.say(), title="restart", severity="warning", timeout=15, markup=False)
        elif isinstance(e, ev.Failed):
            self._supervision_line(Text(inert(e.headline()), style="bold red"))
            self.notify(e.headline(), title="supervision", severity="error", timeout=30, markup=False)
        elif isinstance(e, ev.Ready):
            self._supervision_line(Text(f"serving again: {inert(e.headline())}", style="green"))
        elif isinstance(e, ev.Stage) and e.stage in ("memory", "restart"):
            self._supervision_line(Text(inert(e.say()), style="red" if e.status == "failed" else ""))

    def on_supervision_ended(self, message: SupervisionEnded) -> None:
        if message.why in ("loop", "refused"):
            return  # its failure is the last line already, and stays
        self._supervision_line(
            Text(f"supervision ended: {message.why or 'nothing to supervise'}", style="dim")
        )

    def on_job_started(self, message: JobStarted) -> None:
        self.stop_supervision(f"a{'n' if message.job[0] in 'aeiou' else ''} {message.job} began here")

    async def on_unmount(self) -> None:
        self._node_loops.clear()
        self.workers.cancel_group(self, "refresh")
        self.workers.cancel_group(self, "supervise")
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
        self.push_screen(LogsScreen(self.core, self.log_sources(), source))

    def log_sources(self) -> list[tuple[str, str]]:
        """Every node's spark-tui container (by the cluster label), as last refreshed."""
        name = self.core.config["name"]
        return [(v.node, c.name) for v in self.views.values() for c in v.own_containers(name)] or [
            (n.name, self.core.config["container_name"]) for n in self.core.config.nodes
        ]

    def redact(self, line: str) -> str:
        """Secrets never reach the screen or a saved log (the core's rule: core/node/redact.py):
        made inert first, so a secret split by an escape sequence is masked too."""
        return self.core.redact.show(line)

    @work(exclusive=True, group="teardown", name="teardown", exit_on_error=False)
    async def action_teardown(self) -> None:
        if self.readonly:
            self.notify("readonly: teardown is disabled", severity="error")
            return
        targets = await self.core.teardown_targets()
        if not await self.push_screen_wait(ConfirmTeardown(self.core.config["name"], targets)):
            self.notify("teardown cancelled")
            return
        self.stop_supervision("teardown")
        self.notify("tearing down...")
        ok = await self.core.teardown(lambda e: self.post_message(TeardownProgress(e)))
        self.post_message(JobDone("teardown", ok))
        self.action_refresh()

    def on_teardown_progress(self, message: TeardownProgress) -> None:
        e = message.event  # in its own words (the CLI's), shown by the core
        if isinstance(e, ev.Removed):
            self.notify(e.say(), markup=False)
        elif isinstance(e, ev.StillHolding):
            self.notify(e.say(), severity="error", timeout=15, markup=False)

    def on_job_done(self, message: JobDone) -> None:
        if message.job in ("launch", "upgrade") and message.ok:
            self.start_supervision()  # bubbled up from the wizard's launch step or the upgrade screen
        if message.job == "teardown":
            self.notify(
                "teardown complete"
                if message.ok
                else "teardown incomplete: a node still holds its container",
                severity="information" if message.ok else "error",
            )
