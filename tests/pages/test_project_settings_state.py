"""The /settings page's handlers as any websocket client could call them, on a real SQLite file: a
client elsewhere is refused and sees nothing, a viewer sees the options and counts and changes
nothing, a maintainer changes the filters, the scrubbing options and the quotas; a list past its
bound, a bad address or a quota that is no whole number in bounds gets a sentence and stores nothing;
hostile arguments are ignored, never a crash."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy
from sqlalchemy import insert, select

from app import db
from app.console import state as console
from app.console.state import REFUSED
from app.inbox.tables import COUNTS
from app.ingest.store import InboxStore
from app.pages.project_settings_state import MAINTAINERS_ONLY, NO_PROJECT, ProjectOptionsState
from app.projects.filter_options import LABELS, FilterOptions
from app.projects.options_store import FILTERED, ProjectOptionsStore
from app.projects.quota_options import QuotaOptions
from app.projects.registry import Projects
from app.projects.sourcemap_options import SourceMapOptions
from app.projects.tables import PROJECT_OPTIONS
from reflex_lookout.dsn import Dsn
from reflex_lookout.scrubbing.settings import ScrubbingSettings
from tests.console import clients
from tests.console.clients import LOOPBACK, STRANGER, call, shown, signed_in, with_users
from tests.environment import LOCAL_DSN

BILLING = "2 · <b>Billing</b>"
HOSTILE: list[object] = ["", "x" * 1_000_000, None, True, -1, 2**70, 3.5, [1], {"name": "localhost"}]


@pytest.fixture
def engine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[sqlalchemy.Engine]:
    """Projects 1 and 2 "<b>Billing</b>" (whose web-crawler filter dropped 7 events), a viewer and a
    maintainer signed in from elsewhere; the page reads through `console.database()`."""
    eng = db.engine(f"sqlite:///{tmp_path / 'options.db'}")
    db.migrate(eng)
    console.use_database(eng)  # the pages' database (app/console/state.py), until the test ends
    InboxStore(eng).ensure_project(Dsn.parse(LOCAL_DSN))
    Projects(eng).add("<b>Billing</b>")
    with eng.begin() as connection:
        connection.execute(insert(COUNTS).values(project_id=2, kind=FILTERED, key="web_crawlers", count=7))
    with_users(eng, monkeypatch)
    yield eng
    console.use_database(None)


def opened(who: dict[str, object]) -> ProjectOptionsState:
    return clients.opened(ProjectOptionsState, who, "/settings")  # type: ignore[return-value]  # a ProjectOptionsState


def stored(engine: sqlalchemy.Engine) -> list:
    with engine.connect() as connection:
        return connection.execute(select(PROJECT_OPTIONS)).all()


def every_change(state: ProjectOptionsState) -> None:
    """Every handler that changes something, with arguments that would work for a maintainer."""
    call(state, "choose_project", BILLING)
    call(state, "set_filter", "localhost", True)
    call(state, "set_option", "scrub_ip_addresses", True)
    call(state, "set_text", "releases", "*-dev")
    call(state, "set_text", "per_minute", "5")
    call(state, "set_text", "dev_servers", "http://127.0.0.1:3000")
    call(state, "save_filters")
    call(state, "save_scrubbing")
    call(state, "save_quotas")
    call(state, "save_sourcemaps")


def test_a_client_elsewhere_is_refused_sees_nothing_and_changes_nothing(engine: sqlalchemy.Engine) -> None:
    state = opened(STRANGER)
    assert state.refused == REFUSED and state.projects == [] and state.filters == {} and not state.read
    every_change(state)
    assert state.refused == REFUSED and state.error == state.notice == "" and state.dropped == {}
    assert "Billing" not in shown(state) and "-dev" not in shown(state) and state.dev_servers == ""
    assert stored(engine) == []


def test_a_viewer_sees_the_options_and_counts_read_only_and_changes_nothing(engine: sqlalchemy.Engine) -> None:
    state = opened(signed_in(engine, "vera", "viewer"))
    assert (state.refused, state.read, state.may_change, state.projects) == ("", True, False, ["1 · Lookout", BILLING])
    assert state.filters == {name: value for name, value in dataclasses.asdict(FilterOptions()).items() if name in state.filters}
    assert state.filters["browser_extensions"] and not state.filters["localhost"] and state.options["scrub_data"]
    call(state, "choose_project", BILLING)  # anyone allowed may look at another project
    assert state.project == BILLING and state.dropped == {**dict.fromkeys(LABELS, 0), "web_crawlers": 7}
    every_change(state)
    assert state.error == MAINTAINERS_ONLY and state.filters["localhost"] is False and state.releases == ""
    assert state.dev_servers == ""
    state.releases = "*-dev"  # a draft that would be stored (typed while a maintainer, say) is not either
    state.dev_servers = "http://127.0.0.1:3000"
    call(state, "save_filters")
    call(state, "save_sourcemaps")
    assert state.error == MAINTAINERS_ONLY and stored(engine) == []


def test_a_maintainer_changes_the_filters_and_the_scrubbing_options(engine: sqlalchemy.Engine) -> None:
    state = opened(signed_in(engine, "max", "maintainer"))
    call(state, "choose_project", BILLING)
    call(state, "set_filter", "localhost", True)
    call(state, "set_filter", "legacy_browsers", False)
    call(state, "set_text", "releases", " *-dev \n\n1.0.?\n")
    call(state, "set_text", "client_ips", "10.0.0.0/8")
    call(state, "save_filters")
    assert (state.error, state.notice) == ("", f"Inbound filters saved for {BILLING}.")
    assert state.releases == "*-dev\n1.0.?"  # read back as stored
    call(state, "set_option", "scrub_ip_addresses", True)
    call(state, "set_option", "scrub_defaults", False)
    call(state, "set_text", "sensitive_fields", "ssn\ntax_id")
    call(state, "save_scrubbing")
    assert state.notice == f"Data scrubbing saved for {BILLING}."
    assert ProjectOptionsStore(engine).read(2) == (
        dataclasses.replace(FilterOptions(), localhost=True, legacy_browsers=False, releases=("*-dev", "1.0.?"),
                            client_ips=("10.0.0.0/8",)),
        ScrubbingSettings(scrub_defaults=False, scrub_ip_addresses=True, sensitive_fields=("ssn", "tax_id")))
    assert ProjectOptionsStore(engine).read(1) == (FilterOptions(), ScrubbingSettings())  # the other project's
    assert (state.per_minute, state.per_hour) == ("0", "0")  # no limit, as a new project has
    call(state, "set_text", "per_minute", " 1,000 ")
    call(state, "set_text", "per_hour", "50000")
    call(state, "save_quotas")
    assert (state.error, state.notice, state.per_minute) == ("", f"Quotas saved for {BILLING}.", "1000")
    assert ProjectOptionsStore(engine).quotas(2) == QuotaOptions(per_minute=1000, per_hour=50_000)
    assert ProjectOptionsStore(engine).read(2)[0].localhost  # the other parts stay as they were
    call(state, "set_text", "dev_servers", "HTTP://127.0.0.1:3000/\n\nhttp://[::1]:5173")
    call(state, "save_sourcemaps")
    assert (state.error, state.notice) == ("", f"Source maps saved for {BILLING}.")
    assert state.dev_servers == "http://127.0.0.1:3000\nhttp://[::1]:5173"  # read back as stored
    assert ProjectOptionsStore(engine).sourcemaps(2) == SourceMapOptions(("http://127.0.0.1:3000", "http://[::1]:5173"))
    assert ProjectOptionsStore(engine).quotas(2) == QuotaOptions(per_minute=1000, per_hour=50_000)
    with engine.connect() as connection:
        assert connection.execute(select(PROJECT_OPTIONS.c.updated_by)).scalars().all() == ["max (maintainer)"]


@pytest.mark.parametrize(("name", "typed", "sentence"), [
    ("client_ips", "10.0.0.1\nintranet", "The client IP on line 2 ('intranet') is no IP address or CIDR range"),
    ("error_messages", "x\n" * 51, "At most 50 error-message globs, one a line (51 given)."),
    ("releases", "r" * 10_500, "The release globs are too long: at most 50 lines of 200 characters."),
    ("safe_fields", "f\n" * 51, "At most 50 safe fields, one a line (51 given)."),
    ("sensitive_fields", "s" * 101, "The sensitive field on line 1 must have 1 to 100 characters."),
    ("dev_servers", "http://127.0.0.1:3000\nhttp://127.0.0.1:3000/app", "The dev server on line 2 ('http://127.0.0.1:3000/app') "
     "must be an origin such as http://127.0.0.1:3000"),
    ("dev_servers", "http://h:1\n" * 11, "At most 10 dev servers, one a line (11 given)."),
    ("dev_servers", "h" * 2_011, "The dev servers are too long: at most 10 lines of 200 characters."),
])
def test_a_list_out_of_bounds_gets_a_sentence_keeps_what_was_typed_and_stores_nothing(
        engine: sqlalchemy.Engine, name: str, typed: str, sentence: str) -> None:
    state = opened(LOOPBACK)
    call(state, "set_text", name, typed)
    call(state, "save_scrubbing" if name.endswith("fields") else "save_sourcemaps" if name == "dev_servers" else "save_filters")
    assert state.error.startswith(sentence) and state.notice == ""
    bound = {"releases": 10_051, "error_messages": 10_051, "client_ips": 10_051, "dev_servers": 2_011}
    assert getattr(state, name) == typed[:bound.get(name, 5_051)]
    assert stored(engine) == []


@pytest.mark.parametrize(("name", "typed"), [
    ("per_minute", "-5"), ("per_minute", "1.5"), ("per_minute", "ten"), ("per_minute", "1000001"),
    ("per_minute", "9" * 25), ("per_minute", "１２"), ("per_hour", "60000001"), ("per_hour", "1e6"),
])
def test_a_quota_that_is_no_whole_number_in_bounds_gets_a_sentence_and_stores_nothing(
        engine: sqlalchemy.Engine, name: str, typed: str) -> None:
    state = opened(LOOPBACK)
    call(state, "set_text", name, typed)
    call(state, "save_quotas")
    what, most = ("Events a minute", "1,000,000") if name == "per_minute" else ("Events an hour", "60,000,000")
    assert state.error == f"{what} must be a whole number from 0 (no limit) to {most}." and state.notice == ""
    assert getattr(state, name) == typed[:21] and stored(engine) == []


def test_hostile_arguments_are_ignored(engine: sqlalchemy.Engine) -> None:
    state = opened(LOOPBACK)
    before = (dict(state.filters), dict(state.options), state.project, state.per_minute)
    for value in HOSTILE:
        call(state, "set_filter", value, True)
        call(state, "set_filter", "localhost", value)
        call(state, "set_option", value, value)
        call(state, "set_text", value, "text")
        call(state, "choose_project", value)
    assert (state.filters, state.options, state.project, state.per_minute) == before
    call(state, "set_text", "project", "1 · Lookout")  # only the lists are text fields
    state.project = "9 · forged"  # a project no longer offered
    call(state, "save_filters")
    assert state.error == NO_PROJECT and stored(engine) == []
    state.project = "1 · Lookout"
    for value in HOSTILE:  # anything but a string types nothing: no limit; a long string, a sentence
        call(state, "set_text", "per_minute", value)
        call(state, "save_quotas")
        assert ProjectOptionsStore(engine).quotas(1) == QuotaOptions()
