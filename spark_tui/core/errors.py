"""Failures of a node's connection or of its Docker engine: their types and their wording, in one place."""

from __future__ import annotations

import docker
import requests

from spark_tui.parsers.text import inert


class NodeError(Exception):
    """A node-level failure: which node, and why, in words fit for the operator."""

    def __init__(self, node: str, reason: str):
        # Reasons quote what a node or any host answering its address sent (an SSH disconnect
        # text arrives before any host key check): inert here, once, for every place that prints it.
        reason = inert(reason)
        super().__init__(f"{node}: {reason}")
        self.node = node
        self.reason = reason


class HostKeyError(NodeError):
    pass


# Everything a node's Docker engine, reached through the node's SSH tunnel, can fail with.
ENGINE_ERRORS = (NodeError, docker.errors.DockerException, requests.exceptions.RequestException, OSError)


def why(exc: BaseException) -> str:
    """The reason alone, without the node name a NodeError starts with."""
    return exc.reason if isinstance(exc, NodeError) else inert(str(exc))
