"""Read a YAML file into plain data plus the file:line:col of every value.

Safe against hostile files: size limit, strict UTF-8, no anchors/aliases (billion
laughs), bounded nesting, duplicate keys refused (YAML would silently keep the last
one, which is exactly the kind of silent override spark-tui exists to prevent).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import yaml

from spark_tui.errors import ConfigError

MAX_BYTES = 1 << 20
MAX_DEPTH = 20
SAFE_TAGS = {f"tag:yaml.org,2002:{t}" for t in ("str", "int", "float", "bool", "null", "map", "seq")}


@dataclass
class YamlDoc:
    path: str
    data: dict
    positions: dict[tuple, tuple[int, int]] = field(default_factory=dict)

    def where(self, *path) -> str:
        """file:line:col of the value at `path`, or of the nearest parent that has one."""
        path = tuple(path)
        while path:
            if path in self.positions:
                line, col = self.positions[path]
                return f"{self.path}:{line}:{col}"
            path = path[:-1]
        return self.path

    def key_where(self, *path) -> str:
        pos = self.positions.get(tuple(path) + ("<key>",)) or self.positions.get(tuple(path))
        return f"{self.path}:{pos[0]}:{pos[1]}" if pos else self.where(*path)


def load(path: str) -> YamlDoc:
    try:
        with open(path, "rb") as fh:
            raw = fh.read(MAX_BYTES + 1)
    except FileNotFoundError:
        raise ConfigError(path, "no such file") from None
    except IsADirectoryError:
        raise ConfigError(path, "is a directory, not a YAML file") from None
    except OSError as exc:
        raise ConfigError(path, f"cannot read: {exc.strerror}") from None
    if len(raw) > MAX_BYTES:
        raise ConfigError(path, f"file is larger than {MAX_BYTES // 1024} KiB; a cluster file is a few KiB")
    return parse(raw, path)


def parse(raw: bytes, path: str) -> YamlDoc:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        col = exc.start - (raw.rfind(b"\n", 0, exc.start) + 1) + 1
        raise ConfigError(f"{path}:{line}:{col}", f"not UTF-8 (byte 0x{raw[exc.start]:02x})") from None
    if "\x00" in text:
        line = text[: text.index("\x00")].count("\n") + 1
        raise ConfigError(f"{path}:{line}", "NUL byte in file")
    try:
        _refuse_aliases(text, path)
        node = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f"{path}:{mark.line + 1}:{mark.column + 1}" if mark else path
        raise ConfigError(where, f"YAML syntax error: {exc.problem or exc.context}") from None
    except yaml.YAMLError as exc:
        raise ConfigError(path, f"YAML error: {exc}") from None
    except RecursionError:
        raise ConfigError(path, f"nesting is deeper than {MAX_DEPTH} levels") from None
    doc = YamlDoc(path, {})
    if node is None:
        return doc
    if not isinstance(node, yaml.MappingNode):
        raise ConfigError(_at(path, node), "the top level must be a mapping of settings")
    doc.data = _convert(node, doc, (), 0)
    return doc


def _refuse_aliases(text: str, path: str) -> None:
    """Anchors and aliases let a small file expand to gigabytes (billion laughs): refuse them."""
    depth = 0
    for event in yaml.parse(text, Loader=yaml.SafeLoader):
        if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None):
            raise ConfigError(_at(path, event), "YAML anchors and aliases are not allowed")
        if isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
            depth += 1
            if depth > MAX_DEPTH:
                raise ConfigError(_at(path, event), f"nesting is deeper than {MAX_DEPTH} levels")
        elif isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
            depth -= 1


def _at(path: str, node) -> str:
    return f"{path}:{node.start_mark.line + 1}:{node.start_mark.column + 1}"


def _convert(node, doc: YamlDoc, where: tuple, depth: int):
    if depth > MAX_DEPTH:
        raise ConfigError(_at(doc.path, node), f"nesting is deeper than {MAX_DEPTH} levels")
    doc.positions[where] = (node.start_mark.line + 1, node.start_mark.column + 1)
    if node.tag not in SAFE_TAGS:
        tag = node.tag.replace("tag:yaml.org,2002:", "!!")
        raise ConfigError(_at(doc.path, node), f"YAML tag {tag} is not allowed")
    if isinstance(node, yaml.MappingNode):
        out: dict = {}
        for key_node, value_node in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                raise ConfigError(_at(doc.path, key_node), "YAML merge keys (<<) are not allowed")
            if not isinstance(key_node, yaml.ScalarNode):
                raise ConfigError(_at(doc.path, key_node), "keys must be plain names")
            key = key_node.value
            if key in out:
                first = doc.positions[where + (key, "<key>")][0]
                raise ConfigError(
                    _at(doc.path, key_node), f"duplicate key {key!r} (first set on line {first})"
                )
            doc.positions[where + (key, "<key>")] = (
                key_node.start_mark.line + 1,
                key_node.start_mark.column + 1,
            )
            out[key] = _convert(value_node, doc, where + (key,), depth + 1)
        return out
    if isinstance(node, yaml.SequenceNode):
        return [_convert(item, doc, where + (i,), depth + 1) for i, item in enumerate(node.value)]
    return _scalar(node, doc)


_constructor = yaml.SafeLoader("")


def _scalar(node, doc: YamlDoc):
    try:
        return _constructor.construct_object(node, deep=True)
    except yaml.YAMLError as exc:
        raise ConfigError(_at(doc.path, node), f"bad value: {getattr(exc, 'problem', exc)}") from None
