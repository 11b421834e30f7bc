"""What the dev overlay shows (dev mode only): the envelopes the browser SDK and the server SDK sent
while `reflex run` runs, kept in this backend process's memory, bounded, and read back by trace.

Errors are coalesced into issues (their source, type, message and raising in-app frame), so a loop
throwing a thousand times is one issue counted a thousand times; transactions and log lines are
kept by trace id. Every change takes the next sequence number, so the overlay asks only for what
changed after the last answer it had. Nothing here is written to disk, and nothing leaves the process.

Bounds: MAX_ISSUES issues, MAX_TRACES traces (the least recently changed go first), and per trace
MAX_TRANSACTIONS transactions, MAX_SPANS spans each and MAX_LOGS log lines; strings are cut to
MAX_TEXT characters and frames to MAX_FRAMES, so one envelope can never fill the process.
"""

from __future__ import annotations

import secrets
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from reflex_lookout.protocol import envelope
from reflex_lookout.protocol.payloads import UnreadablePayload, load_object

MAX_ISSUES = 200
MAX_TRACES = 300
MAX_TRANSACTIONS = 50
MAX_SPANS = 200
MAX_LOGS = 200
MAX_FRAMES = 50
MAX_TEXT = 2000
MAX_CONTEXT_LINES = 5

PageJson = dict[str, object]


@dataclass
class Trace:
    seq: int
    transactions: list[dict[str, Any]] = field(default_factory=list)
    logs: list[dict[str, Any]] = field(default_factory=list)

    def as_json(self) -> dict[str, Any]:
        return {"transactions": self.transactions, "logs": self.logs}


class DevInbox:
    """This process's dev reports. `pages()`: Python page by generated route module
    (`.web/app/routes/_index.jsx`); `routes()`: Python page by `route_key` ("index", "orders"); both read
    when first asked (the app's pages exist once it has compiled). Safe to use from any thread."""

    def __init__(self, pages: Callable[[], Mapping[str, PageJson]] = dict,
                 routes: Callable[[], Mapping[str, PageJson]] = dict) -> None:
        self.instance = secrets.token_hex(4)  # a new process (a backend reload): the overlay starts over
        self._pages_of, self._routes_of = pages, routes
        self._pages: Mapping[str, PageJson] | None = None
        self._routes: Mapping[str, PageJson] | None = None
        self._lock = threading.Lock()
        self._seq = 0
        self._issues: OrderedDict[str, dict[str, Any]] = OrderedDict()
        self._traces: OrderedDict[str, Trace] = OrderedDict()

    def add_body(self, body: bytes, source: str, max_item_bytes: int = 1024 * 1024) -> int:
        """`add` for the bytes of an envelope (the server SDK's, serialized); a malformed one is skipped."""
        try:
            return self.add(envelope.parse(body, max_item_bytes), source)
        except envelope.EnvelopeError:
            return 0

    def add(self, parsed: envelope.Envelope, source: str) -> int:
        """Keep what the envelope holds (`source`: "browser" or "server"); how many items were kept. A
        malformed item is skipped, never raised: it is the overlay's input only. Parses each item's
        JSON: call it off the event loop."""
        kept = 0
        for item in parsed.items:
            if item.type not in ("event", "transaction", "log"):
                continue
            try:
                payload = load_object(item.payload)
            except UnreadablePayload:
                continue
            with self._lock:
                if item.type == "event":
                    kept += self._add_error(payload, source)
                elif item.type == "transaction":
                    kept += self._add_transaction(payload, source)
                else:
                    kept += self._add_logs(payload, source)
        return kept

    def answer(self, traces: Iterable[str], after: int) -> dict[str, Any]:
        """What changed after `after` among the issues of `traces` (this tab's), and those traces."""
        wanted = {t for t in traces if isinstance(t, str)}
        with self._lock:
            issues = [dict(i) for i in self._issues.values() if i["trace_id"] in wanted and i["seq"] > after]
            changed = {i["trace_id"] for i in issues} | {t for t in wanted if t in self._traces and self._traces[t].seq > after}
            found = {t: self._traces[t].as_json() for t in changed if t in self._traces}
            return {"instance": self.instance, "seq": self._seq, "issues": issues, "traces": found,
                    "pages": dict(self._page_map())}

    def clear(self, keys: Iterable[str]) -> None:
        with self._lock:
            for key in keys:
                if isinstance(key, str):
                    self._issues.pop(key, None)

    def _next(self) -> int:
        self._seq += 1
        return self._seq

    def _page_map(self) -> Mapping[str, PageJson]:
        if not self._pages:
            self._pages = self._pages_of()
        return self._pages

    def _page_of_url(self, url: str) -> PageJson | None:
        if not self._routes:
            self._routes = self._routes_of()
        return self._routes.get(route_key(urlsplit(url).path)) if url else None

    def _add_error(self, event: dict[str, Any], source: str) -> int:
        values = _list(_dict(event.get("exception")).get("values"))
        main = _dict(values[-1]) if values else {}
        frames = [_frame(f) for f in _list(_dict(main.get("stacktrace")).get("frames"))[-MAX_FRAMES:]]
        kind = _text(main.get("type")) or "Error"
        value = _text(main.get("value")) or _text(_dict(event.get("logentry")).get("formatted")) or _text(event.get("message"))
        raising = next((f for f in reversed(frames) if f["in_app"]), frames[-1] if frames else {})
        key = "|".join((source, kind, value[:200], str(raising.get("filename", "")), str(raising.get("function", ""))))
        trace_id = _text(_dict(_dict(event.get("contexts")).get("trace")).get("trace_id"))
        url = _text(_dict(event.get("request")).get("url"))
        tags = event.get("tags")
        # A handler's error: the page its event came from (event_tracing.py's tag, or its "reflex" context).
        route = (_text(tags.get("reflex.route")) if isinstance(tags, dict) else "") or _text(
            _dict(_dict(event.get("contexts")).get("reflex")).get("route"))
        now = time.time()
        found = self._issues.pop(key, None)
        issue = {
            "key": key, "count": (found["count"] if found else 0) + 1, "seq": self._next(),
            "first": found["first"] if found else now, "last": now, "source": source, "type": kind, "value": value,
            "trace_id": trace_id, "event_id": _text(event.get("event_id")), "transaction": _text(event.get("transaction")),
            "url": url, "route": route, "python_page": self._page_of_url(route or url), "element": _clicked(event),
            "frames": frames,
        }
        self._issues[key] = issue  # the newest last
        while len(self._issues) > MAX_ISSUES:
            self._issues.popitem(last=False)
        self._trace(trace_id)
        return 1

    def _add_transaction(self, event: dict[str, Any], source: str) -> int:
        context = _dict(_dict(event.get("contexts")).get("trace"))
        trace = self._trace(_text(context.get("trace_id")))
        if trace is None:
            return 0
        spans = [{"span_id": _text(s.get("span_id")), "parent_span_id": _text(s.get("parent_span_id")),
                  "op": _text(s.get("op")), "description": _text(s.get("description")),
                  "start": _number(s.get("start_timestamp")), "end": _number(s.get("timestamp"))}
                 for s in map(_dict, _list(event.get("spans"))[:MAX_SPANS])]
        trace.transactions.append({
            "name": _text(event.get("transaction")), "op": _text(context.get("op")), "source": source,
            "span_id": _text(context.get("span_id")), "parent_span_id": _text(context.get("parent_span_id")),
            "start": _number(event.get("start_timestamp")), "end": _number(event.get("timestamp")), "spans": spans,
        })
        del trace.transactions[:-MAX_TRANSACTIONS]
        return 1

    def _add_logs(self, container: dict[str, Any], source: str) -> int:
        kept = 0
        for log in map(_dict, _list(container.get("items"))):
            trace = self._trace(_text(log.get("trace_id")))
            if trace is not None:
                trace.logs.append({"timestamp": _number(log.get("timestamp")), "level": _text(log.get("level")),
                                   "body": _text(log.get("body")), "source": source})
                del trace.logs[:-MAX_LOGS]
                kept += 1
        return kept

    def _trace(self, trace_id: str) -> Trace | None:
        """The trace `trace_id`, marked changed (made if new; the least recently changed goes past MAX_TRACES)."""
        if len(trace_id) != 32:
            return None
        trace = self._traces.pop(trace_id, None) or Trace(0)
        trace.seq = self._next()
        self._traces[trace_id] = trace
        while len(self._traces) > MAX_TRACES:
            self._traces.popitem(last=False)
        return trace


def route_key(path: str) -> str:
    """A page's key by its URL path or Reflex route: "/", "/index" and "index" are all "index"."""
    return path.strip("/") or "index"


def _clicked(event: dict[str, Any]) -> str:
    """The element of the last click before the error ("button#throw"), from the browser SDK's breadcrumbs."""
    crumbs = event.get("breadcrumbs")
    crumbs = crumbs.get("values") if isinstance(crumbs, dict) else crumbs  # sentry-sdk's {"values": [...]}, or a list
    for crumb in reversed(_list(crumbs)):
        crumb = _dict(crumb)
        if crumb.get("category") == "ui.click":
            return _text(crumb.get("message")).rsplit(" > ", 1)[-1]
    return ""


def _frame(frame: object) -> dict[str, Any]:
    f = _dict(frame)
    return {
        "filename": _text(f.get("filename")), "abs_path": _text(f.get("abs_path")), "module": _text(f.get("module")),
        "function": _text(f.get("function")), "lineno": _whole(f.get("lineno")), "colno": _whole(f.get("colno")),
        "context_line": _text(f.get("context_line")),
        "pre_context": [_text(line) for line in _list(f.get("pre_context"))[-MAX_CONTEXT_LINES:]],
        "post_context": [_text(line) for line in _list(f.get("post_context"))[:MAX_CONTEXT_LINES]],
        "in_app": f.get("in_app") is True,
    }


def _dict(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _list(value: object) -> list[Any]:
    return value if isinstance(value, list) else []


def _text(value: object) -> str:
    return value[:MAX_TEXT] if isinstance(value, str) else ""


def _whole(value: object) -> int | None:
    return value if type(value) is int else None


def _number(value: object) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None
