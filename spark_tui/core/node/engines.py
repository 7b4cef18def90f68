"""Docker SDK clients for the nodes' engines, one shared client per engine.

A node's engine is reached through a UNIX socket forwarded over its SSH connection (the URL
changes when the connection is rebuilt). Refreshes, checks, launches and teardowns all use
the same client for a URL: a new client negotiates the API version (a round trip) and opens
a new tunnelled connection, which on every operation and every node added up. `docker info`
costs the engine ~15 ms, so it is asked once per engine. A failing engine is dropped and
built afresh on next use (`door`, the one place its failures are named). Everything here
blocks: call it in a thread, or through `Nodes.docker`, which does.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TypeVar

import docker
import requests

from spark_tui.core.node import labels
from spark_tui.errors import EngineError, NodeError

T = TypeVar("T")
TIMEOUT = 30  # seconds for one API call; removing a container by force stays well below it

_lock = threading.Lock()
_clients: dict[str, docker.DockerClient] = {}
_infos: dict[str, dict] = {}


def new_client(url: str, timeout: float | None) -> docker.DockerClient:
    """A client of its own (log streams hold theirs open indefinitely).

    `trust_env` off: requests would otherwise scan the whole environment for proxy and netrc
    settings on every API call, and no proxy applies to a forwarded UNIX socket."""
    client = docker.DockerClient(base_url=url, timeout=timeout)
    client.api.trust_env = False
    return client


def engine(url: str) -> docker.DockerClient:
    """The shared client for this engine."""
    with _lock:
        client = _clients.get(url)
    if client is None:
        made = new_client(url, TIMEOUT)
        with _lock:
            client = _clients.setdefault(url, made)
        if client is not made:  # another thread made one first: keep theirs
            made.close()
    return client


def engine_info(url: str) -> dict:
    """`docker info` of this engine, asked once while the engine stays reachable."""
    with _lock:
        info = _infos.get(url)
    if info is None:
        info = engine(url).info()
        with _lock:
            _infos[url] = info
    return info


def forget(url: str) -> None:
    with _lock:
        client = _clients.pop(url, None)
        _infos.pop(url, None)
    if client is not None:
        client.close()


# What the Docker SDK and the requests under it raise when the engine or the tunnel to it fails
# (refused, reset, timed out, a socket gone with its SSH connection). Matched here only.
ENGINE_ERRORS = (docker.errors.DockerException, requests.exceptions.RequestException, OSError)


@contextmanager
def door(node: str, url: str | None = None) -> Iterator[None]:
    """The one place the Docker SDK's failures enter spark-tui's error tree. A transport failure
    becomes an `EngineError` naming the node (its reason the SDK's words, made inert), and the
    shared client for `url` is dropped so the next use starts clean. An answer of a working
    engine (`APIError`: a 404, a conflict) passes through unchanged and keeps the client: other
    operations may be using it; so is a container's own failure (`ContainerError`: it ran and
    exited non-zero). A `NodeError` (the tunnel could not be opened) is already named."""
    try:
        yield
    except (docker.errors.APIError, docker.errors.ContainerError, NodeError):
        raise
    except ENGINE_ERRORS as exc:
        if url is not None:
            forget(url)
        raise EngineError(node, str(exc)) from exc


def call(node: str, url: str, fn: Callable[[docker.DockerClient], T]) -> T:
    """`fn(client)` on the shared client of this engine, through the door. Blocks."""
    with door(node, url):
        return fn(engine(url))


def own_containers(client: docker.DockerClient, cluster: str, name: str) -> list[dict]:
    """List summaries of the cluster's containers named exactly `name` (by label, then name;
    a summary carries name, state and image, so none needs an inspect)."""
    found = client.api.containers(all=True, filters={"label": f"{labels.CLUSTER}={cluster}"})
    return [c for c in found if f"/{name}" in (c.get("Names") or [])]


def exact_container(client: docker.DockerClient, name: str):
    """The container named exactly `name` (Docker's name filter is a substring match)."""
    for c in client.containers.list(all=True, filters={"name": name}):
        if c.name == name:
            return c
    return None


def log_head(client: docker.DockerClient, name: str, max_bytes: int = 8 << 20) -> list[str]:
    """The first lines of a container's log, up to `max_bytes`: NCCL and vLLM say how they
    started at the start, and a server that has run for days has logged far more since."""
    stream = client.containers.get(name).logs(stream=True, follow=False)
    buf = bytearray()
    try:
        for chunk in stream:
            buf += chunk
            if len(buf) >= max_bytes:
                break
    finally:
        stream.close()
    return buf.decode("utf-8", errors="replace").splitlines()
