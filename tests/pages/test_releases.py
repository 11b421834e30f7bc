"""The /releases page's handlers as any websocket client could call them, on SQLite and PostgreSQL, with
sessions the real sentry-sdk made (tests/releases/sessions.py): this machine sees one row per project and
release, last seen first, with its figures as the page shows them (checked against a hand count), a
link to its chart and one to its issues; the URL narrows the rows to a project and names the charted
release; a hostile version is text on the page and the exact value of its issues search; a client
elsewhere sees nothing; hostile URLs and choices change nothing."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from urllib.parse import parse_qs, urlsplit

import pytest

from app.components.trace_filters import ANY_PROJECT
from app.console import state as console
from app.console.state import REFUSED
from app.inbox.search import IssueSearch, TagTerm, parse
from app.ingest.store import InboxStore
from app.pages import releases
from app.pages.releases_state import ReleasesState, percent, release_search, releases_url
from app.projects.registry import Projects
from plugin_support.envelopes import build
from tests.console.clients import LOOPBACK, STRANGER, call, client_state, opened, shown
from tests.environment import LOCAL_DSN
from tests.factories import store_all
from tests.releases.sessions import ABNORMAL, CRASHED, ERRORED, HEALTHY, Session, run_sessions

# Ten single sessions of four users (and two without one), and six requests: by hand, 16 started,
# 3 crashed (2 + a request), 3 errored (2 + a request), 1 abnormal; users ada, bob, cy, dee, bob crashed.
SESSIONS = [Session(HEALTHY, "ada"), Session(HEALTHY, "ada"), Session(ERRORED, "bob"), Session(CRASHED, "bob"),
            Session(HEALTHY, "cy"), Session(ABNORMAL, "cy"), Session(HEALTHY, "dee"), Session(CRASHED),
            Session(ERRORED), Session(HEALTHY, "dee")]
REQUESTS = [HEALTHY, HEALTHY, HEALTHY, ERRORED, CRASHED, HEALTHY]
HOSTILE_VERSION = '<script>alert(1)</script> "shop" \\ @2.0+build 7 & x=1'
HOSTILE: list[object] = ["", "x" * 1_000_000, None, True, -1, 2**70, [1], {"id": 1}, "1' or '1'='1", "7d"]


@pytest.fixture
def shop(inbox: InboxStore) -> Iterator[InboxStore]:
    """The inbox, as the console's pages read it."""
    console.use_database(inbox.engine)
    yield inbox
    console.use_database(None)


def page_state(path: str, who: dict[str, object] = LOOPBACK) -> ReleasesState:
    state = opened(ReleasesState, who, path)
    assert isinstance(state, ReleasesState)
    return state


def redirected_to(state: ReleasesState, choice: object) -> str | None:
    """Where `set_project(choice)` sends the client (None: nowhere)."""
    spec = ReleasesState.event_handlers["set_project"].fn(state, choice)
    return None if spec is None else dict((str(name), value._var_value) for name, value in spec.args)["path"]


def query_of(url: str) -> dict[str, str]:
    parts = urlsplit(url)
    return {key: value for key, [value] in parse_qs(parts.query, keep_blank_values=True).items()}


def test_percentages_have_one_decimal_never_read_100_unless_all_and_none_is_a_dash() -> None:
    assert [percent(v) for v in (None, 100.0, 99.5, 81.25, 99.96, 99.94, 0.0, 75.0, 5.88235, 0.04, 1e-9)] == [
        "—", "100 %", "99.5 %", "81.3 %", "99.9 %", "99.9 %", "0 %", "75 %", "5.9 %", "0 %", "0 %"]


def test_each_release_is_a_row_with_its_figures_last_seen_first(shop: InboxStore) -> None:
    run_sessions(shop, SESSIONS, requests=REQUESTS, release="shop@1.0")
    state = page_state("/releases")
    assert state.refused == "" and state.searched
    [row] = state.rows
    assert (row["project_id"], row["project"], row["version"]) == ("1", "Lookout", "shop@1.0")
    assert (row["sessions"], row["errored"], row["abnormal"], row["crashed"], row["users"]) == ("16", "3", "1", "3", "4")
    assert (row["crash_free_sessions"], row["crash_free_users"], row["adoption"]) == ("81.3 %", "75 %", "100 %")
    assert row["new_issues"] == "1"  # "checkout failed", handled or not, is one issue
    assert row["first_seen"].endswith(" ago") and row["last_seen"].endswith(" ago")
    assert row["last_seen_at"].startswith("20") and row["last_seen_at"].endswith(" UTC")
    assert row["chart"] == "/releases?project=1&release=shop%401.0"
    assert query_of(row["issues"]) == {"query": 'release:"shop@1.0"', "project": "1"}
    assert urlsplit(row["issues"]).path == "/issues"
    run_sessions(shop, [Session(CRASHED, "ada")], release="shop@1.1")
    newer, older = page_state("/releases").rows
    assert (newer["version"], older["version"]) == ("shop@1.1", "shop@1.0")
    assert (newer["crash_free_sessions"], newer["crash_free_users"], newer["new_issues"]) == ("0 %", "0 %", "0")
    assert (newer["adoption"], older["adoption"]) == ("5.9 %", "94.1 %")  # 1 and 16 of the project's 17 today


def test_a_release_only_events_name_has_no_figures_rather_than_perfect_ones(shop: InboxStore) -> None:
    event = {"event_id": uuid.uuid4().hex, "level": "error", "platform": "python", "release": "web@2.0",
             "exception": {"values": [{"type": "ValueError", "value": "no session"}]}}
    shop.ingest_envelope(build(LOCAL_DSN, [("event", json.dumps(event).encode())]))
    [row] = page_state("/releases").rows
    assert (row["version"], row["sessions"], row["users"], row["new_issues"]) == ("web@2.0", "0", "0", "1")
    assert (row["crash_free_sessions"], row["crash_free_users"], row["adoption"]) == ("—", "—", "—")
    assert row["last_seen"].endswith(" ago")


def test_the_url_narrows_to_a_project_and_the_select_goes_to_its_url(shop: InboxStore) -> None:
    web = Projects(shop.engine).add("Web")
    bodies = run_sessions(shop, [Session(HEALTHY, "ada"), Session(CRASHED, "bob")], release="web@1.0")
    store_all(shop, bodies, dsn=web.dsn("localhost"))  # the same release in a second project
    everything = page_state("/releases")
    assert sorted((row["project"], row["version"]) for row in everything.rows) == [("Lookout", "web@1.0"),
                                                                                  ("Web", "web@1.0")]
    assert everything.project_list == [ANY_PROJECT, "1 · Lookout", f"{web.id} · Web"]
    assert everything.project_choice == ANY_PROJECT
    narrowed = page_state(f"/releases?project={web.id}")
    assert [(row["project"], row["sessions"]) for row in narrowed.rows] == [("Web", "2")]
    assert narrowed.project_choice == f"{web.id} · Web"
    nothing = page_state("/releases?project=77")
    assert nothing.rows == [] and nothing.searched and nothing.project_choice == "77 · (no such project)"
    assert redirected_to(narrowed, "1 · Lookout") == "/releases?project=1"
    assert redirected_to(narrowed, ANY_PROJECT) == "/releases"
    for choice in HOSTILE:  # only what the select offers
        assert redirected_to(narrowed, choice) == "/releases"


def test_a_releases_version_opens_its_chart_by_hour_or_by_day(shop: InboxStore) -> None:
    run_sessions(shop, [Session(HEALTHY), Session(CRASHED), Session(ERRORED)], requests=[HEALTHY])
    [row] = page_state("/releases").rows
    state = page_state(row["chart"])
    assert (state.release, state.charted, state.chart_project) == ("shop@1.0", True, "Lookout")
    assert state.chart_total == "4 sessions started" and state.close_href == "/releases?project=1"
    assert len(state.chart) in (24, 25) and all(p["label"].endswith(":00") for p in state.chart)
    assert {k: v for k, v in state.chart[-1].items() if k != "label"} == {
        "healthy": 2, "errored": 1, "abnormal": 0, "crashed": 1}
    call(state, "show_period", "14d")
    assert state.period == "14d" and len(state.chart) in (14, 15)
    assert all(len(p["label"]) == 5 and p["label"][2] == "-" for p in state.chart)  # MM-DD
    assert state.chart[-1]["crashed"] == 1
    for period in HOSTILE:  # only the periods the switch offers
        call(state, "show_period", period)
        assert state.period == "14d"
    missing = page_state("/releases?release=shop%409.9")
    assert (missing.release, missing.charted, missing.chart) == ("shop@9.9", False, [])
    assert len(missing.rows) == 1  # the list stays


def test_a_hostile_version_is_text_and_the_exact_value_of_its_issues_search(shop: InboxStore) -> None:
    run_sessions(shop, [Session(CRASHED, "ada"), Session(HEALTHY, "bob")], release=HOSTILE_VERSION)
    [row] = page_state("/releases").rows
    assert row["version"] == HOSTILE_VERSION and row["crash_free_sessions"] == "50 %"
    search = query_of(row["issues"])
    assert search["project"] == "1" and search["query"] == release_search(HOSTILE_VERSION)
    assert parse(search["query"]).terms == (TagTerm("release", (HOSTILE_VERSION,)),)
    found = IssueSearch(shop.engine).search(search["query"], project=1)
    assert [issue["title"] for issue in found.issues] == ["RuntimeError: checkout failed"]
    assert IssueSearch(shop.engine).search(release_search("shop@1.0"), project=1).issues == []
    assert query_of(row["chart"]) == {"project": "1", "release": HOSTILE_VERSION}
    charted = page_state(row["chart"])
    assert (charted.release, charted.charted, charted.chart[-1]["crashed"]) == (HOSTILE_VERSION, True, 1)
    assert releases_url("1", HOSTILE_VERSION) == row["chart"]


def test_hostile_urls_show_every_project_and_no_chart(shop: InboxStore) -> None:
    run_sessions(shop, [Session(HEALTHY, "ada")])
    for value in ("<b>1</b>", "-1", "1.5", "9" * 40, "١", "1%0A2"):  # (an Arabic-Indic one: a digit to str.isdigit)
        state = page_state(f"/releases?project={value}")
        assert len(state.rows) == 1 and state.project_choice == ANY_PROJECT, value
    long = page_state(f"/releases?release={'x' * 100_000}")
    assert len(long.release) == 200 and not long.charted and len(long.rows) == 1


def test_no_releases_is_the_empty_state(shop: InboxStore) -> None:
    state = page_state("/releases")
    assert state.rows == [] and state.searched and state.refused == ""


def test_a_client_elsewhere_sees_nothing(shop: InboxStore) -> None:
    run_sessions(shop, [Session(CRASHED, "ada")], release="secret@1.0")
    state = page_state("/releases?project=1&release=secret%401.0", STRANGER)
    assert state.refused == REFUSED and state.rows == [] and not state.searched and state.chart == []
    assert "secret@1.0" not in shown(state)
    call(state, "show_period", "14d")
    assert state.rows == [] and state.chart == [] and "secret@1.0" not in shown(state)
    assert redirected_to(client_state(ReleasesState, STRANGER, "/releases"), "1 · Lookout") is None  # type: ignore[arg-type]


def test_versions_and_figures_are_text_on_the_page() -> None:
    compiled = str(releases.page())
    assert "dangerouslySetInnerHTML" not in compiled
    for element in ("releases", "releases-empty", "release-row", "release-version", "release-issues",
                    "release-crash-free-sessions", "release-crash-free-users", "release-sessions", "release-adoption",
                    "release-new-issues", "release-chart"):
        assert element in compiled, element


def test_the_release_search_escapes_only_what_the_grammar_reads_in_quotes() -> None:
    for version in ('a"b', "a\\b", 'a\\"b', "a b", "x\\", '"', "release:x", "1.0 is:resolved"):
        assert parse(release_search(version)).terms == (TagTerm("release", (version,)),), version
