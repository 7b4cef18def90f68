"""NCCL log parsing: a stateful summary per log stream, fed one line at a time.

Real logs arrive with many prefixes before NCCL's own `host:pid:tid [dev]` header:
Ray actor prefixes `(RayWorkerWrapper pid=N, ip=A)`, vLLM process prefixes
`(EngineCore_DP0 pid=N)`, mpirun `[N]`, pdsh `host: `, `[trainer3]:`, bracketed
timestamps and ANSI residue whose ESC byte was lost. The header is therefore
searched for, never anchored at the start of the line.
"""

from __future__ import annotations

import re
from collections import deque
from dataclasses import dataclass, field

from spark_tui.parsers.ray_lines import ACTOR as ACTOR  # re-exported: where Ray prefixes are read
from spark_tui.parsers.ray_lines import actor_of as actor_of
from spark_tui.parsers.ray_lines import origin_ip, unfold
from spark_tui.parsers.text import count, strip_ansi
from spark_tui.parsers.verdict import Verdict

HEADER = re.compile(
    r"(?P<host>[^\s:\]\[(]+):(?P<pid>\d+|X+)(?::(?P<tid>\d+))? \[(?P<dev>\d+)\] "
    r"(?:(?P<src>[\w./-]+:\d+) )?NCCL (?P<level>INFO|WARN|TRACE|ERROR) ?(?P<msg>.*)$"
)
VERSION = re.compile(r"NCCL version (?P<v>\d+\.\d+\.\d+\S*)")
BOOTSTRAP = re.compile(r"^Bootstrap ?: ?Using (?P<list>.*)$")
ADDR_ITEM = re.compile(r"(?:\[\d+\])?(?P<if>[A-Za-z][\w.@-]*):(?P<addr>[0-9A-Fa-f.:]+(?:%[\w.@-]+)?)<\d+>")
# `NCCL_SOCKET_IFNAME set by environment to eth0`, `NCCL_IB_DISABLE set by environment to 0.`,
# `NCCL_IB_HCA set to roceP2p1s0f0,rocep1s0f0` (NCCL's own echo of the variables it read).
ENV_SET = re.compile(r"^(?P<var>NCCL_\w+) set (?:by environment )?to (?P<v>\S+?)\.?$")
NET_IB = re.compile(r"^NET/IB ?: ?Using (?P<list>.*?)(?: ?; ?OOB (?P<oob>\S+))?\s*$")
HCA_ITEM = re.compile(r"\[\d+\](?P<dev>[\w.-]+):(?P<port>\d+)/(?P<link>RoCE|IB|ETH)(?P<sharp>/SHARP)?")
NET_IB_NEW = re.compile(r"^NET/IB ?: ?\[\d+\] (?P<dev>[\w.-]+):\w+:(?P<port>\d+)/(?P<link>RoCE|IB)")
# Newer NCCL (2.2x) may list devices only as virtual devices it made from them.
VIRTUAL_DEV = re.compile(r"^NET/IB ?: ?Made virtual device \[\d+\] name=(?P<dev>[\w.-]+)")
OOB = re.compile(r"OOB (?P<item>\S+<\d+>)")
NET_SOCKET = re.compile(r"^NET/Socket ?: ?Using (?P<list>.*)$")
NETWORK = re.compile(r"^Using network (?P<net>\S+)")
VIA = re.compile(r"via NET/(?P<net>[\w]+?)(?:/\d+)")
INIT = re.compile(r"rank (?P<rank>\d+) nranks (?P<nranks>\d+).* - Init (?P<what>START|COMPLETE)")
NNODES = re.compile(r"nRanks (?P<nranks>\d+) nNodes (?P<nnodes>\d+)")
ERROR_PATTERNS = re.compile(
    r"unhandled system error|ncclSystemError|ncclInternalError|ncclRemoteError|Call to ibv_\w+ failed"
    r"|socketStartConnect: Connect to \S+ failed|Watchdog caught collective operation timeout"
    r"|Proxy Call to rank \d+ failed|NCCL error: [a-z]"
)
IBV = re.compile(r"Call to (?P<call>ibv_\w+) failed")
# Cheap substring test first: most lines of a vLLM log are not NCCL's.
PREFILTER = ("NCCL", "nccl", "Watchdog", "Proxy Call", "ibv_", "socketStartConnect")
PREFILTER_RE = re.compile("|".join(re.escape(w) for w in PREFILTER))
_TRAILING = (" ", "\t", "\r", "\n")
_INFO_PREFIXES = (
    "NCCL version",
    "Bootstrap",
    "NCCL_",
    "NET/IB",
    "NET/Socket",
    "Using network",
)
_LEVELS = ("INFO", "WARN", "TRAC")
_FOLD_ENDS = ("]", ")")  # Ray's suffix ends the line: `... cluster]`, or its note's `...options.)`
GB10_TWINS = re.compile(r"^roce(?:p|P2p)1s0f(?P<port>\d)$")


@dataclass
class OriginNet:
    """What one process's NCCL lines say about its network: a Ray worker's ranks print through
    the head's log, so this is kept per origin (the actor's ip=, else NCCL's host field)."""

    transport: str | None = None
    hcas: list[str] = field(default_factory=list)
    bootstrap: list[tuple[str, str]] = field(default_factory=list)  # (ifname, address)
    env: dict[str, str] = field(default_factory=dict)  # NCCL_* variables NCCL says it read
    init_start: int = 0  # Init START / COMPLETE lines of this origin's ranks
    init_complete: int = 0
    errors: list[str] = field(default_factory=list)  # NCCL errors its lines raised


@dataclass
class NcclSummary:
    version: str | None = None
    hosts: list[str] = field(default_factory=list)
    bootstrap: list[tuple[str, str]] = field(default_factory=list)  # (ifname, address)
    socket_ifname: str | None = None
    ib_hca_env: str | None = None
    transport: str | None = None  # IB, IBext, IBext_v10, Socket, ...
    hcas: list[tuple[str, str]] = field(default_factory=list)  # (device, link layer)
    sharp: bool = False
    nranks: int | None = None
    nnodes: int | None = None
    init_start: int = 0
    init_complete: int = 0
    warnings: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    ibv_failures: list[str] = field(default_factory=list)
    nccl_lines: int = 0
    first_pending_start: float | None = None  # time of the oldest Init START not yet completed
    # Where each rank's Init lines came from: the Ray actor's address (`ip=` of the line's
    # `(RayWorkerWrapper pid=N, ip=A)` prefix) when there is one, else NCCL's host field.
    rank_origin: dict[int, str] = field(default_factory=dict)
    ranks_complete: set[int] = field(default_factory=set)
    by_origin: dict[str, OriginNet] = field(default_factory=dict)
    # NCCL lines Ray's log deduplication held back without naming their actor (the N-1 of each
    # `[repeated Nx across cluster]`, ray_lines.py), and how many of them were Init lines: they
    # count in the totals above, but belong to no origin.
    folded: int = 0
    folded_init: int = 0

    def pending_ranks(self) -> dict[int, str]:
        """Ranks that started init and have not completed it, with where they run."""
        return {r: where for r, where in sorted(self.rank_origin.items()) if r not in self.ranks_complete}

    def verdicts(
        self, now: float | None = None, hang_after: float = 300.0, stream_ended: bool = False
    ) -> list[Verdict]:
        out: list[Verdict] = []
        net = self.transport or ""
        if net.startswith("IB"):
            devs = ", ".join(f"{d}/{link}" for d, link in self.hcas) or "devices not listed"
            out.append(Verdict("ok", "ib", f"running over IB/RoCE ({net}: {devs})"))
        elif net == "Socket":
            out.append(
                Verdict(
                    "error",
                    "socket",
                    "fell back to Socket (TCP): NCCL is not using RoCE; check NCCL_IB_HCA and /dev/infiniband",
                )
            )
        twins = [m for m in (GB10_TWINS.match(d) for d, _ in self.hcas) if m]
        if self.hcas and len(twins) == len(self.hcas):
            ports = {m.group("port") for m in twins}
            for port in ports:
                used = {d for d, _ in self.hcas if d.endswith(f"1s0f{port}")}
                if len(used) == 1:
                    missing = f"roceP2p1s0f{port}" if used == {f"rocep1s0f{port}"} else f"rocep1s0f{port}"
                    out.append(
                        Verdict(
                            "warn",
                            "one_twin",
                            f"only one ConnectX-7 twin in use ({next(iter(used))}); add {missing} to NCCL_IB_HCA for full bandwidth",
                        )
                    )
        pending = self.init_start - self.init_complete
        if self.init_start and pending <= 0:
            out.append(Verdict("ok", "init", f"init complete {self.init_complete}/{self.init_start}"))
        elif pending > 0:
            waited = (
                None if now is None or self.first_pending_start is None else now - self.first_pending_start
            )
            if waited is not None and waited >= hang_after:
                out.append(
                    Verdict(
                        "error",
                        "hang",
                        f"init started but not complete after {waited:.0f} s ({self.init_complete}/{self.init_start}): hang",
                    )
                )
            elif stream_ended:
                out.append(
                    Verdict(
                        "warn",
                        "incomplete",
                        f"init incomplete: {self.init_complete}/{self.init_start} ranks completed when the log ends",
                    )
                )
            else:
                out.append(
                    Verdict(
                        "warn", "init_pending", f"init in progress {self.init_complete}/{self.init_start}"
                    )
                )
        if self.ibv_failures:
            out.append(
                Verdict("error", "ibv", "RDMA verbs failures: " + ", ".join(sorted(set(self.ibv_failures))))
            )
        other = [e for e in self.errors if "ibv_" not in e]
        if other:
            out.append(Verdict("error", "error", other[0][:200]))
        return out


class NcclParser:
    """Feed lines with `feed(line, now)`; read `summary` at any time, and with `tail=N` the last N
    NCCL lines as (level, message): split here once, so no reader splits them again."""

    def __init__(self, tail: int = 0) -> None:
        self.summary = NcclSummary()
        # (level, message) of the last NCCL lines; level "" for a line without NCCL's header.
        self.tail: deque[tuple[str, str]] | None = deque(maxlen=tail) if tail else None
        self._hosts: set[str] = set()
        self._hca_seen: set[str] = set()
        self._unions: set[str] = set()
        self._pending_warn = False

    def feed(self, line: str, now: float | None = None) -> bool:
        """Parse one line; returns True when it was an NCCL line."""
        return self.feed_lines((line,), now) == 1

    def feed_lines(self, lines, now: float | None = None) -> int:
        """Parse a chunk of lines (a docker log read); returns how many were NCCL lines.

        The hot loop of every log view: names are bound to locals and split_header's
        fast path is inlined, which is what keeps it above 200,000 lines/s.
        """
        found = 0
        keep = self.tail.append if self.tail is not None else None
        s, hosts, info, error_check, bare = (
            self.summary,
            self._hosts,
            self._info,
            self._error_check,
            self._bare,
        )
        cache_get, prefilter, levels = _HOST_CACHE.get, PREFILTER_RE.search, _LEVELS
        for line in lines:
            if "NCCL" not in line and prefilter(line) is None:
                continue
            if "\x1b" in line or "[0m" in line:  # pasted residue always carries the [0m reset
                line = strip_ansi(line)
            if line[-1:] in _TRAILING:
                line = line.rstrip()
            times = 1
            if line[-1:] in _FOLD_ENDS and "across cluster]" in line:
                line, times = unfold(line)  # Ray folded this many occurrences into this line
            idx = line.find(" NCCL ")
            level = line[idx + 6 : idx + 10] if idx > 0 else ""
            cached = cache_get(line[:idx], _MISS) if level in levels else None
            host = _cache_host(line[:idx]) if cached is _MISS else cached
            if isinstance(host, str) and host:
                msg = line[idx + (12 if level == "TRAC" else 11) :]
            else:
                parsed = split_header(line)
                if parsed is None:
                    said = bare(line)
                    found += said
                    if said and keep is not None:
                        keep(("", line))
                    if times > 1 and said:
                        s.folded += times - 1
                    continue
                host, level, msg = parsed
            found += 1
            if keep is not None:
                keep((level, msg))
            if times > 1:
                s.folded += times - 1
            s.nccl_lines += 1
            if host not in hosts:
                hosts.add(host)
                s.hosts.append(host)
            if level == "WARN":
                s.warnings.append(msg)
                error_check(msg, line, host)
            else:
                info(msg, now, host, line, times)
        return found

    def _bare(self, line: str) -> bool:
        """Lines without NCCL's host header: `NCCL version ...`, error texts from torch/NCCL."""
        s = self.summary
        v = VERSION.search(line)
        if v and s.version is None:
            s.version = v.group("v")
            return True
        return self._error_check(line, line)

    def _error_check(self, text: str, line: str | None = None, host: str | None = None) -> bool:
        """An NCCL error in `text`; the origin of `line` (its Ray prefix, else NCCL's `host`) gets
        it too. The origin is worked out only for an error: most lines are none."""
        if "rror" not in text and "failed" not in text and "Watchdog" not in text:
            return False  # every ERROR_PATTERNS alternative contains one of these
        m = ERROR_PATTERNS.search(text)
        if not m:
            return False
        ibv = IBV.search(text)
        if ibv:
            self.summary.ibv_failures.append(ibv.group("call"))
        self.summary.errors.append(text.strip())
        if line is not None:
            origin = _origin(line, host) if host is not None else origin_ip(line) or ""
            self._net(origin).errors.append(text.strip())
        return True

    def _net(self, origin: str) -> OriginNet:
        net = self.summary.by_origin.get(origin)
        if net is None:
            net = self.summary.by_origin[origin] = OriginNet()
        return net

    def _info(self, msg: str, now: float | None, host: str = "", line: str = "", times: int = 1) -> None:
        """One INFO message; `times` > 1 when Ray folded that many occurrences into this line
        (the shown one is its prefix's; the others' actors are not named)."""
        s = self.summary
        if msg.startswith(_INFO_PREFIXES):
            self._config_line(msg, _origin(line, host))
        elif "Init START" in msg or "Init COMPLETE" in msg:
            m = INIT.search(msg)
            if m:
                s.nranks = count(m.group("nranks")) or 0
                rank = count(m.group("rank")) or 0
                where = _origin(line, host)
                s.rank_origin.setdefault(rank, where)
                net = self._net(where)
                s.folded_init += times - 1
                if m.group("what") == "COMPLETE":
                    s.ranks_complete.add(rank)
                if m.group("what") == "START":
                    s.init_start += times
                    net.init_start += 1
                    if s.first_pending_start is None:
                        s.first_pending_start = now
                else:
                    s.init_complete += times
                    net.init_complete += 1
                    if s.init_complete >= s.init_start:
                        s.first_pending_start = None
        elif "nNodes" in msg:
            m = NNODES.search(msg)
            if m:
                s.nnodes = count(m.group("nnodes")) or 0
                s.nranks = count(m.group("nranks")) or 0
        elif "via NET/" in msg:
            where = _origin(line, host)
            origin = s.by_origin.get(where)
            if origin is None:
                origin = s.by_origin[where] = OriginNet()
            if s.transport is None or origin.transport is None:
                m = VIA.search(msg)
                if m:
                    s.transport = s.transport or m.group("net")
                    origin.transport = m.group("net")
        else:
            self._error_check(msg, line, host)

    def _config_line(self, msg: str, origin: str) -> None:
        """Version, environment, bootstrap, interface and HCA lines."""
        s = self.summary
        key = origin + "\0" + msg
        if key in self._unions:
            return  # every rank prints the same Bootstrap / NET lines: nothing new to add
        if len(self._unions) > 10_000:
            self._unions.clear()  # bounded; a repeat only re-adds to sets
        self._unions.add(key)
        net = s.by_origin.get(origin)
        if net is None:
            net = s.by_origin[origin] = OriginNet()
        if msg.startswith("NCCL version"):
            m = VERSION.search(msg)
            if m:
                s.version = s.version or m.group("v")
        elif msg.startswith("NCCL_"):
            m = ENV_SET.match(msg)
            if m:
                net.env[m.group("var")] = m.group("v")
                if m.group("var") == "NCCL_SOCKET_IFNAME":
                    s.socket_ifname = m.group("v")
                elif m.group("var") == "NCCL_IB_HCA":
                    s.ib_hca_env = m.group("v")
        elif msg.startswith("Using network"):
            m = NETWORK.match(msg)
            if m:
                s.transport = net.transport = m.group("net")
        elif msg.startswith("Bootstrap"):
            m = BOOTSTRAP.match(msg)
            if m:
                self._addresses(m.group("list"), net)
        elif msg.startswith("NET/IB"):
            self._net_ib(msg, net)
        else:
            m = NET_SOCKET.match(msg)
            if m and not net.bootstrap:
                self._addresses(m.group("list"), net)

    def _net_ib(self, msg: str, net: OriginNet) -> None:
        s = self.summary
        m = NET_IB.match(msg)
        if m and HCA_ITEM.search(m.group("list")):
            for item in HCA_ITEM.finditer(m.group("list")):
                self._hca(item.group("dev"), item.group("link"), net)
                s.sharp = s.sharp or bool(item.group("sharp"))
            if m.group("oob"):
                self._addresses(m.group("oob"), net)
            return
        m = NET_IB_NEW.match(msg)
        if m:
            self._hca(m.group("dev"), m.group("link"), net)
        else:
            m = VIRTUAL_DEV.match(msg)
            if m:
                self._hca(m.group("dev"), "RoCE" if m.group("dev").startswith("roce") else "IB", net)
        oob = OOB.search(msg)
        if oob:
            self._addresses(oob.group("item"), net)

    def _hca(self, dev: str, link: str, net: OriginNet) -> None:
        if dev not in net.hcas:
            net.hcas.append(dev)
        if dev not in self._hca_seen:
            self._hca_seen.add(dev)
            self.summary.hcas.append((dev, link))

    def _addresses(self, text: str, net: OriginNet) -> None:
        for item in ADDR_ITEM.finditer(text):
            pair = (item.group("if"), item.group("addr"))
            if pair not in net.bootstrap:
                net.bootstrap.append(pair)
            if pair not in self.summary.bootstrap:
                self.summary.bootstrap.append(pair)


def _origin(line: str, host: str) -> str:
    """Where a line came from: the Ray actor's address when the line carries
    `(RayWorkerWrapper pid=N, ip=A)`, else NCCL's host field. Cached by the line's prefix (the
    text before ` NCCL `): a rank prints thousands of lines with the same one."""
    if not line.startswith(("(", " ", "\x1b", "[")):
        return host or "?"
    prefix = line[: line.find(" NCCL ")]
    found = _ORIGIN_CACHE.get(prefix)
    if found is None:
        if len(_ORIGIN_CACHE) > 4096:
            _ORIGIN_CACHE.clear()
        actor = actor_of(line)
        found = _ORIGIN_CACHE[prefix] = (actor[1] if actor and actor[1] else host) or "?"
    return found


_ORIGIN_CACHE: dict[str, str] = {}


def split_header(line: str) -> tuple[str, str, str] | None:
    """(host, level, message) of an NCCL line, or None.

    A string scan instead of HEADER.search on the hot path, with the host cached per
    line prefix (one process prints thousands of lines with the same `host:pid:tid [dev]`):
    several times faster on NCCL-dense logs; anything unusual falls back to the regex.
    """
    idx = line.find(" NCCL ")
    if idx < 0:
        return None
    level = line[idx + 6 : idx + 10]
    if level in _LEVELS:
        prefix = line[:idx]
        cached = _HOST_CACHE.get(prefix, _MISS)
        host = _cache_host(prefix) if cached is _MISS else cached
        if isinstance(host, str) and host:
            return host, level, line[idx + (12 if level == "TRAC" else 11) :]
    m = HEADER.search(line)
    return (m.group("host"), m.group("level"), m.group("msg")) if m else None


_MISS = object()
_HOST_CACHE: dict[str, str | None] = {}


def _cache_host(prefix: str) -> str | None:
    if len(_HOST_CACHE) > 4096:
        _HOST_CACHE.clear()  # bounded: a long log with ever-new prefixes
    host = _HOST_CACHE[prefix] = _host_of(prefix)
    return host


def _host_of(prefix: str) -> str | None:
    """The host in `... host:pid[:tid] [dev]` (the text before ` NCCL `), or None when unusual."""
    end = len(prefix) if prefix.endswith("]") else prefix.rfind("] ") + 1
    start = prefix.rfind(" [", 0, end)
    if start <= 0 or not prefix[start + 2 : end - 1].isdigit():
        return None
    parts = prefix[prefix.rfind(" ", 0, start) + 1 : start].split(":")
    if len(parts) >= 3 and parts[-1].isdigit() and (parts[-2].isdigit() or parts[-2].strip("X") == ""):
        host = parts[-3]
    elif len(parts) >= 2 and (parts[-1].isdigit() or parts[-1].strip("X") == ""):
        host = parts[-2]
    else:
        return None
    return host if host and not host.startswith(("[", "(")) else None


def is_nccl_line(line: str) -> bool:
    return "NCCL" in line and split_header(strip_ansi(line)) is not None


def parse_text(text: str) -> NcclSummary:
    parser = NcclParser()
    for line in text.splitlines():
        parser.feed(line)
    return parser.summary
