"""The tag index: each event's tags, counted per issue, for search (`browser.name:Chrome`) and the
issue page's distributions.

An event's tags are the ones Sentry derives from its fields and contexts (`derived_tags`) and its
own `tags`, bounded as Relay bounds them: a key of at most 32 characters and a value of at most
200, neither empty nor holding a line break; anything else is not a tag (Relay drops it too).
Counts are gathered per batch (`TagCounts`). The ingest transaction stores them, per issue, in the
tag queue (`TagCounts.queue`: a row per issue, the batch's counts as JSON); the tag counter
(app/ingest/tag_counter.py) adds the queue into the index soon after, with one upsert per
(issue, key, value) (`TagCounts.write`), which merge and the backfill also use directly.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import sqlalchemy
from sqlalchemy.dialects import postgresql, sqlite

from app.inbox.grouping import exceptions
from app.inbox.tables import ISSUE_TAGS, TAG_QUEUE
from app.protocol.fields import listed, mapping, text

MAX_KEY, MAX_VALUE = 32, 200  # Relay's MaxChars::TagKey and ::TagValue
MAX_TAGS = 100  # an event's own tags read at most
Tag = tuple[str, str]


def derived_tags(event: dict[str, Any]) -> list[Tag]:
    """The tags Sentry derives from an event's fields and contexts, then the event's own."""
    contexts = mapping(event.get("contexts"))
    browser, os_, runtime = (mapping(contexts.get(name)) for name in ("browser", "os", "runtime"))
    device, user, sdk = mapping(contexts.get("device")), mapping(event.get("user")), mapping(event.get("sdk"))
    request = mapping(event.get("request"))
    mechanisms = [mapping(e.get("mechanism")) for e in exceptions(event)]
    handled = [m["handled"] for m in mechanisms if isinstance(m.get("handled"), bool)]
    pairs: list[tuple[str, Any]] = [
        (name, event.get(name)) for name in ("level", "environment", "release", "dist", "transaction", "server_name",
                                             "logger")
    ]
    pairs += [
        ("url", text(request.get("url")).split("?", 1)[0]),
        ("browser", named(browser)), ("browser.name", browser.get("name")),
        ("os", named(os_)), ("os.name", os_.get("name")),
        ("device", device.get("model")),
        ("runtime", named(runtime)), ("runtime.name", runtime.get("name")),
        ("handled", ("yes" if all(handled) else "no") if handled else None),
        ("mechanism", next((m.get("type") for m in mechanisms if m.get("type")), None)),
        ("user", _user(user)),
        ("user.id", user.get("id")), ("user.email", user.get("email")),
        ("user.username", user.get("username")), ("user.ip", user.get("ip_address")),
        ("sdk.name", sdk.get("name")),
    ]
    own = event.get("tags")
    for pair in (list(own.items()) if isinstance(own, dict) else listed(own))[:MAX_TAGS]:
        if isinstance(pair, (list, tuple)) and len(pair) == 2:
            pairs.append((text(pair[0]), pair[1]))
    found: dict[Tag, None] = {}
    for key, value in pairs:
        tag = bounded(key, value)
        if tag is not None:
            found[tag] = None
    return list(found)


def bounded(key: str, value: Any) -> Tag | None:
    """The tag when Relay would keep it: a key of 1 to 32 characters, a value of 1 to 200, no line breaks."""
    if type(value) is str and value.isascii() and "\x00" not in value:
        shown = value.strip()  # plain text, the common case (~20 times an event): as `text` gives it, without the call
    elif value is None or isinstance(value, (dict, list)):
        return None
    elif isinstance(value, bool):
        shown = "True" if value else "False"
    else:
        shown = text(value).strip()
    if not (0 < len(key) <= MAX_KEY and 0 < len(shown) <= MAX_VALUE) or "\n" in shown or "\n" in key:
        return None
    return key, shown


def unpaired(pair: str) -> tuple[str, str]:
    """The key and value of a `TagCounts` pair, "key\\nvalue"."""
    key, value = pair.split("\n", 1)
    return key, value


def named(context: dict[str, Any]) -> str:
    """"Chrome 120.0": a context's name and version, as Sentry's `browser`, `os` and `runtime` tags."""
    return " ".join(text(context.get(part)) for part in ("name", "version") if context.get(part)).strip()


def _user(user: dict[str, Any]) -> str:
    """Sentry's `user` tag: the first of id, username, email and address, prefixed by its kind."""
    for field_name, prefix in (("id", "id"), ("username", "username"), ("email", "email"), ("ip_address", "ip")):
        if user.get(field_name) not in (None, ""):
            return f"{prefix}:{text(user[field_name])}"
    return ""


@dataclass
class TagCounts:
    """Tag counts gathered over a batch of events: queued (`queue`) or written (`write`) at once in
    its transaction. Per issue, a tag is the string "key\\nvalue" (`bounded` lets neither hold a line
    break), so that an issue's dict is its queue row's JSON as it is, with no list made per tag."""

    counts: dict[int, dict[str, list[float]]] = field(default_factory=dict)  # → [count, first, last]

    def add(self, issue_id: int, tags: Iterable[Tag], seen_at: float) -> None:
        counted = self.counts.get(issue_id)
        if counted is None:
            counted = self.counts[issue_id] = {}
        for key, value in tags:
            found = counted.get(pair := f"{key}\n{value}")
            if found is None:
                counted[pair] = [1, seen_at, seen_at]
            else:
                found[0] += 1
                found[1], found[2] = min(found[1], seen_at), max(found[2], seen_at)

    def queue(self, connection: sqlalchemy.Connection) -> None:
        """Store the counts in the tag queue, a row per issue, and forget them: what the ingest
        transaction does (one short insert per issue of the batch instead of an upsert per tag)."""
        if not self.counts:
            return
        rows = [(issue_id, json.dumps(counted, separators=(",", ":"))) for issue_id, counted in self.counts.items()]
        placeholder = "%s" if connection.dialect.name == "postgresql" else "?"
        connection.exec_driver_sql(f"INSERT INTO {TAG_QUEUE.name} (issue_id, counts) VALUES ({placeholder}, {placeholder})",
                                   rows)
        self.counts.clear()

    def write(self, connection: sqlalchemy.Connection) -> None:
        """Add the counts to the index, and forget them: one upsert per row in one executemany on
        SQLite, one statement for all rows (their columns as arrays) on PostgreSQL."""
        rows = sorted((issue_id, *unpaired(pair), int(n), first, last)
                      for issue_id, counted in self.counts.items() for pair, (n, first, last) in counted.items())
        if not rows:
            return
        # Through the driver, with tuples: SQLAlchemy's handling of each row's parameters cost as much
        # as the database's work (bench/triage.py's feeder figures). On PostgreSQL a statement per row
        # costs a round trip and an executor start each; `unnest` makes it one statement.
        if connection.dialect.name == "postgresql":
            connection.exec_driver_sql(UPSERT_ARRAYS, tuple(list(column) for column in zip(*rows, strict=True)))
        else:
            connection.exec_driver_sql(UPSERT_ROW, rows)
        self.counts.clear()


def upsert_rows(dialect: str, select: str = "") -> str:
    """INSERT the rows `select` gives (issue_id, key, value, count, first_seen, last_seen; without
    it, one row of parameters), or add each one's count and widen its first and last seen."""
    placeholder, smaller, larger = ("%s", "least", "greatest") if dialect == "postgresql" else ("?", "min", "max")
    values = select or f"VALUES ({', '.join([placeholder] * 6)})"
    return (f"INSERT INTO inbox_issue_tag (issue_id, key, value, count, first_seen, last_seen) {values}"
            " ON CONFLICT (issue_id, key, value) DO UPDATE SET count = inbox_issue_tag.count + excluded.count,"
            f" first_seen = {smaller}(inbox_issue_tag.first_seen, excluded.first_seen),"
            f" last_seen = {larger}(inbox_issue_tag.last_seen, excluded.last_seen)")


UPSERT_ROW = upsert_rows("sqlite")  # SQLite, a row at a time
# PostgreSQL, every row at once: six arrays, one per column (the rows are distinct: a batch's counts).
UPSERT_ARRAYS = upsert_rows("postgresql", (
    "SELECT * FROM unnest(%s::bigint[], %s::text[], %s::text[], %s::bigint[], %s::float8[], %s::float8[])"))


def upsert(dialect: str) -> sqlalchemy.Insert:
    """The same upsert as a statement to build on (a merge adds one issue's rows into another's)."""
    statement = (postgresql.insert if dialect == "postgresql" else sqlite.insert)(ISSUE_TAGS)
    excluded = statement.excluded
    smaller, larger = (sqlalchemy.func.least, sqlalchemy.func.greatest) if dialect == "postgresql" else (
        sqlalchemy.func.min, sqlalchemy.func.max)
    return statement.on_conflict_do_update(
        index_elements=[ISSUE_TAGS.c.issue_id, ISSUE_TAGS.c.key, ISSUE_TAGS.c.value],
        set_={"count": ISSUE_TAGS.c.count + excluded.count,
              "first_seen": smaller(ISSUE_TAGS.c.first_seen, excluded.first_seen),
              "last_seen": larger(ISSUE_TAGS.c.last_seen, excluded.last_seen)},
    )
