"""One failure knowledge base for `up`, the cockpit and `diagnose`: failures/ holds the table (a file per family),
engine.py matches lines against it."""

from spark_tui.knowledge.engine import Finding, Matcher, Watch, default_matcher, scan
from spark_tui.knowledge.table import KnowledgeError, Table, load_file, table

__all__ = [
    "Finding",
    "KnowledgeError",
    "Matcher",
    "Table",
    "Watch",
    "default_matcher",
    "load_file",
    "scan",
    "table",
]
