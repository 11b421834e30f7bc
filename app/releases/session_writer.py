"""The ingest side of release health: `session` and `sessions` items, written in the store's
transaction (app/ingest/envelope_writer.py), counted as Sentry's Relay counts them.

    session:  {"sid": "…", "did": "u-1", "init": true, "started": "…", "status": "exited",
               "errors": 1, "attrs": {"release": "shop@1.0", "environment": "production"}}
    sessions: {"attrs": {…}, "aggregates": [{"started": "…", "did": "u-1", "exited": 3, "errored": 1,
                                             "abnormal": 0, "crashed": 0}]}

A single session is one row by its sid, whatever number of updates it sends and in whatever order:
its `init` update counts it as started, and its worst status wins (crashed, then abnormal, then
errored: status "errored" or "unhandled" or `errors` above 0, then healthy). "unhandled" is what the
browser SDK (since 10) sends for an unhandled error, which does not end the page as a crash ends a
process: errored, not crashed, as Relay counts it; an aggregate's `unhandled` groups likewise. An
aggregate's group is added to the row of its release, environment, minute started and user. Sessions
with no release are dropped, as Relay drops them; so are those started more than MAX_AGE before they
were received. A user's distinct id (`did`, often an e-mail address or a user id) is stored hashed
with the project's id: distinct users can be counted, and the id itself is not kept.
"""

from __future__ import annotations

import hashlib
from typing import Any

import sqlalchemy
from sqlalchemy import case
from sqlalchemy.dialects import postgresql, sqlite

from app.ingest.event_writer import ENVIRONMENT_LENGTH, NAME_LENGTH
from app.protocol.fields import cut, listed, mapping, seconds, text, whole
from app.releases.tables import SESSIONS

SESSION_ITEM_TYPES = ("session", "sessions")
MAX_AGE = 5 * 86400.0  # a session started longer before it was received is not counted (Relay's too)
MAX_GROUPS = 1000  # of one `sessions` item's aggregates
SID_LENGTH = 64
NIL_DID = "00000000-0000-0000-0000-000000000000"  # Relay reads it as no user
CRASHED, ABNORMAL, ERRORED, UNHANDLED = "crashed", "abnormal", "errored", "unhandled"
KEY = (SESSIONS.c.project_id, SESSIONS.c.release, SESSIONS.c.environment, SESSIONS.c.key)


def write_sessions(connection: sqlalchemy.Connection, project_id: int, item_type: str, payload: dict[str, Any],
                   received_at: float) -> int:
    """Count a `session` update or a `sessions` item's aggregates; how many rows it touched."""
    rows = session_rows(project_id, item_type, payload, received_at)
    for row in rows:
        (_upsert_single if item_type == "session" else upsert_group)(connection, row)
    return len(rows)


def row_keys(project_id: int, item_type: str, payload: dict[str, Any], received_at: float) -> list[tuple[str, ...]]:
    """The (release, environment, key) of each row a `session` or `sessions` item writes to: what
    parallel feeders lock before they write (app/ingest/issue_keys.py)."""
    return [(row["release"], row["environment"], row["key"])
            for row in session_rows(project_id, item_type, payload, received_at)]


def session_rows(project_id: int, item_type: str, payload: dict[str, Any], received_at: float) -> list[dict[str, Any]]:
    """The rows a `session` update (one) or a `sessions` item (one per aggregate's group) adds to; none
    without a release."""
    attrs = mapping(payload.get("attrs"))
    release = cut(attrs.get("release"), NAME_LENGTH)
    if not release:
        return []
    where = {"project_id": project_id, "release": release,
             "environment": cut(attrs.get("environment"), ENVIRONMENT_LENGTH), "updated_at": received_at}
    rows = ([_single(payload, project_id, received_at)] if item_type == "session" else
            [_group(mapping(group), project_id, received_at) for group in listed(payload.get("aggregates"))[:MAX_GROUPS]])
    return [{**where, **row} for row in rows if row is not None]


def hashed_did(project_id: int, did: Any) -> str:
    """A user's distinct id as stored: 32 hex digits of its SHA-256 with the project's id; "" for none."""
    found = text(did)
    if not found or found == NIL_DID:
        return ""
    return hashlib.sha256(f"{project_id}\0{found}".encode()).hexdigest()[:32]


def _started(value: Any, received_at: float) -> float | None:
    started = seconds(value)
    if started is None or started > received_at:  # a clock ahead: when it was received
        return received_at
    return None if started < received_at - MAX_AGE else started


def _single(payload: dict[str, Any], project_id: int, received_at: float) -> dict[str, Any] | None:
    sid = cut(payload.get("sid"), SID_LENGTH).lower()
    started = _started(payload.get("started"), received_at)
    if not sid or started is None:
        return None
    status = text(payload.get("status"))
    errors = payload.get("errors")
    crashed = status == CRASHED
    abnormal = status == ABNORMAL and not crashed
    errored = not (crashed or abnormal) and (status in (ERRORED, UNHANDLED) or (whole(errors) and errors > 0))
    return {"key": f"s:{sid}", "did": hashed_did(project_id, payload.get("did")), "started": started,
            "sessions": int(payload.get("init") is True), "errored": int(errored), "abnormal": int(abnormal),
            "crashed": int(crashed)}


def _group(group: dict[str, Any], project_id: int, received_at: float) -> dict[str, Any] | None:
    started = _started(group.get("started"), received_at)
    if started is None:
        return None
    counts = {status: _count(group.get(status)) for status in ("exited", ERRORED, UNHANDLED, ABNORMAL, CRASHED)}
    total = sum(counts.values())
    counts[ERRORED] += counts[UNHANDLED]
    if total == 0:
        return None
    did = hashed_did(project_id, group.get("did"))
    minute = started - started % 60
    return {"key": f"a:{int(minute)}:{did}", "did": did, "started": minute, "sessions": total,
            "errored": counts[ERRORED], "abnormal": counts[ABNORMAL], "crashed": counts[CRASHED]}


def _count(value: Any) -> int:
    return min(value, 2**31 - 1) if whole(value) and value > 0 else 0


def _insert(connection: sqlalchemy.Connection) -> Any:
    return (sqlite if connection.dialect.name == "sqlite" else postgresql).insert(SESSIONS)


def _greater(a: Any, b: Any) -> Any:
    return case((a > b, a), else_=b)


def _upsert_single(connection: sqlalchemy.Connection, row: dict[str, Any]) -> None:
    """Insert a session's row, or merge an update into it: started once seen, the worst status, the
    first user id given."""
    statement = _insert(connection).values(**row)
    new, old = statement.excluded, SESSIONS.c
    crashed = _greater(old.crashed, new.crashed)
    abnormal = case((crashed > 0, 0), else_=_greater(old.abnormal, new.abnormal))
    errored = case(((crashed + abnormal) > 0, 0), else_=_greater(old.errored, new.errored))
    connection.execute(statement.on_conflict_do_update(index_elements=list(KEY), set_={
        "sessions": _greater(old.sessions, new.sessions), "crashed": crashed, "abnormal": abnormal,
        "errored": errored, "did": case((old.did == "", new.did), else_=old.did),
        "started": case((new.sessions > 0, new.started), else_=old.started), "updated_at": new.updated_at,
    }))


def upsert_group(connection: sqlalchemy.Connection, row: dict[str, Any]) -> None:
    """Add an aggregate's group to its release, environment, minute and user's row."""
    statement = _insert(connection).values(**row)
    new, old = statement.excluded, SESSIONS.c
    connection.execute(statement.on_conflict_do_update(index_elements=list(KEY), set_={
        name: getattr(old, name) + getattr(new, name) for name in ("sessions", "errored", "abnormal", "crashed")
    } | {"updated_at": new.updated_at}))
