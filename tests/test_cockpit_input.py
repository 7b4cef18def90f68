"""Hostile input through the cockpit: secrets, terminal escapes, bad edits, bad keys and themes."""

import asyncio

from spark_tui.ui.app import SparkApp
from spark_tui.ui.screens.logs import LogsScreen
from spark_tui.ui.screens.wizard import WizardScreen
from tests.frozen import FrozenCore, cluster_config

TOKEN = "hf_SuperSecretToken123"
HOSTILE = [
    "\x1b[2J\x1b[Hscreen cleared?",
    "\x1b]0;pwned title\x07after title",
    "\x1b]52;c;Y3VybCBldmlsLnNo\x07clipboard write",
    "\x1b[31mred\x1b[0m and \x1b[10;10Hcursor moved",
    "bell\x07 backspace\x08 nul\x00 csi\x9b2J",
    f"download with HF_TOKEN={TOKEN} ok",
]


def app_with(environ=None, log_lines=None, unreachable=()):
    config, reconfigure = cluster_config(2, environ)
    return SparkApp(
        FrozenCore(config, reconfigure, unreachable=unreachable, log_lines=log_lines), live_refresh=False
    )


def test_logs_show_escapes_inert_and_secrets_masked(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    app = app_with({"SPARK_TUI_HF_TOKEN": TOKEN}, log_lines=HOSTILE)

    async def flow():
        async with app.run_test(size=(120, 40)) as pilot:
            app.open_logs("spark-1")
            await pilot.pause(0.3)
            screen = app.screen
            assert isinstance(screen, LogsScreen)
            shown = list(screen.view.text_log.lines)
            kept = list(screen.view.buffer.lines)
            await pilot.press("s")
            await pilot.pause(0.2)
            return shown, kept

    shown, kept = asyncio.run(flow())
    assert len(shown) == len(HOSTILE)
    for line in shown + kept:
        assert "\x1b" not in line and "\x07" not in line and "\x9b" not in line and "\x00" not in line, repr(
            line
        )
        assert TOKEN not in line
    assert shown[0] == "screen cleared?" and shown[1] == "after title"
    assert "HF_TOKEN=*** ok" in shown[-1]
    saved = list((tmp_path / "state" / "spark-tui" / "logs").glob("*.log"))
    assert len(saved) == 1
    text = saved[0].read_text()
    assert TOKEN not in text and "\x1b" not in text and "HF_TOKEN=***" in text


def test_review_never_shows_the_token(tmp_path):
    app = app_with({"SPARK_TUI_HF_TOKEN": TOKEN})

    async def flow():
        async with app.run_test(size=(120, 40)) as pilot:
            await pilot.press("w", "enter", "n")
            wizard = app.screen
            assert isinstance(wizard, WizardScreen) and wizard.step == "review"
            table = wizard.query_one("#settings")
            cells = [str(c) for key in table.rows for c in table.get_row(key)]
            assert any("***" in c for c in cells)
            assert not any(TOKEN in c for c in cells)
            assert TOKEN not in str(wizard.query_one("#review-warnings").render())

    asyncio.run(flow())


def test_review_puts_what_matters_first_and_shows_the_highlighted_row_whole(tmp_path):
    """Set, derived and overridden rows first, defaults behind one key; at 120 columns a long value
    is cut in its cell but whole in the detail line."""
    long_args = "--max-model-len 32768 --gpu-memory-utilization 0.85 --enable-prefix-caching"
    app = app_with({"SPARK_TUI_VLLM_ARGS": long_args})

    async def flow():
        async with app.run_test(size=(120, 40)) as pilot:
            await pilot.press("w", "enter", "n")
            wizard = app.screen
            table = wizard.query_one("#settings")
            shown = [str(table.get_row(k)[1]) for k in table.rows]
            assert {"image", "vllm_args", "tensor_parallel_size"} <= set(shown)
            assert "refresh_interval" not in shown and "master_port" not in shown
            folded = len(table.rows)
            await pilot.press("d")
            assert len(table.rows) > folded and "master_port" in [
                str(table.get_row(k)[1]) for k in table.rows
            ]
            await pilot.press("d")
            assert len(table.rows) == folded
            table.move_cursor(row=table.get_row_index("vllm_args"))
            await pilot.pause(0.1)
            detail = str(wizard.query_one("#review-detail").render())
            assert long_args.split()[-1] in detail and "from environment SPARK_TUI_VLLM_ARGS" in detail, (
                detail
            )

    asyncio.run(flow())


def test_a_failed_model_row_offers_the_sync_and_checks_again(tmp_path):
    """One key on a model.cached row runs the sync with its progress, then the check again;
    on a row a sync cannot fix, the key only says so."""
    app = app_with()

    async def flow():
        async with app.run_test(size=(120, 40)) as pilot:
            await pilot.press("w", "enter")
            await pilot.pause(0.3)
            wizard = app.screen
            table = wizard.query_one("#checks")
            table.move_cursor(row=table.get_row_index("spark-1/ssh.reachable"))
            await pilot.press("s")
            await pilot.pause(0.2)
            assert app.core.calls.count("check") == 1 and "sync model" not in app.core.calls
            table.move_cursor(row=table.get_row_index("spark-2/model.cached"))
            await pilot.press("s")
            await pilot.pause(0.5)
            assert "sync model" in app.core.calls and app.core.calls.count("check") == 2, app.core.calls

    asyncio.run(flow())


def test_the_check_step_measures_the_data_links_on_its_key():
    """`f` in the check step runs the check again with the fabric measured; the hint names the key."""
    app = app_with()

    async def flow():
        async with app.run_test(size=(120, 40)) as pilot:
            await pilot.press("w", "enter")
            await pilot.pause(0.3)
            summary = str(app.screen.query_one("#check-summary").render())
            assert "f: also measure the data links" in summary, summary
            await pilot.press("f")
            await pilot.pause(0.3)
            assert app.core.calls.count("check") == 1 and "check --fabric" in app.core.calls, app.core.calls

    asyncio.run(flow())


def test_bad_edit_is_one_line_and_changes_nothing(tmp_path):
    app = app_with()

    async def flow():
        async with app.run_test(size=(120, 40)) as pilot:
            await pilot.press("w", "enter", "n")
            wizard = app.screen
            table = wizard.query_one("#settings")
            assert "vllm_port" not in table.rows  # a built-in default nobody touched: folded
            await pilot.press("d")
            table.move_cursor(row=table.get_row_index("vllm_port"))
            await pilot.press("e", "ctrl+a", "ctrl+k", *"80a", "enter")
            error = str(wizard.query_one("#edit-error").render())
            assert error.startswith("in the wizard (vllm_port): vllm_port:") and "\n" not in error
            assert app.core.config["vllm_port"] == 8000 and app.core.interactive == {
                "image": "vllm-node:latest"
            }
            await pilot.press("ctrl+a", "ctrl+k", *"8100", "enter")
            assert app.core.config["vllm_port"] == 8100
            assert str(table.get_row("vllm_port")[4]).startswith("interactive edit")

    asyncio.run(flow())


def test_bad_keys_and_theme_are_one_line_exit_2(run_cli, tmp_path):
    code, out, err = run_cli("--keys", "wizzard=f5")
    assert (
        code == 2
        and err.count("\n") == 1
        and "--keys: keys: no binding with id 'wizzard'; did you mean 'wizard'?" in err
    )
    code, out, err = run_cli("--theme", "neon")
    assert code == 2 and err.count("\n") == 1 and "--theme: no theme 'neon'" in err
    (tmp_path / "themes").mkdir()
    bad = tmp_path / "home" / ".local" / "share" / "spark-tui" / "themes"
    bad.mkdir(parents=True)
    (bad / "mine.yaml").write_text("name: mine\nprimary: '#123456'\nsparkle: yes\n")
    code, out, err = run_cli()
    assert code == 2 and err.count("\n") == 1 and "mine.yaml:3:1: unknown theme field 'sparkle'" in err


async def palette(pilot, command: str) -> None:
    """ctrl+p, type the command, enter."""
    await pilot.press("ctrl+p")
    await pilot.pause(0.2)
    await pilot.press(*command)
    await pilot.pause(0.5)
    await pilot.press("enter")
    await pilot.pause(0.3)


def test_panes_by_tab_and_arrows_and_theme_from_the_palette():
    app = app_with()

    async def flow():
        async with app.run_test(size=(120, 40)) as pilot:
            await pilot.press("tab")
            assert app.focused.id == "pane-spark-1"
            await pilot.press("right")
            assert app.focused.id == "pane-spark-2"
            await pilot.press("left")
            assert app.focused.id == "pane-spark-1"
            await palette(pilot, "Theme: spark-light")
            assert app.theme == "spark-light"
            await palette(pilot, "Logs: node spark-2")
            assert isinstance(app.screen, LogsScreen) and app.screen.source == "spark-2"

    asyncio.run(flow())


def test_markup_and_escapes_in_environment_values_and_typed_text_are_literal():
    nasty = "[/bold][red]x\x1b]0;title\x07"
    app = app_with({"IMAGE_NAME": nasty}, log_lines=["a [/] line", "b [bold]line[/bold]"])

    async def flow():
        async with app.run_test(size=(120, 40)) as pilot:
            banner = str(app.screen.query_one("#banner").render())
            assert "IMAGE_NAME=[/bold][red]x" in banner and "\x1b" not in banner and "\x07" not in banner
            app.open_logs("spark-1")
            await pilot.pause(0.2)
            await pilot.press("slash", *"[a] .[/]", "enter")  # brackets typed: a regex, never markup
            await pilot.pause(0.2)
            assert list(app.screen.view.text_log.lines) == ["a [/] line"]
            await pilot.press(
                "ctrl+f", *"[bold", "enter"
            )  # an invalid regex: one notification, nothing changes
            await pilot.pause(0.2)
            assert list(app.screen.view.text_log.lines) == ["a [/] line"]

    asyncio.run(flow())


def test_the_image_step_asks_every_image_on_its_key():
    """The wizard's image step offers what `images --all` does: its key (from the key registry, so
    the hint and the help name it) lists again with every image asked, and back."""
    app = app_with()

    async def flow():
        async with app.run_test(size=(120, 40)) as pilot:
            await pilot.press("w")
            await pilot.pause(0.3)
            wizard = app.screen
            before = str(wizard.query_one("#image-effective").render())
            await pilot.press("a")
            await pilot.pause(0.3)
            after = str(wizard.query_one("#image-effective").render())
            calls = list(app.core.calls)
            await pilot.press("a")
            await pilot.pause(0.3)
            return before, after, calls, list(app.core.calls), wizard.image_step.all_images

    before, after, calls, again, on = asyncio.run(flow())
    assert "a: ask every image, not only vLLM-looking ones" in before, before
    assert calls == ["images", "images --all"] and "every image asked (a: only vLLM-looking ones)" in after
    assert again == ["images", "images --all", "images"] and not on


def on_screen(widget) -> str:
    """What a widget draws, line by line, as text."""
    return "\n".join("".join(seg.text for seg in widget.render_line(y)) for y in range(widget.size.height))


def test_a_secret_in_vllm_args_is_masked_in_the_edit_box_and_in_every_line():
    """`--api-key X` typed into vllm_args: the edit box masks the value once it holds a secret flag
    (the reveal key shows it while the box has focus; leaving the box masks it again); the review,
    the notifications and the launch log (the head's log echoes the command line) never show it."""
    secret = "sk-VeryPrivate123"
    app = SparkApp(
        FrozenCore(
            *cluster_config(2, {"SPARK_TUI_VLLM_ARGS": "--max-model-len 4096"}),
            log_lines=[f"vllm serve m --api-key {secret} --port 8000", f"key in use: {secret}"],
        ),
        live_refresh=False,
    )
    typed = [{" ": "space", "-": "minus"}.get(c, c) for c in f" --api-key {secret}"]

    async def flow():
        async with app.run_test(size=(120, 40), notifications=True) as pilot:
            await pilot.press("w", "enter")
            await pilot.pause(0.3)
            await pilot.press("n")
            wizard = app.screen
            table = wizard.query_one("#settings")
            table.move_cursor(row=table.get_row_index("vllm_args"))
            await pilot.press("e")
            box = wizard.query_one("#edit-input")
            seen = {"plain": (box.value, box.password)}
            await pilot.press("end", *typed)
            await pilot.pause(0.1)
            seen["typed"] = (box.password, on_screen(box), box.border_title)
            await pilot.press("ctrl+r")
            await pilot.pause(0.1)
            seen["revealed"] = (box.password, on_screen(box))
            wizard.query_one("#settings").focus()  # focus leaves the box: masked again
            await pilot.pause(0.1)
            seen["left"] = (box.password, box.revealed)
            box.focus()
            await pilot.press("enter")
            await pilot.pause(0.1)
            seen["applied"] = app.core.config["vllm_args"]
            cells = [str(c) for key in table.rows for c in table.get_row(key)]
            detail = str(wizard.query_one("#review-detail").render())
            await pilot.press("ctrl+l")
            await pilot.pause(0.8)
            log = list(wizard.query_one("#launch-log").lines)
            toasts = [str(t.render()) for t in app.screen.query("Toast")]
            return seen, cells, detail, log, toasts

    seen, cells, detail, log, toasts = asyncio.run(flow())
    assert seen["plain"] == ("--max-model-len 4096", False)  # nothing secret: shown as it is
    password, rendered, title = seen["typed"]
    assert password and secret not in rendered and title == "masked: ctrl+r to show", seen
    assert seen["revealed"][0] is False and secret in seen["revealed"][1]
    assert seen["left"] == (True, False)
    assert seen["applied"] == ["--max-model-len", "4096", "--api-key", secret]
    assert not any(secret in c for c in cells) and any("--api-key" in c for c in cells), [
        c for c in cells if "api" in c
    ]
    assert secret not in detail
    assert any("--api-key ***" in line for line in log) and any("key in use: ***" in line for line in log), (
        log
    )
    assert not any(secret in line for line in log + toasts)
