"""Requested-vs-effective rows for a resolved Config, shared by `spark-tui config` and the wizard."""

from __future__ import annotations

from dataclasses import dataclass, field

from spark_tui.settings.model import Config, NodeConfig, Value, mask
from spark_tui.settings.registry import CLUSTER_SETTINGS, NODE_SETTINGS


@dataclass
class Row:
    scope: str  # "cluster" or a node name
    key: str
    effective: str
    source: str
    not_applied: list[str]  # "value (source): reason"
    secret: bool = False
    requested: list[tuple[str, str, bool]] = field(
        default_factory=list
    )  # (value, layer, took effect), lowest first


def _row(scope: str, value: Value) -> Row:
    lost = []
    for cand, reason in value.overridden():
        lost.append(f"{mask(value.setting, cand.value)} ({cand.source}): {reason}")
    requested = [
        (mask(value.setting, c.value), c.source.layer, c.source == value.source)
        for c in value.requested
        if c.source.layer != "default"
    ]
    return Row(
        scope, value.setting.key, value.shown(), str(value.source), lost, value.setting.secret, requested
    )


def matters(row: Row, config: Config) -> bool:
    """A row worth a first look: set by some layer, derived, overridden, or warned about (the
    rest are built-in defaults nobody touched)."""
    if row.source != "built-in default" or row.not_applied:
        return True
    return any(f"`{row.key}`" in w for w in config.warnings)  # warnings name a setting as `key`


def rows(config: Config) -> list[Row]:
    out = [_row("cluster", config.values[s.key]) for s in CLUSTER_SETTINGS if not s.per_node]
    for node in config.nodes:
        out += [_row(node.name, node.values[s.key]) for s in NODE_SETTINGS]
        _show_home_expanded(next(r for r in out if r.scope == node.name and r.key == "volumes"), node)
    return out


def _show_home_expanded(row: Row, node: NodeConfig) -> None:
    """Volumes as the node resolves them: `~` is that node's home, not this machine's."""
    volumes = node["volumes"]
    if not any(v.startswith("~") for v in volumes):
        return
    expanded = []
    for volume in volumes:
        host, sep, rest = volume.partition(":")
        home_based = node.expand_home(host)
        if home_based is None:
            row.source += f"; ~ not expanded yet ({node.name} not reached)"
            return
        expanded.append(home_based + sep + rest)
    row.effective = ",".join(expanded)
    where = "this machine" if node.local else node.home_source
    row.source += f"; ~ = {node.expand_home('~')} ({where})"


def as_dict(config: Config) -> dict:
    def row_dict(r: Row) -> dict:
        return {"key": r.key, "effective": r.effective, "source": r.source, "not_applied": r.not_applied}

    all_rows = rows(config)
    return {
        "warnings": config.warnings,
        "files_read": config.files_read,
        "cluster": [row_dict(r) for r in all_rows if r.scope == "cluster"],
        "nodes": [
            {
                "name": n.name,
                "head": n.is_head,
                "settings": [row_dict(r) for r in all_rows if r.scope == n.name],
                "container_env": [
                    {
                        "name": v.name,
                        "value": v.shown(),
                        "derived_from": v.derived_from,
                        "overridden_by": str(v.overridden_by) if v.overridden_by else None,
                    }
                    for v in n.container_env
                ],
                "env_not_set": [{"name": name, "why": why} for name, why in n.env_not_set],
            }
            for n in config.nodes
        ],
    }


def as_text(config: Config) -> str:
    lines: list[str] = []
    if config.warnings:
        lines.append("WARNINGS")
        lines += [f"  ! {w}" for w in config.warnings]
        lines.append("")
    all_rows = rows(config)
    overridden = [r for r in all_rows if r.not_applied]
    if overridden:
        lines.append("REQUESTED BUT NOT APPLIED")
        for r in overridden:
            for lost in r.not_applied:
                lines.append(f"  {r.scope}.{r.key}: {lost}")
        lines.append("")
    lines.append(f"CLUSTER  (files read: {', '.join(config.files_read) or 'none'})")
    lines += _table([r for r in all_rows if r.scope == "cluster"])
    for node in config.nodes:
        lines.append("")
        lines.append(f"NODE {node.name}{'  (head)' if node.is_head else ''}")
        lines += _table([r for r in all_rows if r.scope == node.name])
        lines.append("  container environment:")
        width = max((len(v.name) + len(v.shown()) for v in node.container_env), default=0) + 1
        for v in node.container_env:
            pair = f"{v.name}={v.shown()}"
            note = f"  [overridden by {v.overridden_by}]" if v.overridden_by else ""
            lines.append(f"    {pair.ljust(width)}  <- {v.derived_from}{note}")
        lines += not_set_lines(node.env_not_set)
    return "\n".join(lines)


def not_set_lines(not_set: list[tuple[str, str]], indent: str = "    ") -> list[str]:
    """Variables spark-tui would derive but did not, grouped by why (config and plan)."""
    by_why: dict[str, list[str]] = {}
    for name, why in not_set:
        by_why.setdefault(why, []).append(name)
    return [f"{indent}{', '.join(names)} not set  <- {why}" for why, names in by_why.items()]


def _table(rows_: list[Row]) -> list[str]:
    kw = max((len(r.key) for r in rows_), default=0)
    vw = min(40, max((len(r.effective) for r in rows_), default=0))
    out = []
    for r in rows_:
        out.append(f"  {r.key.ljust(kw)}  {r.effective.ljust(vw)}  {r.source}")
    return out
