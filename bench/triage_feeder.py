"""What the tag index costs the feeder, for bench/triage.py: `rates(make_url, envelopes, rounds)`.

The envelopes (`envelopes(n)`): half made by the real sentry-sdk (Python errors of 60 kinds, with
the runtime context, the modules list, breadcrumbs, a request, a user and tags, as a web app's
events are), half `@sentry/react` errors (bench/envelope.py's event, its error, browser, os, user,
release and url varied). Each round feeds them into two fresh databases through the feeder
(outbox rows written first, untimed; then `InboxFeeder.feed_once` until done, timed; scrubbing off), once as is
and once with `app.ingest.event_writer.derived_tags` patched to find no tag, alternating which goes
first; a variant's rate is the median of its rounds.
"""

from __future__ import annotations

import contextlib
import json
import random
import statistics
import time
import uuid
from collections.abc import Callable
from typing import Any
from unittest import mock

import sentry_sdk
import sentry_sdk.envelope
import sentry_sdk.transport
from sentry_sdk.integrations.argv import ArgvIntegration
from sentry_sdk.integrations.modules import ModulesIntegration
from sentry_sdk.integrations.stdlib import StdlibIntegration

from app import db
from app.ingest.feeder import BATCH
from app.ingest.store import InboxStore
from bench import envelope
from bench.harness.feeding import fed_per_second, unscrubbed
from reflex_lookout.settings import Dsn

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


def feed(url: str, bodies: list[bytes], index_tags: bool) -> float:
    """Events/s of the feeder reading `bodies` into the fresh database at `url`."""
    engine = db.engine(url)
    db.migrate(engine)
    inbox = InboxStore(engine, scrubbing_of=unscrubbed)
    inbox.ensure_project(Dsn.parse(LOCAL_DSN))
    with contextlib.ExitStack() as patches:
        if not index_tags:
            patches.enter_context(mock.patch("app.ingest.event_writer.derived_tags", new=lambda _event: []))
        rate = fed_per_second(inbox, bodies, LOCAL_DSN)
    engine.dispose()
    return rate


def rates(make_url: Callable[[str], str], bodies: list[bytes], rounds: int) -> tuple[list[float], list[float]]:
    """Per round, events/s with the tag index and without; `make_url(name)` gives a fresh database."""
    with_index: list[float] = []
    without: list[float] = []
    feed(make_url("feeder_warmup"), bodies[:BATCH], True)  # first-use costs (imports, caches) out of the rounds
    for round_ in range(rounds):
        for index_tags in (True, False) if round_ % 2 == 0 else (False, True):
            rate = feed(make_url(f"feeder_{round_}_{'with' if index_tags else 'without'}"), bodies, index_tags)
            (with_index if index_tags else without).append(rate)
    return with_index, without


def cost(with_index: list[float], without: list[float]) -> float:
    """The share of the feeder's rate the index costs: 1 − median(with) / median(without)."""
    return 1 - statistics.median(with_index) / statistics.median(without)
