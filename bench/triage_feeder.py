"""What the tag index costs the feeder, for bench/triage.py: `rates(make_url, envelopes, rounds)`.

The envelopes (`envelopes(n)`): half made by the real sentry-sdk (Python errors of 60 kinds, with
the runtime context, the modules list, breadcrumbs, a request, a user and tags, as a web app's
events are), half `@sentry/react` errors (bench/envelope.py's event, its error, browser, os, user,
release and url varied). Each round feeds them into two fresh databases through the feeder
(outbox rows written first, untimed; then `InboxFeeder.feed_once` until done, timed; scrubbing off), once as is
and once with `app.ingest.event_writer.derived_tags` patched to find no tag, alternating which goes
first; a variant's rate is the median of its rounds. With the index, the tag counter runs beside the
feeder as the app runs it (app/ingest/tag_counter.py: a step whenever a batch was fed, at most every
0.5 s), in a thread of its own; the feeder's rate is the goal's figure, and the time until the counter
has emptied the queue is printed beside it.

`lag(url, bodies, per_second)`: the app's own loops (`InboxFeeder.run`, `TagCounter.run`, woken as
app/wiring.py wakes them) on one event loop while envelopes are committed to the outbox at a steady
`per_second`; how long after its commit each event is counted in the index (every event has one
`level` tag: the index's `level` total is the number of events counted, oldest first).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
import statistics
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from unittest import mock

import sentry_sdk
import sentry_sdk.envelope
import sentry_sdk.transport
import sqlalchemy
from sentry_sdk.integrations.argv import ArgvIntegration
from sentry_sdk.integrations.modules import ModulesIntegration
from sentry_sdk.integrations.stdlib import StdlibIntegration

from app import db
from app.ingest.feeder import BATCH, InboxFeeder
from app.ingest.store import InboxStore
from app.ingest.tag_counter import LIMIT, TagCounter, count_queued, queued
from bench import envelope
from bench.harness.feeding import fed_per_second, unscrubbed
from reflex_lookout.background import Lease
from reflex_lookout.dsn import Dsn
from reflex_lookout.outbox import LOCAL, OutboxStore, new_row

LOCAL_DSN = "http://bench@localhost/1"
BROWSERS = [("Chrome", "124.0.0"), ("Safari", "17.4"), ("Firefox", "125.0"), ("Edge", "124.0.0"), ("Chrome", "123.0.0")]
SYSTEMS = [("Windows", ">=10"), ("macOS", "14.4"), ("iOS", "17.4"), ("Android", "14"), ("Linux", "")]
PAGES = ["dashboard", "cart", "checkout", "orders", "profile", "search", "settings", "invoices"]


class Kept(sentry_sdk.transport.Transport):
    """The real sentry-sdk's envelopes, kept instead of sent."""

    def __init__(self, options: dict[str, Any] | None = None) -> None:
        super().__init__(options)
        self.bodies: list[bytes] = []

    def capture_envelope(self, envelope: sentry_sdk.envelope.Envelope) -> None:
        self.bodies.append(envelope.serialize())


class ShopError(Exception):
    """What the Python events raise (60 subclasses: 60 kinds of error)."""


def with_request(url: str) -> Callable[[Any, dict[str, Any]], Any]:
    """An event processor adding the request a web framework's integration would."""
    def add(event: Any, _hint: dict[str, Any]) -> Any:
        event["request"] = {"url": url, "method": "POST",
                            "headers": {"User-Agent": "python-requests/2.32", "Content-Type": "application/json"}}
        return event
    return add


def python_envelopes(n: int, rng: random.Random) -> list[bytes]:
    kept = Kept()
    sentry_sdk.init(dsn=LOCAL_DSN, transport=kept, default_integrations=False, auto_enabling_integrations=False,
                    integrations=[StdlibIntegration(), ModulesIntegration(), ArgvIntegration()],
                    release="shop@2.49.0", environment="production", max_breadcrumbs=20)
    kinds = [type(f"Shop{k}Error", (ShopError,), {}) for k in range(60)]
    try:
        for _ in range(n):
            with sentry_sdk.new_scope() as scope:
                page = rng.choice(PAGES)
                scope.set_user({"id": str(int(rng.paretovariate(1.0) * 10)), "email": f"u{rng.randrange(5000)}@example.com"})
                scope.set_tag("customer.tier", rng.choice(("free", "pro", "team", "enterprise")))
                scope.set_tag("region", rng.choice(("eu-west", "us-east", "ap-south")))
                scope.set_transaction_name(f"/api/{page}/{{id}}")
                scope.add_event_processor(with_request(f"https://shop.example/api/{page}/{rng.randrange(900)}"))
                for step in range(8):
                    scope.add_breadcrumb(category="query", message=f"SELECT * FROM {page} WHERE id = {step}")
                try:
                    raise rng.choice(kinds)(f"{page} {rng.randrange(10)} failed")
                except ShopError as exc:
                    sentry_sdk.capture_exception(exc)
        sentry_sdk.flush()
    finally:
        sentry_sdk.get_client().close()
        sentry_sdk.get_global_scope().set_client(None)
    return kept.bodies


def browser_envelope(rng: random.Random) -> bytes:
    event = envelope.error_event(time.time())
    browser, system, page = rng.choice(BROWSERS), rng.choice(SYSTEMS), rng.choice(PAGES)
    event.update(event_id=uuid.uuid4().hex, release=f"shop@2.{rng.randrange(45, 50)}.0",
                 environment=rng.choice(("production",) * 9 + ("staging",)),
                 user={"id": f"u_{int(rng.paretovariate(1.0) * 100)}", "ip_address": "{{auto}}"},
                 tags={"route": f"/{page}", "feature": rng.choice(("watchlist", "alerts", "billing"))})
    event["exception"]["values"][0].update(type=rng.choice(("TypeError", "RangeError", "SyntaxError")),
                                           value=f"Cannot read properties of undefined (reading '{rng.choice(PAGES)}')")
    event["request"]["url"] = f"https://shop.example/{page}?tab={rng.randrange(5)}"
    event["contexts"].update(browser={"name": browser[0], "version": browser[1]}, os={"name": system[0], "version": system[1]})
    payload = json.dumps(event, separators=(",", ":")).encode()
    header = json.dumps({"event_id": event["event_id"], "sent_at": "2026-11-26T12:00:00.000Z"}).encode()
    return b"\n".join([header, json.dumps({"type": "event", "length": len(payload)}).encode(), payload]) + b"\n"


def envelopes(n: int, seed: int = 23) -> list[bytes]:
    """`n` envelopes, alternately the real sentry-sdk's (Python) and @sentry/react's (see the module's docstring)."""
    rng = random.Random(seed)
    python, browser = python_envelopes((n + 1) // 2, rng), [browser_envelope(rng) for _ in range(n // 2)]
    return [body for pair in zip(python, [*browser, b""], strict=False) for body in pair if body][:n]


class Counter:
    """The tag counter beside the feeder, in a thread: a step, then (when it found less than a full
    LIMIT of rows) a pause of `interval_s`, as `TagCounter.run` paces itself while batches are fed."""

    def __init__(self, engine: sqlalchemy.Engine, interval_s: float = 0.5) -> None:
        self.engine, self.interval_s = engine, interval_s
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self._run, name="tag-counter", daemon=True)

    def _run(self) -> None:
        while not self.stopping.is_set():
            try:
                taken = count_queued(self.engine)
            except sqlalchemy.exc.OperationalError as exc:  # as TagCounter.run: the step is taken again
                print(f"  (tag counter: {type(exc.orig).__name__}; taken again)")
                taken = 0
            if taken < LIMIT:
                self.stopping.wait(self.interval_s)

    def __enter__(self) -> Counter:
        self.thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self.stopping.set()
        self.thread.join()


@dataclass
class Fed:
    rate: float  # events/s of the feeder
    counted_after_s: float  # from the feeder's last batch until the tag queue was empty (0: no index)


def feed(url: str, bodies: list[bytes], index_tags: bool) -> Fed:
    """The feeder reading `bodies` into the fresh database at `url` (with the tag counter beside it)."""
    engine = db.engine(url)
    db.migrate(engine)
    inbox = InboxStore(engine, scrubbing_of=unscrubbed)
    inbox.ensure_project(Dsn.parse(LOCAL_DSN))
    with contextlib.ExitStack() as patches:
        if not index_tags:
            patches.enter_context(mock.patch("app.ingest.event_writer.derived_tags", new=lambda _event: []))
            return Fed(fed_per_second(inbox, bodies, LOCAL_DSN), 0.0)
        with Counter(engine):
            rate = fed_per_second(inbox, bodies, LOCAL_DSN)
            fed_at = time.perf_counter()
            while queued(engine):
                time.sleep(0.01)
            counted_after_s = time.perf_counter() - fed_at
    engine.dispose()
    return Fed(rate, counted_after_s)


def rates(make_url: Callable[[str], str], bodies: list[bytes], rounds: int) -> tuple[list[Fed], list[float]]:
    """Per round, the feeder with the tag index (and its counter) and its rate without; `make_url(name)`
    gives a fresh database."""
    with_index: list[Fed] = []
    without: list[float] = []
    feed(make_url("feeder_warmup"), bodies[:BATCH], True)  # first-use costs (imports, caches) out of the rounds
    for round_ in range(rounds):
        for index_tags in (True, False) if round_ % 2 == 0 else (False, True):
            fed = feed(make_url(f"feeder_{round_}_{'with' if index_tags else 'without'}"), bodies, index_tags)
            if index_tags:
                with_index.append(fed)
            else:
                without.append(fed.rate)
    return with_index, without


def lag(url: str, bodies: list[bytes], per_second: int) -> list[float]:
    """Seconds from each event's commit to the outbox until it is counted in the tag index, with the
    app's feeder and tag counter running while `bodies` arrive at `per_second` (see the docstring)."""
    engine = db.engine(url)
    db.migrate(engine)
    inbox = InboxStore(engine, scrubbing_of=unscrubbed)
    inbox.ensure_project(Dsn.parse(LOCAL_DSN))
    try:
        return asyncio.run(_lag(engine, inbox, bodies, per_second))
    finally:
        engine.dispose()


async def _lag(engine: sqlalchemy.Engine, inbox: InboxStore, bodies: list[bytes], per_second: int) -> list[float]:
    outbox = OutboxStore(engine)
    counter = TagCounter(engine, Lease(engine, "tag-counter"))
    feeder = InboxFeeder(outbox, inbox, lease=Lease(engine, "inbox-feeder"), on_fed=counter.wake)
    tasks = [asyncio.create_task(feeder.run()), asyncio.create_task(counter.run())]
    committed: list[float] = []  # when each envelope was committed, in order
    counted: list[tuple[float, int]] = []  # (when, events counted)
    level = sqlalchemy.text("SELECT coalesce(sum(count), 0) FROM inbox_issue_tag WHERE key = 'level'")

    def watch() -> int:
        with engine.connect() as connection:
            return int(connection.execute(level).scalar_one())

    async def watching() -> None:
        while True:
            counted.append((time.perf_counter(), await asyncio.to_thread(watch)))
            await asyncio.sleep(0.01)

    watcher = asyncio.create_task(watching())
    try:
        step = max(1, per_second // 20)  # a commit every 50 ms
        start = time.perf_counter()
        for at in range(0, len(bodies), step):
            await asyncio.sleep(max(0.0, start + at / per_second - time.perf_counter()))
            rows = [new_row(LOCAL_DSN, LOCAL, body, ["error"], None) for body in bodies[at:at + step]]
            await asyncio.to_thread(outbox.add_many, rows)
            committed.extend([time.perf_counter()] * len(rows))
            feeder.wake()
        async with asyncio.timeout(120):
            while not counted or counted[-1][1] < len(bodies):
                await asyncio.sleep(0.05)
    finally:
        for task in (*tasks, watcher):
            task.cancel()
        await asyncio.gather(*tasks, watcher, return_exceptions=True)
    lags: list[float] = []
    seen = 0
    for n, committed_at in enumerate(committed, start=1):
        while counted[seen][1] < n:
            seen += 1
        lags.append(counted[seen][0] - committed_at)
    return lags


def cost(with_index: list[Fed], without: list[float]) -> float:
    """The share of the feeder's rate the index costs: 1 − median(with) / median(without)."""
    return 1 - statistics.median(fed.rate for fed in with_index) / statistics.median(without)
