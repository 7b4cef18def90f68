"""Layered resolution of settings, with provenance for every value.

Precedence, lowest first:
    default < detected < user config < cluster file < environment < flags < interactive

Inside one layer a node's own value beats the cluster-wide one. Every value any
layer requested is kept, so the operator can see what won and why the rest lost.
Maps (`env`, `keys`) merge key by key; each key keeps its own provenance.

Reading and resolving are apart: `read_layers` reads the files, the environment and the flags
once (the only place that touches the disk, and validates what it read); `resolve_layers` puts
the detected and interactive layers on top. A refresh that detects values, or an edit, is
`relayer(config, ...)`: the same layers, never a file read again.
"""

from __future__ import annotations

import ipaddress
import os
import socket
from collections.abc import Mapping

from spark_tui import paths
from spark_tui.errors import ConfigError
from spark_tui.settings import kinds, secret_file, yamlfile
from spark_tui.settings.container_env import derive_container_env
from spark_tui.settings.lookalike import lookalike_warnings, secret_arg_warnings
from spark_tui.settings.model import (  # the data model; its users may import it from here too
    NOTHING_DETECTED,
    Candidate,
    Config,
    Detected,
    Inputs,
    Layers,
    NodeConfig,
    Source,
    Value,
    closest,
)
from spark_tui.settings.registry import (
    BY_ENV,
    BY_FILE_ENV,
    BY_KEY,
    CLUSTER_SETTINGS,
    ENV_PREFIX,
    NODE_BY_KEY,
    NODE_SETTINGS,
    Setting,
)

SECRET_KEYS = [s.key for s in CLUSTER_SETTINGS if s.secret]

# ---------------------------------------------------------------------------


def read_layers(inputs: Inputs) -> Layers:
    """The default, user, cluster, env and flag layers: every file read once, here."""
    files: list[str] = []
    requests: dict[str, list[Candidate]] = {s.key: [] for s in CLUSTER_SETTINGS}
    node_requests: list[dict[str, list[Candidate]]] = []
    secret_docs: list[tuple[str, yamlfile.YamlDoc]] = []  # files read, told when others can read a secret

    for s in CLUSTER_SETTINGS:
        requests[s.key].append(Candidate(s.default, Source("default", "default")))

    user_path = (
        inputs.user_config if inputs.user_config is not None else paths.user_config_file(inputs.environ)
    )
    if user_path and os.path.exists(user_path):
        doc = yamlfile.load(user_path)
        files.append(user_path)
        secret_docs.append((user_path, doc))
        _read_settings(doc, "user", requests, allow_nodes=False)

    env_values = _read_environ(inputs.environ)
    cluster_path, cluster_where = inputs.cluster_file, inputs.cluster_file_source
    if cluster_path is None:
        env_cluster = env_values.get("cluster")
        chosen = env_cluster or _top(requests["cluster"])
        if chosen is not None and chosen.value:
            cluster_path, cluster_where = os.path.expanduser(chosen.value), str(chosen.source)
    if cluster_path is not None:
        try:
            doc = yamlfile.load(cluster_path)
        except ConfigError as exc:
            if exc.source == cluster_path and not os.path.exists(cluster_path):
                raise ConfigError(cluster_where, f"cluster file {cluster_path}: {exc.message}") from None
            raise
        files.append(cluster_path)
        secret_docs.append((cluster_path, doc))
        _read_settings(doc, "cluster", requests, allow_nodes=True)
        for index, entry in enumerate(_node_entries(doc)):
            node_requests.append(_read_node(doc, index, entry))

    for key, cand in env_values.items():
        requests[key].append(cand)
    for key, (value, flag) in inputs.flags.items():
        requests[key].append(Candidate(value, Source("flag", flag)))

    if not node_requests:
        node_requests.append(_local_node())
    file_warnings = []
    for path, doc in secret_docs:
        warned = secret_file.readable_by_others(path, [k for k in SECRET_KEYS if k in doc.data])
        if warned:
            file_warnings.append(warned)
    return Layers(requests, node_requests, files, dict(inputs.environ), file_warnings)


def resolve(inputs: Inputs) -> Config:
    return resolve_layers(read_layers(inputs), inputs.interactive, inputs.detected)


def resolve_layers(
    layers: Layers, interactive: Mapping[str, object], detected: Mapping[str, Detected]
) -> Config:
    """The layers read once, with the detected and interactive layers on top: no disk, no file
    validated again. A bad interactive edit raises ConfigError and builds nothing."""
    requests = {key: list(cands) for key, cands in layers.requests.items()}
    node_requests = [{key: list(cands) for key, cands in nreq.items()} for nreq in layers.node_requests]
    for key, value in interactive.items():
        _apply_interactive(key, value, requests, node_requests)

    values = {key: _pick(BY_KEY[key], cands) for key, cands in requests.items()}
    nodes = [_resolve_node(i, nreq, requests, detected) for i, nreq in enumerate(node_requests)]
    _validate_nodes(nodes, values)
    _derive_defaults(values, nodes)
    for n in nodes:
        n.container_env = derive_container_env(n, values, nodes)
    warnings = (
        lookalike_warnings(layers.environ, values)
        + _unused_by_executor(values)
        + secret_arg_warnings(values)
        + layers.file_warnings
    )
    return Config(values, nodes, warnings, list(layers.files), layers, dict(interactive), dict(detected))


def relayer(
    config: Config,
    interactive: Mapping[str, object] | None = None,
    detected: Mapping[str, Detected] | None = None,
) -> Config:
    """The same layers resolved again with other interactive edits or detected values (each left
    as it was when not given): what a refresh or an edit makes, without reading any file."""
    assert config.layers is not None, "a Config built by resolve() knows its layers"
    return resolve_layers(
        config.layers,
        config.interactive if interactive is None else interactive,
        config.detected if detected is None else detected,
    )


def check_cockpit_settings(config: Config) -> None:
    """Settings only the cockpit uses are checked where they are read (once per command, and on
    an interactive edit of one): `spark-tui config --keys nosuch=x` is bad input, not a value
    that fails later."""
    from spark_tui.settings.keys import validate_keymap
    from spark_tui.settings.themefiles import check_theme

    assert config.layers is not None, "a Config built by resolve() knows its layers"
    keys = config.values["keys"]
    validate_keymap(dict(keys.value), lambda k: keys.item_sources.get(k, "keys"))
    check_theme(config["theme"], str(config.values["theme"].source), config.layers.environ)


def _top(cands: list[Candidate]) -> Candidate | None:
    real = [c for c in cands if c.source.layer != "default"]
    return max(real, key=lambda c: c.source.rank) if real else None


def _pick(setting: Setting, cands: list[Candidate]) -> Value:
    ordered = sorted(cands, key=lambda c: c.source.rank)
    if isinstance(setting.kind, kinds.EnvMap):
        merged: dict[str, str] = {}
        item_sources: dict[str, Source] = {}
        for cand in ordered:
            for key, val in (cand.value or {}).items():
                merged[key] = val
                item_sources[key] = cand.source
        return Value(setting, merged, ordered[-1].source, ordered, item_sources)
    winner = ordered[-1]
    return Value(setting, winner.value, winner.source, ordered)


def _read_settings(doc: yamlfile.YamlDoc, layer: str, requests, allow_nodes: bool) -> None:
    for key, raw, path in _flatten(doc.data):
        if key == "nodes":
            if not allow_nodes:
                raise ConfigError(
                    doc.key_where(*path), "`nodes` belongs in a cluster file, not the user config"
                )
            continue
        setting = BY_KEY.get(key)
        if setting is None:
            valid = list(BY_KEY) + (["nodes"] if allow_nodes else [])
            hint = closest(key, valid)
            raise ConfigError(
                doc.key_where(*path),
                f"unknown setting {key!r}" + (f"; did you mean {hint!r}?" if hint else ""),
            )
        if setting.scope == "user" and layer == "cluster":
            raise ConfigError(
                doc.key_where(*path), f"{key!r} can only be set in the user config, env or flags"
            )
        requests[key].append(
            Candidate(_check(setting, raw, doc.where(*path)), Source(layer, doc.where(*path)))
        )


def _flatten(data: dict, prefix: tuple = ()):
    """Yield (dotted key, value, yaml path); nested groups such as `timeouts:` are flattened."""
    groups = {s.key.split(".")[0] for s in BY_KEY.values() if "." in s.key}
    for key, raw in data.items():
        key = str(key)
        if not prefix and key in groups and isinstance(raw, dict):
            for sub, val in raw.items():
                yield f"{key}.{sub}", val, (key, sub)
        else:
            yield key, raw, prefix + (key,)


def _check(setting: Setting, raw, where: str):
    if raw is None:
        return None if not setting.required else _fail(where, f"{setting.key} needs a value")
    try:
        return setting.kind.from_yaml(raw)
    except ValueError as exc:
        raise ConfigError(where, f"{setting.key}: {exc}") from None


def _fail(where: str, message: str):
    raise ConfigError(where, message)


def _node_entries(doc: yamlfile.YamlDoc) -> list[dict]:
    nodes = doc.data.get("nodes")
    if nodes is None:
        raise ConfigError(doc.path, "no `nodes:` list; a cluster file lists its nodes")
    if not isinstance(nodes, list) or not nodes:
        raise ConfigError(doc.where("nodes"), "`nodes` must be a non-empty list of node mappings")
    for i, entry in enumerate(nodes):
        if not isinstance(entry, dict):
            raise ConfigError(doc.where("nodes", i), "each node must be a mapping with name and host")
    return nodes


def _read_node(doc: yamlfile.YamlDoc, index: int, entry: dict) -> dict[str, list[Candidate]]:
    out: dict[str, list[Candidate]] = {}
    for key, raw in entry.items():
        setting = NODE_BY_KEY.get(str(key))
        if setting is None:
            hint = closest(str(key), NODE_BY_KEY)
            raise ConfigError(
                doc.key_where("nodes", index, key),
                f"unknown node setting {key!r}" + (f"; did you mean {hint!r}?" if hint else ""),
            )
        where = doc.where("nodes", index, key)
        out[setting.key] = [Candidate(_check(setting, raw, where), Source("cluster", where, node_level=True))]
    for setting in NODE_SETTINGS:
        if setting.required and setting.key not in out:
            raise ConfigError(doc.where("nodes", index), f"node {index + 1} has no {setting.key!r}")
    return out


def _local_node() -> dict[str, list[Candidate]]:
    """With no cluster file the cluster is this machine, reached without SSH."""
    here = Source("default", "default: no cluster file, this machine")
    return {
        "name": [Candidate(socket.gethostname().split(".")[0] or "local", here)],
        "host": [Candidate("local", here)],
    }


def _read_environ(environ: Mapping[str, str]) -> dict[str, Candidate]:
    out = {}
    for name, text in environ.items():
        if not name.startswith(ENV_PREFIX):
            continue
        secret = BY_FILE_ENV.get(name)
        if secret is not None:  # a secret's file form (settings/secret_file.py)
            if secret.env in environ:
                raise ConfigError(name, f"set {secret.env} or {name}, not both")
            value, where = secret_file.read(text, name)
            try:
                out[secret.key] = Candidate(secret.kind.from_text(value), Source("env", f"{name}={where}"))
            except ValueError as exc:
                raise ConfigError(name, f"{where}: {exc}") from None
            continue
        setting = BY_ENV.get(name)
        if setting is None:
            hint = closest(name, BY_ENV)
            raise ConfigError(
                name,
                "environment variable matches no spark-tui setting"
                + (f"; did you mean {hint}?" if hint else ""),
            )
        try:
            out[setting.key] = Candidate(setting.kind.from_text(text), Source("env", name))
        except ValueError as exc:
            raise ConfigError(name, str(exc)) from None
    return out


def _apply_interactive(key: str, value, requests, node_requests) -> None:
    """Interactive edits: `image` for the cluster, `nodes.NAME.netdev` for one node."""
    where = f"in the wizard ({key})"
    if key.startswith("nodes."):
        _, name, sub = (key.split(".", 2) + ["", ""])[:3]
        setting = NODE_BY_KEY.get(sub)
        nreq = next((r for r in node_requests if r["name"][-1].value == name), None)
        if nreq is None or setting is None or setting.scope == "node" and sub == "name":
            raise ConfigError(where, f"no node setting {key!r}")
        nreq.setdefault(sub, []).append(
            Candidate(_parse_edit(setting, value, where), Source("interactive", where, node_level=True))
        )
        return
    setting = BY_KEY.get(key)
    if setting is None:
        raise ConfigError(where, "no such setting")
    requests[key].append(Candidate(_parse_edit(setting, value, where), Source("interactive", where)))


def _parse_edit(setting: Setting, value, where: str):
    try:
        return setting.kind.from_text(value) if isinstance(value, str) else setting.kind.from_yaml(value)
    except ValueError as exc:
        raise ConfigError(where, f"{setting.key}: {exc}") from None


def _resolve_node(index, nreq, requests, detected: Mapping[str, Detected]) -> NodeConfig:
    values: dict[str, Value] = {}
    name = nreq["name"][-1].value
    found = detected.get(name, NOTHING_DETECTED)
    for setting in NODE_SETTINGS:
        cands = list(nreq.get(setting.key, []))
        if setting.per_node:
            cands = list(requests[setting.key]) + cands
            shown = found.setting(setting.key) if setting.detected else None
            if shown is not None:
                cands.append(Candidate(shown.value, Source("detected", shown.how, node_level=True)))
        if not cands:
            cands = [Candidate(None, Source("default", "default"))]
        values[setting.key] = _pick(setting, cands)
    node = NodeConfig(name, index, values)
    if found.home is not None:
        node.home, node.home_source = found.home.value, found.home.how
    if found.model_complete is not None:
        node.model_check = found.model_complete
    return node


def _validate_nodes(nodes: list[NodeConfig], values: dict[str, Value]) -> None:
    seen: dict[str, NodeConfig] = {}
    for n in nodes:
        if n.name in seen:
            raise ConfigError(
                n.values["name"].source.location,
                f"duplicate node name {n.name!r} (also node {seen[n.name].index + 1})",
            )
        seen[n.name] = n
    head = values["head"]
    if head.value is None:
        nodes[0].is_head = True
    elif head.value in seen:
        seen[head.value].is_head = True
    else:
        raise ConfigError(head.source.location, f"head {head.value!r} is not a node name ({', '.join(seen)})")


def _derive_defaults(values: dict[str, Value], nodes: list[NodeConfig]) -> None:
    """Defaults that depend on other values are recorded as derived, with what they came from."""
    for n in nodes:
        ip, host = n.values["data_ip"], n.values["host"]
        if ip.value is None and _is_ipv4(host.value):
            n.values["data_ip"] = Value(
                ip.setting, host.value, Source("default", f"derived from host ({host.source})"), ip.requested
            )
    addrs: dict[str, NodeConfig] = {}
    for n in nodes:
        ip = n.values["data_ip"]
        if ip.value in addrs:
            where = ip.source.location if ip.source.layer != "default" else n.values["host"].source.location
            raise ConfigError(where, f"data_ip {ip.value} is already used by node {addrs[ip.value].name!r}")
        if ip.value is not None:
            addrs[ip.value] = n
    _derive_executor(values, nodes)
    tp = values["tensor_parallel_size"]
    if tp.value is None:
        pp = values["pipeline_parallel_size"].value or 1
        count = max(1, len(nodes) // pp)
        values["tensor_parallel_size"] = Value(
            tp.setting,
            count,
            Source("default", f"derived: {len(nodes)} node(s) / pipeline {pp}"),
            tp.requested,
        )
    smn, model = values["served_model_name"], values["model"]
    if smn.value is None and model.value is not None:
        values["served_model_name"] = Value(
            smn.setting, model.value, Source("default", f"derived from model ({model.source})"), smn.requested
        )


def _derive_executor(values: dict[str, Value], nodes: list[NodeConfig]) -> None:
    """solo on one node, ray on more, unless a layer asked; an executor that cannot run on this
    many nodes is refused naming where it was asked (the node count is the fact that decides)."""
    ex, count = values["executor"], len(nodes)
    if ex.value is None:
        derived = "solo" if count == 1 else "ray"
        how = f"derived: {count} node(s)" + (", one node runs `vllm serve` alone" if count == 1 else "")
        values["executor"] = Value(ex.setting, derived, Source("default", how), ex.requested)
        return
    if ex.value == "solo" and count > 1:
        raise ConfigError(
            ex.source.location,
            f"executor solo runs `vllm serve` on one node, but this cluster has {count} "
            f"({', '.join(n.name for n in nodes)}): use executor ray or native, or list one node",
        )
    if ex.value != "solo" and count == 1:
        raise ConfigError(
            ex.source.location,
            f"executor {ex.value} spans two or more nodes, but this cluster has one ({nodes[0].name}): "
            "leave executor unset (solo on one node: `vllm serve` without Ray or multi-node flags)",
        )


def _unused_by_executor(values: dict[str, Value]) -> list[str]:
    """A value asked for that the executor has no use for is said, never silently dropped."""
    ex, port = values["executor"], values["master_port"]
    if ex.value == "solo" and port.source.layer != "default":
        return [f"master_port {port.value} ({port.source}) is not used: executor solo has no master port"]
    return []


def _is_ipv4(text) -> bool:
    try:
        ipaddress.IPv4Address(text)
        return True
    except (ValueError, TypeError):
        return False
