"""Every screen fed hostile text: Rich markup (`[@click=app.quit]`, `[/x]`, `[link=...]`), ESC
sequences and C1 controls put into every text field the core hands the UI (node views, images,
check results, launch/sync/teardown events, log lines). The cockpit keeps running, shows the text
literally (made inert: escapes removed, controls visible) and never writes an injected control to
the terminal; clicking where the text is runs no action.

Hypothesis drives each screen with a few derandomized examples (each one starts the app)."""

from __future__ import annotations

import asyncio
import dataclasses

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rich.text import Text
from textual.widgets import DataTable, Log, Static

from spark_tui.core.launch import events as ev
from spark_tui.core.node.logs import LogLines, StreamState
from spark_tui.parsers.text import inert
from spark_tui.ui.app import SparkApp
from spark_tui.ui.screens.dialogs import ConfirmTeardown
from spark_tui.ui.screens.logs import LogsScreen
from spark_tui.ui.screens.wizard import WizardScreen
from tests.frozen import FrozenCore, cluster_config

MARKUP = [
    "[@click=app.quit]",
    "[@click=app.screenshot('x.svg','/tmp')]",
    "[/x]",
    "[link=https://evil.example]",
]
FRAGMENTS = MARKUP + [
    "[/link]",
    "[/]",
    "[bold red]",
    "[",
    "]",
    "\\",
    "\x1b]0;pwned\x07",
    "\x1b]52;c;ZXZpbA==\x07",
    "\x1b]8;;https://evil.example\x1b\\",
    "\x1b[2J",
    "\x1b[31m",
    "\x1b",
    "\x9b2J",
    "\x85",
    "\x90",
    "\x9d0;t\x9c",
    "\x07",
    "\x00",
    "\x7f",
    "é₂",
]
# Random text too, without newlines and tabs (a line is a line; tabs are expanded on screen).
chars = st.characters(
    blacklist_categories=("Cs",), blacklist_characters="\n\t\r\x0b\x0c\x1c\x1d\x1e\u2028\u2029"
)
hostile = st.tuples(
    st.sampled_from(MARKUP),
    st.lists(st.one_of(st.sampled_from(FRAGMENTS), st.text(chars, max_size=4)), max_size=5),
).map(lambda t: t[0] + "".join(t[1]))
EXAMPLES = settings(
    max_examples=10, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
# Kept as they are: identifiers the core and the UI key on, not text from a node.
KEEP = {"node", "role", "status", "level", "stage", "id", "found", "effective"}


def poison(obj, h: str):
    """Every str in obj (dataclasses, lists, dict values), with the hostile text appended."""
    if isinstance(obj, str):
        return obj + h
    if isinstance(obj, list):
        return [poison(x, h) for x in obj]
    if isinstance(obj, tuple):  # a pane's NCCL tail line: (level, message)
        return tuple(poison(x, h) for x in obj)
    if isinstance(obj, dict):
        return {k: poison(v, h) for k, v in obj.items()}
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        changes = {
            f.name: poison(getattr(obj, f.name), h)
            for f in dataclasses.fields(obj)
            if f.init and f.name not in KEEP
        }
        return dataclasses.replace(obj, **changes)
    return obj


class HostileCore(FrozenCore):
    """FrozenCore whose every answer carries `h` in every text field."""

    def __init__(self, h: str, *a, **kw):
        super().__init__(*a, **kw)
        self.h = h
        self.log_lines = [f"line {i} {h}" for i in range(3)]

    async def refresh(self, node):
        return poison(await super().refresh(node), self.h)

    async def images(self, run_all=False):
        return poison(await super().images(run_all), self.h)

    async def check(self, emit, **kw):
        return await super().check(lambda r: emit(poison(r, self.h)), **kw)

    async def launch(self, emit):
        await super().launch(lambda e: emit(poison(e, self.h)))
        emit(poison(ev.DriftItem(self.config.head.name, "image", "a", "b"), self.h))
        emit(poison(ev.Failed("cause", ["log 1", "log 2"]), self.h))
        emit(poison(ev.StillHolding(self.config.head.name, "vllm_node", "reason"), self.h))
        emit(poison(ev.Removed(self.config.head.name, "vllm_node", "img"), self.h))
        return False

    async def sync(self, what, emit):
        await super().sync(what, lambda e: emit(poison(e, self.h)))
        emit(poison(ev.Failed("sync cause"), self.h))
        return False

    async def teardown_targets(self):
        return poison(await super().teardown_targets(), self.h)

    def follower(self, node, container, emit, tail=500):
        h = self.h

        def hostile_emit(event):
            emit(event)
            if isinstance(event, LogLines):
                emit(StreamState(node, container, "disconnected", f"connection lost: {h}", 3.0))

        return super().follower(node, container, hostile_emit, tail)


def frame(app) -> str:
    """What the app would write to the terminal for its current screen, whole (run_test's
    headless driver writes nothing, so the compositor is asked directly)."""
    return app.screen._compositor.render_update(full=True).render_segments(app.console)


def assert_inert_on_the_terminal(app) -> None:
    out = frame(app)
    assert not any("\x80" <= c <= "\x9f" for c in out), "a C1 control reached the terminal"
    for injected in ("\x1b]0;pwned", "\x1b]52;", "\x1b]8;;https://evil", "\x1b[2J", "\x07", "\x00"):
        assert injected not in out, repr(injected)


def texts(app) -> list[str]:
    """The plain text of every Static, DataTable cell and Log line of the current screen; a
    DataTable cell must be Text (a str cell is rendered as markup). The screen's terminal output
    is checked on the way."""
    assert_inert_on_the_terminal(app)
    out = []
    for w in app.screen.query(Static):
        out.append(str(w.render()))
    for table in app.screen.query(DataTable):
        for key in table.rows:
            for cell in table.get_row(key):
                assert isinstance(cell, Text), (table.id, cell)
                out.append(cell.plain)
    for log in app.screen.query(Log):
        out += list(log.lines)
    return out


def run(h: str, flow, unreachable=(), drift=()) -> list[str]:
    config, reconfigure = cluster_config(2)
    core = HostileCore(h, config, reconfigure, unreachable=unreachable, drift=drift)
    app = SparkApp(core, live_refresh=True)

    async def go():
        async with app.run_test(size=(140, 44)) as pilot:
            await pilot.pause(0.3)
            shown = await flow(app, pilot)
            for x, y in ((5, 3), (40, 6), (70, 10), (100, 14), (30, 20)):  # where text sits
                await pilot.click(offset=(x, y))
            await pilot.pause(0.1)
            assert app.is_running and app.return_code is None
            assert_inert_on_the_terminal(app)
            return shown

    shown = asyncio.run(go())
    literal = inert(h)
    assert any(literal in t for t in shown), (literal, shown[:20])
    return shown


@EXAMPLES
@given(hostile)
def test_dashboard(h):
    async def flow(app, pilot):
        await pilot.pause(0.2)
        return texts(app)

    run(h, flow, unreachable=("spark-2",), drift=("spark-1",))


@EXAMPLES
@given(hostile)
def test_wizard_steps(h):
    async def flow(app, pilot):
        shown = []
        await pilot.press("w")
        await pilot.pause(0.3)
        assert isinstance(app.screen, WizardScreen)
        await pilot.press("down", "down")  # the detail line says what choosing it would change
        await pilot.pause(0.1)
        shown += texts(app)
        await pilot.press("n")  # check
        await pilot.pause(0.4)
        shown += texts(app)
        await pilot.press("s")  # sync on the highlighted row (a warned model row, or a notice)
        await pilot.pause(0.4)
        await pilot.press("n")  # review
        await pilot.pause(0.2)
        shown += texts(app)
        await pilot.press("ctrl+l")  # launch: stages, READY, drift, failure, rollback
        await pilot.pause(0.6)
        shown += texts(app)
        return shown

    run(h, flow)


@EXAMPLES
@given(hostile)
def test_logs(h):
    async def flow(app, pilot):
        app.open_logs("all nodes")
        await pilot.pause(0.4)
        assert isinstance(app.screen, LogsScreen)
        shown = texts(app)
        await pilot.press("c", "c", "ctrl+w", "o")
        await pilot.pause(0.3)
        return shown + texts(app)

    run(h, flow)


@EXAMPLES
@given(hostile)
def test_dialogs(h):
    async def flow(app, pilot):
        await pilot.press("ctrl+d")
        await pilot.pause(0.3)
        assert isinstance(app.screen, ConfirmTeardown)
        shown = texts(app)
        await pilot.press("n")
        await pilot.press("question_mark")
        await pilot.pause(0.2)
        await pilot.press("escape")
        return shown

    run(h, flow, unreachable=("spark-2",))
