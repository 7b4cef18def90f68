"""Benchmark results in SQLite, keyed by provenance (`$XDG_STATE_HOME/spark-tui/bench.sqlite`).

Each run is one row: when, where it came from (spark-tui's own load generator or an imported
`vllm bench serve --save-result` file), its provenance (image ID and layers, vLLM version, model
and revision, the configuration's hash and the settings that differ from the defaults, nodes,
executor, NCCL transport per node, spark-tui's version), its parameters and its figures. Two keys
make runs comparable: `setup` (what was served: image, configuration, model, nodes) and `load`
(what was asked: concurrency levels, prompt and output lengths). Every write is one transaction,
so a failure never loses another run; a corrupt or locked file is one StoreError line.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path

from spark_tui.errors import StoreError

SETUP_KEYS = ("image_id", "config_hash", "model", "revision", "nodes", "executor")
SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    id INTEGER PRIMARY KEY,
    at REAL NOT NULL,
    origin TEXT NOT NULL,
    setup_key TEXT NOT NULL,
    load_key TEXT NOT NULL,
    provenance TEXT NOT NULL,
    params TEXT NOT NULL,
    levels TEXT NOT NULL,
    note TEXT NOT NULL DEFAULT ''
);
CREATE INDEX IF NOT EXISTS runs_keys ON runs (load_key, setup_key, at);
CREATE TABLE IF NOT EXISTS upgrades (
    id INTEGER PRIMARY KEY,
    at REAL NOT NULL,
    verdict TEXT NOT NULL,
    candidate TEXT NOT NULL,
    known_good TEXT NOT NULL,
    reason TEXT NOT NULL,
    before_run INTEGER REFERENCES runs (id),
    after_run INTEGER REFERENCES runs (id),
    details TEXT NOT NULL DEFAULT '{}'
);
"""


@dataclass
class Run:
    id: int
    at: float
    origin: str
    setup_key: str
    load_key: str
    provenance: dict
    params: dict
    levels: list[dict]
    note: str = ""


def key_of(data: dict) -> str:
    return hashlib.sha256(json.dumps(data, sort_keys=True, default=str).encode()).hexdigest()[:16]


def setup_key(provenance: dict) -> str:
    return key_of({k: provenance.get(k) for k in SETUP_KEYS})


class Store:
    def __init__(self, path: Path):
        self.path = path
        try:
            path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            self.db = sqlite3.connect(path, timeout=2.0)
            with self.db:
                self.db.executescript(SCHEMA)
        except (sqlite3.Error, OSError) as exc:
            raise StoreError(f"bench results {path}: {_why(exc)}") from None

    def close(self) -> None:
        self.db.close()

    def add(self, origin: str, provenance: dict, params: dict, levels: list[dict], note: str = "") -> Run:
        run = Run(
            0, time.time(), origin, setup_key(provenance), key_of(params), provenance, params, levels, note
        )
        try:
            with self.db:  # one transaction: the run is there whole or not at all
                cur = self.db.execute(
                    "INSERT INTO runs (at, origin, setup_key, load_key, provenance, params, levels, note) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    (
                        run.at,
                        origin,
                        run.setup_key,
                        run.load_key,
                        json.dumps(provenance, sort_keys=True),
                        json.dumps(params, sort_keys=True),
                        json.dumps(levels),
                        note,
                    ),
                )
        except sqlite3.Error as exc:
            raise StoreError(f"bench results {self.path}: {_why(exc)}; nothing was written") from None
        run.id = int(cur.lastrowid or 0)
        return run

    def _select(self, where: str = "", args: tuple = (), limit: int = 50) -> list[Run]:
        sql = f"SELECT id, at, origin, setup_key, load_key, provenance, params, levels, note FROM runs {where} ORDER BY at DESC, id DESC LIMIT ?"
        try:
            rows = self.db.execute(sql, (*args, limit)).fetchall()
        except sqlite3.Error as exc:
            raise StoreError(f"bench results {self.path}: {_why(exc)}") from None
        out = []
        for r in rows:
            try:
                out.append(
                    Run(
                        r[0],
                        r[1],
                        r[2],
                        r[3],
                        r[4],
                        json.loads(r[5]),
                        json.loads(r[6]),
                        json.loads(r[7]),
                        r[8],
                    )
                )
            except (ValueError, TypeError):
                continue  # a row another program wrote badly is passed over, never a crash
        return out

    def history(self, limit: int = 50) -> list[Run]:
        return self._select(limit=limit)

    def last_for(self, image_id: str, config_hash: str) -> Run | None:
        """The last run of this image and configuration (what a running deployment's labels say)."""
        # Matched in Python, not by json_extract: one row of malformed JSON would fail the query.
        for run in self._select(limit=1000):
            if (
                run.provenance.get("image_id") == image_id
                and run.provenance.get("config_hash") == config_hash
            ):
                return run
        return None

    def previous_same(self, run: Run) -> Run | None:
        """The last run before `run` with the same setup and load."""
        found = self._select(
            "WHERE setup_key = ? AND load_key = ? AND id < ?", (run.setup_key, run.load_key, run.id), 1
        )
        return found[0] if found else None

    def latest(self, setup: str, load: str, since: float) -> Run | None:
        """The last run of this setup and load recorded at `since` or later."""
        found = self._select("WHERE setup_key = ? AND load_key = ? AND at >= ?", (setup, load, since), 1)
        return found[0] if found else None

    def last_other_setup(self, run: Run) -> Run | None:
        """The last run with the same load and model but another image or configuration."""
        for other in self._select(
            "WHERE load_key = ? AND setup_key != ? AND id < ?", (run.load_key, run.setup_key, run.id)
        ):
            if other.provenance.get("model") == run.provenance.get("model"):
                return other
        return None


@dataclass
class Upgrade:
    """One `spark-tui upgrade`: its verdict (kept, rolled back, refused, interrupted), why, and the
    bench runs of the known-good deployment (before) and of the candidate (after, if it served)."""

    id: int
    at: float
    verdict: str
    candidate: str
    known_good: str
    reason: str
    before_run: int | None
    after_run: int | None
    details: dict


def add_upgrade(store: Store, up: Upgrade) -> Upgrade:
    """Record an upgrade's outcome in one transaction (the table is additive: `runs` is untouched)."""
    try:
        with store.db:
            cur = store.db.execute(
                "INSERT INTO upgrades (at, verdict, candidate, known_good, reason, before_run, after_run, "
                "details) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    up.at,
                    up.verdict,
                    up.candidate,
                    up.known_good,
                    up.reason,
                    up.before_run,
                    up.after_run,
                    json.dumps(up.details, sort_keys=True, default=str),
                ),
            )
    except sqlite3.Error as exc:
        raise StoreError(f"bench results {store.path}: {_why(exc)}; nothing was written") from None
    up.id = int(cur.lastrowid or 0)
    return up


def upgrades(store: Store, limit: int = 50) -> list[Upgrade]:
    """The last upgrades, newest first; a row another program wrote badly is passed over."""
    try:
        rows = store.db.execute(
            "SELECT id, at, verdict, candidate, known_good, reason, before_run, after_run, details "
            "FROM upgrades ORDER BY at DESC, id DESC LIMIT ?",
            (limit,),
        ).fetchall()
    except sqlite3.Error as exc:
        raise StoreError(f"bench results {store.path}: {_why(exc)}") from None
    out = []
    for r in rows:
        try:
            out.append(Upgrade(r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], json.loads(r[8])))
        except (ValueError, TypeError):
            continue
    return out


def provenance_diff(a: dict, b: dict) -> list[tuple[str, object, object]]:
    """(key, a's value, b's value) for every provenance entry that differs; settings per key."""
    out: list[tuple[str, object, object]] = []
    for key in sorted(set(a) | set(b)):
        va, vb = a.get(key), b.get(key)
        if key == "settings" and isinstance(va, dict) and isinstance(vb, dict):
            for name in sorted(set(va) | set(vb)):
                if va.get(name) != vb.get(name):
                    out.append((f"settings.{name}", va.get(name), vb.get(name)))
        elif key not in ("layers",) and va != vb:
            out.append((key, va, vb))
    if a.get("layers") != b.get("layers") and a.get("image_id") == b.get("image_id"):
        out.append(("layers", "…", "…"))
    return out


def _why(exc: BaseException) -> str:
    text = str(exc) or type(exc).__name__
    if "locked" in text:
        return f"{text} (another spark-tui is writing it; try again)"
    if "not a database" in text or "malformed" in text:
        return f"{text} (the file is damaged; move it away to start a new one)"
    return text
