"""The Content Security Policy of Lookout's own pages, in report-only mode: a violation in the console
(a script or image injected from elsewhere) becomes an issue of Lookout's own project, reported by
the browser to its security endpoint (app/ingest/security_reports.py) with the local DSN's key (in
Sentry mode, to Sentry's security endpoint of SENTRY_DSN).

Report-only, not enforcing: Reflex's built pages run inline scripts whose text changes with every
render (React Router's context, the streamed hydration calls, the loader of reflex_lookout/js/loader.js),
so neither hashes nor (on prerendered static files) nonces can allow them, and an enforced policy
would have to allow every inline script anyway ('unsafe-inline'), protecting little while any source
missed here would break the console. Reported, a violation costs nothing and is seen.

Only `report-uri`, no `report-to`: a Chromium given both uses `report-to` (the Reporting API) alone,
and Debian's Chromium here delivered no such report within 70 s (headless, with
--short-reporting-delay, with or without its background networking), while a `report-uri` report
arrived within a second; the Reporting API also takes endpoints only from https or loopback pages.
Every browser sends `report-uri` reports. The header is built once, at the first page served (the
local DSN's key is read from the database at start, before any page is).
"""

from __future__ import annotations

import functools

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.settings import Settings

POLICY = (
    "default-src 'self'",
    # 'unsafe-eval': Reflex runs `rx.call_script` (the sign-in form's submit, /try's buttons) and an
    # event's callback through eval() in its state.js; a run of the browser tests reported it.
    "script-src 'self' 'unsafe-inline' 'unsafe-eval'",
    "style-src 'self' 'unsafe-inline'",  # Emotion's and Radix's style elements and attributes
    "img-src 'self' data: blob:",
    "font-src 'self' data:",
    "connect-src 'self'",  # the events' websocket, the tunnel and the API: this origin
    "worker-src 'self' blob:",
    "object-src 'none'",
    "base-uri 'self'",
    "form-action 'self'",
    "frame-ancestors 'none'",
)
POLICY_HEADER = b"content-security-policy-report-only"


def report_uri(settings: Settings) -> str:
    """The security endpoint of the project this app reports to, with its key: a path on this
    origin in local mode, Sentry's URL in Sentry mode."""
    dsn = settings.reporting_dsn
    path = f"{dsn.path_prefix}/api/{dsn.project_id}/security/?sentry_key={dsn.public_key}"
    return path if settings.dsn is None else f"{dsn.scheme}://{dsn.netloc}{path}"


def policy_header(settings: Settings) -> tuple[bytes, bytes]:
    """The policy's header, reporting to `report_uri`."""
    policy = "; ".join([*POLICY, f"report-uri {report_uri(settings)}"])
    return POLICY_HEADER, policy.encode("latin-1")


class PagePolicy:
    """ASGI middleware: the policy's headers on every HTML response (the pages), nothing else changed."""

    def __init__(self, app: ASGIApp, settings: Settings) -> None:
        self.app, self.settings = app, settings

    @functools.cached_property
    def _header(self) -> tuple[bytes, bytes]:
        return policy_header(self.settings)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)

        async def with_policy(message: Message) -> None:
            if message["type"] == "http.response.start" and _html(message.get("headers", [])):
                message = {**message, "headers": [*message["headers"], self._header]}
            await send(message)

        await self.app(scope, receive, with_policy)


def _html(headers: list[tuple[bytes, bytes]]) -> bool:
    return any(name.lower() == b"content-type" and value.startswith(b"text/html") for name, value in headers)
