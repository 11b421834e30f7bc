"""What every handler of the web API shares: the inbox's readers and triage (`Parts`), the JSON answer
and error, the request's JSON body (bounded), its base URL, issues in Sentry's shape, and the bound on
the heavy calls a token has running at once (`heavy`)."""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import anyio.to_thread
import sqlalchemy
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from app.console.accounts import env_users
from app.inbox import issue_stats, states
from app.inbox.reading import InboxReader
from app.inbox.search import IssueSearch
from app.inbox.triage import Triage
from app.settings import SETTINGS, Settings
from app.sourcemaps.upload_api import base_url
from app.webapi import lookup, sentry_json
from app.webapi.auth import ApiCaller
from app.webapi.lookup import BadRequest
from reflex_lookout.protocol.asgi import read_body
from reflex_lookout.protocol.payloads import UnreadablePayload, load_object

MAX_BODY_BYTES = 64 * 1024  # a PUT or POST body: a status, an assignee, a note of 10,000 characters
HEAVY_AT_ONCE = 2  # heavy calls one token may have running at once, in one process
RETRY_AFTER_S = 1


class Running:
    """How many heavy calls each API token has running, at most `most` at once. Only the event loop
    counts (no lock): a call's count ends when its handler returns, after its worker thread."""

    def __init__(self, most: int = HEAVY_AT_ONCE) -> None:
        self.most = most
        self.counts: Counter[int] = Counter()

    def start(self, token_id: int) -> bool:
        """Count one more call of the token, unless it has `most` running (False)."""
        if self.counts[token_id] >= self.most:
            return False
        self.counts[token_id] += 1
        return True

    def end(self, token_id: int) -> None:
        self.counts[token_id] -= 1
        if self.counts[token_id] <= 0:
            del self.counts[token_id]


@dataclass(frozen=True)
class Parts:
    engine: sqlalchemy.Engine
    reader: InboxReader
    search: IssueSearch
    triage: Triage
    settings: Settings = SETTINGS
    running: Running = field(default_factory=Running)

    @classmethod
    def of(cls, engine: sqlalchemy.Engine, settings: Settings = SETTINGS) -> Parts:
        """As the console has them: users of LOOKOUT_CONSOLE_USERS may be assigned issues too."""
        return cls(engine, InboxReader(engine), IssueSearch(engine), Triage(engine, env_users()), settings)

    def base(self, request: Request) -> str:
        """scheme://host the client used, for the absolute URLs the MCP server wants."""
        return base_url(request, self.settings) or f"http://{request.url.netloc}"


def answer(content: Any, status: int = 200, headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse(content, status_code=status, headers=headers)


Handler = Callable[[Request, ApiCaller, Parts], Awaitable[Response]]


def heavy(handler: Handler) -> Handler:
    """`handler`, answered 429 (with Retry-After and a sentence) while the token already has
    HEAVY_AT_ONCE heavy calls running: one token cannot hold every worker thread and its memory."""

    @functools.wraps(handler)
    async def run(request: Request, caller: ApiCaller, parts: Parts) -> Response:
        if not parts.running.start(caller.token_id):
            return answer({"detail": f"This token already has {parts.running.most} heavy requests (such as an issue's "
                                     f"events list) running; retry after {RETRY_AFTER_S} s, when one has answered."},
                          429, {"Retry-After": str(RETRY_AFTER_S)})
        try:
            return await handler(request, caller, parts)
        finally:
            parts.running.end(caller.token_id)

    return run


async def body(request: Request, settings: Settings) -> dict[str, Any]:
    """The request's JSON object, at most MAX_BODY_BYTES (an empty body is `{}`)."""
    raw = await read_body(request.receive, request.headers.get("content-length", ""), MAX_BODY_BYTES,
                          settings.body_timeout_s)
    if not raw.strip():
        return {}
    try:
        return load_object(raw)
    except UnreadablePayload as exc:
        raise BadRequest(f"The body is not a JSON object: {exc}") from exc


def shaped_issues(parts: Parts, rows: list[dict[str, Any]], base: str) -> list[dict[str, Any]]:
    """Issues as IssueSearch shows them, in Sentry's shape (blocking: two grouped reads)."""
    users = issue_stats.users_affected_of(parts.engine, [row["id"] for row in rows])
    ids = lookup.user_ids(parts.engine)
    with parts.engine.connect() as connection:
        ignores = states.ignore_ends(connection, [row["id"] for row in rows if row["status"] == states.IGNORED])
    return [sentry_json.issue(row, base, users.get(row["id"], 0), ids, ignores.get(row["id"])) for row in rows]


async def shaped_issue(parts: Parts, row: dict[str, Any], base: str) -> dict[str, Any]:
    [found] = await anyio.to_thread.run_sync(shaped_issues, parts, [row], base)
    return found
