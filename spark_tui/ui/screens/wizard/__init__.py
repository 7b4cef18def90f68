"""The launch wizard: image -> check -> review -> launch. One file per step (its widget, worker,
state and styles), the screen that moves between them in screen.py."""

from spark_tui.ui.screens.wizard.screen import STEPS, WizardScreen

__all__ = ["STEPS", "WizardScreen"]
