"""A monitor's alerts delivered for real: the real sentry-sdk's job stops checking in, the watcher's
pass after its deadline makes it missed, and the alert sender tells a real SMTP server and a JSON
webhook on loopback; the job's next ok check-in sends the recovery the same way."""

from __future__ import annotations

import json

import pytest
import sqlalchemy
from sqlalchemy import insert

from app.alerts.channels import CHANNELS
from app.alerts.sender import AlertSender
from app.ingest.store import InboxStore
from app.monitors.watcher import INTERVAL_S, MonitorWatcher
from app.settings import Settings
from reflex_lookout.background import Lease
from tests.alerts.receivers import MailReceiver, WebhookReceiver
from tests.monitors.helpers import EVERY_MINUTE, monitor, run_job

pytestmark = pytest.mark.anyio
PUBLIC_URL = "https://lookout.example.com"


def add_channel(engine: sqlalchemy.Engine, kind: str, target: str) -> None:
    with engine.begin() as connection:
        connection.execute(insert(CHANNELS).values(kind=kind, target=target, secret="", origin="console",
                                                   project_id=None, enabled=True, created_at=1.0, last_error=""))


def sender(engine: sqlalchemy.Engine, mail: MailReceiver) -> AlertSender:
    settings = Settings.from_env({"LOOKOUT_WEBHOOK_ALLOW": "127.0.0.1", "LOOKOUT_PUBLIC_URL": PUBLIC_URL,
                                  "LOOKOUT_ALERT_FROM": "lookout@example.com",
                                  "LOOKOUT_SMTP_URL": f"smtp://{mail.host}:{mail.port}"})
    return AlertSender(engine, settings, Lease(engine, "alert-sender"), rand=lambda: 1.0, linger_s=0.0)


async def test_a_missed_job_alerts_by_email_and_webhook_then_its_recovery_does(
        inbox: InboxStore, hook: WebhookReceiver, mail: MailReceiver) -> None:
    engine = inbox.engine
    add_channel(engine, "json", hook.url("/json"))
    add_channel(engine, "email", "ops@example.com")
    alerts_sender = sender(engine, mail)
    watcher = MonitorWatcher(engine, Lease(engine, "monitor-watcher"), on_alert=lambda: None)

    run_job(inbox, "nightly-export", EVERY_MINUTE)  # checks in once, then never again
    found = monitor(engine, "nightly-export")
    deadline = found.next_expected_at + 60 * found.checkin_margin_min
    passed = await watcher.step(deadline + INTERVAL_S)  # the first pass after the deadline notices it
    assert passed is not None and passed.missed == 1
    assert await alerts_sender.send_once() == 2

    [received] = hook.wait_for(1)
    [alert] = json.loads(received.body)["alerts"]
    assert (alert["rule"], alert["project"], alert["issue"]["title"], alert["issue"]["url"]) == (
        "missed", "Lookout", "Monitor nightly-export: missed", f"{PUBLIC_URL}/monitors")
    assert alert["reason"].startswith("The monitor nightly-export missed its check-in expected at ")
    [message] = mail.wait_for(1)
    assert message["Subject"] == "[Lookout] Monitor missed in Lookout: Monitor nightly-export: missed"
    text = message.get_body(("plain",)).get_content()  # type: ignore[union-attr]
    assert "missed its check-in expected at" in text and f"{PUBLIC_URL}/monitors" in text

    run_job(inbox, "nightly-export", EVERY_MINUTE)  # the job runs again
    assert await alerts_sender.send_once() == 2
    recovered = json.loads(hook.wait_for(2)[1].body)["alerts"][0]
    assert (recovered["rule"], recovered["issue"]["title"]) == ("recovered", "Monitor nightly-export: ok")
    assert recovered["reason"].endswith(", after it was missed.")
    assert mail.wait_for(2)[1]["Subject"].startswith("[Lookout] Monitor recovered in Lookout")
