"""Every failure spark-tui names to the operator, as one tree with one base.

    SparkTuiError                 any failure spark-tui itself names (catch this to catch them all)
    ├── ConfigError               bad input: a file, flag or variable; one line, exit code 2
    ├── NodeError                 a node could not be asked: which node, and why
    │   ├── HostKeyError          its SSH host key is unknown or changed
    │   └── EngineError           its Docker engine (through the node's tunnel) failed to answer
    ├── LaunchError               `up` stopped: the cause, and the log lines that show it
    ├── SyncError                 `sync` could not copy an image or a model between nodes
    ├── BenchError                the bench could not run (nothing serving, endpoint unreachable)
    ├── StoreError                the results database cannot be used
    ├── UpgradeRefused            `upgrade` refused the candidate before the known-good was touched
    ├── RestoreFailed             `upgrade` could not bring the known-good deployment back
    ├── MetricsError              a /metrics answer that is not Prometheus text (also a ValueError)
    └── KnowledgeError            a malformed failure table (also a ValueError)

Foreign libraries' errors are mapped into this tree at their doors, and only there: asyncssh's
and the socket's in `core/node/connection.py` (a `NodeError` naming the node), the Docker SDK's and
requests' in `core/node/engines.py` (`engines.door`, used by `Nodes.docker`: a transport failure
becomes an `EngineError`). An answer of a working Docker engine (`docker.errors.APIError`:
NotFound, a conflict; `ContainerError`: the container ran and exited non-zero) is not a failure
of the node and passes through unchanged. `Nodes.each` hands back every node's `NodeError` as a
value beside the others' results.
"""

from __future__ import annotations

from spark_tui.parsers.text import inert


class SparkTuiError(Exception):
    """The base of every failure spark-tui names (see the tree above)."""


class ConfigError(SparkTuiError):
    """Bad input. `source` names where it came from: file:line:col, a flag or a variable."""

    def __init__(self, source: str, message: str):
        super().__init__(f"{source}: {message}")
        self.source = source
        self.message = message


class NodeError(SparkTuiError):
    """A node-level failure: which node, and why, in words fit for the operator."""

    def __init__(self, node: str, reason: str):
        # Reasons quote what a node or any host answering its address sent (an SSH disconnect
        # text arrives before any host key check): inert here, once, for every place that prints it.
        reason = inert(reason)
        super().__init__(f"{node}: {reason}")
        self.node = node
        self.reason = reason


class HostKeyError(NodeError):
    """The node's SSH host key is not the one known for it."""


class EngineError(NodeError):
    """The node's Docker engine, or the tunnel to it, failed to answer (refused, reset, timed
    out). The shared client for it was dropped: the next call connects afresh."""


class LaunchError(SparkTuiError):
    """`up` stopped; `cause` names the node and why, `log_lines` the container's words on it."""

    def __init__(self, cause: str, log_lines: list[str] | None = None):
        super().__init__(cause)
        self.cause = cause
        self.log_lines = log_lines or []


class SyncError(SparkTuiError):
    """An image or a model could not be copied between the nodes; one line."""


class BenchError(SparkTuiError):
    """The bench could not run (nothing serving, the endpoint unreachable); one line."""


class StoreError(SparkTuiError):
    """The results database cannot be used; the message names the file and why."""


class MetricsError(SparkTuiError, ValueError):
    """What was wrong with a /metrics answer, in one line."""


class KnowledgeError(SparkTuiError, ValueError):
    """A malformed failure table: the message names file:entry."""


class UpgradeRefused(SparkTuiError):
    """The candidate image is refused before the known-good deployment was touched."""


class RestoreFailed(SparkTuiError):
    """The known-good deployment did not launch again after an upgrade gave up."""
