"""The /traces and /logs pages' filters as any websocket client could call their handlers, on a real
SQLite file: everything shows by default; the URL names the project, environment and release; a
select's handler goes to its URL and takes only what the select offers; the traces search reads the
triage syntax and says why when it cannot."""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy

from app import routes
from app.components.trace_filters import ANY_ENVIRONMENT, ANY_PROJECT, ANY_RELEASE, TraceFilters, filters_url
from app.console.state import REFUSED
from app.ingest.store import InboxStore
from app.pages.logs import LogsState
from app.pages.traces import TracesState
from app.projects.registry import Projects
from app.settings import SETTINGS
from plugin_support.envelopes import build
from tests.console.clients import LOOPBACK, MARKER, STRANGER, client_state, console_database, shown

ROUTES: dict[type[TraceFilters], str] = {TracesState: routes.TRACES, LogsState: routes.LOGS}
HOSTILE: list[object] = ["", "x" * 1_000_000, None, True, -1, 2**70, [1], {"id": 1}, "production' or '1'='1"]


@pytest.fixture
def engine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[sqlalchemy.Engine]:
    """The console's database (tests/console/clients.py: the marker's transaction and log line, of no
    environment or release), with a transaction and a log line "checkout" of the project "Shop" in
    production, shop@2.0, and "signup" of the local project in staging, web@1.1."""
    for eng in console_database(tmp_path, monkeypatch):
        shop = Projects(eng).add("Shop")
        inbox = InboxStore(eng)
        for name, dsn, environment, release in (("signup", str(SETTINGS.local_dsn), "staging", "web@1.1"),
                                                ("checkout", shop.dsn("localhost"), "production", "shop@2.0")):
            transaction = {"event_id": uuid.uuid4().hex, "type": "transaction", "transaction": name, "start_timestamp": 1.0,
                           "timestamp": 2.0, "environment": environment, "release": release,
                           "contexts": {"trace": {"trace_id": uuid.uuid4().hex, "span_id": "b" * 16, "op": "http.server"}}}
            attributes = {"sentry.environment": {"value": environment, "type": "string"},
                          "sentry.release": {"value": release, "type": "string"}}
            logs = {"items": [{"timestamp": 1.0, "level": "info", "body": name, "attributes": attributes}]}
            inbox.ingest_envelope(build(dsn, [("transaction", json.dumps(transaction).encode()),
                                              ("log", json.dumps(logs).encode())]))
        yield eng


def opened(state_class: type[TraceFilters], who: dict[str, object], path: str) -> TraceFilters:
    state = client_state(state_class, who, path)
    call(state, "load")
    return state


def call(state: TraceFilters, name: str, *args: object) -> object:
    async def go() -> object:
        result = type(state).event_handlers[name].fn(state, *args)
        return await result if hasattr(result, "__await__") else result
    return asyncio.run(go())


def redirected_to(spec: object) -> str:
    """The path of an `rx.redirect` a handler returned."""
    return dict((str(name), value._var_value) for name, value in spec.args)["path"]  # type: ignore[attr-defined]


def listed(state: TraceFilters) -> list[str]:
    if isinstance(state, TracesState):
        return sorted(row.name for row in state.rows)  # a trace each, named after its root
    assert isinstance(state, LogsState)
    return sorted(row["body"] for row in state.rows)


@pytest.mark.parametrize("state_class", [TracesState, LogsState])
def test_everything_shows_by_default_and_the_url_narrows(engine: sqlalchemy.Engine, state_class: type[TraceFilters]) -> None:
    route = ROUTES[state_class]
    everything = opened(state_class, LOOPBACK, route)
    assert listed(everything) == sorted(["checkout", "signup", MARKER])
    assert everything.project_list == [ANY_PROJECT, "1 · Lookout", "2 · Shop"]
    assert everything.environment_list == [ANY_ENVIRONMENT, "production", "staging"]  # newest first
    assert everything.release_list == [ANY_RELEASE, "shop@2.0", "web@1.1"]
    assert (everything.project_choice, everything.environment_choice, everything.release_choice) == (
        ANY_PROJECT, ANY_ENVIRONMENT, ANY_RELEASE)
    assert listed(opened(state_class, LOOPBACK, f"{route}?project=1")) == sorted(["signup", MARKER])
    assert listed(opened(state_class, LOOPBACK, f"{route}?environment=production")) == ["checkout"]
    assert listed(opened(state_class, LOOPBACK, f"{route}?project=1&release=shop@2.0")) == []
    narrowed = opened(state_class, LOOPBACK, f"{route}?project=2&environment=production&release=shop@2.0")
    assert listed(narrowed) == ["checkout"]
    assert (narrowed.project_choice, narrowed.environment_choice, narrowed.release_choice) == (
        "2 · Shop", "production", "shop@2.0")
    # A link may name what the lists do not offer (seen long ago, or never): it is offered, as chosen.
    linked = opened(state_class, LOOPBACK, f"{route}?environment=qa&project=9")
    assert listed(linked) == [] and linked.environment_list == [ANY_ENVIRONMENT, "qa", "production", "staging"]
    assert linked.project_choice == "9 · (nothing stored)" and linked.project_list[1] == "9 · (nothing stored)"
    # What is no filter at all is none.
    assert listed(opened(state_class, LOOPBACK, f"{route}?project=x1&environment=&release=")) == listed(everything)


@pytest.mark.parametrize("state_class", [TracesState, LogsState])
def test_a_select_goes_to_its_url_with_only_what_it_offers(engine: sqlalchemy.Engine, state_class: type[TraceFilters]) -> None:
    route = ROUTES[state_class]
    state = opened(state_class, LOOPBACK, f"{route}?release=web@1.1")
    assert redirected_to(call(state, "set_environment", "staging")) == filters_url(route, "", "staging", "web@1.1")
    assert redirected_to(call(state, "set_project", "2 · Shop")) == f"{route}?project=2&release=web%401.1"
    assert redirected_to(call(state, "set_release", ANY_RELEASE)) == route
    assert redirected_to(call(state, "set_environment", ANY_ENVIRONMENT)) == f"{route}?release=web%401.1"
    for argument in HOSTILE:  # nothing offered: no filter of that kind
        for name in ("set_project", "set_environment", "set_release"):
            target = redirected_to(call(state, name, argument))
            assert target in (route, f"{route}?release=web%401.1"), (name, argument, target)


@pytest.mark.parametrize("state_class", [TracesState, LogsState])
def test_a_client_elsewhere_is_refused_and_sent_nowhere(engine: sqlalchemy.Engine, state_class: type[TraceFilters]) -> None:
    stranger = opened(state_class, STRANGER, f"{ROUTES[state_class]}?environment=production")
    assert stranger.refused == REFUSED
    for name in ("set_project", "set_environment", "set_release"):
        for argument in ["production", "2 · Shop", *HOSTILE[:3]]:
            assert call(stranger, name, argument) is None
    assert MARKER not in shown(stranger) and "shop@2.0" not in shown(stranger) and "Shop" not in shown(stranger)


def test_the_traces_search_reads_the_triage_syntax_and_says_why_it_cannot(engine: sqlalchemy.Engine) -> None:
    state = opened(TracesState, LOOPBACK, "/traces?project=2")
    call(state, "set_search", "environment:production")
    assert listed(state) == ["checkout"] and state.problem == ""
    call(state, "set_search", "project:lookout")  # and the project of the URL: none is both
    assert listed(state) == [] and state.problem == ""
    call(state, "set_search", "level:error")
    assert state.problem.startswith('"level:" is not a filter of transactions') and state.rows == [] and state.total == 0
    assert state.release_list == [ANY_RELEASE, "shop@2.0", "web@1.1"]  # the selects stay
    call(state, "set_search", "check")
    assert listed(state) == ["checkout"] and state.problem == "" and state.total == 1
