"""The resolved configuration: every value with its provenance (what won, from which layer, and
every value another layer asked for), per cluster and per node. Built by settings/resolve.py."""

from __future__ import annotations

import difflib
import os
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any

from spark_tui.secret_names import SECRET_MASK, SECRET_NAME, mask_args
from spark_tui.settings.registry import Setting

LAYERS = ("default", "detected", "user", "cluster", "env", "flag", "interactive")


@dataclass(frozen=True)
class Source:
    layer: str
    location: str
    node_level: bool = False

    @property
    def rank(self) -> tuple[int, int]:
        return (LAYERS.index(self.layer), 1 if self.node_level else 0)

    def __str__(self) -> str:
        names = {
            "default": "built-in default",
            "detected": "detected",
            "user": "user config",
            "cluster": "cluster file",
            "env": "environment",
            "flag": "command line",
            "interactive": "interactive edit",
        }
        if self.layer == "default":
            return self.location if self.location != "default" else names["default"]
        return f"{names[self.layer]} {self.location}"


@dataclass(frozen=True)
class Candidate:
    value: Any
    source: Source


@dataclass
class Value:
    """One resolved setting: the winner, everything requested, and per-key sources for maps."""

    setting: Setting
    value: Any  # of the type its setting's kind makes
    source: Source
    requested: list[Candidate] = field(default_factory=list)
    item_sources: dict[str, Source] = field(default_factory=dict)

    def shown(self) -> str:
        return mask(self.setting, self.value)

    def overridden(self) -> list[tuple[Candidate, str]]:
        """Requested values that did not take effect, each with the reason."""
        out = []
        if isinstance(self.value, dict):
            for cand in self.requested:
                for key, val in (cand.value or {}).items():
                    winner = self.item_sources.get(key)
                    if winner is not None and winner != cand.source and self.value.get(key) != val:
                        out.append((Candidate({key: val}, cand.source), f"{key} overridden by {winner}"))
                    elif winner is not None and winner != cand.source:
                        out.append((Candidate({key: val}, cand.source), f"{key}: same value as {winner}"))
            return out
        for cand in self.requested:
            if cand.source != self.source and cand.source.layer != "default":
                same = cand.value == self.value
                out.append((cand, f"{'same value as' if same else 'overridden by'} {self.source}"))
        return out


@dataclass(frozen=True)
class Found:
    """One value a node showed, and the evidence (`on spark-2: the interface holding 10.0.0.2`)."""

    value: Any
    how: str


@dataclass(frozen=True)
class Detected:
    """What one node showed for the values left to detection: the `detected` layer of that node.

    netdev and hca are settings (registry: detected=True) that lose to every configured layer;
    home is a fact of the node (where `~` in a volume points), not a setting; so is
    model_complete, `model.complete` on the node as (passed, what it found), which decides
    whether the containers may run offline (settings/container_env.py)."""

    netdev: Found | None = None
    hca: Found | None = None
    home: Found | None = None
    model_complete: tuple[bool, str] | None = None

    def setting(self, key: str) -> Found | None:
        return getattr(self, key, None) if key not in ("home", "model_complete") else None

    def __bool__(self) -> bool:
        return any(getattr(self, f.name) is not None for f in fields(self))


NOTHING_DETECTED = Detected()


@dataclass
class DerivedVar:
    name: str
    value: str
    derived_from: str
    secret: bool = False
    overridden_by: Source | None = None

    def shown(self) -> str:
        return SECRET_MASK if self.secret and self.value else self.value


@dataclass
class NodeConfig:
    name: str
    index: int
    values: dict[str, Value]
    is_head: bool = False
    container_env: list[DerivedVar] = field(default_factory=list)
    # The login user's home on the node, where `~` in a volume points: a fact of the node, not a
    # setting, known once the node was reached (the detected layer's `home`).
    home: str | None = None
    home_source: str = ""
    # `model.complete` on this node as the detected layer found it: (passed, what it said); None
    # when the node was not asked (core/launch/live.py asks it). Decides HF_HUB_OFFLINE (container_env).
    model_check: tuple[bool, str] | None = None
    # Variables spark-tui would derive but did not, each with why (shown beside the environment).
    env_not_set: list[tuple[str, str]] = field(default_factory=list)

    def __getitem__(self, key: str) -> Any:
        # Any, not object: each value's type is its setting's kind (validated when resolved).
        return self.values[key].value

    @property
    def local(self) -> bool:
        return self.values["host"].value == "local"

    def expand_home(self, path: str) -> str | None:
        """`~` or `~/x` as the node sees it; None while the node's home is not known."""
        if path != "~" and not path.startswith("~/"):
            return path
        home = os.path.expanduser("~") if self.local else self.home
        if home is None:
            return None
        return home.rstrip("/") + path[1:] or "/"

    def env_dict(self) -> dict[str, str]:
        return {v.name: v.value for v in self.container_env if v.overridden_by is None}


@dataclass(frozen=True)
class Timeouts:
    """The launch timeouts (the registry's `timeouts.*`), typed: seconds each."""

    container: float
    ray_join: float
    nccl_init: float
    ready: float

    @classmethod
    def from_config(cls, config: Config) -> Timeouts:
        return cls(**{f.name: float(config[f"timeouts.{f.name}"]) for f in fields(cls)})


@dataclass
class Config:
    values: dict[str, Value]
    nodes: list[NodeConfig]
    warnings: list[str]
    files_read: list[str]
    # What it was resolved from: the layers read once, then the interactive edits and detected
    # values on top (resolve.relayer resolves them again with other edits or detected values).
    layers: Layers | None = None
    interactive: dict[str, object] = field(default_factory=dict)
    detected: dict[str, Detected] = field(default_factory=dict)

    def __getitem__(self, key: str) -> Any:
        # Any, not object: each value's type is its setting's kind (validated when resolved).
        return self.values[key].value

    @property
    def head(self) -> NodeConfig:
        return next(n for n in self.nodes if n.is_head)

    @property
    def timeouts(self) -> Timeouts:
        return Timeouts.from_config(self)

    def node(self, name: str) -> NodeConfig:
        for n in self.nodes:
            if n.name == name:
                return n
        raise KeyError(name)


@dataclass
class Layers:
    """What the files, the environment and the flags ask for, read once with provenance.

    Reading touches the disk (the user config, the cluster file, secret files); resolving does
    not: detected values and interactive edits re-layer these requests (`relayer`), so a refresh
    or an edit never reads or validates a file again."""

    requests: dict[str, list[Candidate]]
    node_requests: list[dict[str, list[Candidate]]]
    files: list[str]
    environ: Mapping[str, str]
    file_warnings: list[str]  # secrets in files others can read, told each time the config is shown


@dataclass
class Inputs:
    """Everything resolution reads. The CLI fills it from argv; tests fill it directly."""

    cluster_file: str | None = None
    cluster_file_source: str = "--cluster"
    user_config: str | None = None
    environ: Mapping[str, str] = field(default_factory=dict)
    flags: dict[str, tuple[object, str]] = field(default_factory=dict)
    interactive: dict[str, object] = field(default_factory=dict)
    detected: dict[str, Detected] = field(default_factory=dict)


def mask(setting: Setting, value) -> str:
    if setting.secret and value:
        return SECRET_MASK
    if isinstance(value, dict):
        value = {k: SECRET_MASK if SECRET_NAME.search(k) else v for k, v in value.items()}
    if setting.kind.name == "args" and isinstance(value, list):
        value = mask_args(value)  # `--api-key sk-...` in vllm_args
    return setting.kind.show(value)


def closest(word: str, options) -> str | None:
    found = difflib.get_close_matches(word, list(options), n=1, cutoff=0.6)
    return found[0] if found else None
