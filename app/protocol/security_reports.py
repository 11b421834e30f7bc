"""The bodies a browser posts to Sentry's security endpoint, read into events (as Relay reads them):

- CSP level 2 (`report-uri`, `application/csp-report`): `{"csp-report": {...}}`;
- the Reporting API (`report-to`, `application/reports+json`): a JSON array, a batch of
  `{"type": "csp-violation", "body": {...}, ...}` and reports of other types, which are skipped
  as Relay skips them (deprecations, interventions: nothing Sentry shows);
- Expect-CT (`{"expect-ct-report": {...}}`), Expect-Staple (`{"expect-staple-report": {...}}`) and
  HPKP (RFC 7469: an object with `known-pins`), all retired by browsers but still accepted.

Each report becomes one event: a message titled as Sentry titles it (app/protocol/csp.py for CSP;
`Expect-CT failed for '<host>'`, `Public key pinning validation failed for '<host>'`), with Sentry's
tags, the report kept as the event's interface (`csp`, `expectct`, `expectstaple`, `hpkp`), and a
fingerprint: the directive and where the blocked resource came from, or the host.

Bounded: the caller caps the body's bytes before this reads it; a batch holds at most
`MAX_REPORTS`. Anything unreadable raises `ReportError` (400, 413, 415) with a sentence; one bad
report refuses its whole batch, so nothing of a refused body is kept.
"""

from __future__ import annotations

import uuid
from typing import Any

from app.protocol.csp import FIELD_LENGTH, CspReport, InvalidReport
from app.protocol.fields import cut, mapping
from reflex_lookout.protocol import payloads

MAX_REPORTS = 100  # reports in one batch (Chromium sends at most 100 at once)
CONTENT_TYPES = frozenset({
    "application/csp-report", "application/json", "application/reports+json", "application/expect-ct-report",
    "application/expect-ct-report+json", "application/expect-staple-report",
})


class ReportError(ValueError):
    """A body that is no security report this endpoint reads: `status` and a sentence."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status, self.message = status, message


def check_content_type(header: str) -> None:
    """415 unless `header` names one of the security reports' media types."""
    media = header.split(";", 1)[0].strip().lower()
    if media not in CONTENT_TYPES:
        raise ReportError(415, f"A security report is sent as {', '.join(sorted(CONTENT_TYPES))}; "
                               f"this request's Content-Type is {media or 'missing'!r}.")


def read(body: bytes) -> list[dict[str, Any]]:
    """The events of a body: one per report (none for a batch of only skipped types)."""
    try:
        value = payloads.loads(body)
    except payloads.UnreadablePayload as exc:
        raise ReportError(400, f"The security report is not readable: {exc}") from None
    if isinstance(value, list):
        if len(value) > MAX_REPORTS:
            raise ReportError(413, f"The batch holds {len(value)} reports; the limit is {MAX_REPORTS}.")
        reports, batch = value, True
    elif isinstance(value, dict):
        reports, batch = [value], False
    else:
        raise ReportError(400, "A security report is a JSON object, or a JSON array of them (a Reporting API batch).")
    events = []
    for index, report in enumerate(reports):
        try:
            event = _event(report)
        except (ReportError, InvalidReport) as exc:
            where = f"Report {index + 1} of the batch: " if batch else ""
            raise ReportError(400, where + str(exc)) from None
        if event is not None:
            events.append(event)
    return events


def _event(report: Any) -> dict[str, Any] | None:
    if not isinstance(report, dict):
        raise ReportError(400, "A report must be a JSON object.")
    if "csp-report" in report:
        return _csp(_object(report["csp-report"], "csp-report"))
    if "type" in report:
        if report["type"] != "csp-violation":
            return None  # a Reporting API report of a type Sentry does not read
        return _csp(_object(report.get("body"), "body"))
    if "expect-ct-report" in report:
        found = _object(report["expect-ct-report"], "expect-ct-report")
        return _host_event("expectct", "Expect-CT failed for '{}'", found, culprit=True)
    if "expect-staple-report" in report:
        found = _object(report["expect-staple-report"], "expect-staple-report")
        return _host_event("expectstaple", "Expect-Staple failed for '{}'", found, culprit=True)
    if "known-pins" in report:
        if not isinstance(report["known-pins"], list):
            raise ReportError(400, "An HPKP report's known-pins must be a list.")
        return _host_event("hpkp", "Public key pinning validation failed for '{}'", report, culprit=False)
    raise ReportError(400, "This is no security report Lookout reads: expected csp-report, a Reporting API "
                           "report (type and body), expect-ct-report, expect-staple-report or an HPKP "
                           "report (known-pins).")


def _csp(raw: dict[str, Any]) -> dict[str, Any]:
    report = CspReport.read(raw)
    return _made("csp", report.title(), report.culprit(), report.tags(), report.request(), report.interface(),
                 report.grouping())


def _host_event(kind: str, title: str, report: dict[str, Any], culprit: bool) -> dict[str, Any]:
    """Expect-CT, Expect-Staple, HPKP: about a host (and port), titled with the host."""
    host = report.get("hostname")
    if not isinstance(host, str) or not host:
        raise ReportError(400, f"The {kind} report names no hostname.")
    host = cut(host, FIELD_LENGTH)
    tags = [["hostname", host]]
    if "port" in report:
        tags.append(["port", cut(report["port"], 20)])
    if kind == "hpkp" and isinstance(report.get("include-subdomains"), bool):
        tags.append(["include-subdomains", str(report["include-subdomains"]).lower()])
    interface = {key.replace("-", "_"): value for key, value in report.items()}
    return _made(kind, title.format(host), host if culprit else "", tags, {"url": host}, interface, [kind, host])


def _made(kind: str, title: str, culprit: str, tags: list[list[str]], request: dict[str, Any],
          interface: dict[str, Any], fingerprint: list[str]) -> dict[str, Any]:
    return {
        "event_id": uuid.uuid4().hex, "level": "error", "logger": kind, "platform": "other",
        "logentry": {"formatted": title}, "culprit": culprit, "tags": tags, "request": request,
        kind: interface, "fingerprint": fingerprint,
    }


def _object(value: Any, name: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise ReportError(400, f"The report's {name} must be a JSON object.")
    return mapping(value)
