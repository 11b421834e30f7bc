"""The inbox's JSON read API, for scripts:

    GET /api/inbox/issues[?status=unresolved&limit=50&offset=0]   → {"issues": [...], "total": n}
    GET /api/inbox/issues/{id}                                     → the issue, or 404
    GET /api/inbox/events/{event_id}                               → {"event": <as sent>, "issue_id": ...}, or 404

    POST /api/inbox/signin    (the /signin page's form: name, password) → a session cookie
    POST /api/inbox/signout

Clients on this machine (loopback, and not forwarded for another address) may read; anyone else
needs a signed-in console session (the HttpOnly `lookout_session` cookie the sign-in sets), or
gets 401. Failed sign-ins are throttled per name and per client address.
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
from app.inbox.accounts import COOKIE, SESSION_S, Accounts, Throttle, from_this_machine, session_cookie
from app.inbox.store import InboxReader

PREFIX = "/api/inbox"
SIGN_IN, SIGN_OUT = f"{PREFIX}/signin", f"{PREFIX}/signout"
MAX_LIMIT = 500
MAX_FORM_BYTES = 4096


def _client(request: Request) -> str:
    return request.client.host if request.client else ""


def _this_machine(request: Request) -> bool:
    return from_this_machine(_client(request), request.headers.get("x-forwarded-for", ""))


def error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"detail": message}, status_code=status)


Handler = Callable[[Request], Awaitable[JSONResponse]]


def build(reader: InboxReader, accounts: Accounts) -> Starlette:
    throttle = Throttle()  # 5 failed sign-ins in 15 minutes per name and per address

    def local_only(handler: Handler) -> Handler:
        @functools.wraps(handler)
        async def guarded(request: Request) -> JSONResponse:
            if not _this_machine(request):
                token = request.cookies.get(COOKIE, "")
                if await anyio.to_thread.run_sync(accounts.session, token) is None:
                    return error(401, "Sign in at /signin to read the inbox from another machine.")
            return await handler(request)

        return guarded

    async def sign_in(request: Request) -> Response:
        """The /signin page's form: on success a session cookie and the issues list; else back to
        the form, saying why."""
        body = await request.body()
        if len(body) > MAX_FORM_BYTES:
            return error(413, f"The form is over {MAX_FORM_BYTES} bytes.")
        form = {k: v[0] for k, v in parse_qs(body.decode("utf-8", "replace")).items()}
        name, password = form.get("name", ""), form.get("password", "")
        keys = (f"name:{name}", f"address:{_client(request)}")
        wait_s = throttle.wait_s(*keys)
        if wait_s > 0:
            return RedirectResponse(f"{routes.SIGN_IN}?problem=throttled&minutes={math.ceil(wait_s / 60)}", 303)
        viewer = await anyio.to_thread.run_sync(accounts.authenticate, name, password)
        if viewer is None:
            throttle.failed(*keys)
            return RedirectResponse(f"{routes.SIGN_IN}?problem=mismatch", 303)
        throttle.succeeded(*keys)
        token = await anyio.to_thread.run_sync(accounts.start_session, viewer)
        answer = RedirectResponse(routes.ISSUES, 303)
        answer.headers["set-cookie"] = session_cookie(token, SESSION_S, request.url.scheme == "https")
        return answer

    async def sign_out(request: Request) -> Response:
        token = request.cookies.get(COOKIE, "")
        if token:
            await anyio.to_thread.run_sync(accounts.end_session, token)
        answer = RedirectResponse(routes.SIGN_IN, 303)
        answer.headers["set-cookie"] = session_cookie("", 0, request.url.scheme == "https")
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
        found, total = await anyio.to_thread.run_sync(lambda: reader.issues(status, limit, offset, project=project))
        return JSONResponse({"issues": found, "total": total, "limit": limit, "offset": offset})

    @local_only
    async def issue(request: Request) -> JSONResponse:
        issue_id = request.path_params["issue_id"]
        found = await anyio.to_thread.run_sync(reader.issue, issue_id)
        return JSONResponse(found) if found else error(404, f"There is no issue {issue_id}.")

    @local_only
    async def event(request: Request) -> JSONResponse:
        event_id = request.path_params["event_id"]
        found = await anyio.to_thread.run_sync(reader.event, event_id)
        return JSONResponse(found) if found else error(404, f"There is no event {event_id}.")

    return Starlette(routes=[
        Route(SIGN_IN, sign_in, methods=["POST"]),
        Route(SIGN_OUT, sign_out, methods=["POST"]),
        Route(f"{PREFIX}/issues", issues, methods=["GET"]),
        Route(f"{PREFIX}/issues/{{issue_id:int}}", issue, methods=["GET"]),
        Route(f"{PREFIX}/events/{{event_id}}", event, methods=["GET"]),
    ])
