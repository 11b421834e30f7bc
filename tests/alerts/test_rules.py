"""A project's alert rules on a real database: defaults, bounds, saving and the ingest path's cache."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
import sqlalchemy

from app.alerts import rules
from app.alerts.rules import Rules


def test_a_project_without_a_row_has_the_documented_defaults(engine: sqlalchemy.Engine) -> None:
    with engine.connect() as connection:
        found = rules.read(connection, 1)
    assert found == Rules()
    assert dataclasses.astuple(found) == (True, True, True, 100, 10, 30)


def test_saved_rules_are_read_back_and_saving_again_replaces_them(engine: sqlalchemy.Engine) -> None:
    first = Rules(new_issue=False, spike_events=5, spike_minutes=2, quiet_minutes=0)
    with engine.begin() as connection:
        rules.save(connection, 1, first)
        rules.save(connection, 2, Rules(spike=False))
    with engine.connect() as connection:
        assert rules.read(connection, 1) == first
        assert rules.read(connection, 2) == Rules(spike=False)
    with engine.begin() as connection:
        rules.save(connection, 1, Rules(regression=False))
    with engine.connect() as connection:
        assert rules.read(connection, 1) == Rules(regression=False)
        assert connection.exec_driver_sql("select count(*) from alert_rules").scalar_one() == 2


@pytest.mark.parametrize(("field", "value"), [
    ("spike_events", 1), ("spike_events", 1_000_000), ("spike_minutes", 1), ("spike_minutes", 1440),
    ("quiet_minutes", 0), ("quiet_minutes", 10080),
])
def test_numbers_at_their_bounds_are_accepted(field: str, value: int) -> None:
    assert Rules(**{field: value}).checked() == Rules(**{field: value})


@pytest.mark.parametrize(("field", "value", "message"), [
    ("spike_events", 0, "spike_events must be a whole number from 1 to 1,000,000."),
    ("spike_events", 1_000_001, "spike_events must be a whole number from 1 to 1,000,000."),
    ("spike_minutes", 0, "spike_minutes must be a whole number from 1 to 1,440."),
    ("spike_minutes", 1441, "spike_minutes must be a whole number from 1 to 1,440."),
    ("quiet_minutes", -1, "quiet_minutes must be a whole number from 0 to 10,080."),
    ("quiet_minutes", 10081, "quiet_minutes must be a whole number from 0 to 10,080."),
    ("spike_events", 1.5, "spike_events must be a whole number"),
    ("spike_events", True, "spike_events must be a whole number"),
    ("quiet_minutes", "30", "quiet_minutes must be a whole number"),
    ("spike", "yes", "The rule spike must be on or off"),
    ("new_issue", 1, "The rule new_issue must be on or off"),
])
def test_values_out_of_bounds_are_refused_with_a_sentence(field: str, value: object, message: str) -> None:
    with pytest.raises(ValueError, match=message.replace(".", r"\.")):
        Rules(**{field: value}).checked()  # type: ignore[arg-type]  # values of the wrong type, on purpose


def test_rules_out_of_bounds_are_not_saved(engine: sqlalchemy.Engine) -> None:
    with pytest.raises(ValueError, match="spike_minutes"), engine.begin() as connection:
        rules.save(connection, 1, Rules(spike_minutes=0))
    with engine.connect() as connection:
        assert connection.exec_driver_sql("select count(*) from alert_rules").scalar_one() == 0


def test_the_cache_sees_this_process_s_saves_at_once_and_other_writers_after_its_time(
        engine: sqlalchemy.Engine, monkeypatch: pytest.MonkeyPatch) -> None:
    with engine.begin() as connection:
        assert rules.cached(connection, 1) == Rules()
        rules.save(connection, 1, Rules(new_issue=False))
        assert rules.cached(connection, 1) == Rules(new_issue=False)
        # Another worker's save: not this process's, so the cached rules stand for CACHE_S seconds.
        connection.exec_driver_sql("update alert_rules set spike = false where project_id = 1")
        assert rules.cached(connection, 1) == Rules(new_issue=False)
        monkeypatch.setattr(rules, "CACHE_S", -1.0)  # the cached entry has expired
        assert rules.cached(connection, 1) == Rules(new_issue=False, spike=False)


def test_the_cache_is_per_database(engine: sqlalchemy.Engine, tmp_path: Path) -> None:
    from app import db

    other = db.engine(f"sqlite:///{tmp_path}/other.db")
    db.migrate(other)
    with engine.begin() as connection:
        rules.save(connection, 1, Rules(spike=False))
        assert rules.cached(connection, 1) == Rules(spike=False)
    with other.connect() as connection:
        assert rules.cached(connection, 1) == Rules()
