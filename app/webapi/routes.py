"""Sentry's web API on Lookout (`/api/0/...`, docs/web-api.md): the routes, each with the scope it
needs, behind an API token (app/webapi/auth.py), and the gate that shares `/api/0/` with sentry-cli's
upload API (app/sourcemaps/upload_api.py).

    build(engine)        → the Starlette app of the routes; anything else under /api/0/ is 404 with a sentence
    mount(engine)        → an api_transformer: web API paths go to it, except the upload API's own
                           paths (`GET /api/0/`, `/organizations/{org}/`, `.../releases/...`) when
                           the token is not an API token (an upload token: the upload API answers, as before)

Reads need org:read, project:read or event:read; changes event:write (a viewer's token never has
it); a merge is a change like the others (as in Sentry, whose bulk PUT needs event:write); deleting
issues event:admin (Sentry's OrganizationEventPermission: DELETE needs event:admin). Errors are
`{"detail": "<sentence>"}`; every database call runs in a worker thread.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Awaitable, Callable

import anyio.to_thread
import sqlalchemy
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from app.console.accounts import env_users
from app.inbox.search import SearchError
from app.inbox.states import StateError
from app.protocol.json_answers import SHARED_FAILURES, error, shared_failure
from app.settings import SETTINGS, Settings
from app.sourcemaps.upload_api import is_upload_path
from app.webapi import directory, issue_resources, issues, links, releases
from app.webapi.auth import ApiAuthError, ApiCaller, authenticate, is_api_token
from app.webapi.handler_context import Parts
from app.webapi.lookup import BadRequest, NotFound, organization
from app.webapi.paging import PagingError
from app.webapi.paths import is_web_api_path
from app.webapi.tokens import ApiTokens

logger = logging.getLogger(__name__)
P = "/api/0"
ORG = P + "/organizations/{org}"
PROJECT = P + "/projects/{org}/{project}"
ISSUE = ORG + "/issues/{issue}"
WRITE, ADMIN = "event:write", "event:admin"
Handler = Callable[[Request, ApiCaller, Parts], Awaitable[Response]]

ROUTES: list[tuple[str, str, Handler, str]] = [  # path, method, handler, scope
    (f"{P}/", "GET", directory.who, "org:read"),
    (f"{P}/auth/", "GET", directory.auth, "org:read"),
    (f"{P}/organizations/", "GET", directory.organizations, "org:read"),
    (f"{ORG}/", "GET", directory.organization, "org:read"),
    (f"{ORG}/projects/", "GET", directory.projects, "project:read"),
    (f"{ORG}/members/", "GET", directory.members, "org:read"),
    (f"{ORG}/users/", "GET", directory.users, "org:read"),
    (f"{ORG}/releases/", "GET", releases.release_list, "project:read"),
    (f"{ORG}/releases/{{version}}/", "GET", releases.release_detail, "project:read"),
    (f"{ORG}/events/", "GET", directory.search_events, "event:read"),
    (f"{ORG}/events/validate/", "GET", directory.validate_events, "event:read"),
    (f"{ORG}/replay-count/", "GET", issue_resources.no_replays, "event:read"),
    (f"{PROJECT}/", "GET", directory.project, "project:read"),
    (f"{PROJECT}/releases/", "GET", releases.release_list, "project:read"),
    (f"{PROJECT}/releases/{{version}}/", "GET", releases.release_detail, "project:read"),
    (f"{PROJECT}/stacktrace-link/", "GET", issue_resources.no_stacktrace_link, "project:read"),
    (f"{PROJECT}/issues/", "GET", issues.project_list, "event:read"),
    (f"{PROJECT}/issues/", "PUT", issues.bulk_update, WRITE),
    (f"{ORG}/issues/", "GET", issues.org_list, "event:read"),
    (f"{ORG}/issues/", "PUT", issues.org_bulk_update, WRITE),
    (f"{ORG}/issues/", "DELETE", issues.org_bulk_delete, ADMIN),
    (f"{ISSUE}/", "GET", issues.detail, "event:read"),
    (f"{ISSUE}/", "PUT", issues.update, WRITE),
    (f"{P}/issues/{{issue}}/", "GET", issues.detail, "event:read"),
    (f"{ISSUE}/events/", "GET", issue_resources.events, "event:read"),
    (f"{ISSUE}/events/{{event}}/", "GET", issue_resources.event, "event:read"),
    (f"{ISSUE}/tags/{{key}}/", "GET", issue_resources.tag_values, "event:read"),
    (f"{ISSUE}/activities/", "GET", issue_resources.activities, "event:read"),
    (f"{ISSUE}/notes/", "GET", issue_resources.notes, "event:read"),
    (f"{ISSUE}/notes/", "POST", issue_resources.add_note, WRITE),
    (f"{ISSUE}/external-issues/", "GET", issue_resources.nothing_listed, "event:read"),
]


def build(engine: sqlalchemy.Engine, settings: Settings = SETTINGS) -> Starlette:
    parts = Parts.of(engine, settings)
    tokens = ApiTokens(engine, env_users())  # LOOKOUT_CONSOLE_USERS read once, as the console reads it

    def guarded(handler: Handler, scope: str) -> Callable[[Request], Awaitable[Response]]:
        @functools.wraps(handler)
        async def run(request: Request) -> Response:
            try:
                # (a viewer's token never has event:write: `authenticate` gives its scopes as the role allows now)
                caller = await anyio.to_thread.run_sync(authenticate, engine, request.headers.get("authorization"), scope,
                                                        tokens)
                if "org" in request.path_params:
                    organization(request.path_params["org"])
                return await handler(request, caller, parts)
            except ApiAuthError as exc:
                return error(exc.status, exc.message)
            except NotFound as exc:
                return error(404, str(exc))
            except (BadRequest, PagingError, SearchError, StateError) as exc:
                return error(400, str(exc))
            except SHARED_FAILURES as exc:
                return shared_failure(exc, logger, "web API")
            except Exception:  # a bug of Lookout's: logged (and reported), answered in the API's form
                logger.exception("web API: %s %s failed", request.method, request.url.path)
                return error(500, "Lookout failed to answer this request; the failure is logged.")

        return run

    async def not_here(request: Request, caller: ApiCaller, parts: Parts) -> Response:
        return error(404, f"Lookout's web API has no {request.method} {request.url.path} (see docs/web-api.md for what it has).")

    every = ["GET", "HEAD", "POST", "PUT", "DELETE", "PATCH"]
    routes = [Route(path, guarded(handler, scope), methods=[method]) for path, method, handler, scope in ROUTES]
    routes.append(Route(P + "/{rest:path}", guarded(not_here, "org:read"), methods=every))
    return Starlette(routes=routes)


class Gate:
    """The web API's paths to `api`, the rest (and upload tokens on the upload API's paths) to `inner`;
    Sentry's links to issues to the console's pages (app/webapi/links.py)."""

    def __init__(self, inner: ASGIApp, api: ASGIApp, engine: sqlalchemy.Engine) -> None:
        self.inner, self.api, self.engine = inner, api, engine
        self.links = links.Links(engine)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and is_web_api_path(scope["path"]):
            if not is_upload_path(scope["path"]) or await anyio.to_thread.run_sync(
                    is_api_token, self.engine, _authorization(scope)):
                return await self.api(scope, receive, send)
        elif scope["type"] == "http" and scope["method"] in ("GET", "HEAD") and scope["path"].startswith("/organizations/"):
            page = await self.links.page(scope)
            if page is not None:
                return await page(scope, receive, send)
        await self.inner(scope, receive, send)


def _authorization(scope: Scope) -> str | None:
    for name, value in scope.get("headers", ()):
        if name == b"authorization":
            return bytes(value).decode("latin-1")
    return None


def mount(engine: sqlalchemy.Engine, settings: Settings = SETTINGS) -> Callable[[ASGIApp], ASGIApp]:
    """The api_transformer (app/app.py): the outermost, so the web API sees its paths first."""
    api = build(engine, settings)
    return lambda inner: Gate(inner, api, engine)
