"""/traces lists traces, not transactions (`TraceReader.traces`), on SQLite and PostgreSQL: a console
page view (the browser's page load and the backend's Reflex events of its trace) is one trace with
all its transactions, earliest first; the trace with the transaction received last comes first; a
search or a filter lists every trace with a transaction it matches, whole; a transaction sent without
a trace id is a trace of its own; a long trace says how many it has and reads the earliest."""

from __future__ import annotations

import json
import uuid

import pytest

from app.inbox import trace_reading
from app.inbox.trace_reading import TraceReader
from app.ingest.store import InboxStore
from plugin_support.envelopes import build
from reflex_lookout.dsn import Dsn
from tests.environment import LOCAL_DSN

SHOP_DSN = "http://shopkey@localhost/2"
PAGE_VIEW, CHECKOUT = uuid.uuid4().hex, uuid.uuid4().hex


def transaction(name: str, op: str, trace_id: str, span_id: str, parent: str = "", start: float = 10.0,
                platform: str = "python") -> bytes:
    trace = {"trace_id": trace_id, "span_id": span_id, "op": op, "status": "ok", **({"parent_span_id": parent} if parent else {})}
    return json.dumps({"event_id": uuid.uuid4().hex, "type": "transaction", "transaction": name, "platform": platform,
                       "start_timestamp": start, "timestamp": start + 0.01, "contexts": {"trace": trace}}).encode()


def send(inbox: InboxStore, dsn: str, *transactions: bytes) -> None:
    for payload in transactions:  # one envelope each, in this order: the ids follow it
        inbox.ingest_envelope(build(dsn, [("transaction", payload)]))


def page_view(trace_id: str) -> list[bytes]:
    """As the built app sends them for a visit of /traces: the backend's events first (their
    transactions end first), the browser's page load once the page is idle."""
    return [
        transaction("State.hydrate_and_load", "reflex.internal", trace_id, "b" * 16, parent="a" * 16, start=10.2),
        transaction("OnLoadInternalState.on_load_internal", "reflex.internal", trace_id, "c" * 16, parent="b" * 16, start=10.3),
        transaction("TracesState.load", "reflex.event", trace_id, "d" * 16, parent="c" * 16, start=10.31),
        transaction("OnLoadInternalState.set_is_hydrated", "reflex.internal", trace_id, "e" * 16, parent="c" * 16, start=10.4),
        transaction("/traces/", "pageload", trace_id, "a" * 16, start=10.0, platform="javascript"),
    ]


@pytest.fixture
def reader(inbox: InboxStore) -> TraceReader:
    inbox.ensure_project(Dsn.parse(SHOP_DSN), name="Shop")
    send(inbox, LOCAL_DSN, *page_view(PAGE_VIEW))
    send(inbox, SHOP_DSN, transaction("POST /api/checkout", "http.server", CHECKOUT, "f" * 16))
    send(inbox, LOCAL_DSN, transaction("no trace id", "task", "", "1" * 16), transaction("nor this", "task", "", "2" * 16))
    return TraceReader(inbox.engine)


def listed(reader: TraceReader, search: str = "", **filters: object) -> list[tuple[str, list[str]]]:
    found, total = reader.traces(50, 0, search, **filters)  # type: ignore[arg-type]
    assert total == len(found)
    return [(trace["trace_id"], [t["name"] for t in trace["transactions"]]) for trace in found]


def test_a_page_view_is_one_trace_with_its_transactions_earliest_first(reader: TraceReader) -> None:
    assert listed(reader) == [
        ("", ["nor this"]), ("", ["no trace id"]),  # received last: first
        (CHECKOUT, ["POST /api/checkout"]),
        (PAGE_VIEW, ["/traces/", "State.hydrate_and_load", "OnLoadInternalState.on_load_internal", "TracesState.load",
                     "OnLoadInternalState.set_is_hydrated"]),
    ]
    found, total = reader.traces(2, 1)
    assert total == 4 and [t["transactions"][0]["name"] for t in found] == ["no trace id", "POST /api/checkout"]
    [view] = [t for t in reader.traces()[0] if t["trace_id"] == PAGE_VIEW]
    assert view["count"] == 5
    load = next(t for t in view["transactions"] if t["name"] == "TracesState.load")
    assert (load["span_id"], load["parent_span_id"], load["op"]) == ("d" * 16, "c" * 16, "reflex.event")


def test_a_search_or_filter_lists_each_trace_it_matches_whole(reader: TraceReader) -> None:
    assert listed(reader, "TracesState") == [(PAGE_VIEW, ["/traces/", "State.hydrate_and_load",
                                                          "OnLoadInternalState.on_load_internal", "TracesState.load",
                                                          "OnLoadInternalState.set_is_hydrated"])]
    assert listed(reader, project_id=2) == [(CHECKOUT, ["POST /api/checkout"])]
    assert listed(reader, "transaction:nothing*") == [] and reader.traces(search="transaction:nothing*") == ([], 0)


def test_a_long_trace_says_how_many_it_has_and_reads_the_earliest(
    inbox: InboxStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(trace_reading, "TRACE_TRANSACTIONS", 3)
    busy = uuid.uuid4().hex
    send(inbox, LOCAL_DSN, *[transaction(f"click {n}", "ui.action", busy, f"{n:016x}", start=100.0 - n) for n in range(5)])
    [trace], total = TraceReader(inbox.engine).traces()
    assert total == 1 and trace["count"] == 5
    assert [t["name"] for t in trace["transactions"]] == ["click 4", "click 3", "click 2"]
