"""Tests of the test double: the fake Sentry upstream must be a faithful, controllable HTTP server."""

import gzip
import time
from collections.abc import Iterator

import httpx
import pytest

from plugin_support.upstream import Upstream

ENVELOPE = "/api/42/envelope/"


@pytest.fixture
def upstream() -> Iterator[Upstream]:
    with Upstream() as upstream:
        yield upstream


def test_records_exact_bytes(upstream: Upstream) -> None:
    binary = bytes(range(256)) * 4
    compressed = gzip.compress(b'{"event_id":"abc"}\n{"type":"event"}\n{}')

    plain = httpx.post(upstream.url + ENVELOPE + "?sentry_key=k", content=binary)
    zipped = httpx.post(
        upstream.url + ENVELOPE,
        content=compressed,
        headers={"Content-Encoding": "gzip", "X-Sentry-Auth": "Sentry sentry_key=k"},
    )

    assert (plain.status_code, plain.content) == (200, b'{"id":"0"}')
    assert zipped.status_code == 200
    first, second = upstream.wait_for(2)
    assert (first.method, first.path, first.query, first.body) == ("POST", ENVELOPE, "sentry_key=k", binary)
    assert second.body == compressed  # not decompressed
    assert second.headers["content-encoding"] == "gzip"
    assert second.headers["x-sentry-auth"] == "Sentry sentry_key=k"
    assert first.at <= second.at


def test_respond_is_returned_verbatim(upstream: Upstream) -> None:
    upstream.respond(429, {"Retry-After": "7", "X-Sentry-Rate-Limits": "60:error:key"})

    for _ in range(2):
        answer = httpx.post(upstream.url + ENVELOPE, content=b"x")
        assert answer.status_code == 429
        assert answer.headers["retry-after"] == "7"
        assert answer.headers["x-sentry-rate-limits"] == "60:error:key"

    assert len(upstream.received) == 2
    assert upstream.accepted == []


def test_respond_sequence_then_default(upstream: Upstream) -> None:
    upstream.respond_sequence([(500, {}), (302, {"Location": "/elsewhere/"}), (413, {})])

    statuses = [httpx.post(upstream.url + ENVELOPE, content=b"x").status_code for _ in range(4)]

    assert statuses == [500, 302, 413, 200]
    assert len(upstream.received) == 4
    assert len(upstream.wait_for(1)) == 1


def test_hang_delays_the_answer(upstream: Upstream) -> None:
    upstream.hang(0.5)
    began = time.monotonic()
    assert httpx.post(upstream.url + ENVELOPE, content=b"x").status_code == 200
    assert time.monotonic() - began >= 0.5

    # Off again: a hang of 10 s set before is gone (a bound far from what a loaded machine takes to answer).
    upstream.hang(10)
    upstream.hang(0)
    began = time.monotonic()
    httpx.post(upstream.url + ENVELOPE, content=b"x")
    assert time.monotonic() - began < 10


def test_a_client_that_gave_up_was_not_accepted(upstream: Upstream) -> None:
    upstream.hang(0.5)
    with pytest.raises(httpx.ReadTimeout):
        httpx.post(upstream.url + ENVELOPE, content=b"x", timeout=0.1)
    time.sleep(0.6)

    assert len(upstream.received) == 1
    assert upstream.accepted == []


def test_stop_refuses_and_start_serves_again_on_the_same_port(upstream: Upstream) -> None:
    port = upstream.port
    for _ in range(3):
        upstream.stop()
        with pytest.raises(httpx.ConnectError):
            httpx.post(upstream.url + ENVELOPE, content=b"x")

        upstream.start()
        assert upstream.port == port
        assert httpx.post(upstream.url + ENVELOPE, content=b"x").status_code == 200

    assert len(upstream.wait_for(3)) == 3


def test_stop_cuts_a_hang_short(upstream: Upstream) -> None:
    upstream.hang(30)
    with pytest.raises(httpx.ReadTimeout):
        httpx.post(upstream.url + ENVELOPE, content=b"x", timeout=0.1)
    began = time.monotonic()
    upstream.stop()
    assert time.monotonic() - began < 15  # far short of the 30 s hang, on a busy machine too


def test_instances_run_side_by_side() -> None:
    with Upstream() as one, Upstream() as two:
        assert one.port != two.port
        httpx.get(two.url + "/anything")
        assert one.received == []
        assert [r.method for r in two.received] == ["GET"]


def test_wait_for_times_out_listing_what_arrived(upstream: Upstream) -> None:
    upstream.respond_sequence([(500, {})])
    httpx.post(upstream.url + ENVELOPE + "?x=1", content=b"abc")

    with pytest.raises(AssertionError) as failure:
        upstream.wait_for(1, timeout=0.2)

    message = str(failure.value)
    assert "0 accepted of 1 received" in message
    assert f"POST {ENVELOPE}?x=1 (3 bytes)" in message
