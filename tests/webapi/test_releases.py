"""Releases in Sentry's web API (app/webapi/releases.py), as the pinned sentry-cli (`releases list`,
`releases info`) and httpx read them, against a Lookout on loopback whose errors and sessions the real
sentry-sdk made: `healthData` (with `health=1`) matches a hand count of the sessions sent."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from app.ingest.store import InboxStore
from tests.releases.sessions import CRASHED, ERRORED, HEALTHY, Session, run_sessions
from tests.webapi.inbox import Inbox, inbox, on_loopback, served
from tests.webapi.test_sentry_cli_issues import cli

ORG = "/api/0/organizations/lookout"


@pytest.fixture(scope="module")
def lookout(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Inbox, str, Path]]:
    """The web API's inbox (errors of web@1.0.0), with sessions: 5 of web@1.0.0 (2 crashed, of 2 of
    its 3 users; 1 errored) and 2 healthy ones of web@1.1.0."""
    home = tmp_path_factory.mktemp("releases")
    found = inbox(home)
    store = InboxStore(found.engine)
    run_sessions(store, [Session(HEALTHY, "ada"), Session(CRASHED, "bob"), Session(ERRORED, "ada"),
                         Session(CRASHED, "cy"), Session(HEALTHY, "cy")], release="web@1.0.0", dsn=found.dsn)
    run_sessions(store, [Session(HEALTHY, "ada"), Session(HEALTHY)], release="web@1.1.0", dsn=found.dsn)
    for host in on_loopback(served(found.engine)):
        yield found, host, home
    found.engine.dispose()


def get(lookout: tuple[Inbox, str, Path], path: str, **params: str) -> httpx.Response:
    found, host, _home = lookout
    return httpx.get(f"http://{host}{path}", params=params, timeout=30,
                     headers={"Authorization": f"Bearer {found.tokens['ada-read']}"})


def test_sentry_cli_lists_the_releases_sessions_and_events_named(lookout: tuple[Inbox, str, Path]) -> None:
    for scope in (("-o", "lookout", "-p", "web"), ("-o", "lookout")):
        listed = cli(lookout, "releases", "list", *scope)
        assert listed.returncode == 0, listed.stderr
        assert "web@1.0.0" in listed.stdout and "web@1.1.0" in listed.stdout, listed.stdout
        assert listed.stdout.index("1.1.0") < listed.stdout.index("1.0.0")  # last seen first


def test_sentry_cli_shows_one_release_and_says_when_there_is_none(lookout: tuple[Inbox, str, Path]) -> None:
    shown = cli(lookout, "releases", "info", "web@1.0.0", "-o", "lookout", "-p", "web")
    assert shown.returncode == 0, shown.stderr
    assert "web@1.0.0" in shown.stdout
    missing = cli(lookout, "releases", "info", "web@9", "-o", "lookout", "-p", "web")
    assert missing.returncode != 0 and "web@9" not in missing.stdout


def test_health_data_matches_a_hand_count_of_the_sessions(lookout: tuple[Inbox, str, Path]) -> None:
    answered = get(lookout, f"{ORG}/releases/", health="1")
    assert answered.status_code == 200, answered.text
    releases = {r["version"]: r for r in answered.json()}
    [web] = releases["web@1.0.0"]["projects"]
    data = web["healthData"]
    # By hand: 5 sessions, 2 crashed, 1 errored; users ada, bob, cy, of whom bob and cy crashed.
    assert (data["totalSessions"], data["sessionsCrashed"], data["sessionsErrored"]) == (5, 2, 1)
    assert data["crashFreeSessions"] == pytest.approx(60.0)
    assert (data["totalUsers"], data["crashFreeUsers"]) == (3, pytest.approx(100 / 3))
    # Today's sessions of the project: 5 of 1.0.0 and 2 of 1.1.0; users: ada, bob, cy (1.1.0: ada).
    assert (data["totalSessions24h"], data["totalProjectSessions24h"]) == (5, 7)
    assert data["sessionsAdoption"] == pytest.approx(500 / 7) and data["adoption"] == pytest.approx(100.0)
    [(_start, count)] = [bucket for bucket in data["stats"]["24h"] if bucket[1]]
    assert count == 5 and len(data["stats"]["24h"]) in (24, 25)
    assert web["hasHealthData"] is True and releases["web@1.0.0"]["newGroups"] == 4  # the inbox's 3, and "checkout failed"
    new = releases["web@1.1.0"]["projects"][0]["healthData"]
    assert (new["crashFreeSessions"], new["crashFreeUsers"], new["totalUsers"]) == (100.0, 100.0, 1)


def test_health_data_only_when_asked_and_one_release_by_its_version(lookout: tuple[Inbox, str, Path]) -> None:
    plain = get(lookout, f"{ORG}/releases/").json()
    assert all("healthData" not in p for r in plain for p in r["projects"])
    one = get(lookout, "/api/0/projects/lookout/web/releases/web@1.1.0/", health="1", healthStatsPeriod="14d")
    assert one.status_code == 200, one.text
    assert one.json()["version"] == "web@1.1.0" and len(one.json()["projects"][0]["healthData"]["stats"]["14d"]) in (14, 15)
    assert get(lookout, f"{ORG}/releases/", query="1.1").json()[0]["version"] == "web@1.1.0"
    refused = get(lookout, f"{ORG}/releases/", healthStatsPeriod="1y")
    assert refused.status_code == 400 and "healthStatsPeriod" in refused.json()["detail"]
    missing = get(lookout, f"{ORG}/releases/%3Cscript%3E/")
    assert missing.status_code == 404
    assert missing.json()["detail"] == "There is no release '<script>': no session or event named it."
    assert missing.headers["content-type"].startswith("application/json")
