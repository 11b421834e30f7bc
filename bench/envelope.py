"""A realistic browser error envelope, as `@sentry/react` sends one: 6–7 KB uncompressed.

One `event` item (with `length`) holding a JavaScript TypeError with a 20-frame stack trace,
breadcrumbs, request/user/browser contexts and the SDK's description. Deterministic: the same
DSN always gives the same bytes, so every peer of the benchmark gets an identical body.
"""

from __future__ import annotations

import json
from typing import Any

MIN_BYTES, MAX_BYTES = 6000, 7168
EVENT_ID = "4f1c7d5e9a2b4c3d8e6f0a1b2c3d4e5f"
TRACE_ID = "6e0c63257de34c92bf4a39a6c1c0c7d1"
RELEASE = "lookout@1.4.2+8c1f2e7"
ORIGIN = "https://lookout.example.com"
SDK_VERSION = "8.55.0"

_FRAMES = [  # (file, function, line, column, in_app): outermost first, as Sentry orders them
    ("/assets/vendor-react-dom.js", "performWorkUntilDeadline", 1, 86911, False),
    ("/assets/vendor-react-dom.js", "workLoop", 1, 85402, False),
    ("/assets/vendor-react-dom.js", "flushWork", 1, 85113, False),
    ("/assets/vendor-react-dom.js", "performConcurrentWorkOnRoot", 1, 61230, False),
    ("/assets/vendor-react-dom.js", "renderRootSync", 1, 58377, False),
    ("/assets/vendor-react-dom.js", "workLoopSync", 1, 58012, False),
    ("/assets/vendor-react-dom.js", "performUnitOfWork", 1, 57844, False),
    ("/assets/vendor-react-dom.js", "beginWork", 1, 40021, False),
    ("/assets/vendor-react-dom.js", "updateFunctionComponent", 1, 31790, False),
    ("/assets/vendor-react-dom.js", "renderWithHooks", 1, 24415, False),
    ("/assets/index-3f9a2c.js", "AppShell", 12, 1840, True),
    ("/assets/index-3f9a2c.js", "DashboardPage", 88, 2214, True),
    ("/assets/index-3f9a2c.js", "useWatchlist", 141, 377, True),
    ("/assets/index-3f9a2c.js", "Object.select", 141, 902, True),
    ("/assets/vendor-query.js", "QueryObserver.createResult", 2, 15220, False),
    ("/assets/vendor-query.js", "QueryObserver.updateResult", 2, 16871, False),
    ("/assets/index-3f9a2c.js", "WatchlistTable", 203, 1156, True),
    ("/assets/index-3f9a2c.js", "renderRows", 219, 64, True),
    ("/assets/index-3f9a2c.js", "sortByPriority", 231, 19, True),
    ("/assets/index-3f9a2c.js", "Array.map", 231, 45, True),
]

_BREADCRUMBS = [  # (seconds before the error, category, type, message or data)
    (41.2, "navigation", "navigation", {"from": "/", "to": "/login"}),
    (33.9, "ui.click", "default", "button.rt-Button[type=submit] > span"),
    (33.7, "fetch", "http", {"method": "POST", "url": "/api/session", "status_code": 200}),
    (33.1, "navigation", "navigation", {"from": "/login", "to": "/dashboard"}),
    (32.8, "fetch", "http", {"method": "GET", "url": "/api/watchlist?page=1", "status_code": 200}),
    (21.4, "ui.click", "default", "div.rt-TabsList > button#tab-alerts"),
    (21.0, "fetch", "http", {"method": "GET", "url": "/api/alerts?since=2024-05-01", "status_code": 200}),
    (12.6, "console", "debug", "[query] refetching watchlist after focus"),
    (12.5, "xhr", "http", {"method": "GET", "url": "/api/watchlist?page=1", "status_code": 206}),
    (4.3, "ui.input", "default", "input#search[name=q]"),
    (0.9, "fetch", "http", {"method": "GET", "url": "/api/watchlist?q=north", "status_code": 200}),
    (0.4, "ui.click", "default", "tr.watchlist-row[data-id=\"1842\"] > td.rt-TableCell"),
    (0.3, "fetch", "http", {"method": "GET", "url": "/api/watchlist/1842/history", "status_code": 200}),
    (0.1, "console", "error", "Warning: Each child in a list should have a unique \"key\" prop."),
]

_COMPONENT_STACK = "".join(
    f"\n    at {name} ({ORIGIN}/assets/index-3f9a2c.js:{line}:{column})"
    for name, line, column in [
        ("WatchlistTable", 203, 1156), ("Suspense", 1, 0), ("DashboardPage", 88, 2214),
        ("ErrorBoundary", 7, 311), ("Route", 4, 1022), ("Routes", 4, 1530), ("AppShell", 12, 1840),
        ("QueryClientProvider", 2, 402), ("App", 3, 77),
    ]
)


def _frame(file: str, function: str, line: int, column: int, in_app: bool) -> dict[str, object]:
    return {
        "filename": f"{ORIGIN}{file}", "function": function, "lineno": line, "colno": column,
        "in_app": in_app,
    }


def _breadcrumb(now: float, ago: float, category: str, kind: str, what: object) -> dict[str, object]:
    crumb: dict[str, object] = {"timestamp": round(now - ago, 3), "category": category, "type": kind}
    if isinstance(what, str):
        crumb["message"] = what
        crumb["level"] = "error" if kind == "error" else "info"
    else:
        crumb["data"] = what
    return crumb


def error_event(now: float = 1_717_000_000.0) -> dict[str, Any]:
    """The event payload: what `Sentry.captureException` sends for an uncaught TypeError."""
    return {
        "event_id": EVENT_ID,
        "timestamp": now,
        "platform": "javascript",
        "level": "error",
        "release": RELEASE,
        "environment": "production",
        "exception": {"values": [{
            "type": "TypeError",
            "value": "Cannot read properties of undefined (reading 'map')",
            "stacktrace": {"frames": [_frame(*frame) for frame in _FRAMES]},
            "mechanism": {"type": "onerror", "handled": False},
        }]},
        "breadcrumbs": [_breadcrumb(now, *crumb) for crumb in _BREADCRUMBS],
        "request": {
            "url": f"{ORIGIN}/dashboard?tab=alerts",
            "headers": {
                "Referer": f"{ORIGIN}/login",
                "User-Agent": (
                    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 "
                    "(KHTML, like Gecko) Chrome/125.0.0.0 Safari/537.36"
                ),
            },
        },
        "user": {"id": "u_81723", "ip_address": "{{auto}}"},
        "tags": {"route": "/dashboard", "feature": "watchlist"},
        "contexts": {
            "trace": {"trace_id": TRACE_ID, "span_id": "a1b2c3d4e5f60718", "op": "pageload"},
            "browser": {"name": "Chrome", "version": "125.0.0"},
            "os": {"name": "Windows", "version": ">=10"},
            "react": {"version": "18.3.1", "componentStack": _COMPONENT_STACK},
        },
        "sdk": {
            "name": "sentry.javascript.react",
            "version": SDK_VERSION,
            "integrations": [
                "InboundFilters", "FunctionToString", "BrowserApiErrors", "Breadcrumbs",
                "GlobalHandlers", "LinkedErrors", "Dedupe", "HttpContext", "BrowserTracing",
            ],
            "packages": [{"name": "npm:@sentry/react", "version": SDK_VERSION}],
        },
    }


def build(dsn: str) -> bytes:
    """The whole envelope: header line naming `dsn`, then one `event` item with `length`."""
    payload = json.dumps(error_event(), separators=(",", ":")).encode()
    header = {
        "event_id": EVENT_ID,
        "sent_at": "2024-05-29T16:26:40.123Z",
        "sdk": {"name": "sentry.javascript.react", "version": SDK_VERSION},
        "dsn": dsn,
        "trace": {"trace_id": TRACE_ID, "environment": "production", "release": RELEASE,
                  "public_key": dsn.partition("://")[2].partition("@")[0], "sampled": "true"},
    }
    item_header = {"type": "event", "length": len(payload)}
    body = b"\n".join([
        json.dumps(header, separators=(",", ":")).encode(),
        json.dumps(item_header, separators=(",", ":")).encode(),
        payload,
    ]) + b"\n"
    if not MIN_BYTES <= len(body) <= MAX_BYTES:
        raise AssertionError(f"the benchmark envelope is {len(body)} bytes, not 6–7 KB")
    return body


if __name__ == "__main__":
    print(len(build("http://public@127.0.0.1:9/42")))
