from plugin_support.clock import Clock
from reflex_lookout.protocol.ratelimits import RateLimits, category_of

DSN = "https://k@o1.example.com/1"


def test_item_types_map_to_sdk_categories() -> None:
    assert [category_of(t) for t in ("event", "transaction", "log", "span", "client_report", "replay_event")] == [
        "error", "transaction", "log_item", "span", "internal", "replay",
    ]
    assert category_of("something_new") == "default"


def test_header_limits_one_category_until_it_expires() -> None:
    clock = Clock()
    limits = RateLimits(clock=clock)
    assert limits.update(DSN, 429, {"x-sentry-rate-limits": "60:error;transaction:key:quota, 10::organization"})
    assert limits.retry_after(DSN, ["error"]) == 60
    assert limits.retry_after(DSN, ["log_item"]) == 10  # the all-categories limit
    assert limits.retry_after("https://k@other/2", ["error"]) == 0  # per DSN
    clock.now += 11
    assert limits.retry_after(DSN, ["log_item"]) == 0
    assert limits.retry_after(DSN, ["error", "log_item"]) == 0  # one category may go: the envelope may
    assert limits.retry_after(DSN, ["internal"]) == 0  # client reports always pass
    clock.now += 50
    assert limits.retry_after(DSN, ["error"]) == 0
    assert limits.headers(DSN) == {}


def test_plain_429_limits_everything_for_retry_after_or_default() -> None:
    clock = Clock()
    limits = RateLimits(clock=clock)
    limits.update(DSN, 429, {"retry-after": "7"})
    assert limits.retry_after(DSN, ["error"]) == 7
    limits.update("d2", 429, {"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"})
    assert limits.retry_after("d2", ["error"]) == limits.default_retry_after


def test_headers_echo_active_limits_for_the_sdk() -> None:
    clock = Clock()
    limits = RateLimits(clock=clock)
    limits.update(DSN, 200, {"x-sentry-rate-limits": "30:error:key:quota_exceeded"})
    clock.now += 0.5
    assert limits.headers(DSN) == {"Retry-After": "30", "X-Sentry-Rate-Limits": "30:error:key:quota_exceeded"}
    assert limits.snapshot() == {DSN: {"error": 29.5}}


def test_garbage_headers_are_ignored() -> None:
    limits = RateLimits()
    limits.update(DSN, 200, {"x-sentry-rate-limits": "soon:error, :transaction, nan:error, -5:span"})
    assert limits.retry_after(DSN, ["error", "transaction", "span"]) == 0
    assert not limits.update(DSN, 200, {})
