"""A trace as a row of /traces (app/presentation/traces.py): named after its page load, the app's own
transactions nested under it by their class and function, Reflex's plumbing folded apart, also for
transactions stored before the plugin named them so; what is left out is counted."""

from __future__ import annotations

from typing import Any

from app.presentation import traces
from app.presentation.event import waterfall_rows
from app.presentation.reflex_events import is_internal, short_name


def stored(name: str, op: str, span_id: str, parent: str = "", start: float = 10.0, row_id: int = 1,
           platform: str = "python", status: str = "ok") -> dict[str, Any]:
    """A transaction as `TraceReader.traces` reads it."""
    return {"id": row_id, "event_id": f"{row_id:032x}", "trace_id": "t" * 32, "name": name, "op": op, "status": status,
            "platform": platform, "start": start, "duration_ms": 12.4, "span_count": 0, "received_at": 1000.0 + row_id,
            "span_id": span_id, "parent_span_id": parent}


def page_view() -> list[dict[str, Any]]:
    """A visit of /traces: the backend's events as the plugin names them, then the browser's page load."""
    return [
        stored("State.hydrate_and_load", "reflex.internal", "b", parent="a", start=10.2, row_id=1),
        stored("OnLoadInternalState.on_load_internal", "reflex.internal", "c", parent="b", start=10.3, row_id=2),
        stored("TracesState.load", "reflex.event", "d", parent="c", start=10.31, row_id=3),
        stored("OnLoadInternalState.set_is_hydrated", "reflex.internal", "e", parent="c", start=10.4, row_id=4),
        stored("/traces/", "pageload", "a", start=10.0, row_id=5, platform="javascript"),
    ]


# The same page view's backend events as stored before the plugin named them (op reflex.event for all).
MODULE_PATHS = ["reflex.state.State.hydrate_and_load", "reflex.state.OnLoadInternalState.on_load_internal",
                "app.components.trace_filters.TracesState.load", "reflex.state.OnLoadInternalState.set_is_hydrated"]


def stored_before() -> list[dict[str, Any]]:
    view = page_view()
    return [*({**t, "op": "reflex.event", "name": name} for t, name in zip(view, MODULE_PATHS, strict=False)), view[-1]]


def row_of(transactions: list[dict[str, Any]], count: int = 0) -> traces.TraceRow:
    return traces.trace_row({"trace_id": "t" * 32, "count": count or len(transactions), "transactions": transactions},
                            "2 s ago", "/trace?id=" + "t" * 32)


def test_a_page_view_reads_as_its_page_load_with_its_on_load_under_it_and_reflexs_plumbing_folded() -> None:
    row = row_of(page_view())
    assert (row.name, row.op, row.platform, row.transactions, row.when) == (
        "/traces/", "pageload", "javascript", "5", "2 s ago")
    assert [(c.name, c.op, c.indent) for c in row.children] == [("TracesState.load", "reflex.event", "0em")]
    assert [c.name for c in row.internal] == [
        "State.hydrate_and_load", "OnLoadInternalState.on_load_internal", "OnLoadInternalState.set_is_hydrated"]
    assert row.more == "" and row.key == "t" * 32


def test_transactions_stored_under_their_module_path_read_the_same() -> None:
    row = row_of(stored_before())
    assert row.name == "/traces/" and [c.name for c in row.children] == ["TracesState.load"]
    assert [c.name for c in row.internal] == [
        "State.hydrate_and_load", "OnLoadInternalState.on_load_internal", "OnLoadInternalState.set_is_hydrated"]
    for name, op, short, internal in [
        ("app.console.state.IssueState.load", "reflex.event", "IssueState.load", False),
        ("reflex.state.UpdateVarsInternalState.update_vars_internal", "reflex.event",
         "UpdateVarsInternalState.update_vars_internal", True),
        ("State.hydrate_and_load", "reflex.internal", "State.hydrate_and_load", True),
        ("reflex.state.ish", "http.server", "reflex.state.ish", False),  # not a Reflex event: as sent
        ("GET /api/x.y.z", "http.server", "GET /api/x.y.z", False),
    ]:
        assert (short_name(name, op), is_internal(name, op)) == (short, internal), name


def test_before_the_page_load_arrives_the_trace_is_named_after_what_started_it() -> None:
    row = row_of(page_view()[:-1])  # the browser sends its page load once the page is idle
    assert row.name == "State.hydrate_and_load" and [c.name for c in row.children] == ["TracesState.load"]


def test_clicks_nest_under_the_page_load_and_a_long_trace_says_what_it_left_out() -> None:
    clicks = [stored("/try/", "pageload", "p", start=1.0, row_id=1, platform="javascript")]
    for n in range(traces.MAX_CHILDREN + 2):  # the browser's span for each click, the backend's handler under it
        clicks += [stored("TryState.slow_work", "ui.reflex.event", f"u{n}", start=2.0 + n, row_id=10 + 2 * n,
                          platform="javascript"),
                   stored("TryState.slow_work", "reflex.event", f"s{n}", parent=f"u{n}", start=2.1 + n, row_id=11 + 2 * n,
                          status="internal_error" if n == 0 else "ok")]
    row = row_of(clicks, count=40)
    assert row.name == "/try/" and len(row.children) == traces.MAX_CHILDREN
    assert [(c.op, c.indent, c.failed) for c in row.children[:3]] == [
        ("ui.reflex.event", "0em", False), ("reflex.event", "1.25em", True), ("ui.reflex.event", "0em", False)]
    assert row.more == f"{40 - 1 - traces.MAX_CHILDREN} more transactions in the trace" and row.internal == []


def test_a_transaction_without_a_trace_id_is_a_row_of_its_own_key() -> None:
    row = traces.trace_row({"trace_id": "", "count": 1, "transactions": [stored("job", "task", "", row_id=7)]}, "now", "")
    assert (row.name, row.key, row.children, row.internal) == ("job", "#7", [], [])


def test_the_trace_pages_waterfall_names_handlers_short_and_draws_reflexs_plumbing_as_spans() -> None:
    sent = [{"transaction": t["name"], "start_timestamp": t["start"], "timestamp": t["start"] + 0.01,
             "contexts": {"trace": {"span_id": t["span_id"], "parent_span_id": t["parent_span_id"], "op": t["op"]}}}
            for t in stored_before()]
    assert [(r["label"], r["kind"], r["indent"]) for r in waterfall_rows(sent)] == [
        ("/traces/", "transaction", "0em"), ("State.hydrate_and_load", "internal", "1.25em"),
        ("OnLoadInternalState.on_load_internal", "internal", "2.5em"), ("TracesState.load", "transaction", "3.75em"),
        ("OnLoadInternalState.set_is_hydrated", "internal", "3.75em"),
    ]
