"""What hangs off one issue in Sentry's web API: its events (latest, oldest, by id, the list), a tag's
values, its activity and its notes (comments), and the empty answers for what Lookout does not have
(external issues, replays, stack-trace links) that the MCP server asks for beside them."""

from __future__ import annotations

import re
from typing import Any

import anyio.to_thread
import sqlalchemy
from sqlalchemy import select
from starlette.requests import Request
from starlette.responses import Response

from app.inbox import issue_stats
from app.inbox.activity import MAX_COMMENT
from app.inbox.reading import KEPT, kept_events
from app.inbox.search.engine import MAX_HITS
from app.inbox.search.grammar import MAX_QUERY_CHARS
from app.inbox.tables import EVENTS
from app.webapi import event_json, lookup, paging, sentry_json
from app.webapi.auth import ApiCaller
from app.webapi.handler_context import Parts, answer, body, heavy
from app.webapi.lookup import BadRequest, NotFound

EVENT_ID = re.compile(r"[0-9a-fA-F]{32}|[0-9a-fA-F-]{36}")
TAG_KEY = re.compile(r"[A-Za-z0-9_.:\[\]-]{1,32}")  # Relay's bound on a tag key
EVENTS_PAGE, MAX_EVENTS_PAGE = 50, 100
SCAN_PER_ROW = 10  # with a query, stored events read at most for each row a page may hold (1,000 for 100)
FILTER = re.compile(r'(!?)([\w.:-]{1,32}):("[^"]*"|\S+)')


async def _issue(request: Request, parts: Parts) -> dict[str, Any]:
    return await anyio.to_thread.run_sync(lookup.issue, parts.search, request.path_params["issue"])


async def event(request: Request, caller: ApiCaller, parts: Parts) -> Response:
    """`latest`, `oldest` (or Sentry's `recommended`: the latest), or an event id of the issue."""
    issue = await _issue(request, parts)
    wanted = request.path_params["event"]
    if wanted in ("latest", "recommended", "oldest"):
        found = await anyio.to_thread.run_sync(parts.reader.issue_events, issue["id"], 1, wanted == "oldest")
        stored = found[0] if found else None
    elif EVENT_ID.fullmatch(wanted):
        stored = await anyio.to_thread.run_sync(parts.reader.event, wanted)
        stored = stored if stored is not None and stored["issue_id"] == issue["id"] else None
    else:
        raise NotFound(f"There is no event {wanted[:40]!r}: name one by its id (32 hex digits), latest or oldest.")
    if stored is None:
        raise NotFound(f"Issue {issue['short_id']} has no stored event {wanted!r}.")
    return answer(event_json.event(stored["event"], issue["id"], stored["project_id"], stored["received_at"],
                                    issue["culprit"]))


@heavy
async def events(request: Request, caller: ApiCaller, parts: Parts) -> Response:
    """A page of the issue's stored events, newest first (`sort=timestamp`: oldest first), from the `cursor`
    on: those matching `query` (`key:value` terms on the event's tags, `!key:value` none of them, free words
    in the title). The cursor counts stored events, so a page reads only the events it shows (and finds
    whether one follows); with a query it reads at most SCAN_PER_ROW stored events for each row it may hold,
    so it may hold fewer and still have a next page."""
    issue = await _issue(request, parts)
    size = paging.page_size(request.query_params, EVENTS_PAGE, MAX_EVENTS_PAGE)
    start = paging.offset(request.query_params)
    query = request.query_params.get("query", "")
    if len(query) > MAX_QUERY_CHARS:
        raise BadRequest(f"A query has at most {MAX_QUERY_CHARS:,} characters, as the issues' search.")
    oldest = request.query_params.get("sort", "-timestamp") == "timestamp"
    rows, following, more = await anyio.to_thread.run_sync(_page, parts.engine, issue["id"], start, size, query, oldest)
    url = f"{parts.base(request)}{request.url.path}"
    return answer(rows, headers={"Link": paging.link(url, request.query_params, start, size, more, following)})


def _page(engine: sqlalchemy.Engine, issue_id: int, start: int, size: int, query: str,
          oldest: bool) -> tuple[list[dict[str, Any]], int, bool]:
    """Up to `size` rows of the events from stored event `start` on that match `query`, the position of the
    stored event the next page starts at, and whether there is one (blocking)."""
    end = start + (SCAN_PER_ROW * size if query else size)
    rows: list[dict[str, Any]] = []
    at = start
    with engine.connect() as connection:
        while len(rows) < size and at < end:
            wanted = min(size, end - at)
            stored = _stored(connection, issue_id, at, wanted, oldest)
            for row in stored:
                at += 1
                if row is not None and _matches(row, query):
                    rows.append(row)
                    if len(rows) == size:
                        break
            if len(stored) < wanted:
                break
        more = connection.execute(_in_order(issue_id, oldest, EVENTS.c.id).offset(at).limit(1)).first() is not None
    return rows, at, more and at <= MAX_HITS


def _in_order(issue_id: int, oldest: bool, *columns: sqlalchemy.ColumnElement[Any]) -> sqlalchemy.Select[Any]:
    return select(*columns).where(EVENTS.c.issue_id == issue_id).order_by(EVENTS.c.id if oldest else EVENTS.c.id.desc())


def _stored(connection: sqlalchemy.Connection, issue_id: int, start: int, count: int,
            oldest: bool) -> list[dict[str, Any] | None]:
    """The rows of `count` stored events of the issue from position `start` on (None: one that cannot be read).
    Their ids first: sorted by id, SQLite would read every stored event of the issue into its sorter."""
    ids = _in_order(issue_id, oldest, EVENTS.c.id).offset(start).limit(count)
    found = connection.execute(select(EVENTS.c.project_id, EVENTS.c.received_at, *KEPT).where(EVENTS.c.id.in_(ids))
                               .order_by(EVENTS.c.id if oldest else EVENTS.c.id.desc())).all()
    return [None if event is None else event_json.event_row(event, issue_id, row[0], row[1])
            for row, event in zip(found, kept_events(connection, [row[2:] for row in found]), strict=True)]


def _matches(row: dict[str, Any], query: str) -> bool:
    tags = {(t["key"], t["value"]) for t in row["tags"]}
    words = FILTER.sub(" ", query).split()
    for negated, key, value in FILTER.findall(query):
        if ((key, value.strip('"')) in tags) == bool(negated):
            return False
    return all(word.lower() in row["title"].lower() for word in words)


async def tag_values(request: Request, caller: ApiCaller, parts: Parts) -> Response:
    issue = await _issue(request, parts)
    key = request.path_params["key"]
    if TAG_KEY.fullmatch(key) is None:
        raise NotFound(f"There is no tag {key[:40]!r} (a tag key has 1 to 32 characters).")
    total, unique, top = await anyio.to_thread.run_sync(issue_stats.tag_values, parts.engine, issue["id"], key)
    return answer({
        "key": key, "name": key.capitalize(), "totalValues": total, "uniqueValues": unique,
        "topValues": [{"key": key, "name": value, "value": value, "count": count, "firstSeen": sentry_json.iso(first),
                       "lastSeen": sentry_json.iso(last)} for value, count, first, last in top],
    })


async def _timeline(request: Request, parts: Parts) -> list[dict[str, Any]]:
    issue = await _issue(request, parts)

    def read() -> list[dict[str, Any]]:
        ids = lookup.user_ids(parts.engine)
        entries = parts.triage.timeline(issue["id"])
        return [sentry_json.activity(number, entry, ids) for number, entry in enumerate(entries, 1)][::-1]

    return await anyio.to_thread.run_sync(read)


async def activities(request: Request, caller: ApiCaller, parts: Parts) -> Response:
    """The issue's timeline (app/inbox/activity.py), newest first."""
    return answer({"activity": await _timeline(request, parts)})


async def notes(request: Request, caller: ApiCaller, parts: Parts) -> Response:
    size = paging.page_size(request.query_params, 100, 100)
    return answer([item for item in await _timeline(request, parts) if item["type"] == "note"][:size])


async def add_note(request: Request, caller: ApiCaller, parts: Parts) -> Response:
    given = await body(request, parts.settings)
    issue = await _issue(request, parts)
    text = given.get("text")
    if not isinstance(text, str) or not 0 < len(text.strip()) <= MAX_COMMENT:
        raise BadRequest(f"A note is {{\"text\": \"...\"}} of 1 to {MAX_COMMENT:,} characters.")

    def added() -> dict[str, Any]:
        parts.triage.add_comment(issue["id"], caller.name, text)
        ids = lookup.user_ids(parts.engine)
        entries = [e for e in parts.triage.timeline(issue["id"]) if e.kind == "comment" and e.actor == caller.name]
        return sentry_json.activity(0, entries[-1], ids)

    return answer(await anyio.to_thread.run_sync(added), status=201)


async def nothing_listed(request: Request, caller: ApiCaller, parts: Parts) -> Response:
    """External issues: Lookout links none."""
    await _issue(request, parts)
    return answer([])


async def no_replays(request: Request, caller: ApiCaller, parts: Parts) -> Response:
    return answer({})


async def no_stacktrace_link(request: Request, caller: ApiCaller, parts: Parts) -> Response:
    """Lookout links no source repository: the MCP server shows the frame without a link."""
    await anyio.to_thread.run_sync(lookup.project, parts.engine, request.path_params["project"])
    return answer({"config": None, "sourceUrl": None, "sourcePath": None, "integrations": []})

