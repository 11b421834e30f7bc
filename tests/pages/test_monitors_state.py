"""The /monitors page's state as any websocket client could have it, on a real SQLite file: this machine
sees each monitor the real sentry-sdk's check-ins made, with its schedule, state and recent check-ins;
a client elsewhere sees nothing of them."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy

from app.console.state import REFUSED
from app.ingest.store import InboxStore
from app.monitors.watcher import watch
from app.pages.monitors import MonitorsState
from tests.console.clients import LOOPBACK, STRANGER, console_database, opened, shown
from tests.monitors.helpers import EVERY_MINUTE, monitor, run_job


@pytest.fixture
def engine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[sqlalchemy.Engine]:
    for eng in console_database(tmp_path, monkeypatch):
        inbox = InboxStore(eng)
        run_job(inbox, "nightly-<b>export</b>", EVERY_MINUTE)
        run_job(inbox, "billing", {"schedule": {"type": "crontab", "value": "0 0 1 1 *"}}, fails=True)  # not due in the test
        due = monitor(eng, "nightly-<b>export</b>").next_expected_at
        watch(eng, due + 61)  # the export missed its next check-in
        yield eng


def test_this_machine_sees_each_monitor_with_its_recent_check_ins(engine: sqlalchemy.Engine) -> None:
    state = opened(MonitorsState, LOOPBACK, "/monitors")
    assert isinstance(state, MonitorsState) and state.refused == "" and state.searched
    billing, export = state.monitors
    assert (billing["slug"], billing["state"], billing["schedule"]) == ("billing", "error", "0 0 1 1 * (UTC)")
    assert (export["slug"], export["state"], export["schedule"]) == ("nightly-<b>export</b>", "missed", "every minute")
    assert export["margin"] == "margin 1 min · max runtime 2 min" and export["last"].endswith(" ago)")
    assert export["next"].startswith("20")
    by_monitor = [(c["monitor_id"], c["status"]) for c in state.checkins]
    assert sorted(by_monitor) == sorted([(billing["id"], "error"), (export["id"], "missed"), (export["id"], "ok")])
    assert [s for i, s in by_monitor if i == export["id"]] == ["missed", "ok"]  # newest first
    [ok] = [c for c in state.checkins if c["status"] == "ok"]
    assert ok["duration"].endswith(" s") and (ok["environment"], ok["release"]) == ("production", "shop@2.1")


def test_a_client_elsewhere_sees_nothing(engine: sqlalchemy.Engine) -> None:
    state = opened(MonitorsState, STRANGER, "/monitors")
    assert state.refused == REFUSED and state.monitors == [] and state.checkins == []
    assert "nightly" not in shown(state) and "billing" not in shown(state)
