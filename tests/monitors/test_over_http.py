"""The real sentry-sdk, over HTTP on loopback, into Sentry's envelope endpoint: its check-ins pass the
tunnel's checks and are scrubbed before the first write (app/ingest/before_write.py: `check_in` is
scrubbed as an event's `extra`, so its payload is kept, not reduced to its type), then the feeder
makes the monitor."""

from __future__ import annotations

from collections.abc import Callable

import anyio.to_thread
import pytest
import sentry_sdk
import sentry_sdk.crons

from app.ingest.endpoints import Ingest
from app.ingest.feeder import InboxFeeder
from reflex_lookout.outbox import OutboxStore
from tests.ingest.helpers import served
from tests.monitors.helpers import EVERY_MINUTE, checkins, monitor

pytestmark = pytest.mark.anyio


async def test_the_sdks_check_ins_over_http_make_the_monitor(ingest: Ingest, sentry_init: Callable[..., None]) -> None:
    async with served(ingest) as port:
        sentry_init(dsn=f"http://lookout@127.0.0.1:{port}/1", default_integrations=False, send_client_reports=False,
                    release="shop@3.0", environment="staging")

        @sentry_sdk.crons.monitor(monitor_slug="hourly-sync", monitor_config=EVERY_MINUTE)  # type: ignore[arg-type]
        def job() -> None:
            pass

        def run() -> None:
            job()
            sentry_sdk.flush(timeout=10)

        await anyio.to_thread.run_sync(run)
    assert ingest.tunnel.stats.accepted == 2
    while InboxFeeder(OutboxStore(ingest.inbox.engine), ingest.inbox).feed_once():
        pass
    found = monitor(ingest.inbox.engine, "hourly-sync")
    assert (found.state, found.schedule_type, found.schedule_unit) == ("ok", "interval", "minute")
    [row] = checkins(ingest.inbox.engine, "hourly-sync")
    assert (row.status, row.environment, row.release) == ("ok", "staging", "shop@3.0")
