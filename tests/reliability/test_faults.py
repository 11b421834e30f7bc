"""Faults under load, on PostgreSQL with two workers (the outage and the SIGKILL also on one SQLite
file shared by two worker processes): nothing the tunnel acknowledged is lost.

Each test posts distinct envelopes (so each can be told apart at the upstream) and states its
figures: sent, acknowledged (answered 200), delivered (arrived at the upstream), lost (acknowledged
but never delivered: always 0) and duplicates (delivered more than once).
"""

from __future__ import annotations

import asyncio
import collections
import socket
import time
from collections.abc import Callable

import pytest

from plugin_support.envelopes import error_event
from plugin_support.helpers import until
from plugin_support.upstream import Upstream
from reflex_lookout.forwarder import LANE_BATCH
from tests.reliability.cluster import Outcome, Tunnels, post_all
from tests.services import Postgres

pytestmark = pytest.mark.anyio
# Bodies acknowledged after a fault is over (the database back) before the test's load stops: the
# load spans the fault and the recovery, and no longer.
AFTER_FAULT = 300


def bodies(upstream: Upstream, count: int, label: str) -> list[bytes]:
    dsn = f"http://public@127.0.0.1:{upstream.port}/42"
    return [error_event(dsn, message=f"{label} {n}") for n in range(count)]


async def all_delivered(upstream: Upstream, outcome: Outcome, timeout: float = 90) -> None:
    wanted = set(outcome.acknowledged)
    await until(lambda: wanted <= {r.body for r in upstream.accepted}, timeout)


def account(figures: dict[str, object], sent: int, outcome: Outcome, upstream: Upstream) -> tuple[int, int]:
    """Record the figures; (lost, duplicates)."""
    delivered = collections.Counter(r.body for r in upstream.accepted)
    lost = sum(1 for body in set(outcome.acknowledged) if body not in delivered)
    duplicates = sum(n - 1 for n in delivered.values() if n > 1)
    figures.update(sent=sent, acknowledged=len(outcome.acknowledged), delivered=len(delivered), lost=lost,
                   duplicates=duplicates, refused=dict(outcome.refused), transport_errors=outcome.transport_errors)
    return lost, duplicates


@pytest.mark.parametrize("database_kind", ["postgresql", "sqlite"])
async def test_an_upstream_outage_while_envelopes_arrive_then_recovery(
    tunnels: Tunnels, upstream: Upstream, figures: dict[str, object]
) -> None:
    upstream.respond(503, {"Retry-After": "1"})
    tunnels.start()
    sent = bodies(upstream, 600, "outage")
    outcome = await post_all(tunnels.url, sent, clients=16)
    assert len(outcome.acknowledged) == len(sent)  # accepted while Sentry is down
    assert not upstream.accepted
    upstream.respond(200)
    await all_delivered(upstream, outcome)
    lost, duplicates = account(figures, len(sent), outcome, upstream)
    assert (lost, duplicates) == (0, 0)
    assert len(upstream.received) > len(sent)  # it kept trying during the outage


def after_fault(outcome: Outcome, over: list[int]) -> Callable[[], bool]:
    """For `post_all(until=...)`: the load goes on until AFTER_FAULT bodies were acknowledged after
    the fault was over (`over` gets the count acknowledged by then), and no longer."""
    return lambda: bool(over) and len(outcome.acknowledged) >= over[0] + AFTER_FAULT


@pytest.mark.parametrize("database_kind", ["postgresql", "sqlite"])
async def test_sigkill_of_a_worker_mid_load_then_its_restart(
    tunnels: Tunnels, upstream: Upstream, figures: dict[str, object]
) -> None:
    upstream.hang(0.005)  # a backlog builds up, so a kill finds rows in flight
    tunnels.start()
    sent = bodies(upstream, 2000, "kill")
    loading = asyncio.create_task(post_all(tunnels.url, sent, clients=16))
    await until(lambda: len(upstream.accepted) >= 300, timeout=60)
    forwarding = await asyncio.to_thread(tunnels.lease_holder_pid, "forwarder")
    assert forwarding in tunnels.worker_pids()
    killed = tunnels.kill_worker(forwarding)  # the worker that forwards, mid-delivery
    outcome = await loading
    await until(lambda: len(tunnels.worker_pids()) == tunnels.workers and killed not in tunnels.worker_pids(), 30)
    upstream.hang(0)
    await all_delivered(upstream, outcome)
    lost, duplicates = account(figures, len(sent), outcome, upstream)
    figures["killed_worker"] = killed
    assert lost == 0
    assert len(outcome.acknowledged) + outcome.transport_errors == len(sent)
    # Only what the killed worker had sent but not yet removed can go twice (Sentry keeps one
    # per event_id): at most a lane's batch.
    assert duplicates <= LANE_BATCH


async def test_a_full_outbox_answers_503_with_retry_after_and_loses_nothing_it_accepted(
    tunnels: Tunnels, upstream: Upstream, figures: dict[str, object]
) -> None:
    upstream.respond(503, {"Retry-After": "1"})
    tunnels.env["LOOKOUT_OUTBOX_MAX_BYTES"] = str(150_000)
    tunnels.start()
    sent = bodies(upstream, 1500, "full")
    outcome = await post_all(tunnels.url, sent, clients=8)
    assert outcome.refused[503] > 0 and outcome.retry_after_missing == 0
    assert 0 < len(outcome.acknowledged) < len(sent)
    assert set(outcome.refused) == {503} and outcome.transport_errors == 0
    upstream.respond(200)
    await all_delivered(upstream, outcome)
    lost, duplicates = account(figures, len(sent), outcome, upstream)
    assert (lost, duplicates) == (0, 0)
    assert {r.body for r in upstream.accepted} == set(outcome.acknowledged)  # nothing refused went on


async def test_a_body_trickling_in_blocks_no_one_and_times_out(
    tunnels: Tunnels, upstream: Upstream, figures: dict[str, object]
) -> None:
    tunnels.env["LOOKOUT_BODY_TIMEOUT_S"] = "3"
    tunnels.start()
    body = bodies(upstream, 1, "slow")[0]
    trickler = socket.create_connection(("127.0.0.1", tunnels.port))
    trickler.sendall(b"POST /monitoring HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n" % len(body) + body[:10])

    async def trickle() -> bytes:
        loop = asyncio.get_running_loop()
        trickler.setblocking(False)
        for byte in body[10:20]:  # a byte every 0.2 s (2 s in all), then silence
            try:
                await loop.sock_sendall(trickler, bytes([byte]))
            except (BrokenPipeError, ConnectionResetError):
                break  # this loop, busy posting the others, trickled past the deadline: answered already
            await asyncio.sleep(0.2)
        return await asyncio.wait_for(loop.sock_recv(trickler, 4096), 30)

    started = time.monotonic()
    trickling = asyncio.create_task(trickle())
    others, outcome = bodies(upstream, 300, "meanwhile"), Outcome()
    # Served while it trickles: the first few are answered long before its 3 s are up, on a loaded
    # machine too (all 300 took longer than that once, beside the other test processes).
    await post_all(tunnels.url, others[:30], clients=8, outcome=outcome)
    assert len(outcome.acknowledged) == 30 and not trickling.done()
    await post_all(tunnels.url, others[30:], clients=8, outcome=outcome)
    assert len(outcome.acknowledged) == len(others)
    answer = await trickling
    trickler.close()
    assert answer.startswith(b"HTTP/1.1 408") and b"did not arrive within 3 s" in answer
    await all_delivered(upstream, outcome)
    lost, duplicates = account(figures, len(others), outcome, upstream)
    figures["slow_client_answered_after_s"] = round(time.monotonic() - started, 1)
    assert (lost, duplicates) == (0, 0)
    assert body not in {r.body for r in upstream.accepted}


async def test_a_thousand_concurrent_connections(
    tunnels: Tunnels, upstream: Upstream, figures: dict[str, object]
) -> None:
    tunnels.start()
    sent = bodies(upstream, 1000, "crowd")
    outcome = await post_all(tunnels.url, sent, clients=1000, retry_503=True, timeout=60)
    assert outcome.transport_errors == 0 and outcome.retry_after_missing == 0
    assert len(outcome.acknowledged) == len(sent)
    await all_delivered(upstream, outcome)
    lost, duplicates = account(figures, len(sent), outcome, upstream)
    assert (lost, duplicates) == (0, 0)


async def test_duplicate_envelopes_are_each_acknowledged_and_forwarded(
    tunnels: Tunnels, upstream: Upstream, figures: dict[str, object]
) -> None:
    # The tunnel is a relay: it keeps and forwards every copy it acknowledged, in order; Sentry
    # (like Lookout's inbox, tests/ingest/test_store.py) keeps one event per event_id.
    tunnels.start()
    once = bodies(upstream, 50, "twice")
    sent = once * 4
    outcome = await post_all(tunnels.url, sent, clients=16)
    assert len(outcome.acknowledged) == len(sent)
    await until(lambda: len(upstream.accepted) >= len(sent), timeout=60)
    delivered = collections.Counter(r.body for r in upstream.accepted)
    figures.update(sent=len(sent), distinct=len(once), acknowledged=len(outcome.acknowledged),
                   delivered=sum(delivered.values()), lost=sum(4 - delivered[b] for b in once if delivered[b] < 4))
    assert all(delivered[body] == 4 for body in once)


async def test_postgresql_restarting_under_load_answers_503_and_loses_nothing(
    tunnels: Tunnels, upstream: Upstream, postgres_server: Postgres, figures: dict[str, object]
) -> None:
    upstream.hang(0.002)
    tunnels.start()
    outcome, back = Outcome(), []
    loading = asyncio.create_task(post_all(tunnels.url, bodies(upstream, 4000, "restart"), clients=8, retry_503=True,
                                           outcome=outcome, until=after_fault(outcome, back)))
    await until(lambda: len(outcome.acknowledged) >= 400, timeout=60)
    figures["acknowledged_before_restart"] = len(outcome.acknowledged)
    await asyncio.to_thread(postgres_server.restart, 2.0)  # down for 2 s, mid-load
    back.append(len(outcome.acknowledged))
    await loading
    upstream.hang(0)
    await all_delivered(upstream, outcome)
    lost, duplicates = account(figures, len(outcome.sent), outcome, upstream)
    figures["acknowledged_after_restart"] = len(outcome.acknowledged) - back[0]
    assert outcome.refused[503] > 0 and outcome.retry_after_missing == 0  # it said so while down
    assert set(outcome.refused) == {503} and outcome.transport_errors == 0
    assert len(outcome.acknowledged) == len(outcome.sent) and lost == 0
    assert duplicates == 0
    assert len(outcome.acknowledged) - back[0] >= AFTER_FAULT  # the load went on after the restart
