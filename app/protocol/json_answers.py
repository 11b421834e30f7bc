"""How Lookout's JSON APIs (the inbox API, the upload API, Sentry's web API) answer a request they
cannot serve: `{"detail": "<sentence>"}` with its status, the form sentry-cli and Sentry's MCP
server print; and the failures all three meet the same way."""

from __future__ import annotations

import logging

import sqlalchemy
from starlette.responses import JSONResponse, Response

from reflex_lookout.protocol.asgi import ClientGone, Refused

BUSY = "The database is busy; try again."
# What `shared_failure` answers: catch these, then hand the exception to it.
SHARED_FAILURES = (Refused, ClientGone, sqlalchemy.exc.OperationalError)


def error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"detail": message}, status_code=status)


def shared_failure(exc: Exception, logger: logging.Logger, api: str) -> Response:
    """The answer to one of SHARED_FAILURES: a refused request (its status and sentence), a client
    gone before its body arrived (400, which nobody reads), the database busy or away (503: the
    clients try again; logged as `api`'s)."""
    if isinstance(exc, Refused):
        return error(exc.status, exc.message)
    if isinstance(exc, ClientGone):
        return Response(status_code=400)
    if not isinstance(exc, sqlalchemy.exc.OperationalError):
        raise TypeError(f"not a shared failure: {type(exc).__name__}")
    logger.warning("%s: the database is busy or away: %s", api, exc)
    return error(503, BUSY)
