"""The Content Security Policy of Lookout's own pages, in report-only mode: a violation in the console
(a script or image injected from elsewhere) becomes an issue of Lookout's own project, reported by
the browser to its security endpoint (app/ingest/security_reports.py) with the local DSN's key (in
Sentry mode, to Sentry's security endpoint of SENTRY_DSN).

Report-only, not enforcing: Reflex's built pages run inline scripts whose text changes with every
render (React Router's context, the streamed hydration calls, the loader of app/monitoring/loader.js),
so neither hashes nor (on prerendered static files) nonces can allow them, and an enforced policy
would have to allow every inline script anyway ('unsafe-inline'), protecting little while any source
missed here would break the console. Reported, a violation costs nothing and is seen.

`report-to` (the Reporting API, with a `Reporting-Endpoints` header) is what Chromium uses when a
policy names it, and it ignores `report-uri` then; but it takes endpoints only from pages of
potentially trustworthy origins (https, localhost, loopback addresses). A page served over plain
http to another host gets the policy with `report-uri` alone, which every browser sends. Both header
sets are built once, at the first page served (the local DSN's key is read from the database at
start, before any page is).
"""

from __future__ import annotations

import functools
import ipaddress

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.settings import Settings

POLICY = (
    "default-src 'self'",
    "script-src 'self' 'unsafe-inline'",
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
REPORT_GROUP = "lookout-csp"
POLICY_HEADER = b"content-security-policy-report-only"


def report_uri(settings: Settings) -> str:
    """The security endpoint of the project this app reports to, with its key: a path on this
    origin in local mode, Sentry's URL in Sentry mode."""
    dsn = settings.reporting_dsn
    path = f"{dsn.path_prefix}/api/{dsn.project_id}/security/?sentry_key={dsn.public_key}"
    return path if settings.dsn is None else f"{dsn.scheme}://{dsn.netloc}{path}"


def policy_headers(settings: Settings, reporting_api: bool) -> list[tuple[bytes, bytes]]:
    """The policy's header, and with `reporting_api` its `report-to` group and `Reporting-Endpoints`."""
    uri = report_uri(settings)
    policy = "; ".join([*POLICY, f"report-uri {uri}", *([f"report-to {REPORT_GROUP}"] if reporting_api else [])])
    headers = [(POLICY_HEADER, policy.encode("latin-1"))]
    if reporting_api:
        headers.append((b"reporting-endpoints", f'{REPORT_GROUP}="{uri}"'.encode("latin-1")))
    return headers


def trustworthy(scope: Scope) -> bool:
    """Whether the page's origin is one browsers take Reporting API endpoints from: https, or a
    loopback host (as the browser reached it: the Host header)."""
    if scope.get("scheme") in ("https", "wss"):
        return True
    host = next((value.decode("latin-1") for name, value in scope["headers"] if name == b"host"), "")
    name = host.rsplit(":", 1)[0] if not host.endswith("]") else host
    name = name.strip("[]").lower()
    if name == "localhost" or name.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


class PagePolicy:
    """ASGI middleware: the policy's headers on every HTML response (the pages), nothing else changed."""

    def __init__(self, app: ASGIApp, settings: Settings) -> None:
        self.app, self.settings = app, settings

    @functools.cached_property
    def _headers(self) -> dict[bool, list[tuple[bytes, bytes]]]:
        return {secure: policy_headers(self.settings, secure) for secure in (True, False)}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)

        async def with_policy(message: Message) -> None:
            if message["type"] == "http.response.start" and _html(message.get("headers", [])):
                message = {**message, "headers": [*message["headers"], *self._headers[trustworthy(scope)]]}
            await send(message)

        await self.app(scope, receive, with_policy)


def _html(headers: list[tuple[bytes, bytes]]) -> bool:
    return any(name.lower() == b"content-type" and value.startswith(b"text/html") for name, value in headers)
