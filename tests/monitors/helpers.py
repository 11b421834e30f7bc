"""What the monitor tests share: the real sentry-sdk's check-ins, stored; the monitors and check-ins read back."""

from __future__ import annotations

from typing import Any

import sentry_sdk.crons
import sqlalchemy

from app.alerts.tables import ALERTS
from app.ingest.store import InboxStore
from app.monitors.tables import CHECKINS, MONITORS
from tests.factories import sentry_sdk_envelopes, store_all

EVERY_MINUTE = {"schedule": {"type": "interval", "value": 1, "unit": "minute"}, "checkin_margin": 1,
                "max_runtime": 2, "timezone": "UTC"}


class JobFailed(RuntimeError):
    pass


def run_job(inbox: InboxStore, slug: str, config: dict[str, Any] | None = None, fails: bool = False) -> None:
    """A job decorated with the real `sentry_sdk.crons.monitor`, run once, its check-ins stored."""
    @sentry_sdk.crons.monitor(monitor_slug=slug, monitor_config=config)  # type: ignore[arg-type]
    def job() -> None:
        if fails:
            raise JobFailed("the nightly export failed")

    with sentry_sdk_envelopes(release="shop@2.1", environment="production") as bodies:
        try:
            job()
        except JobFailed:
            pass
    store_all(inbox, bodies)


def check_in(inbox: InboxStore, slug: str, status: str, config: dict[str, Any] | None = None,
             check_in_id: str | None = None) -> str:
    """One `sentry_sdk.crons.capture_checkin`, stored; its check_in_id."""
    with sentry_sdk_envelopes(release="shop@2.1", environment="production") as bodies:
        sent = sentry_sdk.crons.capture_checkin(monitor_slug=slug, status=status, monitor_config=config,  # type: ignore[arg-type]
                                                check_in_id=check_in_id)
    store_all(inbox, bodies)
    return str(sent)


def monitor(engine: sqlalchemy.Engine, slug: str) -> Any:
    with engine.connect() as connection:
        return connection.execute(sqlalchemy.select(MONITORS).where(MONITORS.c.slug == slug)).one()


def checkins(engine: sqlalchemy.Engine, slug: str) -> list[Any]:
    with engine.connect() as connection:
        return list(connection.execute(sqlalchemy.select(CHECKINS).join(MONITORS).where(MONITORS.c.slug == slug)
                                       .order_by(CHECKINS.c.id)).all())


def alerts(engine: sqlalchemy.Engine) -> list[tuple[str, str, str]]:
    """(rule, title, reason) of every alert, oldest first."""
    with engine.connect() as connection:
        return [tuple(row) for row in connection.execute(  # type: ignore[misc]
            sqlalchemy.select(ALERTS.c.rule, ALERTS.c.title, ALERTS.c.reason).order_by(ALERTS.c.id))]
