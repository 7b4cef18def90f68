"""What an image can run, known before a model load: its ENTRYPOINT and CMD, its vLLM version,
whether Ray imports in it, whether `vllm serve` takes the native multi-node flags (vLLM 0.11.1
on), its transformers version and the architectures its vLLM model registry lists.

Asked on the node that holds the image, through that node's Docker engine, never pulling:
`docker image inspect` first (no container); then one short container of the image running
PROBE with the image's own python3; an image without python3 is asked `vllm --version` and
`ray --version` instead. Answers depend only on the image ID, so they are cached on disk per ID:
a second look costs no container start.

Running an image runs its author's code: only images that look like vLLM are run unless every one
is asked for (`images --all`), and the container is confined (CONFINED: no network, no
capabilities, no new privileges, a read-only root, pids, memory, CPU and log limits; its output
read up to OUTPUT_CAP).
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path

import docker

from spark_tui.parsers.text import inert

NATIVE_SINCE = (0, 11, 1)  # vLLM that added --nnodes/--node-rank/--master-addr/--headless (PR 23691)
FACTS_MARK = "SPARK_TUI_FACTS"
PROBE_TIMEOUT = 180  # seconds: importing vLLM's registry imports torch, slow on a cold page cache
# Run by the image's python3. Reads package metadata (no import of vllm itself for the versions),
# imports ray (the executor needs it to import, not only to be installed) and vLLM's registry.
PROBE = f"""
import importlib.metadata as md, json
out = {{}}
for dist in ("vllm", "ray", "transformers"):
    try:
        out[dist] = md.version(dist)
    except Exception:
        out[dist] = None
try:
    import ray
    out["ray_import"] = True
except Exception as exc:
    out["ray_import"] = False
    out["ray_error"] = f"{{type(exc).__name__}}: {{exc}}"[:200]
try:
    from vllm.model_executor.models import ModelRegistry
    out["archs"] = sorted(ModelRegistry.get_supported_archs())
except Exception as exc:
    out["archs"] = None
    out["archs_error"] = f"{{type(exc).__name__}}: {{exc}}"[:200]
print("{FACTS_MARK} " + json.dumps(out))
"""
VERSION = re.compile(r"\d+(?:\.\d+)+")
# What a version string may be when an image states it (a label, ENV, package metadata):
# `0.10.2+9dd9ca32.nv25.10`, `0.11.1rc2.dev18+g1a2b3c`, `v2.49.2`. Anything else is the image
# author's text, not a version: never shown as one, never parsed (a label is hostile input).
WELL_FORMED = re.compile(r"v?\d{1,6}(?:\.\d{1,6}){1,3}[0-9A-Za-z.+_~-]{0,48}")
# The probe container's limits: importing vLLM's model registry imports torch (~1-2 GB, a thread
# per core); a fork bomb, a memory hog or a log flood stops at these.
CONFINED = dict(
    network_disabled=True,
    network_mode="none",
    cap_drop=["ALL"],
    security_opt=["no-new-privileges"],
    read_only=True,
    tmpfs={"/tmp": "rw,noexec,nosuid,size=64m"},
    pids_limit=512,
    mem_limit="4g",
    memswap_limit="4g",
    nano_cpus=2_000_000_000,
    log_config=docker.types.LogConfig(type="json-file", config={"max-size": "1m", "max-file": "1"}),
)
OUTPUT_CAP = 1 << 20  # bytes of the probe's output read back
NOT_RUN = "not run: only the effective image and images that look like vLLM are (images --all runs every one)"
IMAGE_ID = re.compile(r"sha256:[0-9a-f]{64}")  # what an engine's image `Id` is; the cache's file name


@dataclass
class ImageFacts:
    image_id: str
    entrypoint: list[str] | None = None
    cmd: list[str] | None = None
    vllm: str | None = None
    vllm_from: str = ""  # where the version was read: a label, ENV, python metadata, `vllm --version`
    ray: bool | None = None  # Ray imports in the image; None: could not tell
    ray_version: str | None = None
    transformers: str | None = None
    archs: list[str] | None = None  # the vLLM model registry's architectures; None: could not tell
    python: bool | None = None
    notes: list[str] = field(default_factory=list)  # why a question has no answer

    @property
    def native(self) -> bool | None:
        """Does `vllm serve` take the native multi-node flags?"""
        v = version_tuple(self.vllm)
        return None if v is None else v >= NATIVE_SINCE


def version_tuple(text: str | None) -> tuple[int, ...] | None:
    """`0.10.2+9dd9ca32.nv25.10` -> (0, 10, 2); None when there is no version in it."""
    m = VERSION.search(text or "")
    return tuple(int(x) for x in m.group(0).split(".")[:3]) if m else None


def checked_version(value: object, source: str, notes: list[str]) -> str | None:
    """`value` when it looks like a version; otherwise None, and a note quoting it inert."""
    if value is None or value == "":
        return None
    if isinstance(value, str) and WELL_FORMED.fullmatch(value):
        return value
    notes.append(f"{source} is not a version: {inert(str(value))[:80]!r}")
    return None


def from_attrs(attrs: dict) -> ImageFacts:
    """What `docker image inspect` alone says."""
    cfg = attrs.get("Config") or {}
    facts = ImageFacts(attrs.get("Id", ""), cfg.get("Entrypoint"), cfg.get("Cmd"))
    label = (cfg.get("Labels") or {}).get("com.nvidia.vllm.version")
    env = dict(e.split("=", 1) for e in cfg.get("Env") or [] if "=" in e)
    # An ill-formed label or ENV is noted and passed over: the next source may still tell.
    if label := checked_version(label, "label com.nvidia.vllm.version", facts.notes):
        facts.vllm, facts.vllm_from = label, "label com.nvidia.vllm.version"
    elif env_version := checked_version(env.get("VLLM_VERSION"), "ENV VLLM_VERSION", facts.notes):
        facts.vllm, facts.vllm_from = env_version, "ENV VLLM_VERSION"
    return facts


def merge_probe(facts: ImageFacts, output: str) -> bool:
    """Fold PROBE's answer into `facts`; False when the output holds no answer."""
    line = next((x for x in output.splitlines() if x.startswith(FACTS_MARK + " ")), None)
    if line is None:
        return False
    try:
        data = json.loads(line[len(FACTS_MARK) + 1 :])
    except ValueError:
        return False
    if not isinstance(data, dict):
        return False
    facts.python = True
    vllm = checked_version(data.get("vllm"), "vLLM's package metadata", facts.notes)
    if vllm and not facts.vllm:
        facts.vllm, facts.vllm_from = vllm, "python metadata"
    elif not data.get("vllm") and not facts.vllm:
        facts.notes.append("vLLM is not installed in the image's python")
    facts.ray = bool(data.get("ray_import"))
    facts.ray_version = checked_version(data.get("ray"), "Ray's package metadata", facts.notes)
    if not facts.ray and data.get("ray_error"):
        facts.notes.append(f"import ray: {data['ray_error']}")
    facts.transformers = checked_version(
        data.get("transformers"), "transformers' package metadata", facts.notes
    )
    archs = data.get("archs")
    facts.archs = [str(a) for a in archs] if isinstance(archs, list) else None
    if facts.archs is None and data.get("archs_error"):
        facts.notes.append(f"vLLM model registry: {data['archs_error']}")
    return True


def _run(client: docker.DockerClient, image_id: str, entrypoint: str, args: list[str]) -> tuple[int, str]:
    """Run the image once with `entrypoint args`, confined: (exit code, output up to OUTPUT_CAP).
    No pull, removed afterwards. Raises docker.errors.APIError when the program is not in the image."""
    container = client.containers.create(
        image_id, entrypoint=[entrypoint], command=args, labels={"spark-tui.probe": "1"}, **CONFINED
    )
    try:
        container.start()
        code = container.wait(timeout=PROBE_TIMEOUT).get("StatusCode", -1)
        return code, _capped_logs(container)
    finally:
        container.remove(force=True)


def _capped_logs(container) -> str:
    out = bytearray()
    stream = container.logs(stream=True, follow=False)
    try:
        for chunk in stream:
            out += chunk[: OUTPUT_CAP - len(out)]
            if len(out) >= OUTPUT_CAP:
                break
    finally:
        close = getattr(stream, "close", None)
        if close is not None:
            close()
    return out.decode("utf-8", errors="replace")


def looks_like_vllm(ref: str, facts: ImageFacts) -> bool:
    """By its name, or by a vLLM version its label or ENV states (what inspect alone shows)."""
    return "vllm" in ref.lower() or facts.vllm is not None


def _missing(exc: docker.errors.APIError) -> bool:
    return "executable file not found" in str(exc) or "no such file or directory" in str(exc)


def probe(client: docker.DockerClient, attrs: dict) -> ImageFacts:
    """Every answer for one image, asking the image itself (blocking: call it in a thread)."""
    facts = from_attrs(attrs)
    try:
        _, out = _run(client, facts.image_id, "python3", ["-c", PROBE])
        if merge_probe(facts, out):
            return facts
        facts.notes.append(f"python3 gave no answer: {out.strip()[-160:]}")
    except docker.errors.APIError as exc:
        if not _missing(exc):
            raise
        facts.python = False
        facts.notes.append("no python3 in the image: the model registry and transformers cannot be asked")
    # Without python: the programs themselves.
    for program in ("vllm", "ray"):
        try:
            code, out = _run(client, facts.image_id, program, ["--version"])
        except docker.errors.APIError as exc:
            if not _missing(exc):
                raise
            code, out = 127, ""
        found = VERSION.search(out) if code == 0 else None
        if program == "vllm" and found and not facts.vllm:
            facts.vllm, facts.vllm_from = found.group(0), "vllm --version"
        if program == "ray":
            facts.ray = bool(found)
            facts.ray_version = found.group(0) if found else None
    return facts


def _str_list(value) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


# The type of every ImageFacts field as the cache file must hold it (None allowed where the field
# is optional): a cached file is read back only when each field has its type.
_FIELD_OK = {
    "image_id": lambda v: isinstance(v, str),
    "entrypoint": lambda v: v is None or _str_list(v),
    "cmd": lambda v: v is None or _str_list(v),
    "vllm": lambda v: v is None or isinstance(v, str),
    "vllm_from": lambda v: isinstance(v, str),
    "ray": lambda v: v is None or isinstance(v, bool),
    "ray_version": lambda v: v is None or isinstance(v, str),
    "transformers": lambda v: v is None or isinstance(v, str),
    "archs": lambda v: v is None or _str_list(v),
    "python": lambda v: v is None or isinstance(v, bool),
    "notes": _str_list,
}


class FactsCache:
    """ImageFacts on disk, one JSON file per image ID (under the XDG cache dir, mode 0700).

    The ID comes from a node's engine, so it names a file only when it is `sha256:<64 hex>`
    (`../../x` would name one outside the directory); a file is read back only with every field
    of its type, for this very ID (anything else: ask the image again)."""

    def __init__(self, directory: str | os.PathLike):
        self.dir = Path(directory)

    def _path(self, image_id: str) -> Path | None:
        if not IMAGE_ID.fullmatch(image_id):
            return None
        return self.dir / (image_id.replace(":", "-") + ".json")

    def get(self, image_id: str) -> ImageFacts | None:
        path = self._path(image_id)
        if path is None:
            return None
        try:
            data = json.loads(path.read_text())
        except (OSError, ValueError):
            return None  # absent or torn
        if (
            not isinstance(data, dict)
            or set(data) != set(_FIELD_OK)  # written by another version
            or not all(ok(data[name]) for name, ok in _FIELD_OK.items())
            or data["image_id"] != image_id
        ):
            return None
        return ImageFacts(**data)

    def put(self, facts: ImageFacts) -> None:
        path = self._path(facts.image_id)
        if path is None:
            return  # not an ID an engine gives: never a file name
        self.dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=self.dir, suffix=".tmp")
        with os.fdopen(fd, "w") as f:
            json.dump(asdict(facts), f)
        os.replace(tmp, path)  # whole or not at all


def facts_for(
    client: docker.DockerClient, ref: str, cache: FactsCache, run: bool | None = True
) -> ImageFacts:
    """The facts of the image `ref` names on this engine: cached by ID, else asked once.
    `run`: True runs the image; None only when it looks like vLLM; otherwise (and False) what
    inspect shows, with NOT_RUN among the notes, not cached.
    Raises docker.errors.ImageNotFound when the engine does not hold it (nothing is pulled)."""
    attrs = client.images.get(ref).attrs
    cached = cache.get(attrs.get("Id", ""))
    if cached is not None:
        return cached
    if run is None:
        run = looks_like_vllm(ref, from_attrs(attrs))
    if not run:
        facts = from_attrs(attrs)
        facts.notes.append(NOT_RUN)
        return facts
    facts = probe(client, attrs)
    cache.put(facts)
    return facts
