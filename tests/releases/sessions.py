"""What the release tests share: sessions made by the real sentry-sdk (its application mode, one
session per `start_session`/`end_session`, and its request mode's aggregates), stored through the inbox."""

from __future__ import annotations

import sys
from dataclasses import dataclass

import sentry_sdk
from sentry_sdk.sessions import track_session
from sentry_sdk.utils import event_from_exception

from app.ingest.store import InboxStore
from tests.environment import LOCAL_DSN
from tests.factories import sentry_sdk_envelopes, store_all

HEALTHY, ERRORED, CRASHED, ABNORMAL = "healthy", "errored", "crashed", "abnormal"


@dataclass(frozen=True)
class Session:
    """A session to run: how it ends, and its user (None: none set)."""
    ends: str
    user: str | None = None


def _fail(handled: bool) -> None:
    try:
        raise RuntimeError("checkout failed")
    except RuntimeError:
        client = sentry_sdk.get_client()
        event, hint = event_from_exception(sys.exc_info(), client_options=client.options,
                                           mechanism={"type": "test", "handled": handled})
        sentry_sdk.capture_event(event, hint=hint)


def run_sessions(inbox: InboxStore, sessions: list[Session], release: str = "shop@1.0",
                 environment: str = "production", requests: list[str] | None = None, dsn: str = LOCAL_DSN) -> list[bytes]:
    """Each of `sessions` run in sentry-sdk's application mode (an error handled: errored; not
    handled: crashed; marked abnormal before it ends), then each of `requests` (how it ends) in its
    request mode (aggregated); the envelopes stored (as `dsn`'s project's), and returned."""
    with sentry_sdk_envelopes(dsn=dsn, release=release, environment=environment) as bodies:
        scope = sentry_sdk.get_isolation_scope()
        for session in sessions:
            scope.set_user({"id": session.user} if session.user else None)
            scope.start_session()
            if session.ends in (ERRORED, CRASHED):
                _fail(handled=session.ends == ERRORED)
            elif session.ends == ABNORMAL:
                scope._session.update(status="abnormal")  # type: ignore[union-attr]  # no SDK call marks it
            scope.end_session()
        scope.set_user(None)
        for ends in requests or []:
            with track_session(scope, session_mode="request"):
                if ends != HEALTHY:
                    _fail(handled=ends == ERRORED)
    store_all(inbox, bodies, dsn)
    return bodies
