"""The /traces list as Sentry's trace explorer reads: one row per trace, named after its root (the page
load, or whatever else started it), with the trace's other transactions nested under it and Reflex's
own plumbing (`State.hydrate_and_load`, `OnLoadInternalState.on_load_internal`, ...: the plugin's op
`reflex.internal`, reflex_lookout/event_tracing.py) folded apart; a Reflex handler reads as its class
and function (`TracesState.load`), also for transactions stored under their module path before."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from app.presentation.event import OK_STATUSES
from app.presentation.reflex_events import is_internal, short_name
from app.presentation.words import plural

MAX_CHILDREN = 6  # of a trace's own transactions shown under its row; the trace page shows them all
MAX_INTERNAL = 20  # of Reflex's plumbing events, folded under it
MAX_DEPTH = 4  # nesting drawn at most


@dataclass(frozen=True)
class TraceChild:
    """A transaction of a trace under its row: its name, op, duration and status, and how far in it is
    nested (`indent`, CSS) under the root's other transactions."""

    name: str
    op: str
    duration: str
    status: str
    failed: bool = False
    indent: str = "0em"


@dataclass(frozen=True)
class TraceRow:
    """One trace: its root's name, op, duration and status; how many transactions it has; the app's
    transactions under the root (`children`, the first MAX_CHILDREN) and Reflex's plumbing events
    (`internal`, the first MAX_INTERNAL, shown folded); `more` says how many are left out."""

    trace_id: str
    key: str  # the trace id, or for a transaction sent without one, its row's
    name: str
    op: str
    platform: str
    duration: str
    status: str
    transactions: str  # how many, "1,024"
    when: str
    href: str
    children: list[TraceChild]
    internal: list[TraceChild]
    more: str = ""  # "3 more transactions in the trace" ("": none left out)


def _internal(transaction: dict[str, Any]) -> bool:
    return is_internal(transaction.get("name") or "", transaction.get("op") or "")


def _name(transaction: dict[str, Any]) -> str:
    return short_name(transaction.get("name") or "", transaction.get("op") or "") or "(unnamed)"


def _duration(transaction: dict[str, Any]) -> str:
    return f"{float(transaction.get('duration_ms') or 0.0):.0f} ms"


def root_of(transactions: list[dict[str, Any]]) -> dict[str, Any]:
    """The transaction that started the trace: one with no parent among the trace's transactions (no
    parent at all first, then not Reflex's plumbing, then the earliest)."""
    span_ids = {t.get("span_id") for t in transactions if t.get("span_id")}
    roots = [t for t in transactions if t.get("parent_span_id") not in span_ids] or transactions
    return min(roots, key=lambda t: (bool(t.get("parent_span_id")), _internal(t), t.get("start") or 0.0, t.get("id") or 0))


def _depth(transaction: dict[str, Any], root: dict[str, Any], by_span: dict[str, dict[str, Any]]) -> int:
    """How many of the app's transactions it is nested under, the root's included (a transaction whose
    parents lead elsewhere hangs under the root too): Reflex's plumbing between them does not count (a
    page's on_load is 1 deep under its page load)."""
    depth, seen, parent = 0, set(), by_span.get(transaction.get("parent_span_id") or "")
    while parent is not None and parent is not root and id(parent) not in seen and depth < MAX_DEPTH:
        seen.add(id(parent))
        depth += 0 if _internal(parent) else 1
        parent = by_span.get(parent.get("parent_span_id") or "")
    return min(depth + 1, MAX_DEPTH)


def trace_row(trace: dict[str, Any], when: str, href: str) -> TraceRow:
    """The list's row of one trace as `TraceReader.traces` reads it (`when` it was last received, `href`
    its page)."""
    transactions: list[dict[str, Any]] = trace["transactions"]
    root = root_of(transactions) if transactions else {}
    by_span = {t["span_id"]: t for t in transactions if t.get("span_id")}
    others = sorted((t for t in transactions if t is not root),
                    key=lambda t: (t.get("start") or 0.0, t.get("id") or 0))

    def child(t: dict[str, Any]) -> TraceChild:
        status = t.get("status") or ""
        return TraceChild(_name(t), t.get("op") or "", _duration(t), status or "-", status not in OK_STATUSES,
                          f"{(_depth(t, root, by_span) - 1) * 1.25:g}em")

    own, internal = [t for t in others if not _internal(t)][:MAX_CHILDREN], [t for t in others if _internal(t)][:MAX_INTERNAL]
    count = max(int(trace.get("count") or 0), len(transactions))
    left_out = count - 1 - len(own) - len(internal)  # on the trace's page
    return TraceRow(
        trace_id=trace["trace_id"], key=trace["trace_id"] or f"#{root.get('id')}", name=_name(root),
        op=root.get("op") or "", platform=root.get("platform") or "", duration=_duration(root),
        status=root.get("status") or "-", transactions=f"{count:,}",
        when=when, href=href, children=[child(t) for t in own], internal=[child(t) for t in internal],
        more=f"{plural(left_out, 'more transaction')} in the trace" if left_out > 0 else "",
    )
