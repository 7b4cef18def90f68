"""A held-out round of real failure lines (tests/data/held_out/roundN.tsv) and the scorer it was measured with.

One row a line: `source<TAB>label<TAB>what it is<TAB>the line verbatim`. A row is right when the ids the engine names for
its line are exactly its label (`-`: nothing named; a `new:<kind>` label can only be met by an entry that does not
exist yet). The round's test module lists its misses by name, so a fix shows up as a failing test until the list is
updated, and a regression as a failing line."""

from __future__ import annotations

import functools
import hashlib
import re
import urllib.parse
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from spark_tui import diagnose
from spark_tui.knowledge import scan, table
from tests.helpers import DATA, ROOT

CORPUS = Path("/work/shared/corpus")  # the shared corpus of the development machine; absent elsewhere
PREFIX_FAMILY = {
    "torch": "nccl",
    "driver": "cuda",
    "safetensors": "hub",
    "tokenizers": "hub",
    "tgi": "vllm",
    "sglang": "vllm",
}


def label_ids(label: str) -> set[str]:
    """The ids a label names, each as its entry goes by now (a label written before two entries were
    merged names the merged one: `aliases`)."""
    return set() if label == "-" else {table().canonical(one) for one in label.split(",")}


@dataclass(frozen=True)
class Row:
    source: str
    label: str
    what: str
    line: str


@dataclass
class Round:
    """One round's rows; `new_kind_family` gives the family a `new:` label was collected for."""

    name: str  # round4: tests/data/held_out/round4.tsv
    new_kind_family: dict[str, str] = field(default_factory=dict)
    folder: str = "held_out"  # or "training": rounds sampled the same way, then fixed (they are knowledge)

    @property
    def path(self) -> Path:
        return DATA / self.folder / f"{self.name}.tsv"

    def rows(self) -> list[Row]:
        rows = []
        for raw in self.path.read_text(encoding="utf-8").splitlines():
            if raw and not raw.startswith("#"):
                rows.append(Row(*raw.split("\t", 3)))
        return rows

    def family(self, label: str) -> str:
        first = label.split(",")[0]
        if first == "-":
            return "must-not-name"
        if first in self.new_kind_family:
            return self.new_kind_family[first]
        prefix = first.split(".")[0]
        return PREFIX_FAMILY.get(prefix, prefix)

    def score(self) -> tuple[int, Counter, Counter, dict[str, str]]:
        """(rows named as labelled, rows per family, right rows per family, {source: label} of the misses)."""
        total: Counter = Counter()
        right: Counter = Counter()
        missed = {}
        for row in self.rows():
            fam = self.family(row.label)
            total[fam] += 1
            if {f.id for f in scan(row.line)} == label_ids(row.label):
                right[fam] += 1
            else:
                missed[row.source] = row.label
        return sum(right.values()), total, right, missed

    def cited(self, test_file: str) -> dict[str, list[str]]:
        """The round's threads that a file of the project (tests, the table, the corpus) or an entry cites."""
        return cited([row.source for row in self.rows()], test_file)

    def unknown_labels(self) -> list[str]:
        """Labels that are neither an entry's id nor a declared new kind."""
        ids = {ident for e in table().entries for ident in (e.id, *e.aliases)}
        return [
            one
            for row in self.rows()
            for one in label_ids(row.label)
            if one not in ids and not one.startswith("new:")
        ]


def cited(sources: list[str], test_file: str) -> dict[str, list[str]]:
    """Which of these threads or pages a file of the project (tests, the table, the corpus) or an entry cites."""
    # the held-out rounds themselves are not the project's knowledge: their headers name dropped candidates
    # (and the held-out rounds' test modules, which list their misses by thread)
    held_out = {str(path.resolve()) for path in (DATA / "held_out").rglob("*") if path.is_file()}
    held_out |= {str(path.resolve()) for path in (ROOT / "tests").glob("test_knowledge_held_out*.py")}
    mine = held_out | {str(Path(test_file).resolve())}
    index = _citations()
    samples_read = any(path.endswith(".source") for paths in index.values() for path in paths)
    assert samples_read
    found = {}
    for source in sources:
        hits = sorted({path for key in _keys(source) for path in index.get(key, ()) if path not in mine})
        if hits:
            found[source] = hits
    return found


def _keys(source: str) -> tuple[str, ...]:
    """The index keys a source is cited under: a GitHub thread as "owner/repo/n" and "repo#n", a web page by page_key."""
    if not source.startswith("https://github.com/"):
        return ("page:" + page_key(source),)
    owner, repo, _kind, number = source.removeprefix("https://github.com/").split("/")[:4]
    number = number.split("#")[0]
    return (f"{owner}/{repo}/{number}".lower(), f"{repo}#{number}".lower())


def page_key(url: str) -> str:
    """A web page (anything but GitHub) as one key however it is cited: host and path in lower case, without the
    scheme, a `www.`, the query, the fragment or a trailing slash."""
    parts = urllib.parse.urlsplit(url.strip())
    return (parts.netloc.lower().removeprefix("www.") + parts.path.rstrip("/")).lower()


def page_side(url: str) -> str:
    """Which side of the split a web page falls on: "even" pages are for blind collectors, "odd" ones for training.
    GitHub threads split by their number; a page has none, so the first byte of its key's SHA-256 decides."""
    return "even" if hashlib.sha256(page_key(url).encode()).digest()[0] % 2 == 0 else "odd"


# A thread cited as a URL (issues, pull or discussions) or as repo#N, the corpus INDEX's short form. The owner may
# be glued to a longer name on its left (a URL's host, a path): every suffix of it is taken as an owner too.
_URL = re.compile(r"([\w.-]+)/([\w.-]+)/(?:issues|pull|discussions)/(\d+)(?!\d)")
_SHORT = re.compile(r"(?<![\w.-])([\w.-]+)#(\d+)(?!\d)")
# A web page cited anywhere (not GitHub, whose threads the two above key): to the first space, quote or bracket.
_PAGE = re.compile(r"https?://(?!github\.com/)[^\s\"'<>`()\[\]]+")


@functools.cache
def _citations() -> dict[str, frozenset[str]]:
    """Every thread the project cites ("owner/repo/n" and "repo#n", lower case) and every web page ("page:" and its
    page_key) -> the files (and `entry:` sources) citing it: read once per test process, as the tree holds thousands
    of files and every round asks."""
    roots = [ROOT / "tests", ROOT / "spark_tui" / "knowledge"] + ([CORPUS] if CORPUS.is_dir() else [])
    texts = {
        str(path.resolve()): path.read_text(encoding="utf-8", errors="replace")
        for root in roots
        for path in root.rglob("*")
        if path.is_file() and "__pycache__" not in path.parts
    }
    for entry in table().entries:
        for n, source in enumerate(entry.source):
            texts[f"entry:{entry.id}:{n}"] = source
    index: dict[str, set[str]] = {}
    for path, text in texts.items():
        text = text.lower()
        for owner, repo, number in _URL.findall(text):
            for start in range(len(owner)):
                index.setdefault(f"{owner[start:]}/{repo}/{number}", set()).add(path)
        for repo, number in _SHORT.findall(text):
            index.setdefault(f"{repo}#{number}", set()).add(path)
        for url in _PAGE.findall(text):
            index.setdefault("page:" + page_key(url.rstrip(".,;:")), set()).add(path)
    return {key: frozenset(paths) for key, paths in index.items()}


def well_formed(rows: list[Row]) -> bool:
    """Distinct sources, each a GitHub issue or pull request or a web page elsewhere."""
    sources = [r.source for r in rows]
    return len({_keys(s) for s in sources}) == len(sources) and all(
        re.fullmatch(
            r"https://github\.com/[^/]+/[^/]+/(issues|pull)/\d+|https://(?!github\.com/)[\w.-]+\.[a-z]{2,}/\S*",
            s,
        )
        for s in sources
    )


def named(text: str) -> tuple[str, list[str], list[str]]:
    """What `diagnose` names for a paste: (the id it names first, its first error, else its first finding, else
    '-'; the ids of its errors; every id it names)."""
    findings = diagnose.analyse(text)["findings"]
    errors = [f["id"] for f in findings if f["severity"] == "error"]
    first = (errors or [f["id"] for f in findings] or ["-"])[0]
    return first, errors, [f["id"] for f in findings]


@dataclass(frozen=True)
class Paste:
    file: str
    source: str
    label: str
    what: str


@dataclass
class PasteRound:
    """A held-out round of whole pastes (tests/data/held_out/NAME.tsv indexing NAME/*.txt): one row a paste,
    `file<TAB>source<TAB>label<TAB>what it is`. A paste is right when the cause `diagnose` names first (its first
    error finding, else its first finding) is its label; a healthy paste (`-`) when diagnose names no error."""

    name: str
    folder: str = "held_out"

    @property
    def path(self) -> Path:
        return DATA / self.folder / f"{self.name}.tsv"

    def rows(self) -> list[Paste]:
        return [
            Paste(*raw.split("\t", 3))
            for raw in self.path.read_text(encoding="utf-8").splitlines()
            if raw and not raw.startswith("#")
        ]

    def text(self, row: Paste) -> str:
        return (DATA / self.folder / self.name / row.file).read_text(encoding="utf-8", errors="replace")

    def cited(self, test_file: str) -> dict[str, list[str]]:
        return cited([row.source for row in self.rows()], test_file)

    def cause(self, row: Paste) -> tuple[str, list[str]]:
        """(the id diagnose names first, or '-'; every id it names)."""
        first, _, everything = named(self.text(row))
        return first, everything

    def judged(self, row: Paste) -> tuple[bool, bool, str]:
        """(whether diagnose names the paste's label first, whether anywhere, the id it names first). A healthy
        paste (`-`) is right when no error is named (a warning may be)."""
        cause, named = self.cause(row)
        if row.label == "-":
            ok = cause == "-" or not _is_error(cause)
            return ok, ok, cause
        want = label_ids(row.label)
        anywhere = bool(want & {table().canonical(one) for one in named})
        return {table().canonical(cause)} == want, anywhere, cause

    def score(self) -> tuple[int, int, dict[str, tuple[str, str]]]:
        """(pastes whose cause is named first, pastes whose label is named anywhere, {file: (label, named first)}
        of the misses)."""
        first = anywhere = 0
        missed = {}
        for row in self.rows():
            ok, seen, cause = self.judged(row)
            first += ok
            anywhere += seen
            if not ok:
                missed[row.file] = (row.label, cause)
        return first, anywhere, missed


def _is_error(ident: str) -> bool:
    entry = table().by_id(ident)
    return entry is not None and entry.severity == "error"
