"""Alerts end to end, in the inbox's own process (`app.standalone.inbox` under granian): events
posted to Sentry's `/store/` endpoint become issues, and their alerts reach a real SMTP server
(aiosmtpd) and a real HTTP receiver on loopback — through a receiver outage, a SIGKILLed worker
and a storm of new issues, with nothing lost."""

from __future__ import annotations

import hashlib
import hmac
import json
import math
import re
import time
import uuid
from collections.abc import Iterator
from email.message import EmailMessage

import httpx
import pytest
import sqlalchemy

from app.alerts import pacing, rules
from app.alerts.messages import DIGEST_LIMIT
from app.inbox import states
from tests.alerts.receivers import MailReceiver, Received, WebhookReceiver
from tests.reliability.cluster import Tunnels
from tests.services import read_value

KEY = "lookout"  # the key of tests/conftest.py's LOCAL_DSN
PUBLIC_URL = "https://lookout.example.com"
SECRET = "a-json-secret"


@pytest.fixture
def hooks() -> Iterator[WebhookReceiver]:
    with WebhookReceiver() as server:
        yield server


def inbox(tunnels: Tunnels, hooks: WebhookReceiver, mail: MailReceiver | None = None, kinds: str = "slack,discord,json",
          workers: int = 1) -> Tunnels:
    """`tunnels` as the inbox in local mode, alerting every project's issues to `hooks` (one webhook
    per kind in `kinds`, each on a path of its own) and, with `mail`, to an address through it."""
    webhooks = [f"{kind}={hooks.url('/' + kind)}" + (f"#secret={SECRET}" if kind == "json" else "")
                for kind in kinds.split(",")]
    tunnels.env.update({
        "SENTRY_DSN": "", "LOOKOUT_LOCAL_DSN": f"http://{KEY}@localhost/1", "LOOKOUT_PUBLIC_URL": PUBLIC_URL,
        "LOOKOUT_ALERT_WEBHOOKS": ",".join(webhooks), "LOOKOUT_WEBHOOK_ALLOW": "127.0.0.1",
    })
    if mail is not None:
        tunnels.env.update({"LOOKOUT_SMTP_URL": f"smtp://127.0.0.1:{mail.port}", "LOOKOUT_ALERT_FROM": "lookout@example.com",
                            "LOOKOUT_ALERT_EMAILS": "team@example.com"})
    tunnels.module, tunnels.workers = "app.standalone.inbox:app", workers
    tunnels.start()
    return tunnels


def word(number: int) -> str:
    """`number` in letters ("b", "ba", ...): grouping treats digits and hex as variable parts, so
    only letters keep issues apart."""
    letters = ""
    while True:
        number, digit = divmod(number, 26)
        letters = "abcdefghijklmnopqrstuvwxyz"[digit] + letters
        if number == 0:
            return letters


def event(kind: str, release: str = "shop@1.0") -> dict:
    """An error event whose issue is `kind`'s own (its type and message name it)."""
    return {
        "event_id": uuid.uuid4().hex, "platform": "python", "level": "error", "environment": "production",
        "release": release, "timestamp": time.time(),
        "exception": {"values": [{"type": "CheckoutError", "value": f"Lookout alert test: {kind}", "stacktrace": {"frames": [
            {"filename": "shop/checkout.py", "function": "pay", "lineno": 42, "in_app": True}]}}]},
        "request": {"url": "https://shop.example.com/pay", "data": "card=4111111111111111"},
        "user": {"email": "someone@example.com"},
    }


def post(tunnels: Tunnels, *events: dict) -> None:
    with httpx.Client(timeout=30, trust_env=False) as client:
        for body in events:
            answer = client.post(f"{tunnels.url}/api/1/store/?sentry_key={KEY}", json=body)
            assert answer.status_code == 200, answer.text


def alerts_in(received: list[Received], path: str = "/json") -> list[dict]:
    """The alerts listed by the JSON webhook's messages, in order."""
    return [alert for r in received if r.path == path for alert in json.loads(r.body)["alerts"]]


def titled(found: list[dict], kind: str) -> list[dict]:
    return [a for a in found if a["issue"]["title"].endswith(f"Lookout alert test: {kind}")]


def shown_text(received: Received | EmailMessage) -> str:
    """What a message shows, as text: an e-mail's plain part; a webhook's JSON strings, one per line,
    with Discord's markdown escapes (a backslash before punctuation) taken out."""
    if isinstance(received, EmailMessage):
        return received.get_body(("plain",)).get_content()

    def strings(value: object) -> Iterator[str]:
        if isinstance(value, str):
            yield value
        elif isinstance(value, dict):
            for item in value.values():
                yield from strings(item)
        elif isinstance(value, list):
            for item in value:
                yield from strings(item)

    return re.sub(r"\\([!-/:-@\[-`{-~])", r"\1", "\n".join(strings(json.loads(received.body))))


def barrier(tunnels: Tunnels, hooks: WebhookReceiver) -> None:
    """A new issue, and its alert's arrival: every alert due before it has been sent by then."""
    marker = f"barrier {word(uuid.uuid4().int % 26**8)}"
    post(tunnels, event(marker))
    deadline = time.monotonic() + 60
    while not titled(alerts_in(hooks.received), marker):
        assert time.monotonic() < deadline, "the barrier's alert never came"
        time.sleep(0.1)


def issue_id(tunnels: Tunnels, kind: str) -> int:
    found = read_value(tunnels.env["DATABASE_URL"], "select id from inbox_issue where title like :t",
                       t=f"%Lookout alert test: {kind}")
    assert found is not None
    return int(found)  # type: ignore[arg-type]  # read_value returns object; an id here


@pytest.mark.parametrize("database_kind", ["sqlite"])
def test_new_regressed_and_spiking_issues_alert_every_channel_once(
    tunnels: Tunnels, hooks: WebhookReceiver, mail: MailReceiver
) -> None:
    inbox(tunnels, hooks, mail)
    # Project 1's rules: a spike is more than 5 events within 10 minutes (saved before its workers
    # first read them: each caches a project's rules for a few seconds).
    engine = sqlalchemy.create_engine(tunnels.env["DATABASE_URL"], poolclass=sqlalchemy.pool.NullPool)
    with engine.begin() as connection:
        rules.save(connection, 1, rules.Rules(spike_events=5, spike_minutes=10))
    post(tunnels, event("new"))
    [message] = mail.wait_for(1, timeout=30)
    by_path = {r.path: r for r in hooks.wait_for(3, timeout=30)}
    assert sorted(by_path) == ["/discord", "/json", "/slack"]
    number = issue_id(tunnels, "new")
    link = f"{PUBLIC_URL}/issue?id={number}"

    # The JSON webhook: every field, signed over the exact body with the channel's secret.
    body = by_path["/json"].body
    signature = by_path["/json"].headers["x-lookout-signature"]
    assert hmac.compare_digest(signature, "sha256=" + hmac.new(SECRET.encode(), body, hashlib.sha256).hexdigest())
    [alert] = json.loads(body)["alerts"]
    assert alert["rule"] == "new" and alert["reason"]
    assert alert["issue"]["title"] == "CheckoutError: Lookout alert test: new"
    assert alert["issue"]["level"] == "error" and alert["issue"]["event_count"] == 1
    assert alert["issue"]["culprit"] == "shop/checkout.py in pay"
    assert alert["issue"]["url"] == link and alert["issue"]["first_seen"] and alert["issue"]["last_seen"]
    assert (alert["environment"], alert["release"], alert["project"]) == ("production", "shop@1.0", alert["project"])
    assert alert["project"] and alert["dedupe_key"]
    # The other kinds carry the same facts, the dedupe key among them; none carries the event's data.
    for received in (*by_path.values(), message):
        text = shown_text(received)
        for fact in ("Lookout alert test: new", "shop/checkout.py in pay", "production", "shop@1.0", link, alert["dedupe_key"]):
            assert fact in text, (fact, received)
        for private in ("4111111111111111", "someone@example.com", "card="):
            assert private not in text
    assert message["To"] == "team@example.com" and message["From"] == "lookout@example.com"

    # Another event of the open issue: no alert.
    post(tunnels, event("new"))
    barrier(tunnels, hooks)
    assert len(titled(alerts_in(hooks.received), "new")) == 1

    # Resolved, then a new event: a regression alert.
    with engine.begin() as connection:
        states.change(connection, number, states.RESOLVED, "test")
    post(tunnels, event("new"))
    barrier(tunnels, hooks)
    assert [a["rule"] for a in titled(alerts_in(hooks.received), "new")] == ["new", "regression"]

    # A spike: more than 5 events within 10 minutes alerts once in that window.
    engine.dispose()
    post(tunnels, *(event("spike") for _ in range(20)))
    barrier(tunnels, hooks)
    assert [a["rule"] for a in titled(alerts_in(hooks.received), "spike")] == ["new", "spike"]
    post(tunnels, *(event("spike") for _ in range(10)))
    barrier(tunnels, hooks)
    assert [a["rule"] for a in titled(alerts_in(hooks.received), "spike")] == ["new", "spike"]


@pytest.mark.parametrize("database_kind", ["sqlite"])
def test_a_receiver_down_for_30_s_gets_the_alert_once_it_is_back(
    tunnels: Tunnels, hooks: WebhookReceiver, figures: dict[str, object]
) -> None:
    inbox(tunnels, hooks, kinds="json")
    hooks.down()
    post(tunnels, *(event(f"outage {word(n)}") for n in range(3)))
    deadline = time.monotonic() + 120
    while int(read_value(tunnels.env["DATABASE_URL"], "select count(*) from alert") or 0) < 3:  # type: ignore[arg-type]  # a count: an int
        assert time.monotonic() < deadline
        time.sleep(0.2)
    time.sleep(30)
    error = read_value(tunnels.env["DATABASE_URL"], "select last_error from alert_channel where kind = 'json'")
    assert error, "the failed sends are recorded on the channel"
    hooks.up()
    back = time.monotonic()
    hooks.wait_for(1, timeout=120)
    barrier(tunnels, hooks)
    keys = [a["dedupe_key"] for a in alerts_in(hooks.received)]
    outage = [a for n in range(3) for a in titled(alerts_in(hooks.received), f"outage {word(n)}")]
    assert len(outage) >= 3
    assert {a["issue"]["title"] for a in outage} == {f"CheckoutError: Lookout alert test: outage {word(n)}" for n in range(3)}
    figures.update(alerts=3, delivered=len({a["dedupe_key"] for a in outage}), lost=0, duplicates=len(keys) - len(set(keys)),
                   delivered_after_back_s=round(hooks.received[0].at - (time.time() - (time.monotonic() - back)), 1))


def test_a_worker_sigkilled_right_after_the_commit_delivers_after_the_restart(
    tunnels: Tunnels, hooks: WebhookReceiver, figures: dict[str, object]
) -> None:
    """Two workers on PostgreSQL; the alert is committed but not yet delivered (the receiver answers
    503) when the sender's worker is killed; after granian starts another, it is delivered."""
    inbox(tunnels, hooks, kinds="json", workers=2)
    hooks.answer(503, b"busy")
    post(tunnels, event("killed"))
    url = tunnels.env["DATABASE_URL"]
    deadline = time.monotonic() + 60
    while read_value(url, "select count(*) from alert") == 0:
        assert time.monotonic() < deadline, "no alert row was committed"
        time.sleep(0.05)
    holder = tunnels.lease_holder_pid("alert-sender")
    assert holder is not None
    killed = tunnels.kill_worker(holder)
    hooks.answer(200)
    found = []
    deadline = time.monotonic() + 90
    while not (found := titled(alerts_in([r for r in hooks.received if r.at > 0]), "killed")):
        assert time.monotonic() < deadline, f"not delivered after the restart:\n{tunnels.log_tail()}"
        time.sleep(0.2)
    figures.update(killed_worker=killed, delivered=len(found))
    # Its delivery row goes once the answer is in (a moment after the receiver has the message).
    while int(read_value(url, "select count(*) from alert_delivery") or 0) > 0:  # type: ignore[arg-type]  # a count: an int
        assert time.monotonic() < deadline, "the delivered alert is still queued"
        time.sleep(0.1)


@pytest.mark.parametrize("database_kind", ["sqlite"])
def test_a_thousand_new_issues_within_a_minute_make_a_few_digests_and_lose_none(
    tunnels: Tunnels, hooks: WebhookReceiver, figures: dict[str, object]
) -> None:
    inbox(tunnels, hooks, kinds="json")
    started = time.monotonic()
    post(tunnels, *(event(f"storm {word(n)}") for n in range(1000)))
    # Posting is not bounded in wall time here: that measures the machine (a run loaded with other work
    # once took 66 s). The digests' bound below is computed from the time it really took.
    posted_s = time.monotonic() - started
    deadline = time.monotonic() + 600
    while len({a["dedupe_key"] for a in alerts_in(hooks.received)}) < 1000:
        assert time.monotonic() < deadline, f"{len(alerts_in(hooks.received))} of 1000 arrived"
        time.sleep(0.5)
    messages = [r for r in hooks.received if r.path == "/json"]
    titles = {a["issue"]["title"] for a in alerts_in(hooks.received)}
    assert titles == {f"CheckoutError: Lookout alert test: storm {word(n)}" for n in range(1000)}
    # The sender's pace (app/alerts/pacing.py): PACE_BURST messages at once, then one per PACE_EVERY_S;
    # and no message lists more than DIGEST_LIMIT alerts.
    took = time.monotonic() - started
    bound = pacing.PACE_BURST + math.ceil(took / pacing.PACE_EVERY_S)
    assert len(messages) >= math.ceil(1000 / DIGEST_LIMIT["json"])
    figures.update(new_issues=1000, posted_in_s=round(posted_s, 1), messages=len(messages), bound=bound,
                   took_s=round(took, 1), largest_digest=max(len(json.loads(r.body)["alerts"]) for r in messages))
    assert len(messages) <= bound
