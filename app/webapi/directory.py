"""Who and what there is, in Sentry's web API: the token's user (`/api/0/`, `/api/0/auth/`), the
organization (Lookout has one, listed as ORG_SLUG; any slug names it), its projects, members (the
console users, whom issues are assigned to), and the `events` search of
dataset `errors`, answered per issue (its title, count and last seen)."""

from __future__ import annotations

from typing import Any

import anyio.to_thread
from starlette.requests import Request
from starlette.responses import Response

from app.inbox import activity
from app.inbox.search import SearchError, parse
from app.projects.registry import Projects
from app.webapi import lookup, paging, sentry_json
from app.webapi.auth import ApiCaller
from app.webapi.handler_context import Parts, answer
from app.webapi.lookup import BadRequest

MAX_LISTED = 100
EVENT_FIELDS = ("title", "count()", "last_seen()", "first_seen()", "issue", "issue.id", "project", "project.name",
                "id", "timestamp", "level", "culprit", "count_unique(user)")
DATASETS = ("errors", "issuePlatform")


async def who(request: Request, caller: ApiCaller, parts: Parts) -> Response:
    """sentry-cli's `info`: the token's user and scopes."""
    return answer({"version": "0", "user": sentry_json.user(caller.user_id, caller.name),
                   "auth": {"scopes": sorted(caller.scopes)}})


async def auth(request: Request, caller: ApiCaller, parts: Parts) -> Response:
    return answer(sentry_json.user(caller.user_id, caller.name))


async def organizations(request: Request, caller: ApiCaller, parts: Parts) -> Response:
    query = request.query_params.get("query", "")[:lookup.MAX_NAME].lower()
    listed = query in sentry_json.ORG_SLUG or query in sentry_json.ORG_NAME.lower()
    return answer([sentry_json.organization()] if listed else [])


async def organization(request: Request, caller: ApiCaller, parts: Parts) -> Response:
    return answer(sentry_json.organization())


async def projects(request: Request, caller: ApiCaller, parts: Parts) -> Response:
    size = paging.page_size(request.query_params, MAX_LISTED, MAX_LISTED)
    query = request.query_params.get("query", "")[:lookup.MAX_NAME].lower()
    found = await anyio.to_thread.run_sync(Projects(parts.engine).all)
    return answer([sentry_json.project(p.id, p.name) for p in found if query in p.name.lower()][:size])


async def project(request: Request, caller: ApiCaller, parts: Parts) -> Response:
    found = await anyio.to_thread.run_sync(lookup.project, parts.engine, request.path_params["project"])
    return answer(sentry_json.project(found["id"], found["name"], found["created_at"]))


def _console_users(parts: Parts) -> list[tuple[int, str, str]]:
    with parts.engine.connect() as connection:
        return activity.users(connection)[:MAX_LISTED]


async def members(request: Request, caller: ApiCaller, parts: Parts) -> Response:
    """The console users (whom issues are assigned to, by id: `assignedTo: "user:<id>"`)."""
    found = await anyio.to_thread.run_sync(_console_users, parts)
    return answer([sentry_json.member(user_id, name, role) for user_id, name, role in found])


async def users(request: Request, caller: ApiCaller, parts: Parts) -> Response:
    found = await anyio.to_thread.run_sync(_console_users, parts)
    return answer([sentry_json.user(user_id, name) for user_id, name, _role in found])


def _fields(request: Request) -> list[str]:
    fields = request.query_params.getlist("field") or ["title", "count()"]
    unknown = [f for f in fields if f not in EVENT_FIELDS]
    if unknown or len(fields) > len(EVENT_FIELDS):
        raise BadRequest(f"Lookout's events search gives the fields {', '.join(EVENT_FIELDS)}; not {unknown[0][:40]!r}."
                         if unknown else "Too many fields.")
    dataset = request.query_params.get("dataset", "errors")
    if dataset not in DATASETS:
        raise BadRequest(f"Lookout's events search has the dataset errors only, not {dataset[:40]!r}.")
    return fields


async def validate_events(request: Request, caller: ApiCaller, parts: Parts) -> Response:
    """The MCP server checks a search's fields before it runs it."""
    fields = _fields(request)
    query = request.query_params.get("query", "")
    try:
        parse(query)
        query_error = None
    except SearchError as exc:
        query_error = str(exc)
    orderby = request.query_params.getlist("orderby")
    return answer({
        "valid": query_error is None, "projects": [], "environment": [],
        "dataset": [{"name": "errors", "valid": True, "error": None}],
        "field": [{"name": f, "valid": True, "attrType": "number" if "(" in f else "string", "error": None} for f in fields],
        "query": {"valid": query_error is None, "error": query_error, "fields": []},
        "orderby": [{"name": o, "valid": True, "attrType": None, "error": None} for o in orderby],
    })


async def search_events(request: Request, caller: ApiCaller, parts: Parts) -> Response:
    """Events of dataset `errors`, one row per issue matching `query` (the issues list's search):
    enough for counts by issue."""
    fields = _fields(request)
    size = paging.page_size(request.query_params, 10, MAX_LISTED)
    query = request.query_params.get("query", "")
    sort = "freq" if request.query_params.get("sort", "").lstrip("-") in ("count()", "count") else "date"
    wanted = [p for p in request.query_params.getlist("project") if p != "-1"][:1]
    project_id = (await anyio.to_thread.run_sync(lookup.project, parts.engine, wanted[0]))["id"] if wanted else None
    found = await anyio.to_thread.run_sync(lambda: parts.search.search(
        query, viewer=caller.name, sort=sort, project=project_id, limit=size))
    rows = [_row(issue) for issue in found.issues]
    return answer({"data": [{f: row[f] for f in fields} for row in rows],
                   "meta": {"fields": {f: "integer" if f in ("count()", "count_unique(user)") else
                                       "date" if f in ("last_seen()", "first_seen()", "timestamp") else "string"
                                       for f in fields}}})


def _row(issue: dict[str, Any]) -> dict[str, Any]:
    return {"title": issue["title"], "count()": issue["event_count"], "last_seen()": sentry_json.iso(issue["last_seen"]),
            "first_seen()": sentry_json.iso(issue["first_seen"]), "issue": issue["short_id"], "issue.id": str(issue["id"]),
            "project": issue["project_name"], "project.name": issue["project_name"], "id": issue["last_event_id"],
            "timestamp": sentry_json.iso(issue["last_seen"]), "level": issue["level"], "culprit": issue["culprit"],
            "count_unique(user)": 0}
