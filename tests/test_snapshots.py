"""Snapshot tests (pytest-textual-snapshot) of every screen, from frozen core answers (tests/frozen.py).

Update after an intended change: pytest tests/test_snapshots.py --snapshot-update
"""

import time

import pytest

from spark_tui.ui.app import SparkApp
from tests.frozen import FrozenCore, cluster_config

SIZE = (120, 40)


@pytest.fixture(autouse=True)
def utc(monkeypatch):
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


def app_for(tmp_path, count=2, environ=None, theme=None, **kw):
    config, reconfigure = cluster_config(count, environ, {"theme": theme} if theme else None)
    app = SparkApp(FrozenCore(config, reconfigure, **kw))
    # A toast lives 5 s; on a loaded machine the steps before a screenshot took longer and the wizard's
    # `image ... (interactive edit)` toast was gone from it. Kept until the screenshot, as on an idle one.
    app.NOTIFICATION_TIMEOUT = 3600
    return app


async def settle(pilot):
    await pilot.pause(0.2)
    await pilot.wait_for_scheduled_animations()


def keys(*pressed):
    """Press keys one at a time, each once the wizard's step workers (the image listing, the checks) have ended:
    a key pressed while a check still ran met a step not ready yet, and under load a snapshot caught the wizard
    a step behind (session 27)."""

    async def run(pilot):
        await settle(pilot)
        for key in pressed:
            await pilot.press(key)
            for _ in range(200):  # 10 s at most
                if not any(w.is_running for w in pilot.app.workers if w.group in ("images", "check")):
                    break
                await pilot.pause(0.05)
            await settle(pilot)

    return run


@pytest.mark.parametrize("count", [1, 2, 4])
def test_dashboard(snap_compare, tmp_path, count):
    assert snap_compare(app_for(tmp_path, count), terminal_size=SIZE, run_before=settle)


def test_dashboard_eight_nodes_scroll(snap_compare, tmp_path):
    assert snap_compare(app_for(tmp_path, 8), terminal_size=SIZE, run_before=settle)


def test_dashboard_disconnected_node_and_drift(snap_compare, tmp_path):
    app = app_for(tmp_path, 2, unreachable=["spark-2"], drift=["spark-1"])
    assert snap_compare(app, terminal_size=SIZE, run_before=settle)


@pytest.mark.parametrize("theme", ["spark-dark", "spark-light", "spark-high-contrast"])
def test_each_theme(snap_compare, tmp_path, theme):
    assert snap_compare(app_for(tmp_path, 2, theme=theme), terminal_size=SIZE, run_before=settle)


def test_wizard_image_step(snap_compare, tmp_path):
    assert snap_compare(app_for(tmp_path, 2), terminal_size=SIZE, run_before=keys("w"))


def test_wizard_image_step_says_what_another_image_changes(snap_compare, tmp_path):
    """Highlighting an image whose vLLM predates the model's architecture and native multi-node."""
    assert snap_compare(
        app_for(tmp_path, 2), terminal_size=SIZE, run_before=keys("w", "down", "down", "down")
    )


def test_wizard_asks_upgrade_or_relaunch_over_a_running_deployment(snap_compare, tmp_path):
    """Another image chosen while the effective one serves: upgrade (u), relaunch (t) or cancel."""
    app = app_for(tmp_path, 2)
    app.core.running = app.core.config["image"]
    assert snap_compare(app, terminal_size=SIZE, run_before=keys("w", "down", "enter"))


def test_wizard_check_step(snap_compare, tmp_path):
    assert snap_compare(app_for(tmp_path, 2), terminal_size=SIZE, run_before=keys("w", "enter"))


def test_wizard_review_step_shows_lookalike_warning(snap_compare, tmp_path):
    app = app_for(tmp_path, 2, environ={"IMAGE_NAME": "vllm-node:typo"})
    assert snap_compare(app, terminal_size=SIZE, run_before=keys("w", "enter", "n"))


def test_wizard_launch_step_ready(snap_compare, tmp_path):
    assert snap_compare(app_for(tmp_path, 2), terminal_size=SIZE, run_before=keys("w", "enter", "n", "n"))


def test_confirm_dialog(snap_compare, tmp_path):
    app = app_for(tmp_path, 2, unreachable=["spark-2"])
    assert snap_compare(app, terminal_size=SIZE, press=["ctrl+d"], run_before=settle)


def test_help_screen(snap_compare, tmp_path):
    assert snap_compare(app_for(tmp_path, 2), terminal_size=SIZE, press=["question_mark"], run_before=settle)


def test_logs_screen_nccl_only(snap_compare, tmp_path):
    assert snap_compare(app_for(tmp_path, 2), terminal_size=SIZE, press=["l", "c"], run_before=settle)
