"""A model's cache entry file by file on every node, and whether each node's copy is complete.

`model.complete` (a check): the snapshot of the revision `refs/main` names holds config.json;
every shard `model.safetensors.index.json` names (or the single `model.safetensors`) is there,
resolves (the snapshot holds symlinks into `blobs/`) and has the length its own safetensors
header says and the length other nodes have; every node has the same revision. Sizes always;
with `verify_hashes` also every file's content against its blob name (it reads all the weights:
about a minute per 60 GB on a node, so it is asked for, not done by default).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from spark_tui.core.models.model_cache import cache_dir, repo_folder
from spark_tui.core.node.errors import NodeError
from spark_tui.core.node.nodes import Nodes
from spark_tui.core.node.sync_programs import MANIFEST
from spark_tui.settings.model import NodeConfig
from spark_tui.settings.resolve import Config

MAX_LINKS = 40  # as the kernel's own limit on links followed in one path (ELOOP)


@dataclass
class Manifest:
    node: str
    directory: str
    error: str = ""  # could not be read
    exists: bool = False
    ref: str | None = None
    config: bool = False
    shards: list[str] | None = None
    files: dict[str, list] = field(default_factory=dict)  # rel -> [kind f/l/d, size, link, resolves]
    expected: dict[str, int] = field(default_factory=dict)  # rel -> length its header says (-1 unreadable)
    bad: dict[str, list[str]] = field(default_factory=dict)  # blob rel -> [snapshot name, what is wrong]
    hashed: int | None = None  # files hashed against their blob names; None: not asked

    def snapshot(self, name: str) -> str:
        return f"snapshots/{self.ref}/{name}"

    def size(self, rel: str) -> int | None:
        """A file's size, following the snapshot's symlink into blobs/. The links are the node's
        word: a chain that comes back on itself (or runs longer than any cache makes) has no size."""
        seen: set[str] = set()
        entry = self.files.get(rel)
        while entry is not None and entry[0] == "l":
            if not entry[3] or rel in seen or len(seen) >= MAX_LINKS:
                return None
            seen.add(rel)
            rel = "/".join(_normalise(rel.rsplit("/", 1)[0] + "/" + str(entry[2])))
            entry = self.files.get(rel)
        return entry[1] if entry is not None and entry[0] == "f" else None


def _normalise(path: str) -> list[str]:
    out: list[str] = []
    for part in path.split("/"):
        if part == "..":
            if out:
                out.pop()
        elif part not in ("", "."):
            out.append(part)
    return out


def repo_dir(node: NodeConfig, model: str) -> str:
    return f"{cache_dir(node)}/hub/{repo_folder(model)}"


# In the node's persistent shell (no SSH channel and login shell per call): python3 only when the
# entry exists (`-S`: the standard library is all MANIFEST needs, and site's start-up is skipped).
MANIFEST_SCRIPT = (
    'case "$2" in "~/"*) d="$HOME/${2#??}";; *) d="$2";; esac; '
    'if [ ! -d "$d" ]; then echo \'{"exists": false}\'; '
    'elif command -v python3 >/dev/null 2>&1; then python3 -S -c "$1" "$d"; else echo \'{"no_python3": true}\'; fi'
)
NO_PYTHON = "no python3 on this node (spark-tui reads the model's files with it)"


HASH_TIMEOUT = 3600.0  # seconds for hashing a node's copy: a 240 GB model read at 100 MB/s takes 40 minutes


async def manifest(nodes: Nodes, node: NodeConfig, model: str, hashes: bool = False) -> Manifest:
    directory = repo_dir(node, model)
    transport = nodes.transports[node.name]
    try:
        if hashes:  # minutes, not milliseconds: its own channel, not the persistent shell probes share
            res = await transport.run(
                ["python3", "-S", "-c", MANIFEST, directory, "hash"], timeout=HASH_TIMEOUT
            )
            out = res.stdout
            if res.problem("python3"):
                return Manifest(node.name, directory, error=f"{node.name}: {res.problem('python3')}")
        else:
            out = await transport.run_script(MANIFEST_SCRIPT, (MANIFEST, directory), timeout=120)
    except (TimeoutError, NodeError) as exc:
        return Manifest(node.name, directory, error=str(exc))
    try:
        data = json.loads(out)
        if data == {"exists": False}:
            return Manifest(node.name, directory)
        if data == {"no_python3": True}:
            return Manifest(node.name, directory, error=f"{node.name}: {NO_PYTHON}")
        return Manifest(
            node.name,
            directory,
            exists=bool(data["exists"]),
            ref=_typed(data["ref"], str, "ref", none=True),
            config=bool(data["config"]),
            shards=_typed(data["shards"], list, "shards", none=True),
            files=_entries(data["files"], "files", (str, int, str, bool)),
            expected={
                k: _typed(v, int, "expected") for k, v in _typed(data["expected"], dict, "expected").items()
            },
            bad=_entries(data["bad"], "bad", (str, str)),
            hashed=_typed(data["hashed"], int, "hashed") if hashes else None,
        )
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        # No JSON: python3 failed (its stderr stays on the node), or printed something else.
        return Manifest(node.name, directory, error=f"no manifest from python3 on {node.name}: {exc}")


def _typed(value, kind: type, what: str, none: bool = False):
    """`value` if it is a `kind` (what the node printed is input: checked before use)."""
    if (value is None and none) or isinstance(value, kind):
        return value
    raise TypeError(f"{what}: {type(value).__name__} where {kind.__name__} was expected")


def _entries(value, what: str, kinds: tuple[type, ...]) -> dict[str, list]:
    """A mapping of path -> list of fields of `kinds`, as MANIFEST prints them."""
    for rel, entry in _typed(value, dict, what).items():
        if not (
            isinstance(rel, str)
            and isinstance(entry, list)
            and len(entry) == len(kinds)
            and all(isinstance(v, k) for v, k in zip(entry, kinds, strict=True))
        ):
            raise TypeError(f"{what}: {rel!r} is not a path with fields {[k.__name__ for k in kinds]}")
    return value


async def manifests(
    config: Config, nodes: Nodes, names: list[str] | None = None, hashes: bool | None = None
) -> dict[str, Manifest]:
    """Every chosen node's manifest (an unreachable node's carries its error); with hashes as
    `verify_hashes` says unless told (sizes only is seconds, hashing reads every weight)."""
    model = config["model"] or ""
    chosen = {n.name: n for n in config.nodes if names is None or n.name in names}
    hashes = bool(config["verify_hashes"]) if hashes is None else hashes
    found = await nodes.each(lambda name: manifest(nodes, chosen[name], model, hashes), chosen)
    return {
        name: Manifest(name, repo_dir(chosen[name], model), error=str(m)) if isinstance(m, NodeError) else m
        for name, m in found.items()
    }


def problems(m: Manifest, others: list[Manifest]) -> list[str]:
    """What is missing or wrong in one node's copy (empty: complete)."""
    if m.error:
        return [m.error]
    if not m.exists:
        return [f"not in {m.directory}"]
    if not m.ref:
        return [f"{m.directory}/refs/main missing: no revision"]
    out = []
    if not m.config:
        out.append(f"{m.snapshot('config.json')} missing")
    if m.shards is None:
        out.append(f"no model.safetensors.index.json or model.safetensors in {m.snapshot('')}")
        return out
    for shard in m.shards:
        rel = m.snapshot(shard)
        entry = m.files.get(rel)
        if entry is None:
            out.append(f"{shard} missing")
            continue
        if entry[0] == "l" and not entry[3]:
            out.append(f"{shard} is a symlink to {entry[2]}, which is missing")
            continue
        size = m.size(rel) or 0
        want = m.expected.get(rel)
        if want == -1:
            out.append(f"{shard}: safetensors header unreadable ({size} bytes)")
        elif want is not None and size != want:
            out.append(f"{shard} truncated: {size} of {want} bytes")
        else:
            elsewhere = [(o.node, o.size(rel)) for o in others if o.ref == m.ref and o.size(rel)]
            bigger = [(n, s) for n, s in elsewhere if s and s > size]
            if bigger:
                out.append(f"{shard} is {size} bytes, {bigger[0][1]} on {bigger[0][0]}")
    out += [f"{name}: {what}" for name, what in m.bad.values()]
    refs = {o.ref for o in others if o.exists and o.ref}
    if refs and m.ref not in refs:
        out.append(f"revision {m.ref}, other nodes have {', '.join(sorted(refs))}")
    return out


def complete_rows(config: Config, found: dict[str, Manifest], add) -> None:
    model = config["model"]
    complete = [name for name, m in found.items() if m.exists and not problems(m, [])]
    for name, m in found.items():
        if not m.error and not m.exists:
            add("model.complete", name, "skipped", f"{model} not in the cache on {name} (see model.cached)")
            continue
        wrong = problems(m, [o for o in found.values() if o is not m])
        if not wrong:
            add(
                "model.complete",
                name,
                "pass",
                f"{model}: config.json and {len(m.shards or [])} shard(s) complete, revision {(m.ref or '')[:12]}"
                + (f", {m.hashed} file(s) hashed as their blob names say" if m.hashed is not None else ""),
            )
            continue
        source = next((c for c in complete if c != name), None)
        fix = (
            f"spark-tui sync model --from {source} --to {name}" + (" --verify-hashes" if m.bad else "")
            if source
            else f"download {model} again on {name} (huggingface-cli download {model})"
        )
        add("model.complete", name, "fail", f"{model} on {name}: " + "; ".join(wrong), fix)
