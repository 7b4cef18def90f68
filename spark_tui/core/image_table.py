"""Every image on the nodes with what it can run: the wizard's image step and `spark-tui images`.

Rows come from the nodes' engines (core/monitor.py ImageRow: which nodes hold a reference, and
whether the same tag has different layers somewhere); facts come from core/images/image_facts.py, asked
on a node holding the image and cached by image ID. Each row then says whether it can run the
chosen executor and model, and the effective image is marked with where its value came from.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

import docker

from spark_tui.core.images.image_checks import NATIVE, default_cache
from spark_tui.core.images.image_facts import FactsCache, ImageFacts, facts_for, version_tuple
from spark_tui.core.models.model_cache import ModelConfig, first_model_config
from spark_tui.core.monitor import ImageRow, Monitor
from spark_tui.core.node.errors import NodeError, why
from spark_tui.core.node.nodes import Nodes
from spark_tui.settings.resolve import Config

PARALLEL_PER_NODE = 2  # probe containers at once on one node (a first look at many images)


@dataclass
class ImageEntry:
    row: ImageRow
    facts: ImageFacts | None
    error: str = ""  # why there are no facts
    effective: bool = False
    source: str = ""  # where the effective image's value came from (file:line, flag, variable)

    def problems(self, executor: str, model: ModelConfig | None) -> list[tuple[str, str]]:
        """Why this image cannot run the executor or the model, as (short, whole) pairs (empty:
        nothing known against it)."""
        f = self.facts
        out = []
        if self.row.mismatch:
            out.append(("mismatch", "same tag, different layers across nodes"))
        if f is None:
            return out
        if executor == "ray" and f.ray is False:
            out.append(("no Ray", "no Ray in the image: cannot run executor ray"))
        if executor == "native" and f.native is False:
            out.append(("no native", f"vLLM {f.vllm} < {NATIVE}: cannot run executor native"))
        if self.arch_ok(model) is False and model is not None:
            out.append(("model arch", f"its vLLM does not know {', '.join(model.architectures)}"))
        return out

    def arch_ok(self, model: ModelConfig | None) -> bool | None:
        if model is None or not model.found or self.facts is None or self.facts.archs is None:
            return None
        return all(a in self.facts.archs for a in model.architectures)


@dataclass
class ImageListing:
    entries: list[ImageEntry]
    model: ModelConfig  # the chosen model's config.json (architectures), or why it is unknown


async def listing(
    config: Config,
    nodes: Nodes,
    rows: list[ImageRow] | None = None,
    cache: FactsCache | None = None,
    run_all: bool = False,
) -> ImageListing:
    """Every image on the nodes (`rows`, else listed now) with its facts, and the chosen model's
    architectures. Images are run (a confined container each, once per ID) when they are the
    effective image or look like vLLM; `run_all` runs every one."""
    if rows is None:
        rows = await Monitor(nodes).images()
    found, model = await asyncio.gather(
        entries(config, nodes, rows, cache or default_cache(), run_all),
        first_model_config(nodes, list(config.nodes), config["model"]),
    )
    return ImageListing(found, model)


def short_version(text: str | None) -> str:
    """`0.10.2+9dd9ca32.nv25.10` -> `0.10.2` (the whole string is in the facts and the JSON)."""
    v = version_tuple(text)
    return ".".join(map(str, v)) if v else (text or "?")


def yes_no(value: bool | None, yes: str = "yes", no: str = "no") -> str:
    return "?" if value is None else yes if value else no


async def entries(
    config: Config, nodes: Nodes, rows: list[ImageRow], cache: FactsCache, run_all: bool = False
) -> list[ImageEntry]:
    """Facts for every row, asked on a node holding the image (cached rows cost no container)."""
    limits = {n.name: asyncio.Semaphore(PARALLEL_PER_NODE) for n in config.nodes}
    effective = config["image"]
    source = str(config.values["image"].source)

    async def entry_for(row: ImageRow) -> ImageEntry:
        entry = ImageEntry(
            row, None, effective=row.ref == effective, source=source if row.ref == effective else ""
        )
        holders = sorted(row.nodes, key=lambda n: n != config.head.name)
        run = True if run_all or entry.effective else None  # None: if it looks like vLLM
        for node in holders:
            try:
                async with limits[node]:
                    entry.facts = await nodes.docker(
                        node, lambda client: facts_for(client, row.ref, cache, run)
                    )
                return entry
            except docker.errors.ImageNotFound:
                entry.error = f"gone from {node}"
            except (NodeError, docker.errors.APIError) as exc:
                entry.error = f"{node}: {why(exc)[:120]}"
        return entry

    # One task per image, not per node (a node's share is bounded by `limits`).
    found = list(await asyncio.gather(*(entry_for(r) for r in rows)))
    if not any(e.effective for e in found):
        # The effective image is on no node: still a row, so the table says so.
        found.insert(
            0, ImageEntry(ImageRow(effective, {}, {}, "", 0.0, ""), None, "on no node", True, source)
        )
    return found


def as_table(config: Config, found: list[ImageEntry], model: ModelConfig | None) -> list[str]:
    """`spark-tui images` as text: one row per image, problems under it."""
    total = len(config.nodes)
    arch_head = f"{model.architectures[0][:22]}" if model and model.found else "model arch"
    header = ("", "IMAGE", "ID", "NODES", "vLLM", "RAY", "NATIVE", arch_head)
    rows = [header]
    for e in found:
        f = e.facts
        ids = set(e.row.nodes.values())
        holders = f"{len(e.row.nodes)}/{total} {','.join(e.row.nodes)}" if e.row.nodes else f"0/{total}"
        rows.append(
            (
                "*" if e.effective else "",
                e.row.ref,
                "MISMATCH" if len(ids) > 1 else next(iter(ids), "-"),
                holders,
                short_version(f.vllm) if f else "?",
                (f.ray_version or "yes" if f.ray else yes_no(f.ray)) if f else "?",
                yes_no(f.native) if f else "?",
                yes_no(e.arch_ok(model), "✓", "✗"),
            )
        )
    widths = [max(len(r[i]) for r in rows) for i in range(len(header))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(r, widths, strict=True)).rstrip() for r in rows]
    out = [lines[0]]
    for e, line in zip(found, lines[1:], strict=True):
        out.append(line)
        for _, whole in e.problems(config["executor"], model):
            out.append(f"    ✗ {whole}")
        if e.facts is None and e.error:
            out.append(f"    ? {e.error}")
    eff = next(e for e in found if e.effective)
    out.append("")
    out.append(f"* effective image {eff.row.ref} (from {eff.source}); executor {config['executor']}")
    if model is not None and not model.found:
        out.append(f"model architecture not checked: {model.reason}")
    return out
