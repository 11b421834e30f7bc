"""The inbox's JSON read API, for scripts:

    GET /api/inbox/issues[?status=unresolved&limit=50&offset=0]   → {"issues": [...], "total": n}
    GET /api/inbox/issues/{id}                                     → the issue, or 404
    GET /api/inbox/events/{event_id}                               → {"event": <as sent>, "issue_id": ...}, or 404

Clients on this machine (loopback) may read; anyone else needs a signed-in console session (the
`lookout_session` cookie of /signin), or gets 401.
Mounted in front of Reflex's backend (`rx.App(api_transformer=...)`).
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable

import anyio.to_thread
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from app.inbox.accounts import COOKIE, Accounts, from_loopback
from app.inbox.store import InboxReader

PREFIX = "/api/inbox"
MAX_LIMIT = 500


def error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"detail": message}, status_code=status)


Handler = Callable[[Request], Awaitable[JSONResponse]]


def build(reader: InboxReader, accounts: Accounts) -> Starlette:
    def local_only(handler: Handler) -> Handler:
        @functools.wraps(handler)
        async def guarded(request: Request) -> JSONResponse:
            if not from_loopback(request.client.host if request.client else ""):
                token = request.cookies.get(COOKIE, "")
                if await anyio.to_thread.run_sync(accounts.session, token) is None:
                    return error(401, "Sign in at /signin to read the inbox from another machine.")
            return await handler(request)

        return guarded

    @local_only
    async def issues(request: Request) -> JSONResponse:
        try:
            limit = int(request.query_params.get("limit", "50"))
            offset = int(request.query_params.get("offset", "0"))
        except ValueError:
            return error(400, "limit and offset must be whole numbers.")
        if not (1 <= limit <= MAX_LIMIT) or offset < 0:
            return error(400, f"limit must be between 1 and {MAX_LIMIT}, and offset at least 0.")
        status = request.query_params.get("status") or None
        found, total = await anyio.to_thread.run_sync(lambda: reader.issues(status, limit, offset))
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
        Route(f"{PREFIX}/issues", issues, methods=["GET"]),
        Route(f"{PREFIX}/issues/{{issue_id:int}}", issue, methods=["GET"]),
        Route(f"{PREFIX}/events/{{event_id}}", event, methods=["GET"]),
    ])
