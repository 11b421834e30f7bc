"""Sentry's security endpoint, in local mode: browsers post CSP violations (and the retired Expect-CT
and HPKP reports) here, as a policy's `report-uri` or `report-to` names it:

    POST /api/<project_id>/security/?sentry_key=<key>[&sentry_environment=...][&sentry_release=...]

In order: the media type (415), the client's rate and the body, capped at MAX_BODY_BYTES before it
is parsed (429, 413, 408), the key (401, 403: no header or envelope to carry it, so the query names
it), the key's byte rate (429), the reports (app/protocol/security_reports.py: 400, 413; off the event
loop unless small), the key's own budget of security reports (429 with `Retry-After` and
`X-Sentry-Rate-Limits` for the `security` category, separate from the errors'), then one envelope
of one event per report, committed to the outbox through the tunnel as the other ingest endpoints
commit theirs. Any origin may post (a browser posts from the page's origin): the key is the credential.
"""

from __future__ import annotations

import json
import re
from typing import Any
from urllib.parse import parse_qs

from app.ingest.endpoints import CORS, Ingest
from app.protocol import auth, security_reports
from app.protocol.fields import cut
from reflex_lookout.intake_limits import Buckets
from reflex_lookout.protocol import encodings, envelope
from reflex_lookout.protocol.asgi import ASGIApp, ClientGone, Receive, Refused, Request, Scope, Send, refuse, respond
from reflex_lookout.protocol.ratelimits import category_of

PATH = re.compile(r"^/api/(\d+)/security/?$")
MAX_BODY_BYTES = 256 * 1024  # a CSP report is ~1 KB; a batch of MAX_REPORTS with long samples fits
CATEGORY = category_of("security")


class SecurityReports:
    def __init__(self, ingest: Ingest) -> None:
        self.ingest = ingest
        self.tunnel = ingest.tunnel
        self.settings = ingest.settings
        self.budget = Buckets(self.settings.security_reports_per_min_per_key)  # reports, not bytes

    def asgi(self, app: ASGIApp) -> ASGIApp:
        """Serves the security path and hands everything else to `app` (an `api_transformer`)."""

        async def serve(scope: Scope, receive: Receive, send: Send) -> None:
            found = PATH.match(scope["path"]) if scope["type"] == "http" else None
            if found is None:
                return await app(scope, receive, send)
            await self.handle(int(found[1]), scope, receive, send)

        return serve

    async def handle(self, project_id: int, scope: Scope, receive: Receive, send: Send) -> None:
        """Answer one request: the first report's id, or the refusal's status and sentence (with
        CORS either way, so a page's script may read it)."""
        try:
            if scope["method"] == "OPTIONS":
                return await respond(send, 204, b"", CORS)
            if scope["method"] != "POST":
                raise Refused(405, "Use POST.", "method_not_allowed", {"Allow": "POST, OPTIONS"})
            event_id = await self.accept(project_id, scope, receive)
        except Refused as refused:
            self.tunnel.stats.reject(refused.reason)
            return await refuse(send, refused, CORS)
        except ClientGone:
            return None
        await respond(send, 200, json.dumps({"id": event_id}).encode(), CORS)

    async def accept(self, project_id: int, scope: Scope, receive: Receive) -> str | None:
        """Keep the body's reports as events: the first one's id (None when every report was of a
        type that is skipped), or `Refused` saying why nothing was kept."""
        if self.settings.dsn is not None:
            raise Refused(404, "This Lookout forwards to Sentry (SENTRY_DSN is set); it has no inbox to ingest into.", "no_inbox")
        request, intake = Request(scope), self.tunnel.intake
        try:
            security_reports.check_content_type(_header(scope, b"content-type"))
        except security_reports.ReportError as exc:
            raise Refused(exc.status, exc.message, "unsupported_media_type") from None
        raw = await intake.body(request, receive, MAX_BODY_BYTES)
        key = auth.sentry_key(scope)
        if not key:
            raise Refused(401, "No sentry_key: a security report names it in the query (?sentry_key=...).", "forbidden_dsn")
        dsn = await self.ingest.project_dsn(project_id, key)
        if dsn is None:
            raise Refused(403, f"Project {project_id} of this inbox has no key {key!r}.", "forbidden_dsn")
        intake.charge_key(dsn, len(raw))
        events = await intake.heavy(_events, raw, request.content_encoding)
        if not events:
            return None
        self._charge(dsn, len(events))
        extra, agent = _extra(scope), _header(scope, b"user-agent")
        items = [json.dumps(_with_agent({**event, **extra}, agent)).encode() for event in events]
        parsed = envelope.Envelope({"event_id": events[0]["event_id"]}, tuple(envelope.Item("event", {}, item) for item in items))
        await self.tunnel.commit(dsn, "", parsed, envelope.serialize(parsed), [CATEGORY], ["security"] * len(events))
        return str(events[0]["event_id"])

    def _charge(self, dsn: str, reports: int) -> None:
        if wait := self.budget.wait(dsn):
            raise Refused(
                429, f"Lookout takes at most {self.budget.per_minute} security reports a minute for this key; "
                     f"try again in {wait} s.", "too_many_requests",
                {"Retry-After": str(wait), "X-Sentry-Rate-Limits": f"{wait}:{CATEGORY}:key"},
            )
        self.budget.spend(dsn, reports)


def _events(raw: bytes, content_encoding: str) -> list[dict[str, Any]]:
    """The reports of a body, decoded within MAX_BODY_BYTES (`Refused` 400, 413, 415 if not)."""
    try:
        return security_reports.read(encodings.decode(raw, content_encoding, MAX_BODY_BYTES))
    except encodings.DecodeError as exc:
        raise Refused(exc.status, exc.message, "unsupported_encoding" if exc.status == 415 else "malformed") from None
    except security_reports.ReportError as exc:
        raise Refused(exc.status, exc.message, "too_large" if exc.status == 413 else "malformed") from None


def _extra(scope: Scope) -> dict[str, Any]:
    """What the query adds to each report's event: its environment and release."""
    query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
    extra: dict[str, Any] = {}
    if environment := query.get("sentry_environment", [""])[0]:
        extra["environment"] = cut(environment, 64)
    if release := query.get("sentry_release", [""])[0]:
        extra["release"] = cut(release, 200)
    return extra


def _with_agent(event: dict[str, Any], agent: str) -> dict[str, Any]:
    """The browser's User-Agent among the event's request headers (the console shows its browser and os)."""
    if agent:
        request = event["request"]
        request["headers"] = [*request.get("headers", []), ["User-Agent", cut(agent, 512)]]
    return event


def _header(scope: Scope, name: bytes) -> str:
    return next((value.decode("latin-1") for key, value in scope["headers"] if key == name), "")
