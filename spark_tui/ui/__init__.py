"""The Textual cockpit: a thin UI over spark_tui.core (see app.py)."""
