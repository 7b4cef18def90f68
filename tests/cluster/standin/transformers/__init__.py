"""Stand-in transformers: only its distribution and version (what spark-tui reads)."""

from importlib.metadata import version

__version__ = version("transformers")
