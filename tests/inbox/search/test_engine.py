"""The search engine on SQLite and PostgreSQL, over events made by the real sentry-sdk: each query form
finds exactly the issues it should.

The inbox (received at NOW minus the time shown; ids in that order):

    A  ValueError: disk 100% full   3 events -10d -5d -1h  shop@1.0 production  Chrome, flag 50%_on, user 42  alice's
    D  KeyError: 'userXid'          1 event  -8d           shop@1.0 production  ignored
    B  OSError: disk 1000 full      1 event  -2d           shop@1.1 staging     Firefox, flag 500_on          resolved
    F  ZeroDivisionError (Billing)  1 event  -30h          billing@3.0          project "Billing service"
    C  KeyError: 'user_id'          2 events -3h -2h       shop@2.0             resolved after the first: regressed
    E  cache miss (a message)       1 event  -30m          shop@1.1, warning    bob's
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass

import pytest
import sentry_sdk
import sqlalchemy

from app.inbox.search import IssueSearch, SearchError, engine, plan
from app.inbox.short_ids import short_id
from app.inbox.tables import ISSUES
from app.inbox.triage import Triage
from app.ingest.store import InboxStore
from app.projects.registry import Projects
from tests.environment import LOCAL_DSN
from tests.factories import sentry_sdk_envelopes

NOW = 1715385600.0  # 2024-05-11T00:00:00Z
HOUR, DAY = 3600.0, 86400.0


def fail(kind: type[Exception], message: str) -> str:
    try:
        raise kind(message)
    except kind as exc:
        return sentry_sdk.capture_exception(exc) or ""


@dataclass
class Inbox:
    """The issues above by letter, the event ids of A's, and the engine."""

    ids: dict[str, int]
    event_ids: list[str]
    search: IssueSearch

    def names(self, text: str, **options: object) -> str:
        """The letters of the issues found, in their order."""
        by_id = {issue_id: name for name, issue_id in self.ids.items()}
        found = self.search.search(text, now=NOW, **options)  # type: ignore[arg-type]
        assert found.total == len(found.issues) or options.get("limit")
        return "".join(by_id[issue["id"]] for issue in found.issues)


@pytest.fixture
def world(inbox: InboxStore) -> Inbox:
    billing = Projects(inbox.engine).add("Billing service")
    billing_dsn = f"http://{billing.public_key}@localhost/{billing.id}"
    a_events = []

    def send(ago: float, release: str, what: tuple[type[Exception], str] | str, dsn: str = LOCAL_DSN,
             environment: str = "production", tags: dict[str, str] | None = None, user: dict | None = None,
             browser: dict | None = None) -> str:
        with sentry_sdk_envelopes(dsn=dsn, release=release, environment=environment) as bodies:
            for key, value in (tags or {}).items():
                sentry_sdk.set_tag(key, value)
            if user:
                sentry_sdk.set_user(user)
            if browser:
                sentry_sdk.set_context("browser", browser)
            event_id = (sentry_sdk.capture_message(what, level="warning") or "") if isinstance(what, str) else fail(*what)
        [body] = bodies
        inbox.ingest_envelope(body, dsn=dsn, received_at=NOW - ago)
        return event_id

    def a(ago: float) -> None:
        a_events.append(send(ago, "shop@1.0", (ValueError, "disk 100% full"), tags={"flag": "50%_on"},
                             user={"id": "42", "email": "ada@example.com"}, browser={"name": "Chrome", "version": "120.0"}))

    a(10 * DAY)
    send(8 * DAY, "shop@1.0", (KeyError, "userXid"))
    a(5 * DAY)
    send(2 * DAY, "shop@1.1", (OSError, "disk 1000 full"), environment="staging", tags={"flag": "500_on"},
         browser={"name": "Firefox", "version": "125.0"})
    send(30 * HOUR, "billing@3.0", (ZeroDivisionError, "division by zero"), dsn=billing_dsn)
    send(3 * HOUR, "shop@2.0", (KeyError, "user_id"))
    ids = dict(zip("ADBFC", range(1, 6), strict=True))
    Triage(inbox.engine).change_status(ids["C"], "resolved", "alice")
    send(2 * HOUR, "shop@2.0", (KeyError, "user_id"))
    a(1 * HOUR)
    send(30 * 60, "shop@1.1", "cache miss")
    ids["E"] = 6
    Triage(inbox.engine).change_status(ids["B"], "resolved", "alice")
    Triage(inbox.engine).change_status(ids["D"], "ignored", "alice")
    with inbox.engine.begin() as connection:
        for name, who in (("A", "alice"), ("E", "bob")):
            connection.execute(sqlalchemy.update(ISSUES).where(ISSUES.c.id == ids[name]).values(assignee=who))
        stored = dict(connection.execute(sqlalchemy.select(ISSUES.c.id, ISSUES.c.title)).tuples().all())
    assert [stored[ids[name]].split(":")[0] for name in "ADBFCE"] == [
        "ValueError", "KeyError", "OSError", "ZeroDivisionError", "KeyError", "cache miss"]
    return Inbox(ids, a_events, IssueSearch(inbox.engine))


def test_everything_in_each_sort_and_a_page(world: Inbox) -> None:
    assert world.names("") == world.names("", sort="date") == "EACFBD"
    assert world.names("", sort="new") == "ECFBDA"
    assert world.names("", sort="freq") == "ACEFBD"  # ties: the newest issue first
    page = world.search.search("", now=NOW, limit=2, offset=1)
    assert [issue["id"] for issue in page.issues] == [world.ids["A"], world.ids["C"]] and page.total == 6
    with pytest.raises(SearchError, match='^Unknown sort "oldest": use date, new or freq.$'):
        world.search.search("", sort="oldest")


def test_an_issue_is_listed_with_its_assignee_short_id_and_project(world: Inbox) -> None:
    [found] = world.search.search("is:assigned", project=1, now=NOW, sort="freq", limit=1).issues
    assert (found["id"], found["assignee"], found["project_name"]) == (world.ids["A"], "alice", "Lookout")
    assert found["short_id"] == "LOOKOUT-1" and found["event_count"] == 3 and found["status"] == "unresolved"
    assert found["first_seen"] == NOW - 10 * DAY and found["last_seen"] == NOW - HOUR
    assert world.search.issue(world.ids["F"])["short_id"] == f"BILLING-SERVICE-{world.ids['F']}"
    assert world.search.issue(999) is None


def test_is_a_status_or_an_assignment(world: Inbox) -> None:
    assert world.names("is:unresolved") == "EACF"  # regressed is a kind of unresolved, as in Sentry
    assert world.names("is:regressed") == "C"
    assert world.names("is:resolved") == "B" and world.names("is:ignored") == "D"
    assert world.names("!is:unresolved") == "BD"
    assert world.names("is:assigned") == "EA" and world.names("is:unassigned") == "CFBD"
    assert world.names("", status="open") == "EACF" and world.names("", status="unresolved") == "EAF"


def test_assigned_to_me_someone_or_nobody(world: Inbox) -> None:
    assert world.names("assigned:me", viewer="alice") == "A" and world.names("assigned:me", viewer="bob") == "E"
    assert world.names("assigned:bob") == "E" and world.names("assigned:none") == "CFBD"
    assert world.names("assigned:[me, none]", viewer="alice") == "ACFBD"
    assert world.names("!assigned:me", viewer="alice") == "ECFBD"
    with pytest.raises(SearchError, match='^"assigned:me" needs a signed-in user'):
        world.names("assigned:me")


def test_tags_exactly_negated_listed_and_with_wildcards(world: Inbox) -> None:
    assert world.names("level:warning") == "E" and world.names("level:error") == "ACFBD"
    assert world.names("!level:error") == "E" and world.names("level:[warning, fatal]") == "E"
    assert world.names("environment:staging") == "B" and world.names("!environment:production") == "B"
    assert world.names("release:shop@1.0") == "AD" and world.names("release:[shop@1.1, billing@3.0]") == "EFB"
    assert world.names("release:shop@*") == "EACBD" and world.names("!release:shop@*") == "F"
    assert world.names("browser.name:Chrome") == "A" and world.names("browser.name:chrome") == ""  # exact: as sent
    assert world.names("browser.name:chr*") == "A" and world.names("browser:*1*") == "AB"
    assert world.names("user:id:42") == "A" and world.names('user.email:"ada@example.com"') == "A"
    assert world.names("browser.name:Chrome environment:staging") == ""  # every term must match
    assert world.names("tags[environment]:staging") == "B"


def test_has_a_tag_or_not(world: Inbox) -> None:
    assert world.names("has:browser") == "AB" and world.names("!has:browser") == "ECFD"
    assert world.names('browser.name:""') == "ECFD" and world.names("has:flag has:user") == "A"
    assert world.names("has:nothing.like.it") == ""


def test_percent_and_underscore_match_themselves(world: Inbox) -> None:
    assert world.names("flag:50%_on") == "A" and world.names("flag:50%_*") == "A"  # not 500_on
    assert world.names("flag:*_on") == "AB" and world.names("flag:50*") == "AB"
    assert world.names("100%") == "A"  # not "disk 1000 full"
    assert world.names("user_id") == "C"  # not userXid
    assert world.names("%") == "A" and world.names("_id'") == "C"


def test_free_text_in_title_and_culprit(world: Inbox) -> None:
    assert world.names("DISK") == "AB" and world.names("disk   100") == "AB"
    assert world.names('"cache miss"') == "E" and world.names("miss cache") == ""  # one phrase, in order
    assert world.names("test_engine in fail") == "ACFBD"  # the culprit of every exception, not the message's
    assert world.names("is:unresolved level:error disk") == "A"
    assert world.names('"disk 1000" full') == "B"


def test_dates_relative_and_absolute(world: Inbox) -> None:
    assert world.names("age:-24h") == "EC" and world.names("firstSeen:-24h") == "EC"
    assert world.names("age:+7d") == "AD" and world.names("age:+1w age:-9d") == "D"
    assert world.names("lastSeen:+7d") == "D" and world.names("lastSeen:-1d") == "EAC"
    assert world.names("firstSeen:>2024-05-09") == "ECF"  # B came at 2024-05-09T00:00:00 exactly
    assert world.names("firstSeen:>=2024-05-09") == "ECFB"
    assert world.names("firstSeen:2024-05-01") == "A" and world.names("lastSeen:<2024-05-04") == "D"
    assert world.names("firstSeen:2024-05-10T21:02:00Z") == "C"  # five minutes either side
    assert world.names("lastSeen:<=2024-05-09T20:00:00+02:00") == "FBD"  # F: 2024-05-09T18:00:00Z
    assert world.names("lastSeen:<2024-05-09T20:00:00+02:00") == "BD"
    assert world.search.search("age:-24h", now=NOW + 2 * DAY).total == 0  # relative to `now`


def test_times_seen(world: Inbox) -> None:
    assert world.names("timesSeen:>1") == "AC" and world.names("timesSeen:>=2") == "AC"
    assert world.names("timesSeen:3") == "A" and world.names("timesSeen:=2") == "C"
    assert world.names("timesSeen:<=1") == "EFBD" and world.names("timesSeen:<2") == "EFBD"


def test_release_latest_in_all_projects_or_one(world: Inbox) -> None:
    assert world.names("release:latest") == "C"  # shop@2.0 came last, though shop@1.1 was seen since
    assert world.names("release:latest", project=2) == "F"
    assert world.names("release:[latest, shop@1.0]") == "ACD"
    assert world.names("!release:latest", project=1) == "EABD"


def test_direct_hits_by_issue_id_short_id_and_event_id(world: Inbox) -> None:
    c, f = world.ids["C"], world.ids["F"]
    for text in (str(c), short_id("Lookout", c), short_id("Lookout", c).lower()):
        found = world.search.search(text, now=NOW)
        assert found.direct and found.total == 1 and [i["id"] for i in found.issues] == [c], text
    assert world.search.search(short_id("Billing service", f)).issues[0]["id"] == f
    assert not world.search.search(f"LOOKOUT-{f}").direct  # F is Billing's, not Lookout's
    event_id = world.event_ids[1]
    assert world.search.ids(event_id) == [world.ids["A"]]
    dashed = str(uuid.UUID(event_id)).upper()
    assert world.search.search(dashed).direct and world.search.search(dashed).issues[0]["id"] == world.ids["A"]
    assert not world.search.search(uuid.uuid4().hex).direct


def test_a_direct_hit_keeps_to_the_project_and_status_else_it_is_text(world: Inbox) -> None:
    assert not world.search.search(str(world.ids["B"]), status="open").direct  # B is resolved
    assert not world.search.search(str(world.ids["F"]), project=1).direct
    missing = world.search.search("404")
    assert not missing.direct and missing.total == 0
    assert world.names("zero") == "F"


def test_a_project_filter(world: Inbox) -> None:
    assert world.names("", project=2) == "F" and world.names("", project=1) == "EACBD"
    assert world.names("is:unresolved", project=1) == "EAC"


def test_ids_of_every_match_for_bulk_actions(world: Inbox) -> None:
    assert world.search.ids("is:unresolved", now=NOW) == [world.ids[name] for name in "EACF"]
    assert world.search.ids("is:unresolved", project=2) == [world.ids["F"]]
    assert world.search.ids("is:unresolved", limit=2) == [world.ids["E"], world.ids["A"]]
    assert world.search.ids(str(world.ids["D"])) == [world.ids["D"]]
    with pytest.raises(SearchError):
        world.search.ids("is:bogus")
    with pytest.raises(ValueError, match="bulk action"):
        world.search.ids("", limit=0)


SHAPES = ("", "is:unresolved", "level:error", "!level:error", "has:browser", "!has:browser", "release:shop@*",
          "!release:[shop@1.0, shop@2.0]", "flag:*_on", "disk", "timesSeen:<2", "is:unresolved !environment:staging",
          "lastSeen:-1d", "age:+7d")


@pytest.mark.parametrize(("hits", "window"), [(1, 1), (1, 3), (1, 1000), (2, engine.WINDOW + 1)])
def test_a_page_is_the_same_however_it_is_read(world: Inbox, hits: int, window: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """Up to MAX_HITS matches, a page is sorted from all their ids; beyond, it is looked for in a window
    of the issues first in the sort's order (tags probed per issue), else sorted by the database from
    every match (tags through the key/value index): all give the same pages."""
    expected = {(text, sort): [issue["id"] for issue in world.search.search(text, sort=sort, now=NOW).issues]
                for text in SHAPES for sort in ("date", "new", "freq")}
    monkeypatch.setattr(engine, "MAX_HITS", hits)
    monkeypatch.setattr(engine, "window_size", lambda end, issues: window)
    for (text, sort), ids in expected.items():
        whole = world.search.search(text, sort=sort, now=NOW)
        assert [issue["id"] for issue in whole.issues] == ids, (text, sort)
        assert (whole.total, whole.capped) == ((hits, True) if len(ids) > hits else (len(ids), False)), (text, sort)
        paged = [issue["id"] for offset in range(len(ids))
                 for issue in world.search.search(text, sort=sort, now=NOW, limit=1, offset=offset).issues]
        assert paged == ids, (text, sort)


@pytest.mark.parametrize(("small", "broad_dates"), [(1, 1), (3, 2)])
def test_every_form_the_plan_may_choose_finds_the_same_issues(world: Inbox, small: int, broad_dates: int,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """With a few rows counting as many, tags are hashed (PostgreSQL) or probed and dates scanned,
    instead of listed and read through their index: the same issues in the same order."""
    shapes = (*SHAPES, "level:error environment:production", "flag:50%_on !has:browser", "release:[shop@1.1, shop@2.0] has:user",
              "is:unresolved release:shop@1.0 !environment:staging", "age:-24h level:error", "firstSeen:2024-05-01",
              "firstSeen:>2024-05-09")
    expected = {(text, sort): [issue["id"] for issue in world.search.search(text, sort=sort, now=NOW).issues]
                for text in shapes for sort in ("date", "freq")}
    monkeypatch.setattr(plan, "SMALL", small)
    monkeypatch.setattr(plan, "BROAD_DATES", broad_dates)
    for (text, sort), ids in expected.items():
        assert [issue["id"] for issue in world.search.search(text, sort=sort, now=NOW).issues] == ids, (text, sort)
        assert world.search.ids(text, now=NOW) == expected[text, "date"], text
