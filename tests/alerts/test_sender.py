"""app/alerts/sender.py: due alerts delivered to real receivers on loopback (an HTTP webhook server,
an SMTP server), from a real database (SQLite and PostgreSQL), with time simulated by an injected
clock: fan-out, one message per channel, digests under pacing, retries with backoff, restarts, and
the lease."""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import math
import re
import time
import uuid
from collections.abc import Callable, Sequence

import pytest
import sqlalchemy
from sqlalchemy import delete, insert, select, update

from app import db
from app.alerts import messages, sender as sending
from app.alerts.alert import ERROR_BYTES, Delivered
from app.alerts.channels import CHANNELS
from app.alerts.delivery_queue import Due
from app.alerts.pacing import PACE_BURST, PACE_EVERY_S, Pace
from app.alerts.sender import LINGER_S, AlertSender
from app.alerts.tables import ALERTS, DELIVERIES
from app.ingest.feeder import InboxFeeder
from app.ingest.store import InboxStore
from app.settings import Settings
from reflex_lookout.background import TTL_S, Lease
from reflex_lookout.dsn import Dsn
from reflex_lookout.outbox import OutboxStore
from reflex_lookout.tables import WORKER_LEASE
from tests.alerts.receivers import MailReceiver, Received, WebhookReceiver
from tests.environment import LOCAL_DSN
from tests.factories import error, event_envelope, local_row

pytestmark = pytest.mark.anyio
PUBLIC_URL = "https://lookout.example.com"
SECRET = "s3cret-of-the-json-channel"
KEY = re.compile(r"[0-9a-f]{32}")


class Clock:
    """Simulated time: what `time.time()` would say, moved on by the test."""

    def __init__(self, now: float = 1_700_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


@pytest.fixture
def engine(database_url: str) -> sqlalchemy.Engine:
    eng = db.engine(database_url)
    db.migrate(eng)
    InboxStore(eng).ensure_project(Dsn.parse(LOCAL_DSN))  # project 1, "Lookout"
    return eng


@pytest.fixture
def clock() -> Clock:
    return Clock()


def settings(mail: MailReceiver | None = None) -> Settings:
    env = {"LOOKOUT_WEBHOOK_ALLOW": "127.0.0.1", "LOOKOUT_PUBLIC_URL": PUBLIC_URL,
           "LOOKOUT_ALERT_FROM": "lookout@example.com"}
    if mail is not None:
        env["LOOKOUT_SMTP_URL"] = f"smtp://{mail.host}:{mail.port}"
    return Settings.from_env(env)


def make_sender(engine: sqlalchemy.Engine, clock: Clock, mail: MailReceiver | None = None,
                holder: str = "worker-1") -> AlertSender:
    return AlertSender(engine, settings(mail), Lease(engine, "alert-sender", holder=holder, clock=clock),
                       clock=clock, rand=lambda: 1.0, linger_s=0.0)  # the linger has a test of its own


def add_channel(engine: sqlalchemy.Engine, kind: str, target: str, project_id: int | None = None,
                secret: str = "") -> int:
    with engine.begin() as connection:
        return connection.execute(insert(CHANNELS).values(
            kind=kind, target=target, secret=secret, origin="console", project_id=project_id, enabled=True,
            created_at=1.0, last_error="").returning(CHANNELS.c.id)).scalar_one()


def add_alerts(engine: sqlalchemy.Engine, count: int = 1, project_id: int = 1, rule: str = "new",
               channel_id: int | None = None, first_issue: int = 100) -> list[str]:
    """Due alerts, as app/alerts/triggers.py commits them; their dedupe keys."""
    rows = [{"dedupe_key": uuid.uuid4().hex, "project_id": project_id, "issue_id": first_issue + n, "rule": rule,
             "reason": "A new issue.", "created_at": 1.0, "channel_id": channel_id, "fanned_out": False,
             "title": f"KeyError: 'user {first_issue + n}'", "culprit": "app.pages.orders in checkout",
             "level": "error", "environment": "production", "release": "shop@1.2.3", "first_seen": 1_000.0,
             "last_seen": 2_000.0, "event_count": 3} for n in range(count)]
    with engine.begin() as connection:
        connection.execute(insert(ALERTS), rows)
    return [row["dedupe_key"] for row in rows]


def keys_in(bodies: Sequence[bytes | str], known: Sequence[str]) -> list[str]:
    """The known dedupe keys the messages list, once per listing."""
    found = []
    for body in bodies:
        text = body.decode() if isinstance(body, bytes) else body
        found += [key for key in dict.fromkeys(KEY.findall(text)) if key in set(known)]
    return found


async def eventually(condition: Callable[[], bool], timeout: float = 10.0) -> None:
    """Wait until `condition()` holds (AssertionError after `timeout`): for what a running loop does."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "the condition did not come true"
        await asyncio.sleep(0.05)


def mail_text(message: object) -> str:
    return message.get_body(("plain",)).get_content()  # type: ignore[attr-defined]  # an EmailMessage


def deliveries(engine: sqlalchemy.Engine) -> list[tuple[int, int, float]]:
    """(channel id, attempts, next attempt) of each delivery row left."""
    with engine.connect() as connection:
        return [tuple(r) for r in connection.execute(select(
            DELIVERIES.c.channel_id, DELIVERIES.c.attempts, DELIVERIES.c.next_attempt_at).order_by(DELIVERIES.c.id))]


def channel_row(engine: sqlalchemy.Engine, channel_id: int) -> sqlalchemy.Row:
    with engine.connect() as connection:
        return connection.execute(select(CHANNELS).where(CHANNELS.c.id == channel_id)).one()


# --- delivery -------------------------------------------------------------------------------------


async def test_a_new_alert_goes_once_to_every_kind_of_channel(
        engine: sqlalchemy.Engine, hook: WebhookReceiver, mail: MailReceiver, clock: Clock) -> None:
    ids = {kind: add_channel(engine, kind, hook.url(f"/{kind}"), secret=SECRET if kind == "json" else "")
           for kind in ("slack", "discord", "json")}
    ids["email"] = add_channel(engine, "email", "ops@example.com")
    [key] = add_alerts(engine, first_issue=7)
    sender = make_sender(engine, clock, mail)

    assert await sender.send_once() == 4
    assert sorted(r.path for r in hook.received) == ["/discord", "/json", "/slack"]
    assert all(keys_in([r.body], [key]) == [key] for r in hook.received)
    [signed] = [r for r in hook.received if r.path == "/json"]
    expected = "sha256=" + hmac.new(SECRET.encode(), signed.body, hashlib.sha256).hexdigest()
    assert hmac.compare_digest(signed.headers["x-lookout-signature"], expected)
    [alert] = json.loads(signed.body)["alerts"]
    assert (alert["project"], alert["issue"]["url"], alert["release"]) == (
        "Lookout", f"{PUBLIC_URL}/issue?id=7", "shop@1.2.3")
    [message] = mail.wait_for(1)
    assert message["To"] == "ops@example.com" and key in mail_text(message)

    assert deliveries(engine) == []  # all sent: nothing left to send
    assert all(channel_row(engine, i).last_delivery_at == clock.now for i in ids.values())
    assert await sender.send_once() == 0 and len(hook.received) == 3 and len(mail.messages) == 1


async def test_a_projects_alert_goes_to_its_channels_and_a_test_alert_to_its_channel_alone(
        engine: sqlalchemy.Engine, hook: WebhookReceiver, clock: Clock) -> None:
    everywhere = add_channel(engine, "json", hook.url("/all"))
    add_channel(engine, "json", hook.url("/one"), project_id=1)
    add_channel(engine, "json", hook.url("/two"), project_id=2)
    [mine] = add_alerts(engine, project_id=1)
    [test] = add_alerts(engine, project_id=0, rule="test", channel_id=everywhere)
    assert await make_sender(engine, clock).send_once() == 2
    got = {r.path: json.loads(r.body)["alerts"] for r in hook.received}
    assert sorted(got) == ["/all", "/one"]
    assert [a["dedupe_key"] for a in got["/all"]] == [mine, test]  # one message: both were due
    assert [a["dedupe_key"] for a in got["/one"]] == [mine]
    assert got["/all"][1]["issue"]["url"] == f"{PUBLIC_URL}/alerts"


async def test_an_alert_no_channel_takes_is_only_marked(engine: sqlalchemy.Engine, clock: Clock) -> None:
    add_alerts(engine, 3)
    assert await make_sender(engine, clock).send_once() == 0
    with engine.connect() as connection:
        assert connection.execute(select(ALERTS.c.fanned_out)).scalars().all() == [True, True, True]
    assert deliveries(engine) == []


async def test_a_down_receiver_gets_everything_once_it_is_back(
        engine: sqlalchemy.Engine, hook: WebhookReceiver, clock: Clock) -> None:
    channel = add_channel(engine, "json", hook.url())
    sender = make_sender(engine, clock)
    hook.down()
    keys = add_alerts(engine, 2)
    for second in range(30):  # 30 s down, new alerts coming
        if second % 10 == 5:
            keys += add_alerts(engine, 1, first_issue=200 + second)
        assert await sender.send_once() == 0
        clock.advance(1.0)
    row = channel_row(engine, channel)
    assert row.last_delivery_at is None and row.last_error and row.last_error_at is not None
    assert len(deliveries(engine)) == 5  # every alert still waits
    hook.up()
    sent = 0
    for _ in range(10):  # the backoff (at most a minute) runs out
        clock.advance(sending.RETRY_MAX_S)
        sent += await sender.send_once()
    assert deliveries(engine) == [] and sent >= 1
    assert sorted(keys_in([r.body for r in hook.received], keys)) == sorted(keys)
    assert channel_row(engine, channel).last_delivery_at is not None


async def test_a_failed_send_backs_off_doubling_to_a_minute_and_keeps_1_kb_of_the_answer(
        engine: sqlalchemy.Engine, hook: WebhookReceiver, clock: Clock) -> None:
    channel = add_channel(engine, "slack", hook.url())
    add_alerts(engine)
    hook.answer(500, b"x" * 5000)
    sender = make_sender(engine, clock)
    waits = []
    for attempt in range(1, 10):
        assert await sender.send_once() == 0
        [(_, attempts, next_attempt)] = deliveries(engine)
        assert attempts == attempt
        waits.append(next_attempt - clock.now)
        assert await sender.send_once() == 0 and len(hook.received) == attempt  # not due yet: not sent
        clock.now = next_attempt
    assert waits == [1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 60.0, 60.0, 60.0]  # jitter pinned to its top (rand=1)
    row = channel_row(engine, channel)
    assert "500" in row.last_error and len(row.last_error.encode()) <= ERROR_BYTES
    hook.answer(200)
    assert await sender.send_once() == 1 and deliveries(engine) == []


async def test_a_redirect_is_a_failure_and_its_target_is_never_requested(
        engine: sqlalchemy.Engine, hook: WebhookReceiver, clock: Clock) -> None:
    channel = add_channel(engine, "discord", hook.url("/redirect"))
    add_alerts(engine)
    assert await make_sender(engine, clock).send_once() == 0
    assert [r.path for r in hook.received] == ["/redirect"]
    assert "redirect" in channel_row(engine, channel).last_error
    assert [attempts for _, attempts, _ in deliveries(engine)] == [1]


async def test_a_webhook_echoing_its_path_leaves_it_in_no_stored_error_or_log(
        engine: sqlalchemy.Engine, hook: WebhookReceiver, clock: Clock, caplog: pytest.LogCaptureFixture) -> None:
    # Express answers a path it has no route for with the path itself: the Discord URL's token in it.
    path = "/api/webhooks/1234567890123/Zq-8pL_tOkEnOfThEdIsCoRdHoOk"
    channel = add_channel(engine, "discord", hook.url(path))
    add_alerts(engine)
    hook.answer(404, f"<pre>Cannot POST {path}</pre>".encode())
    assert await make_sender(engine, clock).send_once() == 0
    error = channel_row(engine, channel).last_error
    assert error == "The webhook answered 404: <pre>Cannot POST …</pre>"
    warnings = [record.getMessage() for record in caplog.records if record.name == sending.__name__]
    assert warnings == [f"alert channel {channel} (discord): {error}"]


async def test_email_without_an_smtp_server_waits_with_a_sentence(
        engine: sqlalchemy.Engine, clock: Clock) -> None:
    channel = add_channel(engine, "email", "ops@example.com")
    add_alerts(engine)
    assert await make_sender(engine, clock).send_once() == 0
    assert channel_row(engine, channel).last_error == "E-mail needs LOOKOUT_SMTP_URL and LOOKOUT_ALERT_FROM to be set."
    assert len(deliveries(engine)) == 1


async def test_a_switched_off_channel_waits_and_a_removed_channels_deliveries_go(
        engine: sqlalchemy.Engine, hook: WebhookReceiver, clock: Clock) -> None:
    off = add_channel(engine, "json", hook.url("/off"))
    gone = add_channel(engine, "json", hook.url("/gone"))
    [key] = add_alerts(engine)
    sender = make_sender(engine, clock)
    hook.down()
    await sender.send_once()  # fanned out to both; both failed
    hook.up()
    with engine.begin() as connection:
        connection.execute(update(CHANNELS).where(CHANNELS.c.id == off).values(enabled=False))
        connection.execute(delete(CHANNELS).where(CHANNELS.c.id == gone))
    clock.advance(sending.PRUNE_EVERY_S)
    assert await sender.send_once() == 0 and hook.received == []
    assert [channel_id for channel_id, _, _ in deliveries(engine)] == [off]  # the removed one's went
    with engine.begin() as connection:
        connection.execute(update(CHANNELS).where(CHANNELS.c.id == off).values(enabled=True))
    assert await sender.send_once() == 1 and keys_in([r.body for r in hook.received], [key]) == [key]


# --- restarts and the lease -----------------------------------------------------------------------


async def test_a_new_sender_delivers_what_a_previous_one_never_sent(
        engine: sqlalchemy.Engine, hook: WebhookReceiver, clock: Clock) -> None:
    add_channel(engine, "json", hook.url())
    keys = add_alerts(engine, 3)
    hook.down()
    assert await make_sender(engine, clock, holder="before").send_once() == 0  # then it dies, lease held
    hook.up()
    after = make_sender(engine, clock, holder="after")
    assert await after.send_once() == 0 and hook.received == []  # the dead holder's lease has not expired
    clock.advance(TTL_S + 1)
    assert await after.send_once() == 1
    assert sorted(keys_in([r.body for r in hook.received], keys)) == sorted(keys)


class DiesAfterSending(AlertSender):
    """A sender whose process dies between a send and the deletion of what it sent."""

    def _settle(self, channel: object, due: Sequence[Due], delivered: Delivered, now: float) -> None:
        raise SystemError("killed")


async def test_a_crash_between_send_and_delete_sends_again_after_the_restart(
        engine: sqlalchemy.Engine, hook: WebhookReceiver, clock: Clock) -> None:
    add_channel(engine, "json", hook.url())
    [key] = add_alerts(engine)
    dying = DiesAfterSending(engine, settings(), Lease(engine, "alert-sender", holder="a", clock=clock), clock=clock,
                             linger_s=0.0)
    with pytest.raises(SystemError):
        await dying.send_once()
    clock.advance(TTL_S + 1)
    assert await make_sender(engine, clock, holder="b").send_once() == 1
    assert [json.loads(r.body)["alerts"][0]["dedupe_key"] for r in hook.received] == [key, key]  # at least once
    assert deliveries(engine) == []


async def test_two_senders_on_one_database_only_the_lease_holder_sends(
        engine: sqlalchemy.Engine, hook: WebhookReceiver, clock: Clock) -> None:
    add_channel(engine, "json", hook.url())
    one, two = make_sender(engine, clock, holder="one"), make_sender(engine, clock, holder="two")
    keys: list[str] = []
    sent: list[tuple[int, int]] = []
    for n in range(4):
        keys += add_alerts(engine, 2, first_issue=100 * n)
        sent.append(tuple(await asyncio.gather(one.send_once(), two.send_once())))
        clock.advance(1.0)  # within the lease's TTL: its holder keeps it
    assert [a for a, _ in sent] == [1, 1, 1, 1] or [b for _, b in sent] == [1, 1, 1, 1]
    assert sum(a + b for a, b in sent) == 4
    assert sorted(keys_in([r.body for r in hook.received], keys)) == sorted(keys)  # each exactly once


# --- pacing: digests ------------------------------------------------------------------------------


async def test_alerts_due_together_wait_the_linger_and_go_as_one_message(
        engine: sqlalchemy.Engine, hook: WebhookReceiver, clock: Clock) -> None:
    """A burst's alerts, committed in several batches within LINGER_S of the first, make one
    message; a full digest does not wait."""
    add_channel(engine, "json", hook.url())
    sender = AlertSender(engine, settings(), Lease(engine, "alert-sender", holder="w", clock=clock), clock=clock,
                         linger_s=LINGER_S)
    keys = add_alerts(engine, 3)
    assert await sender.send_once() == 0  # lingering
    clock.advance(LINGER_S / 2)
    keys += add_alerts(engine, 4, first_issue=200)
    assert await sender.send_once() == 0
    clock.advance(LINGER_S / 2 + 0.01)
    assert await sender.send_once() == 1
    [message] = hook.received
    assert sorted(keys_in([message.body], keys)) == sorted(keys)
    full = add_alerts(engine, messages.DIGEST_LIMIT["json"], first_issue=1000)
    assert await sender.send_once() == 1  # no linger for a full digest
    assert sorted(keys_in([hook.received[-1].body], full)) == sorted(full)


def test_a_pace_gives_a_burst_then_one_token_each_period() -> None:
    pace = Pace(at=100.0)
    assert [pace.take(100.0) for _ in range(PACE_BURST + 1)] == [True] * PACE_BURST + [False]
    assert not pace.take(100.0 + PACE_EVERY_S - 1)
    assert pace.take(100.0 + PACE_EVERY_S) and not pace.take(100.0 + PACE_EVERY_S)
    assert not pace.take(0.0)  # a clock set back earns nothing
    assert [pace.take(10_000.0) for _ in range(PACE_BURST + 1)] == [True] * PACE_BURST + [False]  # capped


async def test_a_storm_makes_a_bounded_number_of_digests_and_loses_none(
        engine: sqlalchemy.Engine, hook: WebhookReceiver, clock: Clock) -> None:
    """1,000 new issues within a minute: in that minute each channel gets at most PACE_BURST +
    60 / PACE_EVERY_S messages; after it, full digests until all are sent, every alert once."""
    kinds = ("json", "slack")
    for kind in kinds:
        add_channel(engine, kind, hook.url(f"/{kind}"))
    sender = make_sender(engine, clock)
    keys: list[str] = []
    for second in range(60):
        keys += add_alerts(engine, 1000 // 60 + (second < 1000 % 60), first_issue=1000 * second)
        await sender.send_once()
        clock.advance(1.0)
    assert len(keys) == 1000
    in_the_minute = {kind: sum(r.path == f"/{kind}" for r in hook.received) for kind in kinds}
    assert all(count <= PACE_BURST + 60 / PACE_EVERY_S for count in in_the_minute.values()), in_the_minute
    while deliveries(engine):
        clock.advance(PACE_EVERY_S)
        assert await sender.send_once() > 0
    for kind in kinds:
        got: list[Received] = [r for r in hook.received if r.path == f"/{kind}"]
        assert sorted(keys_in([r.body for r in got], keys)) == sorted(keys), kind  # each alert exactly once
        assert len(got) <= PACE_BURST + math.ceil(len(keys) / messages.DIGEST_LIMIT[kind]), (kind, len(got))


async def test_a_slow_channel_holds_up_no_other(engine: sqlalchemy.Engine, hook: WebhookReceiver) -> None:
    with WebhookReceiver() as slow:
        slow.answer(200, delay_s=30.0)
        stuck = add_channel(engine, "json", slow.url())
        add_channel(engine, "json", hook.url())
        [key] = add_alerts(engine)
        sender = AlertSender(engine, settings(), Lease(engine, "alert-sender"), timeout_s=60.0)
        running = asyncio.create_task(sender.run())
        try:
            await asyncio.to_thread(slow.wait_for, 1)
            [got] = await asyncio.to_thread(hook.wait_for, 1)
            assert keys_in([got.body], [key]) == [key]
            # The fast channel's row goes once its answer is in; the slow one's is still being answered.
            await eventually(lambda: [channel_id for channel_id, _, _ in deliveries(engine)] == [stuck])
        finally:
            running.cancel()
            await asyncio.gather(running, return_exceptions=True)


# --- the running sender ---------------------------------------------------------------------------


async def test_the_running_sender_delivers_what_the_feeder_ingests_and_releases_its_lease(
        engine: sqlalchemy.Engine, hook: WebhookReceiver) -> None:
    add_channel(engine, "json", hook.url())
    sender = AlertSender(engine, settings(), Lease(engine, "alert-sender"))
    outbox = OutboxStore(engine)
    feeder = InboxFeeder(outbox, InboxStore(engine), on_fed=sender.wake)
    tasks = [asyncio.create_task(sender.run()), asyncio.create_task(feeder.run())]
    try:
        outbox.add_many([local_row(event_envelope(error("'user'")))])
        [got] = await asyncio.to_thread(hook.wait_for, 1)
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    [alert] = json.loads(got.body)["alerts"]
    with engine.connect() as connection:
        issue_id = connection.execute(sqlalchemy.text("select id from inbox_issue")).scalar_one()
        until = connection.execute(select(WORKER_LEASE.c.until)
                                   .where(WORKER_LEASE.c.name == "alert-sender")).scalar_one()
    assert (alert["rule"], alert["issue"]["title"], alert["issue"]["url"]) == (
        "new", "KeyError: 'user'", f"{PUBLIC_URL}/issue?id={issue_id}")
    assert until < time.time()  # released on the way out: another worker need not wait for it
