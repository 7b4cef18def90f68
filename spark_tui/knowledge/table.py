"""The failure table (failures/<family>.yaml): loaded and validated once, each entry compiled.

An entry names one failure operators hit: its line patterns (regexes on the program's own wording),
what it means, the figures its lines carry (named groups), the fix and the public thread it was
taken from. A malformed entry is refused with `file:entry: what is wrong`, never skipped.
"""

from __future__ import annotations

import functools
import operator
import re
import re._constants as sre_c  # the regex parser's opcodes: to find each pattern's literal
import re._parser as sre_parse
import string
from dataclasses import dataclass, field
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any

import regex as partial_regex  # mrab-regex: partial matching, for a line cut inside a pattern's words
import yaml

from spark_tui.errors import KnowledgeError

SEVERITIES = ("error", "warn", "info")
# One file per family, read in this order (the order findings of one line are listed in).
FAMILIES = ("vllm", "hub", "cuda", "nccl", "link", "ray", "docker", "system", "driver")
FIGURE_TYPES = ("str", "int", "float", "gib")
KEYS = {
    "id",
    "family",
    "severity",
    "title",
    "means",
    "patterns",
    "figures",
    "fix",
    "source",
    "secondary",
    "generic",
    "then",
}
KEYS |= {"lookup", "reader", "unless", "aliases", "when", "exceptions"}
READERS = ("ethtool", "ethtool-i")  # format readers of diagnose that name an entry instead of a line
IDENT = re.compile(r"[a-z0-9_.]+")
# `when`: a comparison of two figures (`prompt < max_len`): two entries that share a wording are told
# apart by its numbers (vLLM says `(X in the messages, Y in the completion)` whichever part is too long)
WHEN = re.compile(r"\s*(?P<left>\w+)\s*(?P<op><=|>=|<|>)\s*(?P<right>\w+)\s*")
COMPARE = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge}
# a shorter literal would let most lines through the prefilter; counted in UTF-8 bytes, for a CJK
# character is as rare in a log as three ASCII ones (`已杀死`, the shell's `Killed` in Chinese)
MIN_NEEDLE = 4


@dataclass(frozen=True)
class Pattern:
    regex: re.Pattern[str]
    needle: str  # a literal every match contains: checked before the regex runs
    # `^` somewhere, but not as the start of a lookahead over the whole line (`^(?!...)`): the
    # engine tries such a pattern again after a log collector's prefix (engine.DECORATION)
    anchored: bool = False
    # `^` or `$` somewhere: a message quoted inside a line is tried as a line of its own (engine.quoted)
    bounded: bool = False
    # made from the entry's `exceptions:`: the line names only the exception's class, and gives way
    # to an entry that the line's words name (engine.Matcher.raw)
    by_class: bool = False
    # the named groups every match sets (not those inside an optional part or one branch)
    sure: frozenset[str] = frozenset()
    # the pattern holds `(?#cut)`: a line that ends inside its words after the marker is named too (Cut)
    cut: Cut | None = None


# A pattern's `(?#cut)` (a regex comment, so the pattern reads the same without it) marks where its words say the
# failure alone: a line cut anywhere after it (an issue title, an excerpt, a narrow terminal) is named when the
# words before the marker match and the line then ends inside the rest of the pattern.
CUT = "(?#cut)"


@dataclass(frozen=True)
class Cut:
    head: re.Pattern[str]  # the pattern's words before the marker: their figures are the cut line's
    # the words after it, compiled by `regex` with every lazy repeat made greedy: its partial matching says a line
    # ends inside them (regex 2026.5 calls `a+?b` a partial match of `aac`; greed changes no match's existence)
    rest: Any


# An exception class (`GatedRepoError`) or a dotted name when the class alone is ambiguous
# (`ray.exceptions.OutOfMemoryError`): the final line of a traceback, with any message or none.
EXCEPTION = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*")


def exception_pattern(name: str) -> Pattern:
    """The line a Python traceback ends with for `name`: the class (after any module path when the
    name is bare), then `: message` or nothing, or a message a person elided (`X: ...`, `X ...`);
    not `except X:`, `raise X(...)`, a retry's `as it raised X: ...` or `X,` in a sentence."""
    before = r"(?<![\w.])" if "." in name else r"(?<!\w)"
    tail = r"(?=:\s*\S|\s*(?:\.\.\.|…)?\s*$)"
    regex = before + r"(?<!raise )(?<!raised )" + re.escape(name) + tail
    return Pattern(re.compile(regex), needle=name.rsplit(".", 1)[-1], by_class=True)


@dataclass(frozen=True)
class Entry:
    id: str
    family: str
    severity: str
    title: str
    means: str
    fix: str
    source: tuple[str, ...]
    patterns: tuple[Pattern, ...]
    figures: dict[str, str] = field(default_factory=dict)  # name -> type
    # Lines after a match that add figures to it (nvidia-smi prints the versions after the error).
    then: tuple[Pattern, ...] = ()
    # True when the line follows from another failure (an engine that died of something said above):
    # ranked after every primary finding, and never taken as `up`'s cause.
    secondary: bool = False
    # True for a catch-all (any pydantic config error, any "device kernel image is invalid"): not
    # named for a line that an entry not marked generic names too (that one says what happened).
    generic: bool = False
    lookup: dict[str, dict[str, str]] = field(default_factory=dict)  # figure -> code -> name
    reader: str = ""  # set for entries a format reader produces (ethtool), which have no patterns
    # Lines that make a match normal: the entry is not named from a text holding one (an unused port
    # of a Spark is down while its cabled twin is active).
    unless: tuple[Pattern, ...] = ()
    # Ids of entries merged into this one (two entries had named one failure in two programs'
    # words): a saved finding, a held-out label or a user's note that names an old id still finds it.
    aliases: tuple[str, ...] = ()
    # (left figure, operator, right figure): a match is this entry only when its figures compare so;
    # a match that lacks either figure is this entry as its words say
    when: tuple[str, str, str] | None = None

    def holds(self, figures: dict[str, object]) -> bool:
        if self.when is None:
            return True
        left, op, right = self.when
        a, b = figures.get(left), figures.get(right)
        if not isinstance(a, int | float) or not isinstance(b, int | float):
            return True
        return COMPARE[op](a, b)


@dataclass(frozen=True)
class Table:
    path: str
    entries: tuple[Entry, ...]

    @functools.cached_property
    def _index(self) -> dict[str, Entry]:
        return {a: e for e in self.entries for a in e.aliases} | {e.id: e for e in self.entries}

    def by_id(self, ident: str) -> Entry:
        """The entry of an id, or of an id merged into it (`aliases`)."""
        return self._index[ident]

    def canonical(self, ident: str) -> str:
        """The id an entry goes by now: an alias gives its entry's id, any other text itself."""
        entry = self._index.get(ident)
        return entry.id if entry is not None else ident

    @property
    def families(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for e in self.entries:
            out[e.family] = out.get(e.family, 0) + 1
        return out


def _literals(parsed) -> tuple[str, str, str, bool]:
    """(longest literal run every match contains, the run it begins with, the run it ends with,
    whether the whole sequence is literal). A group is mandatory, so a run goes on into it and out
    of it (`Call to (?P<call>ibv_\\w+)` holds `Call to ibv_`); `^`, `$` and lookarounds match no
    character, so a run goes on across them. Repetitions, optional parts, alternations and classes
    end a run."""
    best, run, head, whole = "", "", None, True
    for op, arg in parsed:
        if op is sre_c.LITERAL:
            run += chr(arg)
            continue
        if op is sre_c.AT or op is sre_c.ASSERT or op is sre_c.ASSERT_NOT:
            continue
        # a `(?i:...)` group matches any case, the prefilter's `in` one only: its letters are no
        # literal, and it ends a run like a class does (below)
        if op is sre_c.SUBPATTERN and not arg[1] & sre_c.SRE_FLAG_IGNORECASE:
            inner, first, last, literal = _literals(arg[-1])
            if literal:
                run += inner
                continue
            run += first
            head = run if head is None else head
            best = max(best, run, inner, key=len)
            run, whole = last, False
            continue
        head = run if head is None else head
        best = max(best, run, key=len)
        run, whole = "", False
    best = max(best, run, key=len)
    return best, run if head is None else head, run, whole


_REPEATS = (sre_c.MAX_REPEAT, sre_c.MIN_REPEAT, sre_c.POSSESSIVE_REPEAT)


def _sure_groups(parsed, names: dict[int, str]) -> set[str]:
    """The named groups that every match of a parsed sequence sets: those outside optional parts,
    repetitions that may match nothing, single branches and negative lookarounds."""
    out: set[str] = set()
    for op, arg in parsed:
        if op is sre_c.SUBPATTERN:
            if arg[0] in names:
                out.add(names[arg[0]])
            out |= _sure_groups(arg[-1], names)
        elif op in _REPEATS and arg[0] >= 1:
            out |= _sure_groups(arg[2], names)
        elif op is sre_c.BRANCH:
            out |= set.intersection(*(_sure_groups(branch, names) for branch in arg[1]))
        elif op is sre_c.ATOMIC_GROUP:
            out |= _sure_groups(arg, names)
        elif op is sre_c.ASSERT:
            out |= _sure_groups(arg[1], names)
    return out


def _anchored(parsed, at: tuple = (sre_c.AT_BEGINNING,)) -> bool:
    """Whether `^` (a match begins at the line's start; or another of `at`) is in the pattern, in any group
    or branch; not when it only opens a lookahead over the whole line, which reads a line's prefix on purpose."""
    ops = list(parsed)
    if len(ops) > 1 and ops[0] == (sre_c.AT, sre_c.AT_BEGINNING) and ops[1][0] is sre_c.ASSERT_NOT:
        return False
    for op, arg in ops:
        if op is sre_c.AT and arg in at:
            return True
        if op is sre_c.SUBPATTERN and _anchored(arg[-1], at):
            return True
        if op is sre_c.BRANCH and any(_anchored(branch, at) for branch in arg[1]):
            return True
    return False


BOUNDS = (sre_c.AT_BEGINNING, sre_c.AT_END, sre_c.AT_END_STRING)


def _parsed(regex: str, where: str):
    try:
        return sre_parse.parse(regex)
    except re.error as exc:
        raise KnowledgeError(f"{where}: bad regex {regex!r}: {exc}") from None


def needle_of(regex: str, where: str, parsed=None) -> str:
    """The longest run of literal characters the pattern always contains: the prefilter checks
    it with `in` before the regex runs."""
    parsed = parsed if parsed is not None else _parsed(regex, where)
    best = _literals(parsed)[0] if not parsed.state.flags & sre_c.SRE_FLAG_IGNORECASE else ""
    if len(best.encode()) < MIN_NEEDLE:
        raise KnowledgeError(
            f"{where}: pattern {regex!r} has no literal of {MIN_NEEDLE}+ bytes outside "
            "alternations, repetitions and (?i) parts (the prefilter needs one, case and all): split the "
            "alternation into patterns"
        )
    return best


def _patterns(raw: object, where: str) -> tuple[Pattern, ...]:
    if not isinstance(raw, list) or not raw:
        raise KnowledgeError(f"{where}: needs a non-empty list of regexes")
    out = []
    for i, item in enumerate(raw):
        if not isinstance(item, str) or not item:
            raise KnowledgeError(f"{where}[{i}]: a regex is a non-empty string")
        parsed = _parsed(item, f"{where}[{i}]")  # a bad regex is named before it is compiled
        regex = re.compile(item)
        cut = _cut(item, f"{where}[{i}]")
        if cut is None:
            needle = needle_of(item, f"{where}[{i}]", parsed)
        else:  # a cut line holds only the words before the marker: the prefilter's literal is theirs
            needle = needle_of(cut.head.pattern, f"{where}[{i}] before {CUT}")
        sure = _sure_groups(parsed, {n: name for name, n in regex.groupindex.items()})
        if cut is not None:  # a cut line carries only the figures before the marker
            sure &= set(cut.head.groupindex)
        anchored, bounded = _anchored(parsed), _anchored(parsed, BOUNDS)
        out.append(Pattern(regex, needle, anchored, bounded, sure=frozenset(sure), cut=cut))
    return tuple(out)


def _cut(item: str, where: str) -> Cut | None:
    if CUT not in item:
        return None
    at = item.index(CUT)
    head, rest = item[:at], item[at + len(CUT) :]
    if CUT in rest:
        raise KnowledgeError(f"{where}: {CUT} stands once in a pattern")
    try:
        compiled = re.compile(head)
        re.compile(rest)
    except re.error:
        raise KnowledgeError(
            f"{where}: {CUT} stands outside any group (the words before it are a regex)"
        ) from None
    if not rest.strip():
        raise KnowledgeError(
            f"{where}: {CUT} has words after it (a line cut at the pattern's end is the pattern)"
        )
    if _bar_outside_groups(item):
        raise KnowledgeError(f"{where}: {CUT} stands in a pattern without a `|` outside groups")
    return Cut(compiled, partial_regex.compile(_greedy(rest)))


def _tokens(regex: str) -> list[str]:
    """`regex` cut into its tokens: an escape (`\\.`) or a whole class (`[^]a-z]`) is one token, any other character
    another. Neither `|` nor a quantifier inside them then reads as one."""
    out: list[str] = []
    i = 0
    while i < len(regex):
        if regex[i] == "\\":
            end = i + 2
        elif regex[i] == "[":
            end = i + 1 + (regex[i + 1 : i + 2] == "^")
            end += regex[end : end + 1] == "]"  # a `]` first in a class is its own character
            while end < len(regex) and regex[end] != "]":
                end += 2 if regex[end] == "\\" else 1
            end += 1
        else:
            end = i + 1
        out.append(regex[i:end])
        i = end
    return out


def _bar_outside_groups(regex: str) -> bool:
    """Whether `regex` has a `|` outside every group (sre_parse inlines `(?:a|b)`: its tree cannot tell)."""
    depth = 0
    for token in _tokens(regex):
        depth += (token == "(") - (token == ")")
        if token == "|" and depth == 0:
            return True
    return False


def _greedy(regex: str) -> str:
    """`regex` with its lazy repeats (`+?`, `*?`, `??`, `{m,n}?`) made greedy: a `?` after a quantifier is dropped."""
    out: list[str] = []
    for token in _tokens(regex):
        # a quantifier: `*`, `+`, `}`, or a `?` that does not open a group's `(?`
        quantifier = bool(out) and (out[-1] in ("*", "+", "}") or (out[-1] == "?" and out[-2:-1] != ["("]))
        if not (token == "?" and quantifier):
            out.append(token)
    return "".join(out)


# `[[ ... ]]` in a title, meaning or fix: a part kept only when the line carried every figure it
# names ("NCCL[[ {nccl_version}]]: ..." reads "NCCL: ..." for a line without the version).
OPTIONAL = re.compile(r"\[\[(.*?)\]\]")


def _names(text: str) -> set[str]:
    return {n for _, n, _, _ in string.Formatter().parse(text) if n}


def _entry(raw: object, where: str) -> Entry:
    if not isinstance(raw, dict):
        raise KnowledgeError(f"{where}: an entry is a mapping")
    ident = raw.get("id")
    if not isinstance(ident, str) or not IDENT.fullmatch(ident):
        raise KnowledgeError(f"{where}: id must be lowercase letters, digits, _ and . (got {ident!r})")
    where = f"{where} ({ident})"
    extra = set(raw) - KEYS
    if extra:
        raise KnowledgeError(f"{where}: unknown key(s) {', '.join(sorted(extra))}")
    for key in ("family", "severity", "title", "means", "fix", "source"):
        if not raw.get(key):
            raise KnowledgeError(f"{where}: {key} is missing")
    if raw["family"] not in FAMILIES:
        raise KnowledgeError(f"{where}: family {raw['family']!r} is not one of {', '.join(FAMILIES)}")
    if raw["severity"] not in SEVERITIES:
        raise KnowledgeError(f"{where}: severity {raw['severity']!r} is not one of {', '.join(SEVERITIES)}")
    sources = raw["source"] if isinstance(raw["source"], list) else [raw["source"]]
    if not all(isinstance(s, str) and s.startswith("https://") for s in sources):
        raise KnowledgeError(f"{where}: source must be the https:// address of the public thread")
    for key in ("secondary", "generic"):
        if not isinstance(raw.get(key, False), bool):
            raise KnowledgeError(f"{where}: {key} is true or false")
    # Titles, meanings and fixes are what an operator reads; `generic: true` is the table's own mark.
    if any("[catch-all]" in str(raw.get(key, "")) for key in ("title", "means", "fix")):
        raise KnowledgeError(f"{where}: say a catch-all with `generic: true`, not [catch-all] in its text")
    reader = raw.get("reader") or ""
    if reader and reader not in READERS:
        raise KnowledgeError(f"{where}: reader {reader!r} is not one of {', '.join(READERS)}")
    if reader and "patterns" not in raw:
        patterns: tuple[Pattern, ...] = ()
    else:
        patterns = _patterns(raw.get("patterns"), f"{where}: patterns")
    classes = raw.get("exceptions") or []
    if not isinstance(classes, list) or not all(
        isinstance(c, str) and EXCEPTION.fullmatch(c) and len(c.rsplit(".", 1)[-1]) >= MIN_NEEDLE
        for c in classes
    ):
        raise KnowledgeError(
            f"{where}: exceptions is a list of exception classes (`GatedRepoError`, `ray.exceptions.OutOfMemoryError`)"
        )
    patterns += tuple(exception_pattern(c) for c in classes)
    then = _patterns(raw["then"], f"{where}: then") if "then" in raw else ()
    unless = _patterns(raw["unless"], f"{where}: unless") if "unless" in raw else ()
    figures = raw.get("figures") or {}
    if not isinstance(figures, dict) or not all(t in FIGURE_TYPES for t in figures.values()):
        raise KnowledgeError(f"{where}: figures maps a name to one of {', '.join(FIGURE_TYPES)}")
    groups = {g for p in patterns + then for g in p.regex.groupindex}
    missing = set(figures) - groups if not reader else set()
    if missing:
        raise KnowledgeError(f"{where}: figure(s) {', '.join(sorted(missing))} captured by no pattern")
    undeclared = groups - set(figures)
    if undeclared:
        raise KnowledgeError(f"{where}: named group(s) {', '.join(sorted(undeclared))} not in figures")
    aliases = raw.get("aliases") or []
    if not isinstance(aliases, list) or not all(isinstance(a, str) and IDENT.fullmatch(a) for a in aliases):
        raise KnowledgeError(f"{where}: aliases is a list of ids (lowercase letters, digits, _ and .)")
    lookup = raw.get("lookup") or {}
    if not isinstance(lookup, dict) or not all(
        k in figures and isinstance(v, dict) for k, v in lookup.items()
    ):
        raise KnowledgeError(f"{where}: lookup maps a figure to a table of code: name")
    known = set(figures) | {f"{k}_name" for k in lookup}
    when = None
    if "when" in raw:
        m = WHEN.fullmatch(str(raw["when"]))
        numbers = {k for k, t in figures.items() if t != "str"}
        if not m or {m["left"], m["right"]} - numbers:
            raise KnowledgeError(
                f"{where}: when compares two of its number figures with <, <=, > or >= (got {raw['when']!r})"
            )
        when = (m["left"], m["op"], m["right"])
    # a figure said outside `[[ ... ]]` must come with every match, or the text would show `?` for it
    sure = functools.reduce(frozenset.__and__, (p.sure for p in patterns), frozenset(known))
    sure |= {f"{k}_name" for k in lookup if k in sure}
    for key in ("title", "means", "fix"):
        names = _names(str(raw[key]))
        if names - known:
            raise KnowledgeError(f"{where}: {key} names {', '.join(sorted(names - known))}: no such figure")
        loose = _names(OPTIONAL.sub("", str(raw[key]))) - sure
        if loose and not reader:
            raise KnowledgeError(
                f"{where}: {key} says {{{'}, {'.join(sorted(loose))}}} outside [[ ]], but a match may lack it "
                "(an optional group, an exception's class alone): put that part in [[ ]]"
            )
    return Entry(
        id=ident,
        family=raw["family"],
        severity=raw["severity"],
        title=str(raw["title"]),
        means=" ".join(str(raw["means"]).split()),
        fix=" ".join(str(raw["fix"]).split()),
        source=tuple(sources),
        patterns=patterns,
        figures=dict(figures),
        then=then,
        secondary=bool(raw.get("secondary", False)),
        generic=bool(raw.get("generic", False)),
        lookup={k: {str(c): str(n) for c, n in v.items()} for k, v in lookup.items()},
        reader=reader,
        unless=unless,
        aliases=tuple(aliases),
        when=when,
    )


def _entries(text: str, path: str, family: str | None = None) -> list[Entry]:
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise KnowledgeError(f"{path}: not YAML: {exc}") from None
    if not isinstance(data, dict) or not isinstance(data.get("failures"), list):
        raise KnowledgeError(f"{path}: expected a mapping with a `failures:` list")
    entries = [_entry(raw, f"{path}:entry {i + 1}") for i, raw in enumerate(data["failures"])]
    for i, e in enumerate(entries):
        if family is not None and e.family != family:
            raise KnowledgeError(f"{path}:entry {i + 1} ({e.id}): family {e.family} in the file of {family}")
    return entries


def _table(path: str, parts: list[tuple[str, list[Entry]]]) -> Table:
    seen: dict[str, str] = {}
    for where, entries in parts:
        for i, e in enumerate(entries):
            for ident in (e.id, *e.aliases):  # an alias is an id too: one name, one entry
                if ident in seen:
                    what = "id" if ident == e.id else f"alias {ident}"
                    raise KnowledgeError(
                        f"{where}:entry {i + 1} ({e.id}): {what} used twice (also in {seen[ident]})"
                    )
                seen[ident] = where
    return Table(path, tuple(e for _, entries in parts for e in entries))


def parse_table(text: str, path: str) -> Table:
    """One table from one YAML text (any families): tests and a user's own file."""
    return _table(path, [(path, _entries(text, path))])


def load_file(path: Path) -> Table:
    return parse_table(path.read_text(encoding="utf-8"), str(path))


def load_folder(folder: Traversable, where: str) -> Table:
    """A table kept as one file per family (`<family>.yaml` for each of FAMILIES, in that order)."""
    parts = []
    for family in FAMILIES:
        path = f"{where}/{family}.yaml"
        try:
            text = (folder / f"{family}.yaml").read_text(encoding="utf-8")
        except OSError as exc:
            raise KnowledgeError(f"{path}: cannot be read ({exc.strerror or exc})") from None
        parts.append((path, _entries(text, path, family)))
    return _table(where, parts)


@functools.cache
def table() -> Table:
    """The packaged table, loaded and validated once per process."""
    return load_folder(resources.files("spark_tui.knowledge") / "failures", "spark_tui/knowledge/failures")
