"""A large inbox for bench/triage.py, written with bulk inserts: `build(url, events, issues)`.

One project ("Bench"); issue sizes Zipf-like (every issue has an event, a few hot ones most of
them); half the issues a browser's (JavaScript), half a server's (Python), 30 tag keys between
them, of varied cardinality: level and handled a few values, release 50 (by time: a new one
every 1.8 days), browser and os tens, transaction and url hundreds to thousands, user.* 200,000
users (Zipf), and custom keys. Each issue's tag rows are counted as ingest counts them (count,
first and last seen per value). Events keep a small payload. The tables' indexes are dropped for
the load and built after it (as a restore does); on PostgreSQL the load is COPY, then VACUUM
ANALYZE (what autovacuum does after a load). Deterministic for a seed.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import random
import sqlite3
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import psycopg

DAY = 86400.0
SPAN_S = 90 * DAY  # issues first seen over the last 90 days
USERS = 200_000
RELEASES = [f"shop@2.{n}.0" for n in range(50)]
PROJECT = (1, "Bench", "bench")  # id, name, public key
TABLES = ("inbox_issue", "inbox_grouphash", "inbox_event", "inbox_issue_tag")
ISSUE_COLUMNS = ("id", "project_id", "fingerprint", "title", "culprit", "level", "kind", "status", "resolved_in_release",
                 "first_seen", "last_seen", "event_count", "last_event_id", "assignee")
EVENT_COLUMNS = ("project_id", "issue_id", "event_id", "received_at", "timestamp", "level", "platform", "environment",
                 "release", "title", "payload", "fingerprint")
TAG_COLUMNS = ("issue_id", "key", "value", "count", "first_seen", "last_seen")
ASSIGNEES = [f"dev{n}@example.com" for n in range(10)]
ERRORS = [  # (type, value): titles and free text
    ("TypeError", "Cannot read properties of undefined (reading '{w}')"), ("KeyError", "'{w}'"),
    ("ValueError", "invalid literal for int() with base 10: '{w}'"), ("ConnectionResetError", "connection reset by peer"),
    ("TimeoutError", "timeout after {n} ms calling {w}"), ("OperationalError", "deadlock detected on {w}"),
    ("PermissionError", "permission denied for table {w}"), ("AttributeError", "'NoneType' object has no attribute '{w}'"),
    ("RangeError", "Maximum call stack size exceeded in {w}"), ("ZeroDivisionError", "division by zero in {w}"),
]
WORDS = ["cart", "order", "invoice", "user", "session", "price", "items", "basket", "payment", "token", "profile",
         "address", "coupon", "shipment", "refund", "avatar", "search", "report", "export", "webhook"]
Tally = dict[str, list[float]]  # value → [count, first seen, last seen]


@dataclass(frozen=True)
class Facts:
    """What the queries name: an event id and an issue that exist, the latest release, the base time."""

    event_id: str
    issue_id: int
    latest_release: str
    now: float


class Pool:
    """Values drawn with Zipf-like weights (1/rank^s), or with the weights given."""

    def __init__(self, values: Sequence[str], s: float = 1.0, weights: Sequence[float] | None = None) -> None:
        self.values = list(values)
        self.cum = list(itertools.accumulate(weights or [1 / (k ** s) for k in range(1, len(values) + 1)]))

    def draw(self, rng: random.Random, k: int) -> list[str]:
        return rng.choices(self.values, cum_weights=self.cum, k=k)

    def few(self, rng: random.Random, n_events: int) -> Pool:
        """An issue's own few values (where it happens: 1 to 3 of them, the first most often)."""
        m = 1 + (n_events > 10) + (n_events > 1000)
        return Pool(self.draw(rng, m), weights=[6, 3, 1][:m])


BROWSERS = Pool([f"{name} {v}" for name in ("Chrome", "Safari", "Firefox", "Edge", "Samsung Internet", "Opera")
                 for v in ("120.0", "121.0", "122.0", "123.0", "124.0")], s=0.6)
SYSTEMS = Pool([f"{name} {v}" for name in ("Windows", "macOS", "iOS", "Android", "Linux") for v in ("10", "11", "14", "17")],
               s=0.6)
# Two thirds of browsers have no device (desktops).
DEVICES = Pool(["", *(f"Model {n}" for n in range(200))], weights=[11, *(1 / k for k in range(1, 201))])
ROUTES = [f"/api/{w}/{{id}}/{verb}" for w in WORDS for verb in ("list", "show", "update", "delete", "checkout")]
TRANSACTIONS, URLS = Pool(ROUTES, s=0.8), Pool(
    [f"https://shop.example/{w}/{'checkout/' if n % 10 == 0 else ''}{n}" for w in WORDS for n in range(100)], s=0.7)
LOGGERS, COMPONENTS = Pool([f"app.{w}.{m}" for w in WORDS for m in ("views", "tasks")]), Pool([f"c{n}" for n in range(100)])
POOLS = {
    "environment": Pool(["production", "staging", "development"], weights=[85, 12, 3]),
    "server_name": Pool([f"web-{n}" for n in range(1, 21)], s=0.0),
    "customer.tier": Pool(["free", "pro", "team", "enterprise"], weights=[60, 25, 10, 5]),
    "region": Pool(["eu-west", "us-east", "us-west", "ap-south", "eu-central", "sa-east", "ap-east", "af-south"]),
    "locale": Pool([f"{lang}-{c}" for lang in ("en", "de", "fr", "es", "pt", "ja") for c in ("US", "GB", "DE", "FR", "BR")]),
    "feature.flag": Pool([f"flag-{n}" for n in range(40)]),
    "plan": Pool(["monthly", "yearly", "trial"], weights=[60, 30, 10]),
    "http.status_code": Pool(["500", "502", "503", "504", "400", "404", "409", "422", "429", "401"]),
    "dist": Pool(["1", "2", "3"], weights=[70, 20, 10]),
    "runtime": Pool(["CPython 3.11.7", "CPython 3.12.1", "CPython 3.10.13"], weights=[60, 30, 10]),
}
USER_CUM = list(itertools.accumulate(1 / k for k in range(1, USERS + 1)))
JS_KEYS, PY_KEYS = ("dist", "customer.tier", "region", "locale", "plan"), ("server_name", "customer.tier", "region",
                                                                           "http.status_code", "plan", "runtime")


def issue_sizes(rng: random.Random, events: int, issues: int) -> list[int]:
    """Events per issue: one each, the rest Zipf-like (s = 1.1): a few hot issues hold most."""
    sizes = [1] * issues
    for index in rng.choices(range(issues), cum_weights=list(itertools.accumulate(1 / (k ** 1.1) for k in
                                                                                   range(1, issues + 1))),
                             k=max(0, events - issues)):
        sizes[index] += 1
    rng.shuffle(sizes)  # hot issues anywhere in id order
    return sizes


def tally(values: Sequence[str], times: Sequence[float], into: Tally | None = None) -> Tally:
    """Count each value with its first and last time (`times` ascending)."""
    found: Tally = {} if into is None else into
    for value, at in zip(values, times, strict=True):
        entry = found.get(value)
        if entry is None:
            found[value] = [1, at, at]
        else:
            entry[0] += 1
            entry[2] = at
    return found


def rolled(counted: Tally, coarser: Callable[[str], str]) -> Tally:
    """The tally of `coarser(value)` ("Chrome 120.0" → "Chrome")."""
    found: Tally = {}
    for value, (n, first, last) in counted.items():
        entry = found.setdefault(coarser(value), [0, first, last])
        entry[0] += n
        entry[1], entry[2] = min(entry[1], first), max(entry[2], last)
    return found


def user_tags(counted: Tally) -> dict[str, Tally]:
    """The user.* tags of user ranks counted (id, email, ip for everyone, username for a third)."""
    keys: dict[str, Tally] = {"user": {}, "user.id": {}, "user.email": {}, "user.ip": {}, "user.username": {}}
    for rank, entry in counted.items():
        n = int(rank)
        keys["user"][f"id:{rank}"] = keys["user.id"][rank] = keys["user.email"][f"u{rank}@example.com"] = entry
        keys["user.ip"][f"10.{(n >> 16) & 255}.{(n >> 8) & 255}.{n & 255}"] = entry
        if n % 3 == 0:
            keys["user.username"][f"user{rank}"] = entry
    return keys


class Loader:
    """Bulk writes: executemany on one SQLite connection (not synced while loading), COPY on PostgreSQL."""

    def __init__(self, url: str) -> None:
        self.sqlite = url.startswith("sqlite")
        self.db: sqlite3.Connection | psycopg.Connection[tuple[object, ...]]
        if self.sqlite:
            self.db = sqlite3.connect(url.removeprefix("sqlite:///"))
            self.db.execute("PRAGMA synchronous=OFF")
            self.db.execute("PRAGMA cache_size=-500000")
        else:
            self.db = psycopg.connect(url.replace("+psycopg", ""))
            self.db.execute("SET session_replication_role = replica")  # no foreign-key checks while loading
        self.indexes: list[str] = []

    def write(self, table: str, columns: Sequence[str], rows: Sequence[Sequence[object]]) -> None:
        if isinstance(self.db, sqlite3.Connection):
            self.db.executemany(f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})", rows)
            return
        with self.db.cursor() as cursor, cursor.copy(f"COPY {table} ({', '.join(columns)}) FROM STDIN") as copy:
            for row in rows:
                copy.write_row(row)

    def drop_indexes(self) -> None:
        """Drop the tables' indexes (not their keys), keeping their definitions to build them again."""
        for table in TABLES:
            if isinstance(self.db, sqlite3.Connection):
                found = self.db.execute("SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = ?"
                                        " AND sql IS NOT NULL", (table,)).fetchall()
            else:
                found = self.db.execute("SELECT indexname, indexdef FROM pg_indexes WHERE tablename = %s AND NOT EXISTS"
                                        " (SELECT 1 FROM pg_constraint c WHERE c.conname = indexname)", (table,)).fetchall()
            for name, definition in found:
                self.db.execute(f"DROP INDEX {name}")
                self.indexes.append(str(definition))
        self.db.commit()

    def finish(self) -> None:
        """Commit, build the indexes again; on PostgreSQL also the sequences and VACUUM ANALYZE."""
        self.db.commit()
        for definition in self.indexes:
            self.db.execute(definition)
        if isinstance(self.db, sqlite3.Connection):
            self.db.commit()
            self.db.close()
            return
        for table in TABLES:
            self.db.execute(f"SELECT setval(pg_get_serial_sequence('{table}', 'id'), (SELECT max(id) FROM {table}))")
        self.db.commit()
        self.db.autocommit = True
        self.db.execute("VACUUM ANALYZE")
        self.db.close()


@dataclass
class Rows:
    """Rows generated, written in chunks."""

    issues: list[Sequence[object]] = field(default_factory=list)
    hashes: list[Sequence[object]] = field(default_factory=list)
    events: list[Sequence[object]] = field(default_factory=list)
    tags: list[Sequence[object]] = field(default_factory=list)
    tag_rows: int = 0

    def flush(self, loader: Loader) -> None:
        for table, columns, rows in (("inbox_issue", ISSUE_COLUMNS, self.issues),
                                     ("inbox_grouphash", ("id", "project_id", "fingerprint", "issue_id"), self.hashes),
                                     ("inbox_event", EVENT_COLUMNS, self.events), ("inbox_issue_tag", TAG_COLUMNS, self.tags)):
            loader.write(table, columns, rows)
        self.tag_rows += len(self.tags)
        self.issues, self.hashes, self.events, self.tags = [], [], [], []


USER_IDS = [str(k) for k in range(1, USERS + 1)]


def one_issue(rng: random.Random, rows: Rows, issue_id: int, n: int, now: float) -> None:
    """An issue of `n` events, its hash, its events and its tag rows."""
    js, kind = rng.random() < 0.55, "message" if rng.random() < 0.15 else "error"
    first = now - SPAN_S * rng.random() ** 1.5
    last = first if n == 1 else now - (now - first) * rng.random() ** max(1.0, math.log2(n))  # hot: seen lately
    times = sorted([first, last, *(rng.uniform(first, last) for _ in range(n - 2))])[:n]
    word = rng.choice(WORDS)
    if kind == "error":
        error, template = rng.choice(ERRORS)
        title, level = f"{error}: {template.format(w=word, n=rng.choice((500, 3000)))}", rng.choice(("error",) * 8 + ("fatal",))
    else:
        title, level = f"{word} export took longer than expected", rng.choice(("warning", "info"))
    tallies: dict[str, Tally] = {"level": {level: [n, first, last]},
                                 "sdk.name": {"sentry.javascript.react" if js else "sentry.python": [n, first, last]}}
    if kind == "error":
        tallies["handled"] = {("no" if rng.random() < 0.7 else "yes") if js else ("yes" if rng.random() < 0.6 else "no"):
                              [n, first, last]}
        tallies["mechanism"] = {rng.choice(("onerror", "onunhandledrejection", "generic") if js
                                           else ("excepthook", "logging", "starlette")): [n, first, last]}
    environments = POOLS["environment"].draw(rng, n)
    releases = [RELEASES[max(0, min(49, int(49 - (now - at) / (SPAN_S / 49)) - rng.choice((0, 0, 0, 1, 2))))] for at in times]
    tallies["environment"], tallies["release"] = tally(environments, times), tally(releases, times)
    transactions = TRANSACTIONS.few(rng, n)
    tallies["transaction"] = tally(transactions.draw(rng, n), times)
    for key in JS_KEYS if js else PY_KEYS:
        tallies[key] = tally(POOLS[key].draw(rng, n), times)
    if js:
        tallies["browser"], tallies["os"] = tally(BROWSERS.draw(rng, n), times), tally(SYSTEMS.draw(rng, n), times)
        tallies["browser.name"] = rolled(tallies["browser"], lambda v: v.rpartition(" ")[0])
        tallies["os.name"] = rolled(tallies["os"], lambda v: v.rpartition(" ")[0])
        tallies["device"] = tally(DEVICES.draw(rng, n), times)
    else:
        tallies["runtime.name"] = rolled(tallies["runtime"], lambda v: v.partition(" ")[0])
        tallies["logger"] = tally(LOGGERS.few(rng, n).draw(rng, n), times)
    if js or rng.random() < 0.7:
        tallies["url"] = tally(URLS.few(rng, n).draw(rng, n), times)
    for key, pool, share in (("component", COMPONENTS, 0.5), ("feature.flag", POOLS["feature.flag"], 0.4)):
        if rng.random() < share:
            tallies[key] = tally(pool.few(rng, n).draw(rng, n), times)
    if js or rng.random() < 0.5:
        tallies.update(user_tags(tally(rng.choices(USER_IDS, cum_weights=USER_CUM, k=n), times)))
    fingerprint = hashlib.sha256(str(issue_id).encode()).hexdigest()
    platform = "javascript" if js else "python"
    event_ids = [f"{rng.getrandbits(128):032x}" for _ in range(n)]
    for at, event_id, environment, release in zip(times, event_ids, environments, releases, strict=True):
        payload = json.dumps({"event_id": event_id, "level": level, "platform": platform, "message": title})
        rows.events.append((PROJECT[0], issue_id, event_id, at, at, level, platform, environment, release, title, payload,
                            fingerprint))
    status = rng.choices(("unresolved", "resolved", "ignored", "regressed"), weights=(65, 25, 7, 3))[0]
    culprit = transactions.values[0].replace("{id}", "<id>") if js else f"app.{word}.views in handle_{word}"
    rows.issues.append((issue_id, PROJECT[0], fingerprint, title, culprit, level, kind, status, "", first, last, n,
                        event_ids[-1], rng.choice(ASSIGNEES) if rng.random() < 0.08 else ""))
    rows.hashes.append((issue_id, PROJECT[0], fingerprint, issue_id))
    rows.tags.extend((issue_id, key, value, int(c), f, la) for key, counted in tallies.items()
                     for value, (c, f, la) in counted.items() if value)


def build(url: str, events: int, issues: int, seed: int = 23, now: float | None = None) -> Facts:
    """Write the inbox into the migrated, empty database at `url` (see the module's docstring)."""
    rng, now = random.Random(seed), time.time() if now is None else now
    sizes = issue_sizes(rng, events, issues)
    loader, rows = Loader(url), Rows()
    loader.write("inbox_project", ("id", "name", "public_key", "created_at"), [(*PROJECT, now - SPAN_S)])
    loader.drop_indexes()
    event_id, started = "", time.monotonic()
    for issue_id, n in enumerate(sizes, start=1):
        one_issue(rng, rows, issue_id, n, now)
        if issue_id == issues // 2:
            event_id = str(rows.events[-1][2])
        if len(rows.events) >= 50_000 or issue_id == issues:
            rows.flush(loader)
            print(f"\r  {issue_id:,} issues written, {rows.tag_rows:,} tag rows ({time.monotonic() - started:.0f} s)",
                  end="", flush=True)
    print("\n  building the indexes ...", flush=True)
    loader.finish()
    return Facts(event_id, issues // 3, RELEASES[-1], now)
