"""An event's contexts as labelled key–value tables: in Sentry's order, nested values as dotted keys,
every string as text, and bounded however large or deep the event is."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import sentry_sdk

from app.inbox.reading import InboxReader
from app.ingest.store import InboxStore
from app.presentation import contexts
from app.presentation.contexts import ContextRow, context_rows
from plugin_support.envelopes import SAMPLE_PATHS, SAMPLES
from tests.factories import sentry_sdk_envelopes, store_all

BROWSER_EVENT = {
    "contexts": {
        "trace": {"type": "trace", "trace_id": "a" * 32, "span_id": "b" * 16},
        "shop": {"cart": {"items": 3, "coupon": None}, "express": True},
        "browser": {"type": "browser", "name": "Chrome", "version": "120.0"},
        "culture": {"locale": "fr-FR", "timezone": "Europe/Paris"},
        "os": {"name": "Windows", "version": "10"},
    },
    "user": {"id": "42", "email": "ada@example.com", "geo": {"country_code": "FR"}},
    "request": {"url": "https://shop.example/cart", "method": "POST",
                "headers": [["User-Agent", "Mozilla/5.0"], ["Accept", "*/*"]], "data": {"lines": [1, [2, 3]]}},
}


def tables(rows: list[ContextRow]) -> dict[str, dict[str, str]]:
    found: dict[str, dict[str, str]] = {}
    for row in rows:
        if row.kind == "table":
            found[row.table] = {}
        elif row.kind == "pair":
            found[row.table][row.key] = row.value
    return found


def test_contexts_are_labelled_tables_in_sentrys_order_with_nested_values_flattened() -> None:
    shown = tables(context_rows(BROWSER_EVENT))
    assert list(shown) == ["Browser", "Operating System", "User", "Request", "Trace Details", "Culture", "shop"]
    assert shown["Browser"] == {"name": "Chrome", "version": "120.0"}  # the context's type is not a field
    assert shown["User"] == {"id": "42", "email": "ada@example.com", "geo.country_code": "FR"}
    assert shown["Request"] == {"url": "https://shop.example/cart", "method": "POST", "headers.User-Agent": "Mozilla/5.0",
                                "headers.Accept": "*/*", "data.lines.0": "1", "data.lines.1.0": "2", "data.lines.1.1": "3"}
    assert shown["shop"] == {"cart.items": "3", "cart.coupon": "null", "express": "true"}
    assert context_rows({}) == [] and context_rows({"contexts": "not an object", "user": {}}) == []


def test_the_real_sentry_sdks_contexts(inbox: InboxStore) -> None:
    with sentry_sdk_envelopes(release="shop@1.0") as bodies:
        sentry_sdk.set_user({"id": "42", "email": "ada@example.com"})
        sentry_sdk.set_context("shop", {"cart": {"items": 3}})
        try:
            raise KeyError("cart")
        except KeyError as exc:
            sentry_sdk.capture_exception(exc)
    store_all(inbox, bodies)
    event = InboxReader(inbox.engine).latest_event(1)
    shown = tables(context_rows(event))
    assert list(shown) == ["User", "Trace Details", "shop", "SDK"]
    assert shown["User"] == {"id": "42", "email": "ada@example.com"} and shown["shop"] == {"cart.items": "3"}
    assert len(shown["Trace Details"]["trace_id"]) == 32 and shown["SDK"]["name"] == "sentry.python"


def test_every_value_is_text_and_bounded() -> None:
    deep: dict = {"leaf": "x"}
    for _ in range(10_000):
        deep = {"d": deep}
    event = {
        "contexts": {"wide": {f"k{i}": i for i in range(100_000)}, "deep": deep, "long": {"k" * 10_000: "v" * 10_000},
                     **{f"c{i}": {"n": i} for i in range(500)}},
        "request": {"headers": [["<b>h</b>", "<script>alert(1)</script>"]]},
    }
    rows = context_rows(event)
    assert len(rows) <= contexts.MAX_ROWS and rows[-1] == ContextRow("more", "", value="More contexts not shown")
    shown = tables(rows)
    assert len(shown["wide"]) == contexts.MAX_FIELDS
    assert any(r.kind == "more" and r.table == "wide" for r in rows)
    assert shown["deep"] == {"d.d.d.d.d": "{…}"}
    [(key, value)] = shown["long"].items()
    assert len(key) == contexts.MAX_KEY + 1 and len(value) == contexts.MAX_VALUE + 1
    assert shown["Request"] == {"headers.<b>h</b>": "<script>alert(1)</script>"}  # as text: the page never renders HTML
    assert all(isinstance(v, str) for r in rows for v in (r.kind, r.table, r.key, r.value))


def test_a_few_contexts_over_the_bound_are_counted() -> None:
    rows = context_rows({"contexts": {f"c{i}": {"n": i} for i in range(contexts.MAX_TABLES + 2)}})
    assert rows[-1] == ContextRow("more", "", value="2 more contexts not shown")
    assert len([r for r in rows if r.kind == "table"]) == contexts.MAX_TABLES


@pytest.mark.parametrize("path", SAMPLE_PATHS, ids=lambda p: str(p.relative_to(SAMPLES)))
def test_every_sample_can_be_shown(path: Path) -> None:
    rows = context_rows(json.loads(path.read_text()))
    assert len(rows) <= contexts.MAX_ROWS and all(isinstance(r.value, str) and isinstance(r.key, str) for r in rows)
