"""Issues in Sentry's web API: the project's list (sentry-cli) and the organization's (the MCP server),
searched with the triage search's syntax (docs/search.md) and paged with a cursor; one issue by id or
short id; and changes (app/webapi/changes.py) to one issue, to the issues of `id=` or of `status=`, or
to all of a project's or the organization's (Sentry's bulk update, a merge among them); deleting issues by id."""

from __future__ import annotations

from typing import Any

import anyio.to_thread
from sqlalchemy import select
from starlette.requests import Request
from starlette.responses import Response

from app.inbox.bulk import MAX_ISSUES, Action
from app.inbox.search import Found, parse
from app.inbox.search.engine import MAX_HITS
from app.inbox.tables import ISSUES
from app.projects.registry import Projects
from app.tables import chunks
from app.webapi import changes, lookup, paging
from app.webapi.auth import ApiCaller
from app.webapi.handler_context import Parts, answer, body, shaped_issue, shaped_issues
from app.webapi.lookup import BadRequest

PROJECT_PAGE, ORG_PAGE, MAX_PAGE = 100, 25, 100  # issues per page: sentry-cli's default, the MCP's, at most
MAX_IDS = 1000  # `id=` of one bulk update, as Sentry bounds them
MAX_PROJECTS = 100  # `project=` of the organization's bulk update
# Sentry's sorts as the triage search's: `user` and the others Lookout has no data for are by date.
SORTS = {"date": "date", "new": "new", "freq": "freq", "user": "freq", "recommended": "date", "trends": "date",
         "inbox": "date"}
PERIODS = {"1h", "24h", "7d", "14d", "30d", "90d"}
DEFAULT_QUERY = "is:unresolved"  # Sentry's, when no `query` is sent
STATUS_FILTERS = {"unresolved": "is:unresolved", "resolved": "is:resolved", "ignored": "is:ignored", "muted": "is:ignored"}


def _query(request: Request) -> tuple[str, str]:
    """The search text (with `statsPeriod` as a lastSeen term, unless the query names one issue) and the sort."""
    params = request.query_params
    text = params.get("query", DEFAULT_QUERY)
    sort = params.get("sort", "date")
    if sort not in SORTS:
        raise BadRequest(f"Unknown sort {sort[:40]!r}: use {', '.join(SORTS)}.")
    period = params.get("statsPeriod", "")
    if period and period not in PERIODS:
        raise BadRequest(f"statsPeriod is one of {', '.join(sorted(PERIODS))}.")
    if period and parse(text).direct is None:
        text = f"{text} lastSeen:-{period}"
    return text, SORTS[sort]


async def _listed(request: Request, caller: ApiCaller, parts: Parts, project_id: int | None, default_size: int) -> Response:
    size = paging.page_size(request.query_params, default_size, MAX_PAGE)
    start = paging.offset(request.query_params)
    text, sort = _query(request)
    base = parts.base(request)

    def found() -> tuple[Found, list[dict[str, Any]]]:
        page = parts.search.search(text, viewer=caller.name, sort=sort, project=project_id, limit=size, offset=start)
        return page, shaped_issues(parts, page.issues, base)

    page, shaped = await anyio.to_thread.run_sync(found)
    more = page.capped or start + len(page.issues) < page.total
    url = f"{base}{request.url.path}"
    return answer(shaped, headers={"Link": paging.link(url, request.query_params, start, size, more),
                                   "X-Hits": str(page.total), "X-Max-Hits": str(MAX_HITS)})


async def project_list(request: Request, caller: ApiCaller, parts: Parts) -> Response:
    project = await anyio.to_thread.run_sync(lookup.project, parts.engine, request.path_params["project"])
    return await _listed(request, caller, parts, project["id"], PROJECT_PAGE)


async def org_list(request: Request, caller: ApiCaller, parts: Parts) -> Response:
    wanted = [p for p in request.query_params.getlist("project") if p != "-1"]
    if len(wanted) > 1:
        raise BadRequest("Lookout searches one project at a time, or all of them (no project=, or project=-1).")
    project_id = None
    if wanted:
        project_id = (await anyio.to_thread.run_sync(lookup.project, parts.engine, wanted[0]))["id"]
    return await _listed(request, caller, parts, project_id, ORG_PAGE)


async def detail(request: Request, caller: ApiCaller, parts: Parts) -> Response:
    row = await anyio.to_thread.run_sync(lookup.issue, parts.search, request.path_params["issue"])
    return answer(await shaped_issue(parts, row, parts.base(request)))


async def update(request: Request, caller: ApiCaller, parts: Parts) -> Response:
    """PUT on one issue: the issue as it is after the change (the MCP server shows the difference)."""
    given = await body(request, parts.settings)
    row = await anyio.to_thread.run_sync(lookup.issue, parts.search, request.path_params["issue"])
    asked = await anyio.to_thread.run_sync(changes.read, parts.engine, given, parts.triage.env_users)
    if asked.merge:
        raise BadRequest("Merge issues with a bulk update: PUT /api/0/organizations/ORG/issues/?id=A&id=B {\"merge\": 1}.")
    await anyio.to_thread.run_sync(changes.apply, parts.triage, asked, [row["id"]], caller.name)
    after = await anyio.to_thread.run_sync(lookup.issue, parts.search, str(row["id"]))
    return answer(await shaped_issue(parts, after, parts.base(request)))


async def bulk_update(request: Request, caller: ApiCaller, parts: Parts) -> Response:
    """PUT on a project's issues: those of `id=`, else those of `status=`, else all of them (at most
    bulk.MAX_ISSUES). Sentry's answer: the change made."""
    project = await anyio.to_thread.run_sync(lookup.project, parts.engine, request.path_params["project"])
    return await _bulk_update(request, caller, parts, [project["id"]])


async def org_bulk_update(request: Request, caller: ApiCaller, parts: Parts) -> Response:
    """PUT on the organization's issues: as a project's, over the projects of `project=` (all without)."""
    return await _bulk_update(request, caller, parts, await _projects(request, parts))


async def org_bulk_delete(request: Request, caller: ApiCaller, parts: Parts) -> Response:
    """DELETE of the issues of `id=` (of the projects of `project=`, if any), with their events; 204
    as Sentry answers, whether any was there or not."""
    if not request.query_params.getlist("id"):
        raise BadRequest(f"Name the issues to delete with id= (at most {MAX_IDS:,}): Lookout deletes issues by id only.")
    ids = await anyio.to_thread.run_sync(_chosen, request, caller, parts, await _projects(request, parts))
    if ids:
        await anyio.to_thread.run_sync(parts.triage.bulk, Action("delete"), ids, caller.name)
    return Response(status_code=204)


async def _bulk_update(request: Request, caller: ApiCaller, parts: Parts, projects: list[int] | None) -> Response:
    given = await body(request, parts.settings)
    asked = await anyio.to_thread.run_sync(changes.read, parts.engine, given, parts.triage.env_users)
    ids = await anyio.to_thread.run_sync(_chosen, request, caller, parts, projects)
    if asked.merge:
        return answer({"merge": await anyio.to_thread.run_sync(_merge, parts, ids, caller.name)})
    # an issue the change does not apply to is left as it is, as in Sentry
    await anyio.to_thread.run_sync(changes.apply, parts.triage, asked, ids, caller.name)
    return answer(asked.echo) if ids else Response(status_code=204)


async def _projects(request: Request, parts: Parts) -> list[int] | None:
    """The projects of `project=` (an id or a name, repeated; -1 is all of them), or None: all."""
    wanted = [p for p in request.query_params.getlist("project") if p != "-1"]
    if len(wanted) > MAX_PROJECTS:
        raise BadRequest(f"project= names at most {MAX_PROJECTS} projects.")
    if not wanted:
        return None
    return await anyio.to_thread.run_sync(lambda: [lookup.project(parts.engine, p)["id"] for p in wanted])


def _chosen(request: Request, caller: ApiCaller, parts: Parts, projects: list[int] | None) -> list[int]:
    """The issues of `id=` there are in `projects` (None: any), else those of `status=`, else all."""
    params = request.query_params
    given = params.getlist("id")
    if given:
        if len(given) > MAX_IDS or not all(lookup.NUMBER.fullmatch(g) for g in given):
            raise BadRequest(f"id= takes at most {MAX_IDS} issue ids, each a whole number.")
        ids = list(dict.fromkeys(int(g) for g in given))
        of = _projects_of(parts, ids)
        return [i for i in ids if i in of and (projects is None or of[i] in projects)]
    status = params.get("status", "")
    if status and status not in STATUS_FILTERS:
        raise BadRequest(f"status= is one of {', '.join(STATUS_FILTERS)}.")
    found: list[int] = []
    scopes: list[int | None] = list(projects) if projects is not None else [None]
    for project_id in scopes:
        if len(found) < MAX_ISSUES:
            found += parts.search.ids(STATUS_FILTERS.get(status, ""), viewer=caller.name, project=project_id,
                                      limit=MAX_ISSUES - len(found))
    return found


def _projects_of(parts: Parts, ids: list[int]) -> dict[int, int]:
    """The project of each issue of `ids` there is, read a chunk at a time."""
    found: dict[int, int] = {}
    with parts.engine.connect() as connection:
        for chunk in chunks(ids):
            rows = connection.execute(select(ISSUES.c.id, ISSUES.c.project_id).where(ISSUES.c.id.in_(chunk)))
            found.update(rows.tuples().all())
    return found


def _merge(parts: Parts, ids: list[int], actor: str) -> dict[str, Any]:
    if len(ids) < 2:
        raise BadRequest("A merge takes at least two issues of one project (id=A&id=B).")
    projects = set(_projects_of(parts, ids).values())
    if len(projects) > 1:  # Sentry's sentence, and which projects
        names = sorted(p.name for p in Projects(parts.engine).all() if p.id in projects)
        raise BadRequest(f"Merging across multiple projects is not supported: these issues are of {', '.join(names)}; "
                         "merge the issues of one project at a time.")
    try:
        parent = parts.triage.merge(ids, actor)
    except ValueError as exc:  # StateError: the merge's sentence
        raise BadRequest(str(exc)) from exc
    return {"parent": str(parent), "children": [str(i) for i in ids if i != parent]}
