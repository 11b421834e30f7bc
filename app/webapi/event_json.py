"""A stored event (as the SDK sent it, scrubbed and symbolicated at ingest) in the shape of Sentry's
event API: its `entries` (exception, threads, message, request, breadcrumbs), frames in camelCase
(`lineNo`, `absPath`, `inApp`), and the short row of an issue's events list.

The MCP server's `get_event_stacktrace` reads only a `threads` entry, so an event that sent no threads
gets one: the raised exception's stack as its crashed thread. Frames are bounded as the issue page
bounds them (app/presentation/stack.py).
"""

from __future__ import annotations

from typing import Any

from app.inbox.grouping import exceptions, frames
from app.presentation.event import MAX_BREADCRUMBS
from app.presentation.stack import CONTEXT_AROUND, MAX_FRAMES, MAX_LINE
from app.presentation.tags import tag_rows
from app.protocol.fields import text, whole
from app.webapi.sentry_json import iso

MAX_EXCEPTIONS = 20  # of a chain


def event(found: dict[str, Any], issue_id: int, project_id: int, received_at: float, culprit: str = "") -> dict[str, Any]:
    """Sentry's event detail of `found` (the SDK's event), of issue `issue_id` (whose `culprit` it shows
    when the event names none)."""
    chain = exceptions(found)[-MAX_EXCEPTIONS:]
    message = _message(found)
    title = _title(found, chain, message)
    entries: list[dict[str, Any]] = []
    if chain:
        entries.append({"type": "exception", "data": {"values": [_exception(e) for e in chain], "hasSystemFrames": False}})
    entries.append({"type": "threads", "data": {"values": _threads(found, chain)}})
    if message:
        entries.append({"type": "message", "data": {"formatted": message, "message": message}})
    request = found.get("request")
    if isinstance(request, dict):
        url = text(request.get("url"))
        entries.append({"type": "request", "data": {"method": text(request.get("method")) or None,
                                                     "url": url if url.startswith(("http://", "https://")) else None}})
    crumbs = _breadcrumbs(found)
    if crumbs:
        entries.append({"type": "breadcrumbs", "data": {"values": crumbs}})
    sdk = found.get("sdk")
    return {
        "id": text(found.get("event_id")), "eventID": text(found.get("event_id")),
        "groupID": str(issue_id), "projectID": str(project_id), "type": "error" if chain else "default",
        "title": title, "message": message or None, "culprit": text(found.get("culprit")) or culprit or None,
        "dateCreated": iso(_timestamp(found, received_at)), "dateReceived": iso(received_at),
        "platform": text(found.get("platform")) or None,
        "tags": [{"key": key, "value": value} for key, value in tag_rows(found)],
        "contexts": {k: v for k, v in (found.get("contexts") or {}).items() if isinstance(v, dict)}
        if isinstance(found.get("contexts"), dict) else {},
        "user": found.get("user") if isinstance(found.get("user"), dict) else None,
        "sdk": {"name": text(sdk.get("name")), "version": text(sdk.get("version"))} if isinstance(sdk, dict) else None,
        "entries": entries,
    }


def event_row(found: dict[str, Any], issue_id: int, project_id: int, received_at: float) -> dict[str, Any]:
    """One event as an issue's events list gives it."""
    chain = exceptions(found)
    message = _message(found)
    return {
        "id": text(found.get("event_id")), "eventID": text(found.get("event_id")),
        "title": _title(found, chain, message), "message": message, "timestamp": iso(_timestamp(found, received_at)),
        "dateCreated": iso(received_at), "culprit": text(found.get("culprit")) or None,
        "tags": [{"key": key, "value": value} for key, value in tag_rows(found)],
        "projectID": str(project_id), "groupID": str(issue_id), "platform": text(found.get("platform")) or None,
        "user": found.get("user") if isinstance(found.get("user"), dict) else None,
        "event.type": "error" if chain else "default",
    }


def _timestamp(found: dict[str, Any], received_at: float) -> float:
    stamp = found.get("timestamp")
    return float(stamp) if isinstance(stamp, (int, float)) and not isinstance(stamp, bool) else received_at


def _message(found: dict[str, Any]) -> str:
    message = found.get("logentry") or found.get("message")
    if isinstance(message, dict):
        return text(message.get("formatted") or message.get("message"))[:MAX_LINE * 50]
    return text(message)[:MAX_LINE * 50]


def _title(found: dict[str, Any], chain: list[dict[str, Any]], message: str) -> str:
    if chain:
        raised = chain[-1]
        kind, value = text(raised.get("type")), text(raised.get("value"))
        return f"{kind}: {value}" if kind and value else kind or value or "<unknown>"
    return message.splitlines()[0] if message else "<unlabeled event>"


def _exception(exception: dict[str, Any]) -> dict[str, Any]:
    mechanism = exception.get("mechanism")
    return {
        "type": text(exception.get("type")) or None, "value": text(exception.get("value")) or None,
        "module": text(exception.get("module")) or None,
        "mechanism": {"type": text(mechanism.get("type")) or "generic", "handled": mechanism.get("handled")}
        if isinstance(mechanism, dict) else None,
        "stacktrace": {"frames": [_frame(f) for f in frames(exception)[-MAX_FRAMES:]]},
    }


def _threads(found: dict[str, Any], chain: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The event's own threads, or else the raised exception's stack as the one crashed thread."""
    threads = found.get("threads")
    values = threads.get("values") if isinstance(threads, dict) else threads
    sent = [t for t in values if isinstance(t, dict)] if isinstance(values, list) else []
    if any(frames(t) for t in sent):
        return [{"id": t.get("id"), "name": text(t.get("name")) or None, "crashed": t.get("crashed") is True,
                 "current": t.get("current") is True, "state": None,
                 "stacktrace": {"frames": [_frame(f) for f in frames(t)[-MAX_FRAMES:]]}} for t in sent[:MAX_EXCEPTIONS]]
    if not chain:
        return []
    return [{"id": 0, "name": "crashed", "crashed": True, "current": True, "state": None,
             "stacktrace": {"frames": [_frame(f) for f in frames(chain[-1])[-MAX_FRAMES:]]}}]


def _frame(frame: dict[str, Any]) -> dict[str, Any]:
    line = frame.get("lineno") if whole(frame.get("lineno")) else None
    return {
        "filename": text(frame.get("filename")) or None, "absPath": text(frame.get("abs_path")) or None,
        "function": text(frame.get("function")) or None, "module": text(frame.get("module")) or None,
        "package": text(frame.get("package")) or None, "platform": text(frame.get("platform")) or None,
        "lineNo": line, "colNo": frame.get("colno") if whole(frame.get("colno")) else None,
        "inApp": frame.get("in_app") is True, "context": _context(frame, line), "vars": None,
    }


def _context(frame: dict[str, Any], line: int | None) -> list[list[Any]]:
    if line is None:
        return []
    before = [text(x)[:MAX_LINE] for x in frame.get("pre_context") or [] if isinstance(x, str)][-CONTEXT_AROUND:]
    after = [text(x)[:MAX_LINE] for x in frame.get("post_context") or [] if isinstance(x, str)][:CONTEXT_AROUND]
    lines = [*before, text(frame.get("context_line"))[:MAX_LINE], *after]
    first = line - len(before)
    return [[first + number, code] for number, code in enumerate(lines)]


def _breadcrumbs(found: dict[str, Any]) -> list[dict[str, Any]]:
    crumbs = found.get("breadcrumbs")
    values = crumbs.get("values") if isinstance(crumbs, dict) else crumbs
    kept = [c for c in values if isinstance(c, dict)][-MAX_BREADCRUMBS:] if isinstance(values, list) else []
    return [{"type": text(c.get("type")) or "default", "category": text(c.get("category")) or None,
             "level": text(c.get("level")) or "info", "message": text(c.get("message")) or None,
             "timestamp": iso(c["timestamp"]) if isinstance(c.get("timestamp"), (int, float)) else None,
             "data": c.get("data") if isinstance(c.get("data"), dict) else None} for c in kept]
