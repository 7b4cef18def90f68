"""Checks of what the effective image can run, from its facts (core/images/image_facts.py):
image.entrypoint (what spark-tui overrides), image.ray (executor ray), image.native (executor
native) and model.architecture (the model's architectures against the image's vLLM registry).
An answer that cannot be had is `skipped` with the reason, never a pass."""

from __future__ import annotations

import os
import re
from collections.abc import Awaitable, Callable, Collection

import docker

from spark_tui import paths
from spark_tui.core.images.image_facts import NATIVE_SINCE, FactsCache, ImageFacts, facts_for
from spark_tui.core.models.model_cache import ModelConfig
from spark_tui.core.node.errors import NodeError, why
from spark_tui.core.node.nodes import Nodes
from spark_tui.settings.resolve import Config

IMAGE_CHECKS = ("image.entrypoint", "image.ray", "image.native", "model.architecture")
Add = Callable[..., None]
# What `uname -m` prints, as Docker names the architecture an image is built for.
DOCKER_ARCH = {"x86_64": "amd64", "aarch64": "arm64", "arm64": "arm64", "armv7l": "arm", "ppc64le": "ppc64le"}
WORD = re.compile(r"[\w.-]{1,32}")  # an image's stated os/architecture: its author's text, checked
NATIVE = ".".join(map(str, NATIVE_SINCE))


def default_cache() -> FactsCache:
    return FactsCache(os.path.join(paths.cache_dir(os.environ), "images"))


async def effective_facts(
    config: Config,
    nodes: Nodes,
    cache: FactsCache,
    skip: Collection[str] = (),
) -> tuple[str, ImageFacts | None, str]:
    """(node asked, facts, why none) for the effective image, asked on the first node holding it
    (the head first). `skip`: nodes known to be unreachable."""
    image = config["image"]
    reasons = []
    for node in sorted(config.nodes, key=lambda n: not n.is_head):
        if node.name in skip:
            continue
        try:
            return node.name, await nodes.docker(node.name, lambda c: facts_for(c, image, cache)), ""
        except docker.errors.ImageNotFound:
            reasons.append(f"not on {node.name}")
        except (NodeError, docker.errors.APIError) as exc:
            reasons.append(f"{node.name}: {why(exc)[:120]}")
    return "", None, f"image {image}: " + ("; ".join(reasons) or "no node to ask")


def entrypoint_text(facts: ImageFacts) -> str:
    ep = " ".join(facts.entrypoint) if facts.entrypoint else "none"
    cmd = " ".join(facts.cmd) if facts.cmd else "none"
    return f"ENTRYPOINT {ep}, CMD {cmd}"


def run(
    config: Config, node: str, facts: ImageFacts | None, why_none: str, model: ModelConfig, add: Add
) -> None:
    """Add the image checks for `facts` (None: every one skipped with `why_none`)."""
    image, executor = config["image"], config["executor"]
    where = node or "cluster"
    if facts is None:
        for cid in IMAGE_CHECKS:
            if cid == "image.ray" and executor != "ray" or cid == "image.native" and executor != "native":
                continue
            add(cid, where, "skipped", why_none)
        return
    program = "ray" if executor == "ray" else "vllm"
    add(
        "image.entrypoint",
        where,
        "pass",
        f"{image}: {entrypoint_text(facts)}; spark-tui sets ENTRYPOINT {program} (executor {executor})",
    )
    vllm = f"vLLM {facts.vllm} ({facts.vllm_from})" if facts.vllm else "vLLM version unknown"
    if executor == "ray":
        if facts.ray is None:
            add("image.ray", where, "skipped", f"could not tell whether Ray is in {image}: {_notes(facts)}")
        elif facts.ray:
            add(
                "image.ray",
                where,
                "pass",
                f"Ray {facts.ray_version or '(version unknown)'} imports in {image}",
            )
        else:
            add(
                "image.ray",
                where,
                "fail",
                f"{image} has no Ray (executor ray needs it): {_notes(facts) or 'ray --version not found'}",
                "use executor native or an image with Ray",
            )
    elif executor == "native":
        if facts.native is None:
            add("image.native", where, "skipped", f"{vllm} in {image}: cannot tell native multi-node support")
        elif facts.native:
            add("image.native", where, "pass", f"{vllm} takes --nnodes/--node-rank (since {NATIVE})")
        else:
            add(
                "image.native",
                where,
                "fail",
                f"{vllm} in {image} predates native multi-node ({NATIVE}): `vllm serve` rejects --nnodes",
                f"use executor ray, or an image with vLLM >= {NATIVE}",
            )
    architecture(config, where, facts, model, add)


def architecture(config: Config, where: str, facts: ImageFacts, model: ModelConfig, add: Add) -> None:
    image = config["image"]
    if not model.found:
        add("model.architecture", where, "skipped", model.reason)
        return
    if facts.archs is None:
        add(
            "model.architecture",
            where,
            "skipped",
            f"the model registry of {image} could not be read: {_notes(facts) or 'no answer'}",
        )
        return
    unknown = [a for a in model.architectures if a not in facts.archs]
    vllm = f"vLLM {facts.vllm}" if facts.vllm else "its vLLM"
    if unknown:
        add(
            "model.architecture",
            where,
            "fail",
            f"{config['model']} is {', '.join(unknown)}, which {vllm} in {image} does not know "
            f"({len(facts.archs)} architectures listed): the load would fail after loading",
            "choose an image with a newer vLLM (spark-tui images shows which know it)",
        )
    else:
        add(
            "model.architecture",
            where,
            "pass",
            f"{', '.join(model.architectures)} is in the model registry of {vllm} in {image}",
        )


def platform(image: str, node: str, attrs: dict, machine: str, add: Add) -> None:
    """image.platform: the image's own os/architecture (its config, `docker image inspect`)
    against the node's CPU (`uname -m`). An amd64 image on the arm64 Spark loads, then every
    program in it fails with `exec format error`: named here, before anything starts."""
    arch, system = attrs.get("Architecture"), attrs.get("Os")
    arch = arch if isinstance(arch, str) and WORD.fullmatch(arch) else ""
    system = system if isinstance(system, str) and WORD.fullmatch(system) else "linux"
    want = DOCKER_ARCH.get(machine, "")
    if not arch or not want:
        said = (
            "the image states no architecture"
            if not arch
            else f"the node's CPU {machine or '?'} is not known here"
        )
        add("image.platform", node, "skipped", f"{image} on {node}: {said}")
    elif arch == want:
        add(
            "image.platform",
            node,
            "pass",
            f"{image} is built for {system}/{arch}, the CPU of {node} ({machine})",
        )
    else:
        add(
            "image.platform",
            node,
            "fail",
            f"{image} on {node} is built for {system}/{arch}, but {node} is {machine} ({system}/{want}): every "
            "program in it would fail with `exec format error`",
            f"use the {system}/{want} build of the image (`docker pull --platform {system}/{want} {image}` on "
            f"{node}), then spark-tui sync image --from {node}",
        )


def _notes(facts: ImageFacts) -> str:
    return "; ".join(facts.notes)


async def image_checks(
    config: Config,
    nodes: Nodes,
    add: Add,
    unreachable: set[str],
    model: Awaitable[ModelConfig],
    cache: FactsCache | None = None,
) -> None:
    """`model`: the model's config.json as the nodes' caches hold it (shared with other checks)."""
    node, facts, why_none = await effective_facts(config, nodes, cache or default_cache(), unreachable)
    run(config, node, facts, why_none, await model, add)
