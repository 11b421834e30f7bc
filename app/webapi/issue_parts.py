"""What hangs off one issue in Sentry's web API: its events (latest, oldest, by id, the list), a tag's
values, its activity and its notes (comments), and the empty answers for what Lookout does not have
(external issues, replays, stack-trace links) that the MCP server asks for beside them."""

from __future__ import annotations

import re
from typing import Any

import anyio.to_thread
from starlette.requests import Request
from starlette.responses import Response

from app.inbox import issue_stats
from app.inbox.activity import MAX_COMMENT
from app.inbox.search.grammar import MAX_QUERY_CHARS
from app.webapi import event_shape, lookup, paging, shapes
from app.webapi.auth import ApiCaller
from app.webapi.lookup import BadRequest, NotFound
from app.webapi.parts import Parts, answer, body

EVENT_ID = re.compile(r"[0-9a-fA-F]{32}|[0-9a-fA-F-]{36}")
TAG_KEY = re.compile(r"[A-Za-z0-9_.:\[\]-]{1,32}")  # Relay's bound on a tag key
EVENTS_PAGE, MAX_EVENTS_PAGE = 50, 100
SCANNED = 1000  # stored events read at most to filter an events list by its query
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
    return answer(event_shape.event(stored["event"], issue["id"], stored["project_id"], stored["received_at"],
                                    issue["culprit"]))


async def events(request: Request, caller: ApiCaller, parts: Parts) -> Response:
    """The issue's stored events, newest first, those matching `query` (`key:value` terms on the event's
    tags, `!key:value` none of them, free words in the title): at most the newest SCANNED are read."""
    issue = await _issue(request, parts)
    size = paging.page_size(request.query_params, EVENTS_PAGE, MAX_EVENTS_PAGE)
    query = request.query_params.get("query", "")
    if len(query) > MAX_QUERY_CHARS:
        raise BadRequest(f"A query has at most {MAX_QUERY_CHARS:,} characters, as the issues' search.")
    oldest = request.query_params.get("sort", "-timestamp") == "timestamp"
    stored = await anyio.to_thread.run_sync(parts.reader.issue_events, issue["id"], SCANNED, oldest)
    rows = [event_shape.event_row(s["event"], issue["id"], s["project_id"], s["received_at"]) for s in stored]
    return answer([row for row in rows if _matches(row, query)][:size])


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
        "topValues": [{"key": key, "name": value, "value": value, "count": count, "firstSeen": shapes.iso(first),
                       "lastSeen": shapes.iso(last)} for value, count, first, last in top],
    })


async def _timeline(request: Request, parts: Parts) -> list[dict[str, Any]]:
    issue = await _issue(request, parts)

    def read() -> list[dict[str, Any]]:
        ids = lookup.user_ids(parts.engine)
        entries = parts.triage.timeline(issue["id"])
        return [shapes.activity(number, entry, ids) for number, entry in enumerate(entries, 1)][::-1]

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
        return shapes.activity(0, entries[-1], ids)

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

