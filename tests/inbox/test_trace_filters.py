"""/traces and /logs narrowed by project, environment and release, on SQLite and PostgreSQL: every
transaction and log line shows unless a filter is given; each filter and their combination; the
triage search's syntax where it applies to transactions; what the selects offer."""

from __future__ import annotations

import json
import uuid

import pytest

from app.inbox.search import SearchError
from app.inbox.trace_reading import FACET_VALUES, TraceReader
from app.ingest.store import InboxStore
from plugin_support.envelopes import build
from reflex_lookout.dsn import Dsn
from tests.environment import LOCAL_DSN

SHOP_DSN = "http://shopkey@localhost/2"
# (DSN, environment, release) of each transaction and log line, in the order they arrive; the last sends neither.
SENT = [(LOCAL_DSN, "production", "web@1.0"), (LOCAL_DSN, "staging", "web@1.1"),
        (SHOP_DSN, "production", "shop@2.0"), (SHOP_DSN, "", "")]


def transaction(name: str, environment: str, release: str) -> bytes:
    event = {"event_id": uuid.uuid4().hex, "type": "transaction", "transaction": name, "platform": "python",
             "start_timestamp": 1.0, "timestamp": 1.5,
             "contexts": {"trace": {"trace_id": uuid.uuid4().hex, "span_id": uuid.uuid4().hex[:16], "op": "http.server"}}}
    event.update({k: v for k, v in (("environment", environment), ("release", release)) if v})
    return json.dumps(event).encode()


def log_item(body: str, environment: str, release: str) -> bytes:
    """A log item as sentry-sdk and the browser SDK send it: attributes as {"value", "type"}."""
    attributes = {name: {"value": value, "type": "string"}
                  for name, value in (("sentry.environment", environment), ("sentry.release", release)) if value}
    return json.dumps({"items": [{"timestamp": 1.0, "level": "info", "body": body, "attributes": attributes}]}).encode()


@pytest.fixture
def reader(inbox: InboxStore) -> TraceReader:
    inbox.ensure_project(Dsn.parse(SHOP_DSN), name="Shop")
    for dsn, environment, release in SENT:
        name = f"/{dsn[-1]}/{environment or '-'}/{release or '-'}"
        inbox.ingest_envelope(build(dsn, [("transaction", transaction(name, environment, release)),
                                          ("log", log_item(name, environment, release))]))
    return TraceReader(inbox.engine)


def names(reader: TraceReader, search: str = "", **filters: object) -> list[str]:
    found, total = reader.transactions(50, 0, search, **filters)  # type: ignore[arg-type]
    assert total == len(found)
    return sorted(t["name"] for t in found)


def bodies(reader: TraceReader, **filters: object) -> list[str]:
    return sorted(line["body"] for line in reader.logs(50, "", "", **filters))  # type: ignore[arg-type]


EVERYTHING = ["/1/production/web@1.0", "/1/staging/web@1.1", "/2/-/-", "/2/production/shop@2.0"]
FILTERED = [
    ({}, EVERYTHING),
    ({"project_id": 2}, ["/2/-/-", "/2/production/shop@2.0"]),
    ({"environment": "production"}, ["/1/production/web@1.0", "/2/production/shop@2.0"]),
    ({"release": "web@1.1"}, ["/1/staging/web@1.1"]),
    ({"project_id": 1, "environment": "production"}, ["/1/production/web@1.0"]),
    ({"project_id": 2, "environment": "production", "release": "shop@2.0"}, ["/2/production/shop@2.0"]),
    ({"project_id": 2, "environment": "staging"}, []),
    ({"environment": "Production"}, []),  # exactly, as sent
    ({"project_id": None, "environment": "", "release": ""}, EVERYTHING),  # "": any
]


@pytest.mark.parametrize(("filters", "expected"), FILTERED)
def test_each_filter_and_their_combination_narrow_transactions_and_log_lines(
        reader: TraceReader, filters: dict[str, object], expected: list[str]) -> None:
    assert names(reader, **filters) == expected
    assert bodies(reader, **filters) == expected


def test_the_level_and_the_search_of_log_lines_still_apply_with_the_filters(reader: TraceReader) -> None:
    assert [line["body"] for line in reader.logs(50, "info", "/1/", environment="staging")] == ["/1/staging/web@1.1"]
    assert reader.logs(50, "error", "", environment="staging") == []


SEARCHES = [
    ("environment:production", ["/1/production/web@1.0", "/2/production/shop@2.0"]),
    ("!environment:production", ["/1/staging/web@1.1", "/2/-/-"]),
    ("environment:[staging, production] release:web@*", ["/1/production/web@1.0", "/1/staging/web@1.1"]),
    ("project:shop", ["/2/-/-", "/2/production/shop@2.0"]),  # a project's name, in any case
    ("project:2 has:release", ["/2/production/shop@2.0"]),  # or its id
    ("project:Lookout !release:web@1.0", ["/1/staging/web@1.1"]),
    ('environment:""', ["/2/-/-"]),
    ("!has:environment", ["/2/-/-"]),
    ("transaction:/1/* staging", ["/1/staging/web@1.1"]),
    ("PRODUCTION", ["/1/production/web@1.0", "/2/production/shop@2.0"]),  # text: in the name or op, any case
    ("http.server", EVERYTHING),
    ('"web@1.0"', ["/1/production/web@1.0"]),
    ("2", ["/2/-/-", "/2/production/shop@2.0"]),  # one bare word (an issue id, to the issue search) is text
    ("%", []),  # matches itself
]


@pytest.mark.parametrize(("search", "expected"), SEARCHES)
def test_the_traces_search_reads_the_triage_syntax_where_it_applies(reader: TraceReader, search: str,
                                                                    expected: list[str]) -> None:
    assert names(reader, search) == expected


def test_the_search_and_the_filters_both_apply(reader: TraceReader) -> None:
    assert names(reader, "environment:production", project_id=1) == ["/1/production/web@1.0"]
    assert names(reader, "project:shop", release="web@1.0") == []


@pytest.mark.parametrize(("search", "named"), [
    ("level:error", '"level:"'), ("is:unresolved", '"is:"'), ("timesSeen:>3", '"timesSeen:"'),
    ("has:browser", '"has:browser"'), ("app.tasks:run", '"app.tasks:"'),
])
def test_a_filter_transactions_do_not_have_is_refused_with_a_sentence(reader: TraceReader, search: str, named: str) -> None:
    with pytest.raises(SearchError, match=f"^{named} is not a filter of transactions"):
        reader.transactions(50, 0, search)


def test_what_does_not_parse_or_needs_issues_is_refused(reader: TraceReader) -> None:
    with pytest.raises(SearchError, match="never closed"):
        reader.transactions(50, 0, "release:[1.0")
    with pytest.raises(SearchError, match="release:latest"):
        reader.transactions(50, 0, "release:latest")
    assert names(reader, '"app.tasks:run"') == []  # quoted, text with a colon is text


def test_facets_list_the_projects_environments_and_releases_seen_newest_first(reader: TraceReader) -> None:
    expected = {"project": ["1 · Lookout", "2 · Shop"], "environment": ["production", "staging"],
                "release": ["shop@2.0", "web@1.1", "web@1.0"]}
    assert reader.facets("transactions") == reader.facets("logs") == expected


def test_facets_offer_the_most_recent_values_only(inbox: InboxStore) -> None:
    releases = [f"r{n}" for n in range(FACET_VALUES + 10)]
    inbox.ingest_envelope(build(LOCAL_DSN, [("log", json.dumps({"items": [
        {"timestamp": 1.0, "level": "info", "body": "b", "attributes": {"sentry.release": {"value": r, "type": "string"}}}
        for r in [*releases, "r0"]]}).encode())]))  # r0 again, last
    found = TraceReader(inbox.engine).facets("logs")
    assert found["release"] == ["r0", *reversed(releases[-(FACET_VALUES - 1):])]
    assert found["environment"] == [] and TraceReader(inbox.engine).facets("transactions")["project"] == []
