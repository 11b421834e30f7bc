"""Each project's options: the defaults of a project without a row, the setters with their bounds,
what this process reads at once and other workers within CACHE_S, and a broken row that costs its
project its options only."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
import sqlalchemy
from sqlalchemy import update

from app import db
from app.ingest.store import InboxStore
from app.projects import options_store
from app.projects.filter_options import FilterOptions
from app.projects.options_store import MAX_FIELDS, ProjectOptionsStore
from app.projects.quota_options import QuotaOptions
from app.projects.registry import Projects
from app.projects.sourcemap_options import SourceMapOptions
from app.projects.tables import PROJECT_OPTIONS
from reflex_lookout.dsn import Dsn
from reflex_lookout.scrubbing.settings import ScrubbingSettings
from tests.environment import LOCAL_DSN

SCRUB = ScrubbingSettings(scrub_ip_addresses=True, sensitive_fields=("ssn", "iban_note"), safe_fields=("order_id",))
FILTERS = dataclasses.replace(FilterOptions(), localhost=True, legacy_browsers=False, releases=("*-dev",),
                              client_ips=("10.0.0.0/8",))


@pytest.fixture
def sqlite_engine(tmp_path: Path) -> sqlalchemy.Engine:
    """Projects 1 (the local one) and 2, on a SQLite file."""
    engine = db.engine(f"sqlite:///{tmp_path / 'options.db'}")
    db.migrate(engine)
    InboxStore(engine).ensure_project(Dsn.parse(LOCAL_DSN))
    Projects(engine).add("Billing")
    return engine


def test_a_project_has_the_defaults_until_set_then_what_was_set(engine: sqlalchemy.Engine) -> None:
    """On SQLite and PostgreSQL (the upsert is each dialect's own)."""
    InboxStore(engine).ensure_project(Dsn.parse(LOCAL_DSN))
    store = ProjectOptionsStore(engine)
    assert (store.filters_of(1), store.scrubbing_of(1)) == (FilterOptions(), ScrubbingSettings())
    store.set_filters(1, FILTERS, by="max")
    assert (store.filters_of(1), store.scrubbing_of(1)) == (FILTERS, ScrubbingSettings())  # this process: at once
    store.set_scrubbing(1, SCRUB, by="max")
    assert ProjectOptionsStore(engine).read(1) == (FILTERS, SCRUB)  # each part kept as the other was set
    assert store.quotas(1) == QuotaOptions()
    store.set_quotas(1, QuotaOptions(per_minute=100, per_hour=1000), by="max")
    assert store.quotas(1) == QuotaOptions(100, 1000) and store.read(1) == (FILTERS, SCRUB)
    assert store.dev_servers_of(1) == ()
    store.set_sourcemaps(1, SourceMapOptions(dev_servers=("HTTP://127.0.0.1:3000/",)), by="max")
    assert store.dev_servers_of(1) == ("http://127.0.0.1:3000",)  # at once, in its one spelling
    assert store.quotas(1) == QuotaOptions(100, 1000) and store.read(1) == (FILTERS, SCRUB)
    with engine.connect() as connection:
        assert connection.execute(sqlalchemy.select(PROJECT_OPTIONS.c.updated_by)).scalars().all() == ["max"]


def test_another_worker_sees_a_change_within_the_cache_time(sqlite_engine: sqlalchemy.Engine,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    ingest = ProjectOptionsStore(sqlite_engine)
    assert ingest.filters_of(2) == FilterOptions()
    with sqlite_engine.begin() as connection:  # as another worker writes it (this process's cache knows nothing)
        connection.execute(PROJECT_OPTIONS.insert().values(
            project_id=2, filters=options_store.encoded(FILTERS), scrubbing="{}", updated_at=1.0, updated_by="other"))
    assert ingest.filters_of(2) == FilterOptions()  # read less than CACHE_S ago
    assert ingest.dev_servers_of(2) == ()
    with sqlite_engine.begin() as connection:
        connection.execute(update(PROJECT_OPTIONS).values(sourcemaps='{"dev_servers": ["http://h:1"]}'))
    assert ingest.dev_servers_of(2) == ()
    monkeypatch.setattr(options_store, "CACHE_S", 0.0)
    assert ingest.filters_of(2) == FILTERS and ingest.dev_servers_of(2) == ("http://h:1",)


def test_a_stored_field_missing_or_unknown_has_the_default_and_a_broken_row_costs_its_project_only(
        sqlite_engine: sqlalchemy.Engine, caplog: pytest.LogCaptureFixture) -> None:
    store = ProjectOptionsStore(sqlite_engine)
    store.set_filters(1, FILTERS)
    store.set_filters(2, FILTERS)
    with sqlite_engine.begin() as connection:
        connection.execute(update(PROJECT_OPTIONS).where(PROJECT_OPTIONS.c.project_id == 1).values(
            filters='{"localhost": true, "filter_of_a_later_version": 1}', scrubbing='{"scrub_data": "no"}',
            quotas='{"per_minute": -1}', sourcemaps='{"dev_servers": ["file:///etc"]}'))
        connection.execute(update(PROJECT_OPTIONS).where(PROJECT_OPTIONS.c.project_id == 2).values(filters="{broken"))
    assert store.read(1) == (dataclasses.replace(FilterOptions(), localhost=True), ScrubbingSettings())
    assert store.read(2)[0] == FilterOptions() and store.quotas(1) == QuotaOptions()
    assert store.sourcemaps(1) == SourceMapOptions()  # an origin that is none: no dev server at all
    assert "project 2: its stored FilterOptions are unreadable" in caplog.text


@pytest.mark.parametrize(("change", "sentence"), [
    (lambda s: s.set_filters(1, FilterOptions(client_ips=("here",))), "The client IP on line 1 ('here') is no IP address"),
    (lambda s: s.set_scrubbing(1, ScrubbingSettings(safe_fields=("x",) * (MAX_FIELDS + 1))),
     f"At most {MAX_FIELDS} safe fields, one a line (51 given)."),
    (lambda s: s.set_scrubbing(1, ScrubbingSettings(sensitive_fields=("x" * 101,))),
     "The sensitive field on line 1 must have 1 to 100 characters."),
    (lambda s: s.set_scrubbing(1, ScrubbingSettings(scrub_data=1)), "The option scrub_data must be on or off."),  # type: ignore[arg-type]
    (lambda s: s.set_filters(99, FilterOptions()), "There is no project 99."),
    (lambda s: s.set_quotas(1, QuotaOptions(per_hour=60_000_001)),
     "Events an hour must be a whole number from 0 (no limit) to 60,000,000."),
    (lambda s: s.set_quotas(1, QuotaOptions(per_minute=True)), "Events a minute must be a whole number"),  # type: ignore[arg-type]
    (lambda s: s.set_sourcemaps(1, SourceMapOptions(dev_servers=("http://127.0.0.1:3000", "http://h/app"))),
     "The dev server on line 2 ('http://h/app') must be an origin"),
])
def test_options_out_of_bounds_or_for_no_project_are_refused_and_nothing_is_stored(
        sqlite_engine: sqlalchemy.Engine, change, sentence: str) -> None:  # noqa: ANN001 (a lambda)
    store = ProjectOptionsStore(sqlite_engine)
    with pytest.raises(ValueError) as refused:
        change(store)
    assert str(refused.value).startswith(sentence)
    with sqlite_engine.connect() as connection:
        assert connection.execute(sqlalchemy.select(sqlalchemy.func.count()).select_from(PROJECT_OPTIONS)).scalar() == 0
