"""Sentry's releases endpoints on Lookout: the list (`GET .../releases/`, of the organization or of
the path's project; `query` a part of the version) and one release (`GET .../releases/{version}/`),
for sentry-cli's `releases list` and `releases info` and the MCP server's `find_releases`.

A release is every version Lookout's sessions or events named (app/releases/health.py), with each
project it was seen in. With `health=1`, as in Sentry, each project carries its `healthData`:
crash-free sessions and users, totals, adoption, and `stats` (sessions per hour over 24 h, or per
day over 14 days: `healthStatsPeriod`). Versions come last seen first.
"""

from __future__ import annotations

from typing import Any

import anyio.to_thread
from starlette.requests import Request
from starlette.responses import Response

from app.releases import health
from app.webapi import lookup, paging, sentry_json
from app.webapi.auth import ApiCaller
from app.webapi.handler_context import Parts, answer
from app.webapi.lookup import BadRequest, NotFound

MAX_LISTED = 100
STATS_PERIODS = tuple(health.PERIODS)  # healthStatsPeriod: "24h" (hourly) or "14d" (daily)


def _asked(request: Request) -> tuple[bool, str]:
    """Whether `health=1` asks for health data, and the period of its stats."""
    period = request.query_params.get("healthStatsPeriod", "24h")
    if period not in STATS_PERIODS:
        raise BadRequest(f"healthStatsPeriod is one of {', '.join(STATS_PERIODS)}.")
    return request.query_params.get("health", "") in ("1", "true"), period


def _releases(parts: Parts, found: list[health.ReleaseHealth], with_health: bool, period: str) -> list[dict[str, Any]]:
    """Per version (in the order `found` first names it), Sentry's release with its projects."""
    versions: dict[str, list[health.ReleaseHealth]] = {}
    for row in found:
        versions.setdefault(row.version, []).append(row)
    listed = []
    for number, (version, rows) in enumerate(versions.items(), 1):
        projects = [sentry_json.release_project(
            row.project_id, row.project, row.new_issues, row.sessions > 0,
            sentry_json.health_data(row, _stats(parts, row, period)) if with_health else None) for row in rows]
        firsts = [row.first_seen for row in rows if row.first_seen is not None]
        lasts = [row.last_seen for row in rows if row.last_seen is not None]
        listed.append(sentry_json.release(number, version, min(firsts, default=None), max(lasts, default=None),
                                          sum(row.new_issues for row in rows), projects))
    return listed


def _stats(parts: Parts, row: health.ReleaseHealth, period: str) -> dict[str, list[list[float]]]:
    buckets = health.series(parts.engine, row.project_id, row.version, period)
    return {period: [[bucket["start"], sum(bucket[status] for status in health.STATUSES)] for bucket in buckets]}


async def release_list(request: Request, caller: ApiCaller, parts: Parts) -> Response:
    """The releases sessions and events named, of the organization or of the path's project."""
    size = paging.page_size(request.query_params, MAX_LISTED, MAX_LISTED)
    query = request.query_params.get("query", "")[:lookup.MAX_NAME]
    slug = request.path_params.get("project")
    with_health, period = _asked(request)

    def read() -> list[dict[str, Any]]:
        project_id = lookup.project(parts.engine, slug)["id"] if slug else None
        found = health.releases(parts.engine, project_id, containing=query)
        return _releases(parts, found, with_health, period)[:size]

    return answer(await anyio.to_thread.run_sync(read))


async def release_detail(request: Request, caller: ApiCaller, parts: Parts) -> Response:
    """One release by its version (of the path's project, if it names one); 404 if none named it."""
    version = request.path_params["version"]
    if not 0 < len(version) <= lookup.MAX_NAME:
        raise NotFound("There is no release with so long a version.")
    slug = request.path_params.get("project")
    with_health, period = _asked(request)

    def read() -> dict[str, Any]:
        project_id = lookup.project(parts.engine, slug)["id"] if slug else None
        found = _releases(parts, health.releases(parts.engine, project_id, version=version), with_health, period)
        if not found:
            raise NotFound(f"There is no release {version!r}: no session or event named it.")
        return found[0]

    return answer(await anyio.to_thread.run_sync(read))
