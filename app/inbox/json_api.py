"""The inbox's JSON read API, for scripts:

    GET /api/inbox/issues[?query=is:unresolved level:error&sort=date&status=open&project=1&limit=50&offset=0]
                                                                   → {"issues": [...], "total": n, "capped": bool, "direct": bool}
                                                                     (docs/search.md; total counts up to 10,000, capped: more
                                                                     match; a query that does not parse: 400, saying why)
    GET /api/inbox/issues/{id}                                     → the issue, or 404
    GET /api/inbox/events/{event_id}                               → {"event": <as sent, scrubbed>, "issue_id": ...}, or 404

    GET {LOOKOUT_TUNNEL_PATH}/stats                                → the tunnel's counters and outbox depth

    POST /api/inbox/signin    (the /signin page's form: name, password) → a session cookie
    POST /api/inbox/signout

Clients on this machine (app/console/access.py: loopback, a local Host, no foreign Origin) may read;
anyone else needs a signed-in console session (the HttpOnly `lookout_session` cookie the sign-in
sets), or gets 401. Sign-in and sign-out refuse pages of other sites (403: no login CSRF); a
sign-in form is read up to 4 KB and no further; failed sign-ins are throttled per name and per
client address (behind a proxy on this machine, the address it forwards for). The cookie is
`Secure` when the request, or a proxy on this machine, says https. No route here answers CORS:
the origin guard (app/origin_guard.py) refuses other sites' pages before they get here.
Mounted in front of Reflex's backend (`rx.App(api_transformer=...)`).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Awaitable, Callable
from urllib.parse import parse_qs

import anyio.to_thread
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import Route

from app import routes
from app.console import access
from app.console.accounts import COOKIE, MAX_NAME_CHARS, SESSION_S, Accounts, Throttle, session_cookie
from app.inbox.reading import InboxReader
from app.inbox.search import Found, IssueSearch, SearchError
from app.protocol.json_answers import error
from app.settings import SETTINGS
from reflex_lookout.protocol.clients import client_address

PREFIX = "/api/inbox"
SIGN_IN, SIGN_OUT = f"{PREFIX}/signin", f"{PREFIX}/signout"
MAX_LIMIT = 500
MAX_FORM_BYTES = 4096
PASSWORDS_AT_ONCE = 4  # sign-ins checked at the same time: each scrypt run takes 16 MiB
STATS = f"{SETTINGS.tunnel_path}/stats"
FOREIGN_PAGE = "Pages of other sites may not sign in or out of Lookout."


class FormTooLarge(Exception):
    """The sign-in form is over MAX_FORM_BYTES (answered 413, the rest of it never read)."""


def _secure(request: Request, caller: access.Caller) -> bool:
    """Whether the session cookie gets `Secure`: the request came over https, to us or to a proxy
    on this machine that says so."""
    return request.url.scheme == "https" or access.forwarded_https(caller, SETTINGS.trusted_proxy_hops)


async def read_form(request: Request) -> dict[str, str]:
    """The urlencoded form, read as it arrives and never past MAX_FORM_BYTES (`FormTooLarge`)."""
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > MAX_FORM_BYTES:
        raise FormTooLarge
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > MAX_FORM_BYTES:
            raise FormTooLarge
    return {k: v[0] for k, v in parse_qs(body.decode("utf-8", "replace")).items()}


Handler = Callable[[Request], Awaitable[JSONResponse]]
Stats = Callable[[], dict[str, object]]


def build(reader: InboxReader, accounts: Accounts, stats: Stats | None = None) -> Starlette:
    """The API's routes; `stats` (the tunnel's `snapshot`, which reads the database) answers STATS."""
    throttle = Throttle()  # 5 failed sign-ins in 15 minutes per name and per address
    search = IssueSearch(reader.engine)  # Sentry's search syntax (docs/search.md), as the console's
    checking = anyio.CapacityLimiter(PASSWORDS_AT_ONCE)

    def local_only(handler: Handler) -> Handler:
        @functools.wraps(handler)
        async def guarded(request: Request) -> JSONResponse:
            if not access.this_machine(access.Caller.from_scope(request.scope)):
                token = request.cookies.get(COOKIE, "")
                if await anyio.to_thread.run_sync(accounts.session, token) is None:
                    return error(401, "Sign in at /signin to read the inbox from another machine.")
            return await handler(request)

        return guarded

    async def sign_in(request: Request) -> Response:
        """The /signin page's form: on success a session cookie and the issues list; else back to
        the form, saying why."""
        caller = access.Caller.from_scope(request.scope)
        if access.foreign_origin(caller):
            return error(403, FOREIGN_PAGE)
        try:
            form = await read_form(request)
        except FormTooLarge:
            return error(413, f"The form is over {MAX_FORM_BYTES} bytes.")
        name, password = form.get("name", ""), form.get("password", "")
        address = client_address(caller.peer, list(caller.forwarded_for), SETTINGS.trusted_proxy_hops)
        keys = (f"name:{name[:MAX_NAME_CHARS + 1]}", f"address:{address}")
        wait_s = throttle.wait_s(*keys)
        if wait_s > 0:
            return RedirectResponse(f"{routes.SIGN_IN}?problem=throttled&minutes={math.ceil(wait_s / 60)}", 303)
        viewer = await anyio.to_thread.run_sync(accounts.authenticate, name, password, limiter=checking)
        if viewer is None:
            throttle.failed(*keys)
            return RedirectResponse(f"{routes.SIGN_IN}?problem=mismatch", 303)
        throttle.succeeded(*keys)
        token = await anyio.to_thread.run_sync(accounts.start_session, viewer)
        answer = RedirectResponse(routes.ISSUES, 303)
        answer.headers["set-cookie"] = session_cookie(token, SESSION_S, _secure(request, caller))
        return answer

    async def sign_out(request: Request) -> Response:
        caller = access.Caller.from_scope(request.scope)
        if access.foreign_origin(caller):
            return error(403, FOREIGN_PAGE)
        token = request.cookies.get(COOKIE, "")
        if token:
            await anyio.to_thread.run_sync(accounts.end_session, token)
        answer = RedirectResponse(routes.SIGN_IN, 303)
        answer.headers["set-cookie"] = session_cookie("", 0, _secure(request, caller))
        return answer

    @local_only
    async def issues(request: Request) -> JSONResponse:
        try:
            limit = int(request.query_params.get("limit", "50"))
            offset = int(request.query_params.get("offset", "0"))
            project = int(request.query_params["project"]) if request.query_params.get("project") else None
        except ValueError:
            return error(400, "limit, offset and project must be whole numbers.")
        if not (1 <= limit <= MAX_LIMIT) or offset < 0:
            return error(400, f"limit must be between 1 and {MAX_LIMIT}, and offset at least 0.")
        status = request.query_params.get("status") or None
        text, sort = request.query_params.get("query", ""), request.query_params.get("sort", "date")
        session = await anyio.to_thread.run_sync(accounts.session, request.cookies.get(COOKIE, ""))
        viewer = session.name if session is not None else ""  # who `assigned:me` is

        def found() -> Found:
            return search.search(text, viewer=viewer, sort=sort, project=project, limit=limit, offset=offset, status=status)

        try:
            page = await anyio.to_thread.run_sync(found)
        except SearchError as exc:
            return error(400, str(exc))
        return JSONResponse({"issues": page.issues, "total": page.total, "capped": page.capped, "direct": page.direct,
                             "limit": limit, "offset": offset})

    @local_only
    async def issue(request: Request) -> JSONResponse:
        issue_id = request.path_params["issue_id"]
        found = await anyio.to_thread.run_sync(search.issue, issue_id)  # as the list shows it
        return JSONResponse(found) if found else error(404, f"There is no issue {issue_id}.")

    @local_only
    async def event(request: Request) -> JSONResponse:
        event_id = request.path_params["event_id"]
        found = await anyio.to_thread.run_sync(reader.event, event_id)
        return JSONResponse(found) if found else error(404, f"There is no event {event_id}.")

    @local_only
    async def tunnel_stats(request: Request) -> JSONResponse:
        if stats is None:
            return error(404, "This API has no tunnel to report on.")
        return JSONResponse(await anyio.to_thread.run_sync(stats))

    return Starlette(routes=[
        Route(SIGN_IN, sign_in, methods=["POST"]),
        Route(SIGN_OUT, sign_out, methods=["POST"]),
        Route(f"{PREFIX}/issues", issues, methods=["GET"]),
        Route(f"{PREFIX}/issues/{{issue_id:int}}", issue, methods=["GET"]),
        Route(f"{PREFIX}/events/{{event_id}}", event, methods=["GET"]),
        Route(STATS, tunnel_stats, methods=["GET"]),
    ])
