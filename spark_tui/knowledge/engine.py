"""Matching lines against the failure table at parser speed.

Every pattern has a literal its matches contain (table.needle_of). All literals go into one
Aho-Corasick automaton (ahocorasick_rs: Rust's aho-corasick crate, a DFA), so a line that holds
none of them, which is nearly every line of a healthy log, costs one scan; only the patterns
whose literal a line holds run their regex. A line that matches no pattern is not recognised: nothing here guesses at a near
match.
"""

from __future__ import annotations

import functools
import re
import string
from bisect import bisect_right
from dataclasses import dataclass, field
from itertools import accumulate

import ahocorasick_rs

from spark_tui.knowledge.table import OPTIONAL, Cut, Entry, Pattern, Table, table

ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
# A line copied through a web page, a chat or an editor gets curly quotes and no-break spaces where
# the program printed ASCII ones: read as the program printed it (no pattern holds these characters).
TYPOGRAPHIC = (("\u2018", "'"), ("\u2019", "'"), ("\u201c", '"'), ("\u201d", '"'), ("\u00a0", " "))


def as_printed(text: str) -> str:
    """`text` with typographic quotes and no-break spaces as ASCII. str.replace per character runs
    in C and costs one scan when the character is absent (tqdm's bars make most batches non-ASCII;
    str.translate with a table would cost a dict lookup per character of every such batch)."""
    for fancy, plain in TYPOGRAPHIC:
        if fancy in text:
            text = text.replace(fancy, plain)
    return text


# A message carried inside a JSON or Python string (an OpenAI-compatible error body, a client's repr of it, a
# traceback in a JSON log field) arrives with its quotes escaped, its newlines as `\n` and, from JSON's default
# ensure_ascii, every other character as `\uXXXX`: the program's words are read again as printed, each of the
# message's own lines on its own.
ESCAPE = re.compile(r"\\+(?:[\"'nrt]|u[0-9a-fA-F]{4})")


def _escaped_char(code: int) -> str:
    """The character a `\\uXXXX` stands for, as the patterns read it: a control character or half of a
    surrogate pair as a space (never carried into a figure), a typographic quote as ASCII."""
    if code < 0x20 or 0xD800 <= code <= 0xDFFF or code == 0x7F:
        return " "
    return as_printed(chr(code))


def unescaped(line: str) -> list[tuple[str, list[int]]]:
    """The lines a string literal inside `line` holds, as printed (`\\"` and `\\\\\\"` as `"`, `\\u2019` as `'`, `\\n`
    ends a line), each with where its characters were in `line`; one (line, map) per line."""
    parts: list[tuple[str, list[int]]] = []
    text: list[str] = []
    where: list[int] = []
    last = 0
    for m in ESCAPE.finditer(line):
        text.append(line[last : m.start()])
        where.extend(range(last, m.start()))
        kind = m.group().lstrip("\\")
        if kind in ("n", "r"):  # a newline of the message: the line so far is one of its lines
            parts.append(("".join(text), where))
            text, where = [], []
        else:  # a quote, a tab or a character by its code, however many times escaped
            text.append(" " if kind == "t" else _escaped_char(int(kind[1:], 16)) if len(kind) == 5 else kind)
            where.append(m.end() - 1)
        last = m.end()
    text.append(line[last:])
    where.extend(range(last, len(line)))
    parts.append(("".join(text), where))
    return [(part, at) for part, at in parts if part.strip()]


# What log collection puts before a program's own line:
# - `docker logs -t`'s timestamp, compose's `service  | `, torchrun's `[rank0]:`, mpirun's `[1,0]<stderr>:`;
# - Ray's `(RayWorkerWrapper pid=42, ip=10.0.0.2)` and its C++ `[2023-06-09 01:52:53,319 E 9906 9971] (raylet) x.cc:135: `;
# - vLLM's logger header, Python logging's `2024-11-19 10:08:56,123 ERROR `, a bracketed timestamp;
# - syslog/journald's `Aug 15 18:15:59 host prog[pid]: `, dmesg's `[  121.336005] `, glog's
#   `I1119 10:08:56.123456  4242 main.go:123] ` (kubelet, Go device plugins);
# - vLLM's `(VllmWorker rank=0 pid=42)`, Ray's `(raylet, ip=10.0.0.2)`, Kubernetes' CRI log files
#   (`<time> stderr F `), loguru's `| ERROR    | module:function:12 - ` (FastChat, Xinference, MinerU),
#   Python logging's default `ERROR:root:`, `[ERROR] `, pytest's `E   `, GitHub Actions' `##[error]`, BuildKit's
#   `#12 3.456 `; and what a person pastes before it: `> `, `- `, `1. `, `$ `, an issue title's `[Bug]: `.
# A pattern anchored at the line's start (a bare `RuntimeError: Socket Timeout`, `Killed`) is tried again
# after them. Not one whose anchor is a lookahead on the whole line: that one reads the decoration on
# purpose (a Ray worker's bus error is not the shared-memory one).
_STAMP = r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?"
_LEVEL = r"(?:DEBUG|INFO|WARN(?:ING)?|ERROR|CRITICAL|FATAL)"
_SYSLOG = rf"(?:{_STAMP}|[A-Z][a-z]{{2}}\s+\d{{1,2}}\s+\d\d:\d\d:\d\d)\s+(?!{_LEVEL}\b)[\w.-]+\s+(?:[\w./@-]+\[\d+\]|kernel):\s"
DECORATION = re.compile(
    r"(?:\s*(?:"
    + "|".join(
        (
            _SYSLOG,
            _STAMP + r"\s",
            r"[\w.-]+\s+\|\s",  # compose
            r"\[rank\d+\]:",
            r"\[\d+,\d+\]<std(?:out|err)>:",  # mpirun --tag-output
            r"[IWEF]\d{4}\s+\d\d:\d\d:\d\d\.\d+\s+\d+\s+[\w.-]+:\d+\]\s",  # glog
            r"\[\s*\d+\.\d+\]\s",  # dmesg
            r"\[\d{4}-\d\d-\d\d[T ][^\]\n]{0,60}\]\s(?:\([\w-]+\)\s)?(?:[\w.-]+:\d+:\s)?",
            r"\((?:[\w.-]+\s+)?(?:rank=\d+\s+)?pid=\d+(?:,\s*ip=[\w.:]+)?\)",  # Ray; vLLM's workers
            r"\([\w.-]+,\s*ip=[\w.:]+\)",  # Ray's `(raylet, ip=...)`
            r"std(?:out|err)\s[FP]\s",  # CRI, after its timestamp
            r"\|\s*" + _LEVEL + r"\s*\|(?:\s*[\w.<>-]+:[\w.<>-]+:\d+\s+-)?\s",  # loguru
            _LEVEL + r":[\w.<>-]*:",  # Python logging's default format
            r"\[" + _LEVEL + r"\]:?\s",
            r"E\s{3,}",  # pytest
            r"##\[(?:error|warning)\]",  # GitHub Actions
            r"#\d+\s\d+\.\d+\s",  # BuildKit's plain progress: `#12 3.456 `
            r"(?:>|[-*+]|\d{1,2}\.|\$|=>)\s",  # a paste's quote, list or shell-prompt marker
            r"\[[A-Z][A-Za-z ]{1,20}\]:?\s",  # an issue title's `[Bug]: `
            _LEVEL + r"\s+\d\d-\d\d\s+\d\d:\d\d:\d\d(?:\.\d+)?\s+\[[^\]\s]+\]",  # vLLM
            _LEVEL + r"\b:?\s",
        )
    )
    + r"))+\s*"
)


def undecorated(line: str) -> int:
    """Where the program's own words begin in `line`, after what log collection put before them."""
    m = DECORATION.match(line)
    return m.end() if m else 0


# A message quoted inside a line: a retold error in quotes, backticks or bold, a JSON or logfmt field, a repr.
# It begins after its opening quote (and its own decoration) and ends at its closing quote or at the line's end
# (a retold message may hold the same quote unescaped).
OPENING = re.compile(r"""(?:^|[\s:=\[{,])(\*\*|[\"'`])(?=\S)""")
# A message retold after an app's words (`Error: <the message>`, `Failed to load model: <...>`); not after an
# exception's class, whose message is its own (a `DisabledRepoError: 403 ...` is no authorization error).
COLON = re.compile(r"(?<=\S)(?<![a-z]Error)(?<![a-z]Exception): (?=\S)")
CLOSING = "\"'`*}]),; \t"


def quoted(line: str) -> list[tuple[int, int]]:
    """Where each message quoted inside `line` may begin and end."""
    tail = len(line.rstrip(CLOSING))
    ends: list[tuple[int, int]] = []  # (where a message begins, where it may end)
    for m in OPENING.finditer(line):
        close = m.end()
        while (close := line.find(m.group(1), close)) > 0 and line[close - 1] == "\\":
            close += 1  # an escaped quote is the message's own
        ends += [(m.end(), close), (m.end(), tail)]
    for m in COLON.finditer(line):
        ends += [(m.end(), len(line)), (m.end(), tail)]
    spans = ((start + undecorated(line[start:]), end) for start, end in ends)
    return list(dict.fromkeys((begin, end) for begin, end in spans if end > begin))


# What a person leaves after the words of a cut line: spaces, an ellipsis, the closing quote of a quoted excerpt.
CUT_END = " \t.\u2026\"'`*"


def cut_match(cut: Cut, line: str, lead: int = 0) -> tuple[re.Match[str] | None, int]:
    """The match of a cut pattern's words before its marker, when `line` (after `lead`, the decoration an anchored
    pattern is tried after) ends inside the rest of the pattern: a line cut there (table.CUT). Its figures are
    those of the words before the marker; where it matched is in `line` (the shift is `lead`)."""
    text = line[lead:]
    end = len(text.rstrip(CUT_END))
    for n, head in enumerate(cut.head.finditer(text, 0, end)):
        rest = cut.rest.match(text, head.end(), end, partial=True)
        if rest is not None and rest.partial:
            return head, lead
        if n == 2:  # a line that holds the words three times and was cut after none: no cut line
            break
    return None, 0


GIB = re.compile(r"(?P<n>[\d.,]+)\s*(?P<u>[KMGT]i?B|bytes|B)?")
UNITS = {"B": 1 / 2**30, "BYTES": 1 / 2**30, "KIB": 1 / 2**20, "KB": 1 / 2**20, "MIB": 1 / 1024}
UNITS.update({"MB": 1 / 1024, "GIB": 1.0, "GB": 1.0, "TIB": 1024.0, "TB": 1024.0})


@dataclass
class Finding:
    """One failure named from a line: what the table says of it, with this line's figures."""

    id: str
    family: str
    severity: str
    title: str
    means: str
    fix: str
    figures: dict[str, object]
    line: str
    source: str
    secondary: bool = False
    generic: bool = False  # a catch-all entry's (README: `generic`)
    node: str = ""
    count: int = 1
    span: tuple[int, int] = (0, 0)  # where the wording matched, in `line`

    def quoted(self, width: int) -> str:
        """The line cut to `width` around the words that matched (a long line's failure is often
        at its end, after two paths or a whole command)."""
        return window(self.line, self.span, width)

    @property
    def key(self) -> tuple:
        return (self.id, self.node, tuple(sorted((k, str(v)) for k, v in self.figures.items())))

    def text(self) -> str:
        """One line for a person: cause, then the fix."""
        where = f"{self.node}: " if self.node else ""
        return f"{where}{self.title}: {self.means} Fix: {self.fix}"

    def as_dict(self) -> dict:
        return {
            "id": self.id,
            "family": self.family,
            "severity": self.severity,
            "title": self.title,
            "means": self.means,
            "fix": self.fix,
            "figures": self.figures,
            "line": self.line,
            "source": self.source,
            "count": self.count,
            **({"node": self.node} if self.node else {}),
        }


def cut(line: str, span: tuple[int, int], width: int) -> tuple[str, tuple[int, int]]:
    """`line` when it fits in `width`, else a cut of it that holds `span` (the matched words),
    begun a little before them, with "…" where the line was cut; and the span in what is kept."""
    if len(line) <= width:
        return line, span
    start, end = span
    room = width - 2  # the two marks
    begin = min(start - width // 5, len(line) - room)
    if end + 20 > begin + room:  # a long match: its end and a little after it stay
        begin = min(len(line) - room, end + 20 - room)
    begin = max(0, begin)
    kept = line[begin : begin + room]
    mark = "…" if begin else ""
    text = mark + kept + ("…" if begin + len(kept) < len(line) else "")
    shift = len(mark) - begin
    return text, (max(0, start + shift), min(len(text), end + shift))


def window(line: str, span: tuple[int, int], width: int) -> str:
    return cut(line, span, width)[0]


def _value(kind: str, raw: str) -> object:
    raw = raw.strip()
    try:
        if kind == "int":
            return int(raw.replace(",", ""))
        if kind == "float":
            return float(raw.replace(",", ""))
        if kind == "gib":
            m = GIB.fullmatch(raw)
            if m:
                unit = (m.group("u") or "GiB").upper()
                return round(float(m.group("n").replace(",", "")) * UNITS.get(unit, 1.0), 3)
    except ValueError:
        pass
    return raw


class _Figures(dict):
    """Formats a fix: a figure the line did not carry shows as `?`, never a KeyError."""

    def __missing__(self, key: str) -> str:
        return "?"


def _fill(text: str, figures: dict[str, object]) -> str:
    if "[[" in text:

        def keep(m: re.Match) -> str:
            names = {n for _, n, _, _ in string.Formatter().parse(m.group(1)) if n}
            return m.group(1) if names <= set(figures) else ""

        text = OPTIONAL.sub(keep, text)
    return string.Formatter().vformat(text, (), _Figures({k: v for k, v in figures.items()}))


# an entry, its figures, where its words are in the line
Match = tuple[Entry, dict[str, object], tuple[int, int]]


@dataclass
class Found:
    """What the searches of one line gather."""

    out: list[Match] = field(default_factory=list)
    done: set[str] = field(default_factory=set)  # entries named (one finding per entry)
    calmed: list[str] = field(default_factory=list)  # entries this line makes normal (their `unless:`)
    by_class: set[str] = field(default_factory=set)  # entries named by an exception's class alone
    # patterns anchored with `^` or `$` whose literal is in the line but not their words: tried inside its quotes
    missed: list[int] = field(default_factory=list)


class Matcher:
    def __init__(self, kb: Table | None = None):
        self.table = kb or table()
        # Patterns in table order, then the `unless:` lines (True: a line that makes the entry's
        # match normal), all in one automaton; each needle names the patterns that contain it.
        self._items: list[tuple[Entry, Pattern, bool]] = [
            (e, p, False) for e in self.table.entries for p in e.patterns
        ] + [(e, p, True) for e in self.table.entries for p in e.unless]
        by_needle: dict[str, list[int]] = {}
        for i, (_, p, _) in enumerate(self._items):
            by_needle.setdefault(p.needle, []).append(i)
        # needle number -> the patterns holding it. Standard match semantics, so that a line's every literal can be
        # found (overlapping: `_search`); a DFA, as the automaton is built once and scans every line of every log.
        self._needle_items = [tuple(items) for items in by_needle.values()]
        self._automaton = ahocorasick_rs.AhoCorasick(
            list(by_needle),
            matchkind=ahocorasick_rs.MatchKind.Standard,
            implementation=ahocorasick_rs.Implementation.DFA,
        )

    def hit_lines(self, lines: list[str]) -> list[int]:
        """Indices of the lines that hold some pattern's literal, in one scan of the whole batch
        (the automaton runs in C over the joined text; no literal holds a newline), and of the lines
        holding an escaped string literal, whose literals `raw` finds once it has read them as printed."""
        text = "\n".join(lines)
        if "\x1b" in text:  # a colour code inside a wording would hide its literal: read without them
            lines = [ANSI.sub("", line) for line in lines]
            text = "\n".join(lines)
        # tqdm's bars, a web page's quotes: read as printed. The automaton reads such text as fast as
        # ASCII (measured), and some literals are not ASCII (a locale's `Killed`).
        if not text.isascii():
            text = as_printed(text)
        # Where literals start. Not overlapping: after a match the scan goes on from its end, and since no literal
        # holds a newline, a literal it steps over lies on a line already hit. Standard semantics report the match
        # that ends first, so a longer literal that fails to complete never hides a shorter one inside it
        # ("] Watchdog ... timeout" at a line's end: pyahocorasick's iter_long once did).
        starts = [start for _, start, _ in self._automaton.find_matches_as_indexes(text)]
        escaped: set[int] = set()
        if "\\" in text:  # a string literal's escaped quotes or newlines may hide a literal: `raw` reads it
            escaped = {i for i, line in enumerate(lines) if ESCAPE.search(line)}
        if not starts:
            return sorted(escaped)
        # where each line begins in the joined text (its length and a newline after each line before it)
        begins = [0, *accumulate(len(line) + 1 for line in lines[:-1])]
        return sorted({bisect_right(begins, at) - 1 for at in starts} | escaped)

    def raw(self, line: str) -> tuple[str, list[Match], list[str]]:
        """The entries a line matches with the figures it carries and where the words matched
        (one per entry), the line as matched (ANSI colours removed), and the ids of the entries
        this line makes normal (their `unless:`): usually no entry and none."""
        if "\x1b" in line:  # colours removed first: a code inside the wording would hide its literal
            line = ANSI.sub("", line)
        if not line.isascii():
            line = as_printed(line)
        line = line.rstrip("\r")  # a CRLF text's lines: the figures end where the words end
        found = Found()
        self._search(line, None, found)
        parts: list[tuple[str, list[int] | None]] = []
        if "\\" in line and ESCAPE.search(line):
            parts = [(part, at) for part, at in unescaped(line) if part != line]
            for part, at in parts:
                self._search(part, at, found)
        if not found.out and found.missed:
            # Nothing names the line as a whole: a message quoted inside it (or inside a string literal it
            # holds) is read on its own, so a pattern anchored at a message's start or end meets it (README:
            # "What a line names").
            missed = list(dict.fromkeys(found.missed))
            for text, at in [(line, None), *parts]:
                self._search(text, at, found, missed, quoted(text))
        out = found.out
        if found.by_class and len(out) > len(found.by_class):
            # An exception's class gives way to an entry the line's words name (README: `exceptions`).
            out = [match for match in out if match[0].id not in found.by_class]
        if len(out) > 1 and any(entry.generic for entry, _, _ in out):
            # A catch-all gives way to what names the line more closely (README: `generic`).
            specific = [match for match in out if not match[0].generic]
            out = specific or out
        return line, out, found.calmed

    def _search(
        self,
        line: str,
        at: list[int] | None,
        found: Found,
        candidates: list[int] | None = None,
        spans: list[tuple[int, int]] | None = None,
    ) -> None:
        """The entries `line` matches, added to `found`. `at` maps a string literal's line back to where its
        characters are in the line that holds it (the spans are that line's). Given `candidates` and `spans`,
        only those patterns are tried, each only inside those spans of the line."""
        if candidates is None:
            hits = self._automaton.find_matches_as_indexes(line, overlapping=True)
            if not hits:
                return
            candidates = sorted({i for needle, _, _ in hits for i in self._needle_items[needle]})
        lead = -1  # where the words begin after the line's decoration: found when first needed
        # patterns with a `(?#cut)` whose whole words failed: tried after every whole match
        cuts: list[int] = []
        for i in candidates:
            entry, pattern, calms = self._items[i]
            # an `unless:` line calms its entry even when the line matches the entry too
            if entry.id in found.done and not calms:
                continue
            m, shift = None, 0
            if spans is not None:
                for begin, end in spans:
                    m, shift = pattern.regex.search(line[begin:end]), begin
                    if m is not None:
                        break
            else:
                m = pattern.regex.search(line)
                if m is None and pattern.anchored:  # tried again after the line's decoration
                    lead = undecorated(line) if lead < 0 else lead
                    if lead:
                        m, shift = pattern.regex.search(line[lead:]), lead
                if m is None and pattern.cut is not None:
                    cuts.append(i)
                if m is None and pattern.bounded:
                    found.missed.append(i)
            if m is not None:
                self._take(found, i, m, shift, at)
        # A line cut inside a pattern's words after its marker, only for entries no whole pattern named: a later
        # pattern of the same entry that matches whole gives the line's every figure.
        for i in cuts:
            entry, pattern, calms = self._items[i]
            if entry.id in found.done and not calms:
                continue
            assert pattern.cut is not None
            if pattern.anchored and lead < 0:
                lead = undecorated(line)
            m, shift = cut_match(pattern.cut, line, lead if pattern.anchored else 0)
            if m is not None:
                self._take(found, i, m, shift, at)

    def _take(self, found: Found, i: int, m: re.Match[str], shift: int, at: list[int] | None) -> None:
        """Pattern i matched (`m`, in the line from `shift` on): its entry named with the match's figures, or
        calmed by an `unless:` line."""
        entry, pattern, calms = self._items[i]
        if calms:
            found.calmed.append(entry.id)
            return
        figures = {k: _value(entry.figures[k], v) for k, v in m.groupdict().items() if v is not None}
        if not entry.holds(figures):  # the words are this entry's, the numbers another's (`when`)
            return
        found.done.add(entry.id)
        if pattern.by_class:
            found.by_class.add(entry.id)
        _names(entry, figures)
        start, end = m.start() + shift, m.end() + shift
        if at is not None:  # back to where the literal's characters are in the line that holds it
            start = at[start] if start < len(at) else at[-1] + 1
            end = at[end - 1] + 1 if end else start
        found.out.append((entry, figures, (start, end)))

    def match(self, line: str) -> list[Finding]:
        """Every entry a line matches (one finding per entry): usually none."""
        line, found, _ = self.raw(line)
        return [self.make(entry, figures, line, span) for entry, figures, span in found]

    def make(
        self, entry: Entry, figures: dict[str, object], line: str, span: tuple[int, int] = (0, 0)
    ) -> Finding:
        lead = len(line) - len(line.lstrip())
        line = line.strip()
        span = (max(0, span[0] - lead), max(0, span[1] - lead))
        kept, span = cut(line, span, LINE_KEPT)
        return Finding(
            id=entry.id,
            family=entry.family,
            severity=entry.severity,
            title=_fill(entry.title, figures),
            means=_fill(entry.means, figures),
            fix=_fill(entry.fix, figures),
            figures=figures,
            line=kept,
            source=entry.source[0],
            secondary=entry.secondary,
            generic=entry.generic,
            span=span,
        )

    def named(self, ident: str, figures: dict[str, object], line: str, node: str = "") -> Finding:
        """A finding of an entry whose figures a format reader computed (ethtool: the link's speed
        against the port's best mode), told with the table's words."""
        entry = self.table.by_id(ident)
        figures = {k: v for k, v in figures.items() if v is not None}
        _names(entry, figures)
        finding = self.make(entry, figures, line)
        finding.node = node
        return finding

    def refill(self, finding: Finding, more: dict[str, object]) -> None:
        """Figures a later line added (`then:` patterns): the texts are made again with them."""
        entry = self.table.by_id(finding.id)
        finding.figures.update(more)
        _names(entry, finding.figures)
        finding.title = _fill(entry.title, finding.figures)
        finding.means = _fill(entry.means, finding.figures)
        finding.fix = _fill(entry.fix, finding.figures)


def _names(entry: Entry, figures: dict[str, object]) -> None:
    """A code's name from the entry's lookup (IBV_WC status 12 -> IBV_WC_RETRY_EXC_ERR)."""
    for key, names in entry.lookup.items():
        if key in figures:
            figures[f"{key}_name"] = names.get(str(figures[key]), f"code {figures[key]}")


LINE_KEPT = 400  # a finding keeps at most this much of its line, around the matched words
THEN_WINDOW = 40  # lines after a match in which its `then:` patterns may add figures


@functools.cache
def default_matcher() -> Matcher:
    """The packaged table's matcher, built once: its automaton of some 3,000 literals takes tens of
    milliseconds to build, more than scanning a long paste with it. A Matcher holds no state of a stream."""
    return Matcher()


@dataclass
class Watch:
    """A stream of lines (one container's log, one pasted file): findings, each once, counted.

    `feed` returns the findings that are new; a repeat only raises the first one's count (Ray
    repeats a worker's error on every retry)."""

    node: str = ""
    matcher: Matcher = field(default_factory=default_matcher)
    findings: dict[tuple, Finding] = field(default_factory=dict)
    # Findings whose `then:` patterns still read figures: (finding, next pattern, lines left).
    _open: list[tuple[Finding, int, int]] = field(default_factory=list)
    matched: bool = False  # the last line fed matched a pattern
    calm: set[str] = field(default_factory=set)  # entries an `unless:` line of this stream makes normal

    def feed(self, line: str) -> list[Finding]:
        """New findings of this line (a repeat only counts); `matched` says whether the line
        matched any pattern at all."""
        if self._open:
            self._then(line)
        new = []
        line, found, calmed = self.matcher.raw(line)
        self.calm.update(calmed)
        self.matched = bool(found)
        for entry, figures, span in found:
            seen = self._same(entry, figures)
            if seen is not None:
                seen.count += 1
                if any(seen.figures.get(k) != v for k, v in figures.items()):
                    self.matcher.refill(seen, figures)  # a later line of the same failure adds to it
                continue
            f = self.matcher.make(entry, figures, line, span)
            f.node = self.node
            self.findings[f.key] = f
            new.append(f)
            if entry.then:
                # The matching line itself may already carry the first figures (one-line syslog).
                self._open.append((f, self._read_then(f, 0, line), THEN_WINDOW))
        return new

    def _same(self, entry: Entry, figures: dict[str, object]) -> Finding | None:
        """An earlier finding this one repeats or completes: same entry and no figure that differs
        (a warning's figures, like the seconds waited, are simply updated)."""
        for seen in self.findings.values():
            if seen.id != entry.id:
                continue
            shared = set(seen.figures) & set(figures)
            if entry.severity != "error" or all(str(seen.figures[k]) == str(figures[k]) for k in shared):
                return seen
        return None

    def feed_lines(self, lines) -> list[Finding]:
        """`feed` for a batch: only the lines holding a literal (and the lines a match's `then:`
        patterns still read) are looked at one by one."""
        lines = lines if isinstance(lines, list) else list(lines)
        hits = self.matcher.hit_lines(lines)
        out: list[Finding] = []
        i, h = 0, 0
        while i < len(lines):
            if not self._open:
                while h < len(hits) and hits[h] < i:
                    h += 1
                if h == len(hits):
                    break
                i = hits[h]
            out += self.feed(lines[i])
            i += 1
        return out

    def _then(self, line: str) -> None:
        still = []
        for f, pos, left in self._open:
            pos = self._read_then(f, pos, line)
            if left > 1 and pos < len(self.matcher.table.by_id(f.id).then):
                still.append((f, pos, left - 1))
        self._open = still

    def _read_then(self, f: Finding, pos: int, line: str) -> int:
        """Figures from `line` by the entry's `then:` patterns, in their order: the first one at or
        after `pos` that matches is used; returns the next position."""
        entry = self.matcher.table.by_id(f.id)
        for i in range(pos, len(entry.then)):
            p = entry.then[i]
            if p.needle in line:
                m = p.regex.search(line)
                if m:
                    self.matcher.refill(
                        f, {k: _value(entry.figures[k], v) for k, v in m.groupdict().items() if v}
                    )
                    # The rest of the line may hold the next figures (a syslog line joins several).
                    return self._read_then(f, i + 1, line[m.end() :])
        return pos

    def ranked(self) -> list[Finding]:
        """Primary failures before what follows from them, errors before warnings, what names a failure
        before a catch-all (a cuDNN status said before the kernel fault that broke the context), in log
        order; not an entry that a line of the stream made normal (`unless:`)."""
        order = {"error": 0, "warn": 1, "info": 2}
        kept = [f for f in self.findings.values() if f.id not in self.calm]
        return sorted(kept, key=lambda f: (f.secondary, order[f.severity], f.generic))

    def cause(self) -> Finding | None:
        """The failure to name: the first primary error, else the first error of any kind."""
        errors = [f for f in self.ranked() if f.severity == "error"]
        return errors[0] if errors else None


def scan(text: str, node: str = "") -> list[Finding]:
    """The findings of a whole text, ranked (an entry whose `unless:` lines the text holds is left out)."""
    w = Watch(node)
    w.feed_lines(text.splitlines())
    return w.ranked()
