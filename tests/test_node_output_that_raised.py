"""Node output that used to raise: `str.isdigit()` accepts `²`, which int() refuses; int() refuses
digit runs over 4300 long; a symlink cycle in a model manifest; odd `ibv_devinfo` fields; and any
refresh exception ended the whole cockpit. Each is read now as "no value", never a traceback."""

import asyncio

from spark_tui import diagnose
from spark_tui.core.models.memory_fit import parse_guard
from spark_tui.core.models.model_files import Manifest
from spark_tui.core.node import probes
from spark_tui.core.node.logs import split_timestamp
from spark_tui.parsers import gpu, nccl, netif, vllm
from tests.frozen import FrozenCore, cluster_config

LONG = "1" * 5000  # int() refuses more than 4300 digits

MARK = probes.new_marker()


def test_unicode_digits_and_long_digit_runs_are_no_numbers():
    sections = (
        f"{MARK} ip\n"
        '[{"ifname": "enp1s0f1np1", "operstate": "UP", "mtu": 9000, "addr_info": []}]\n'
        f"{MARK} speed\nenp1s0f1np1/speed ²\n"
        f"{MARK} meminfo\nMemTotal:        ² kB\nMemAvailable:    {LONG} kB\n"
    )
    host, ifaces, _, _ = probes.parse_probe(sections, None, None, MARK)
    assert ifaces["enp1s0f1np1"].speed_mbps is None and host.memory is None
    assert gpu.parse_meminfo("MemTotal: ² kB\nMemAvailable: 1 kB") is None
    assert parse_guard("spark-1", "MemTotal: ²\nMemAvailable: 12\npswpout ³") is None
    assert split_timestamp("2026-11-28T09:12:44.²Z line")[0] is not None  # a bad fraction: 0 ns
    assert split_timestamp("²026-11-28T09:12:44.1Z line")[0] is None
    assert netif.parse_ip_addr(f"2: enp1: <UP> mtu {LONG} state UP\n")["enp1"].mtu is None
    p = nccl.NcclParser()
    p.feed(
        f"h:1:1 [0] NCCL INFO ncclCommInitRank comm 0x1 rank {LONG} nranks {LONG} cudaDev 0 - Init START", 0
    )
    vllm.parse_text(f"Loading safetensors checkpoint shards: 50% Completed | {LONG}/{LONG} [00:01<00:01]")


def test_nvidia_smi_numbers_beyond_any_count():
    out = f"{MARK} smi\n{LONG}, NVIDIA GB10, 3, 41, 11.3, [N/A], [N/A]\n{MARK} apps\n{probes.APP_LINE}{LONG}, python3, {LONG}\n"
    _, _, _, state = probes.parse_probe(out, None, None, MARK)
    assert state.gpus[0].index == 0 and state.processes[0].pid == 0 and state.processes[0].used_mib is None


def test_ibv_devinfo_with_a_bad_port_or_an_empty_mtu_is_diagnosed():
    text = "hca_id:\trocep1s0f1\n\tport:\tabc\n\t\tstate:\t\t\tPORT_ACTIVE (4)\n\tport:\t1\n\t\tstate:\n\t\tactive_mtu:\n"
    ports = netif.parse_ibv_devinfo(text)
    assert [(p.port, p.state, p.active_mtu) for p in ports] == [(1, "", None)]
    diagnose.as_text(diagnose.analyse(text, "netif"))


def test_a_symlink_cycle_in_a_manifest_has_no_size():
    m = Manifest("spark-1", "/x", exists=True, ref="r")
    m.files = {
        "snapshots/r/a": ["l", 0, "b", True],
        "snapshots/r/b": ["l", 0, "../r/a", True],
        "snapshots/r/self": ["l", 0, "self", True],
        "snapshots/r/ok": ["l", 0, "../../blobs/abc", True],
        "blobs/abc": ["f", 123, "", True],
    }
    assert m.size("snapshots/r/a") is None and m.size("snapshots/r/self") is None
    assert m.size("snapshots/r/ok") == 123


class FailsOnce(FrozenCore):
    """The first refresh of spark-2 raises, as a parser bug on odd node output would."""

    def __init__(self, *a, **kw):
        super().__init__(*a, **kw)
        self.failed = False

    async def refresh(self, node):
        if node == "spark-2" and not self.failed:
            self.failed = True
            raise ValueError("invalid literal for int() with base 10: '²'")
        return await super().refresh(node)


def test_a_refresh_that_raises_is_shown_and_the_cockpit_keeps_refreshing():
    from spark_tui.ui.app import SparkApp

    config, reconfigure = cluster_config(2)
    app = SparkApp(FailsOnce(config, reconfigure), live_refresh=True)

    async def flow():
        async with app.run_test(size=(140, 40)) as pilot:
            await pilot.pause(0.5)
            pane = app.dashboard.panes["spark-2"]
            first = str(pane._header.render())
            app.action_refresh()  # wakes every node's loop: the failed one refreshes again
            await pilot.pause(0.5)
            return first, str(pane._header.render()), app.is_running

    first, second, running = asyncio.run(flow())
    assert running
    assert "refresh failed (ValueError: invalid literal for int()" in first, first
    assert "UNREACHABLE" not in second and "up" in second, second


HOSTILE_ERROR = "[@click=app.quit]boom [/x]\x1b]0;pwned\x07 with --api-key sk-LeakedKey99"


class ServingRaisesOnce(FrozenCore):
    """The first serving round raises (a bug on odd /metrics), with markup, an escape and a secret
    flag in its message; the image listing raises every time."""

    def __init__(self, *a, **kw):
        super().__init__(*a, serving=True, **kw)
        self.raised = False

    async def serving(self):
        if not self.raised:
            self.raised = True
            self.calls.append("serving raised")
            raise RuntimeError(HOSTILE_ERROR)
        return await super().serving()

    async def images(self, run_all=False):
        raise KeyError("[bold]RepoTags")


def test_a_worker_that_raises_is_named_inert_and_masked_and_the_cockpit_goes_on():
    """One handler for every worker's failure: the serving loop's error is shown as literal text
    (no markup run, no escape written, the secret masked), the loop starts again a round later, and a
    step's worker that raises (the image listing) is named too; the cockpit keeps answering keys."""
    from spark_tui.ui.app import SparkApp
    from spark_tui.ui.screens.serving import ServingScreen
    from spark_tui.ui.screens.wizard import WizardScreen

    config, reconfigure = cluster_config(2, interactive={"metrics_interval": 0.5})
    app = SparkApp(ServingRaisesOnce(config, reconfigure), live_refresh=True)

    def toasts() -> list[str]:
        return [str(t.render()) for t in app.screen.query("Toast")]

    async def until(pilot, condition) -> None:
        for _ in range(100):  # up to 10 s on a loaded machine
            if condition():
                return
            await pilot.pause(0.1)

    async def flow():
        async with app.run_test(size=(140, 40), notifications=True) as pilot:
            await until(pilot, lambda: any("serving figures failed" in t for t in toasts()))
            first = toasts()
            await until(pilot, lambda: app.serving_look is not None)  # the loop started again
            served = app.serving_look is not None
            await pilot.press("v")
            on_serving = isinstance(app.screen, ServingScreen)
            await pilot.press("escape", "w")
            await until(pilot, lambda: any("image listing failed" in t for t in toasts()))
            in_wizard = isinstance(app.screen, WizardScreen)
            listing = toasts()
            await pilot.press("escape")
            await pilot.pause(0.1)
            return first, served, on_serving, in_wizard, listing, app.is_running, app.core.calls

    first, served, on_serving, in_wizard, listing, running, calls = asyncio.run(flow())
    shown = [t for t in first if "serving figures failed" in t]
    assert len(shown) == 1, first
    assert "RuntimeError: [@click=app.quit]boom [/x]" in shown[0] and "--api-key ***" in shown[0], shown
    assert "sk-LeakedKey99" not in shown[0] and "\x1b" not in shown[0] and "\x07" not in shown[0]
    assert calls.count("serving raised") == 1 and calls.count("serving") >= 1 and served, calls
    assert on_serving and in_wizard and running
    assert any("image listing failed: KeyError: '[bold]RepoTags'" in t for t in listing), listing
