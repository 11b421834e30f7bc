"""A realistic mix of envelopes, as SDKs post them to Sentry's `POST /api/<project>/envelope/`.

- Python errors, transactions with spans and log lines: made by the real `sentry_sdk` (no
  integrations but its own serialization, frame locals and context lines), whose HTTP transport
  is stopped just before the request: each envelope is the body it would post (gzip or brotli, as
  the SDK compresses) with its headers (`X-Sentry-Auth`, `Content-Encoding`). The errors are raised
  through a few frames of this module (50 exception types, chained), each with 100 breadcrumbs.
- Browser errors: bench/browser_stacks.py's events (bench/envelope.py's error event with a 30-frame
  minified stack over the real build's largest chunks and the chunks' debug IDs), with 100
  breadcrumbs, posted uncompressed with the key in the query, as the browser SDK posts them.
- Browser sessions: one `session` item (a page load), as the browser SDK sends it.

Every error event has a `user.id` of its own (`Posted.probe`), the tag a benchmark searches for to
tell when the event is searchable. `Mix.make` turns out the kinds in a fixed rotation (SHARES).
"""

from __future__ import annotations

import contextlib
import json
import random
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import sentry_sdk
import sentry_sdk.logger
from sentry_sdk.envelope import Envelope
from sentry_sdk.transport import HttpTransport

from bench.browser_stacks import Stacks
from reflex_lookout.protocol import encodings, envelope

PROJECT_ID = 2  # the project the mix is posted to (not the inbox's own: another app's, with uploaded maps)
PUBLIC_KEY = "pipelinebench"
DSN = f"http://{PUBLIC_KEY}@127.0.0.1:9/{PROJECT_ID}"  # the SDKs' DSN: only its key and project count
RELEASE = "shop@3.14.0"
BROWSER_SDK = "8.55.0"
BROWSER_UA = ("Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) "
              "Chrome/131.0.0.0 Safari/537.36")
ORIGIN = "https://shop.example.com"
# Envelopes of each kind in every 20, in this order (the rotation `Mix.make` follows).
SHARES = {"python error": 6, "browser error": 4, "transaction": 5, "logs": 2, "session": 3}
ROTATION = [kind for kind, share in SHARES.items() for _ in range(share)]
KINDS = tuple(SHARES)
BREADCRUMBS = 100  # both SDKs' default maximum
SPANS = (70, 130)  # spans of a transaction, at random in this range
LOGS = 100  # log lines of an envelope: the SDK's batch


@dataclass(frozen=True)
class Posted:
    """One envelope as an SDK posts it."""

    kind: str  # one of KINDS
    body: bytes  # as posted (compressed by the Python SDK)
    encoding: str  # its Content-Encoding ("": none)
    query: str  # the query string of the URL ("" for the Python SDK, which authenticates in a header)
    headers: tuple[tuple[str, str], ...]  # besides Host and Content-Length
    size: int  # bytes uncompressed
    items: dict[str, int]  # item type → items (log lines for `log`)
    probe: str | None = None  # the event's own user.id (errors)
    spans: int = 0  # spans of its transaction
    event_id: str | None = None  # the error's

    @property
    def path(self) -> str:
        return f"/api/{PROJECT_ID}/envelope/" + (f"?{self.query}" if self.query else "")

    def request(self) -> bytes:
        """The whole HTTP/1.1 request."""
        head = [f"POST {self.path} HTTP/1.1", "Host: 127.0.0.1", *(f"{k}: {v}" for k, v in self.headers),
                f"Content-Length: {len(self.body)}"]
        return ("\r\n".join(head) + "\r\n\r\n").encode() + self.body


class _Recorder(HttpTransport):
    """The SDK's HTTP transport up to the request: what it would send is kept instead, at once (no
    worker thread, so no queue to overflow)."""

    sent: list[tuple[bytes, dict[str, str]]]
    lock = threading.Lock()

    def capture_envelope(self, envelope: Envelope) -> None:
        prepared = self._prepare_envelope(envelope)
        if prepared is None:
            return
        _, body, headers = prepared
        self._update_headers(headers)
        with self.lock:
            _Recorder.sent.append((body.getvalue(), headers))

    def flush(self, timeout: float, callback: Any = None) -> None:
        pass


# --- the Python app whose errors, transactions and logs the real SDK reports --------------------------

ERRORS = [type(f"{name}Error", (RuntimeError,), {}) for name in (
    "PaymentDeclined", "InventoryMismatch", "CouponExpired", "AddressInvalid", "CarrierTimeout", "TaxLookup",
    "FraudCheck", "CurrencyRate", "StockReservation", "InvoiceRender", "WebhookSignature", "RefundWindow",
    "GiftCardBalance", "LoyaltyPoints", "ShippingZone", "WarehouseSync", "PriceOverride", "BundleSplit",
    "SubscriptionRenewal", "CartMerge", "SessionExpired", "OrderLocked", "ReturnLabel", "CustomsForm",
    "ProductFeed", "SearchIndex", "ImageResize", "EmailBounce", "SmsGateway", "PushToken", "CacheStampede",
    "RateCard", "VendorPayout", "ExportJob", "ImportRow", "AuditTrail", "ConsentRecord", "DataRetention",
    "ReportQuery", "Throttled", "FeatureFlag", "ABTestBucket", "Recommendation", "ReviewModeration",
    "WishlistShare", "Preorder", "Backorder", "DropShip", "Marketplace", "Settlement")]
TABLES = ("orders", "order_lines", "customers", "addresses", "products", "stock", "payments", "coupons",
          "shipments", "invoices")


def _charge(order: dict[str, Any], gateway: str, attempt: int) -> None:
    kind = ERRORS[order["kind"]]
    payload = {"amount": order["total"], "currency": order["currency"], "gateway": gateway, "attempt": attempt,
               "lines": [line["sku"] for line in order["lines"]]}
    try:
        raise TimeoutError(f"{gateway} did not answer within 5.0 s (attempt {attempt})")
    except TimeoutError as exc:
        raise kind(f"order {order['id']} could not be completed: {payload['gateway']} failed") from exc


def _settle(order: dict[str, Any], customer: dict[str, Any]) -> None:
    gateways = ["stripe", "adyen", "braintree"]
    for attempt, gateway in enumerate(gateways[:1], start=1):
        _charge(order, gateway, attempt)


def _checkout(order: dict[str, Any]) -> None:
    customer = {"id": order["customer"], "tier": "gold", "country": "DE", "since": "2021-03-04"}
    totals = {"net": order["total"] * 0.84, "tax": order["total"] * 0.16, "shipping": 4.9}
    _settle(order, customer | {"totals": totals})


def _handle_request(order: dict[str, Any], request: dict[str, Any]) -> None:
    started = time.time()
    route = request["url"].split("?", 1)[0]
    _checkout(order)
    del started, route


def _order(rng: random.Random, n: int) -> dict[str, Any]:
    lines: list[dict[str, Any]] = [
        {"sku": f"SKU-{rng.randrange(10**6):06d}", "qty": rng.randint(1, 4), "price": round(rng.uniform(3, 90), 2),
         "title": rng.choice(["Linen shirt", "Desk lamp", "Trail shoes", "Tea sampler", "Wool scarf"])}
        for _ in range(rng.randint(2, 6))]
    return {"id": 100_000 + n, "kind": rng.randrange(len(ERRORS)), "customer": rng.randrange(10**6),
            "currency": "EUR", "lines": lines, "total": round(sum(x["qty"] * x["price"] for x in lines), 2)}


def _python_breadcrumbs(rng: random.Random) -> None:
    for b in range(BREADCRUMBS):
        if b % 3 == 0:
            table = rng.choice(TABLES)
            sentry_sdk.add_breadcrumb(category="query", type="default", message=(
                f"SELECT {table}.id, {table}.created_at, {table}.updated_at, {table}.status, {table}.payload, "
                f"{table}.customer_id, {table}.tenant_id, {table}.currency, {table}.total_net, {table}.total_tax, "
                f"{table}.shipping_address_id, {table}.billing_address_id, {table}.notes, {table}.version "
                f"FROM {table} JOIN customers ON customers.id = {table}.customer_id WHERE {table}.customer_id = %s "
                f"AND {table}.status IN (%s, %s, %s) AND {table}.deleted_at IS NULL ORDER BY {table}.created_at "
                f"DESC LIMIT 50"), data={"db.system": "postgresql", "db.name": "shop", "db.rows": rng.randrange(50),
                                                          "db.user": "shop_app", "server.address": "db-primary.internal"})
        elif b % 3 == 1:
            sentry_sdk.add_breadcrumb(category="httplib", type="http", data={
                "url": f"https://api.partner.example/v2/stock/{rng.randrange(10**5)}", "http.method": "GET",
                "status_code": 200, "reason": "OK", "http.query": f"warehouse=berlin&fields=qty,eta,{b}"})
        else:
            sentry_sdk.add_breadcrumb(category="shop.orders", level="info", message=(
                f"cart {rng.randrange(10**6)} recalculated: {rng.randint(1, 9)} lines, coupon none, "
                f"shipping zone {rng.choice(['DE', 'FR', 'NL', 'AT'])}, took {rng.uniform(1, 40):.1f} ms"))


def _python_error(rng: random.Random, n: int, probe: str) -> None:
    order = _order(rng, n)
    request = {"url": f"https://shop.example.com/api/orders/{order['id']}/checkout?step=payment", "method": "POST",
               "headers": {"Host": "shop.example.com", "Content-Type": "application/json",
                           "User-Agent": "shop-mobile/5.2.1 (iPhone; iOS 17.5)", "Accept-Language": "de-DE"},
               "data": {"order": order["id"], "payment_method": "card", "save_card": False}}
    with sentry_sdk.new_scope() as scope:
        scope.clear_breadcrumbs()
        scope.set_user({"id": probe, "email": f"{probe}@customers.example"})
        scope.set_tag("shop.region", rng.choice(["eu-central", "eu-west"]))
        scope.set_tag("checkout.step", "payment")
        scope.set_context("order", {"id": order["id"], "lines": len(order["lines"]), "total": order["total"]})
        scope.add_event_processor(lambda event, hint: {**event, "request": request})  # type: ignore[arg-type,return-value]
        _python_breadcrumbs(rng)
        try:
            _handle_request(order, request)
        except RuntimeError:
            sentry_sdk.capture_exception()


def _transaction(rng: random.Random) -> None:
    route = rng.choice(["/api/orders/{id}", "/api/cart", "/api/products/{slug}", "/api/checkout", "/account"])
    with sentry_sdk.new_scope(), sentry_sdk.start_transaction(op="http.server", name=f"GET {route}",
                                                              source="route") as transaction:
        transaction.set_tag("http.status_code", "200")
        for s in range(rng.randint(*SPANS)):
            table = TABLES[s % len(TABLES)]
            if s % 5 == 4:
                with sentry_sdk.start_span(op="http.client", name=f"GET https://api.partner.example/v2/{table}") as span:
                    span.set_data("http.response.status_code", 200)
                    span.set_data("server.address", "api.partner.example")
            else:
                with sentry_sdk.start_span(op="db", name=(
                        f"SELECT {table}.id, {table}.status, {table}.payload FROM {table} "
                        f"WHERE {table}.id = %s AND {table}.tenant_id = %s")) as span:
                    span.set_data("db.system", "postgresql")
                    span.set_data("db.name", "shop")
                    span.set_data("db.operation", "SELECT")


def _logs(rng: random.Random, client: sentry_sdk.Client) -> None:
    for line in range(LOGS):
        order = rng.randrange(10**6)
        if line % 10 == 9:
            sentry_sdk.logger.warning("payment for order {order_id} retried with {gateway}", order_id=order,
                                      gateway=rng.choice(["stripe", "adyen"]))
        else:
            sentry_sdk.logger.info("order {order_id} moved to {status} in {ms} ms", order_id=order,
                                   status=rng.choice(["paid", "packed", "shipped"]), ms=rng.randint(2, 80))
    if client.log_batcher is not None:
        client.log_batcher.flush()


@contextlib.contextmanager
def _python_sdk() -> Iterator[sentry_sdk.Client]:
    """The SDK initialised with the recording transport, closed on leaving."""
    _Recorder.sent = []
    sentry_sdk.init(dsn=DSN, transport=_Recorder, default_integrations=False, auto_enabling_integrations=False,
                    traces_sample_rate=1.0, enable_logs=True, release=RELEASE, environment="production",
                    server_name="shop-web-3", max_breadcrumbs=BREADCRUMBS, include_local_variables=True)
    client = sentry_sdk.get_client()
    if client.log_batcher is not None:  # a batch is the SDK's 100 lines, flushed here (`_logs`), not by its 5 s timer
        client.log_batcher.MAX_BEFORE_FLUSH = client.log_batcher.MAX_BEFORE_DROP
        client.log_batcher.FLUSH_WAIT_TIME = 24 * 3600.0
    try:
        yield client  # type: ignore[misc]
    finally:
        sentry_sdk.get_client().close()
        sentry_sdk.init(dsn=None)


# --- the browser app ------------------------------------------------------------------------------


def _browser_breadcrumbs(rng: random.Random, now: float) -> list[dict[str, Any]]:
    crumbs = []
    for b in range(BREADCRUMBS):
        at = round(now - (BREADCRUMBS - b) * rng.uniform(0.2, 2.0), 3)
        if b % 4 == 0:
            crumbs.append({"timestamp": at, "category": "fetch", "type": "http", "data": {
                "method": "GET", "url": f"/api/products?page={b}&sort=popular&facets=size,color,brand",
                "status_code": 200, "response_body_size": rng.randrange(10**5)}})
        elif b % 4 == 1:
            crumbs.append({"timestamp": at, "category": "ui.click", "type": "default",
                           "message": f"main.product-grid > div.card[data-sku=\"SKU-{rng.randrange(10**6)}\"] > "
                                      "button.add-to-cart.rt-Button"})
        elif b % 4 == 2:
            crumbs.append({"timestamp": at, "category": "navigation", "type": "navigation",
                           "data": {"from": f"/products/{rng.randrange(900)}", "to": f"/products/{rng.randrange(900)}"}})
        else:
            crumbs.append({"timestamp": at, "category": "console", "type": "debug", "level": "log",
                           "message": f"[cart] recalculated {rng.randint(1, 9)} lines, total {rng.uniform(5, 400):.2f} "
                                      "EUR, coupon none, shipping estimate from the edge cache"})
    return crumbs


def _browser_error(stacks: Stacks, rng: random.Random, n: int, probe: str) -> Posted:
    now = time.time()
    event = stacks.event(stacks.next_stack(), f"Cannot read properties of undefined (reading 'price') [{n % 40}]")
    event["timestamp"] = now
    event["release"] = RELEASE
    event["breadcrumbs"] = _browser_breadcrumbs(rng, now)
    event["user"] = {"id": probe, "ip_address": "{{auto}}"}
    event["request"] = {"url": f"{ORIGIN}/cart?step=review", "headers": {"Referer": f"{ORIGIN}/products",
                                                                         "User-Agent": BROWSER_UA}}
    event["contexts"]["state"] = {"state": {"type": "redux", "value": _store_state(rng)}}  # the Redux integration's
    event["contexts"].pop("browser", None)  # the server works them out of the User-Agent
    event["contexts"].pop("os", None)
    event["sdk"]["version"] = BROWSER_SDK
    payload = json.dumps(event, separators=(",", ":")).encode()
    header = {"event_id": event["event_id"], "sent_at": _iso(now),
              "sdk": {"name": "sentry.javascript.react", "version": BROWSER_SDK},
              "trace": {"trace_id": uuid.uuid4().hex, "environment": "production", "release": RELEASE,
                        "public_key": PUBLIC_KEY, "sampled": "true"}}
    body = b"\n".join([_json(header), _json({"type": "event", "length": len(payload)}), payload]) + b"\n"
    return Posted("browser error", body, "", _browser_query(), _browser_headers(), len(body), {"event": 1}, probe,
                  event_id=event["event_id"])


def _store_state(rng: random.Random) -> dict[str, Any]:
    """A shop's Redux state, as Sentry's Redux integration attaches it: the cart, the product list shown."""
    products = [{"sku": f"SKU-{rng.randrange(10**6):06d}", "title": rng.choice(["Linen shirt", "Desk lamp", "Trail shoes"]),
                 "price": round(rng.uniform(3, 90), 2), "stock": rng.randrange(40), "rating": round(rng.uniform(1, 5), 1),
                 "badges": ["new", "eco"][: rng.randrange(3)], "image": f"/img/p/{rng.randrange(10**6)}.webp"}
                for _ in range(175)]
    cart = [{"sku": p["sku"], "qty": rng.randint(1, 3), "price": p["price"]} for p in products[:rng.randint(1, 6)]]
    return {"cart": {"lines": cart, "coupon": None, "currency": "EUR"}, "catalog": {"page": 1, "items": products},
            "session": {"locale": "de-DE", "experiments": {"checkout_v2": True, "reco_widget": "b"}}}


def _session(rng: random.Random) -> Posted:
    now = time.time()
    session = {"sid": uuid.uuid4().hex, "did": f"u{rng.randrange(10**6)}", "init": True, "started": _iso(now - 0.4),
               "timestamp": _iso(now), "status": "ok", "errors": 0, "duration": 0,
               "attrs": {"release": RELEASE, "environment": "production", "user_agent": BROWSER_UA}}
    header = {"sent_at": _iso(now), "sdk": {"name": "sentry.javascript.react", "version": BROWSER_SDK}}
    body = b"\n".join([_json(header), _json({"type": "session"}), _json(session)]) + b"\n"
    return Posted("session", body, "", _browser_query(), _browser_headers(), len(body), {"session": 1})


def _browser_query() -> str:
    return f"sentry_key={PUBLIC_KEY}&sentry_version=7&sentry_client=sentry.javascript.react%2F{BROWSER_SDK}"


def _browser_headers() -> tuple[tuple[str, str], ...]:
    return (("Content-Type", "text/plain;charset=UTF-8"), ("Origin", ORIGIN), ("User-Agent", BROWSER_UA))


def _json(value: object) -> bytes:
    return json.dumps(value, separators=(",", ":")).encode()


def _iso(at: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(at)) + f".{int(at % 1 * 1000):03d}Z"


# --- the mix ---------------------------------------------------------------------------------------


@dataclass
class Mix:
    """Envelopes of every kind over `stacks` (the build's chunks), in the rotation of SHARES."""

    stacks: Stacks
    seed: int = 37
    made: int = 0
    run: str = field(default_factory=lambda: uuid.uuid4().hex[:6])

    def make(self, count: int) -> list[Posted]:
        """The next `count` envelopes of the rotation."""
        rng = random.Random(f"{self.seed}-{self.made}")
        kinds = [ROTATION[(self.made + n) % len(ROTATION)] for n in range(count)]
        made: dict[int, Posted] = {}
        with _python_sdk() as client:
            for n, kind in enumerate(kinds):
                number = self.made + n
                probe = f"u{self.run}n{number}"
                before = len(_Recorder.sent)
                if kind == "python error":
                    _python_error(rng, number, probe)
                elif kind == "transaction":
                    _transaction(rng)
                elif kind == "logs":
                    _logs(rng, client)
                elif kind == "browser error":
                    made[n] = _browser_error(self.stacks, rng, number, probe)
                    continue
                else:
                    made[n] = _session(rng)
                    continue
                sent = _Recorder.sent[before:]
                if len(sent) != 1:
                    raise RuntimeError(f"the SDK sent {len(sent)} envelopes for one {kind}")
                made[n] = _from_sdk(kind, *sent[0], probe if kind == "python error" else None)
        self.made += count
        return [made[n] for n in range(count)]


def _from_sdk(kind: str, body: bytes, headers: dict[str, str], probe: str | None) -> Posted:
    encoding = headers.get("Content-Encoding", "")
    plain = encodings.decode(body, encoding, 64 * 2**20)
    items: dict[str, int] = {}
    spans = 0
    parsed = envelope.parse(plain, 64 * 2**20)
    for item in parsed.items:
        count = item.headers.get("item_count", 1) if item.type == "log" else 1
        items[item.type] = items.get(item.type, 0) + (count if isinstance(count, int) else 1)
        if item.type == "transaction":
            spans += len(json.loads(item.payload).get("spans", []))
    kept = tuple((k, v) for k, v in headers.items() if k.lower() != "content-length")
    return Posted(kind, body, encoding, "", kept, len(plain), items, probe, spans,
                  parsed.event_id if probe is not None else None)
