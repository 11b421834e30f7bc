"""The legacy /store/ protocol on Sentry's ingest endpoints, as Relay takes it: every body form and
auth form, two forms at once refused, the pixel GET; and the real legacy clients, raven-node 2.6
and raven-python 6.10, reporting to the endpoints on a real port."""

from __future__ import annotations

import base64
import gzip
import json
import sys
import zlib
from pathlib import Path

import anyio.to_thread
import pytest

from app.ingest.endpoints import Ingest
from app.protocol.legacy_store import PIXEL
from tests.environment import IN_CI
from tests.factories import error, titles
from tests.ingest.helpers import http, in_inbox, served

# The protocol is under test, not the database: one SQLite file each (a migration costs ~0.7 s).
pytestmark = [pytest.mark.anyio, pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)]

RAVEN_NODE = Path(__file__).parents[2] / ".tools" / "node_modules" / "raven"
KEY = {"sentry_key": "lookout"}


def b64(data: bytes) -> bytes:
    return base64.b64encode(data)


async def test_each_legacy_body_form_and_auth_form_is_kept(ingest: Ingest) -> None:
    basic = "Basic " + base64.b64encode(b"lookout:its-secret").decode()
    async with http(ingest) as client:
        for form, wrap, headers in [
            ("json", lambda raw: raw, {}),
            ("base64", b64, {}),
            ("base64-zlib", lambda raw: b64(zlib.compress(raw)), {"Content-Type": "application/octet-stream"}),
            ("deflate", zlib.compress, {"Content-Encoding": "deflate"}),
            ("gzip-of-base64-zlib", lambda raw: gzip.compress(b64(zlib.compress(raw))), {"Content-Encoding": "gzip"}),
        ]:
            event = error(f"'{form}'")
            answer = await client.post("/api/1/store/", params=KEY, headers=headers,
                                       content=wrap(json.dumps(event).encode()))
            assert answer.status_code == 200 and answer.json() == {"id": event["event_id"]}, (form, answer.text)
            assert in_inbox(ingest, event["event_id"])["event"] == event, form
        for form, params, headers in [
            ("query", KEY, {}),
            ("x-sentry-auth", None, {"X-Sentry-Auth": "Sentry sentry_version=7, sentry_key=lookout"}),
            ("authorization", None, {"Authorization": "Sentry sentry_key=lookout, sentry_version=7"}),
            ("basic", None, {"Authorization": basic}),
        ]:
            event = error(f"'{form}'")
            answer = await client.post("/api/1/store/", params=params, headers=headers, content=json.dumps(event))
            assert answer.status_code == 200, (form, answer.text)
            assert in_inbox(ingest, event["event_id"]) is not None, form


REFUSALS = [  # (query, headers, body, status, what the answer's sentence says)
    (KEY, {"X-Sentry-Auth": "Sentry sentry_key=lookout"}, b"{}", 400,
     "multiple authorization payloads (the sentry_key query parameter and X-Sentry-Auth)"),
    (None, {"X-Sentry-Auth": "Sentry sentry_key=lookout", "Authorization": "Sentry sentry_key=lookout"}, b"{}", 400,
     "multiple authorization payloads (X-Sentry-Auth and Authorization: Sentry)"),
    (KEY, {}, b"this is not base64", 400, "The event is neither JSON nor base64"),
    (KEY, {}, b64(b"\x78\x9c not zlib after all"), 400, "The event is base64, but of neither JSON nor zlib"),
    (KEY, {}, b64(zlib.compress(b"{" + b" " * 4 * 1024 * 1024 + b"}")), 413, "exceeds the 1048576-byte limit"),
    (KEY, {}, b"", 400, "The event is not readable"),
]


async def test_legacy_refusals_say_why_and_keep_nothing(ingest: Ingest) -> None:
    async with http(ingest) as client:
        for params, headers, body, status, complaint in REFUSALS:
            answer = await client.post("/api/1/store/", params=params, headers=headers, content=body)
            assert answer.status_code == status and complaint in answer.json()["detail"], answer.text
    assert ingest.tunnel.store.depth() == {}
    assert ingest.tunnel.stats.as_dict()["rejected"]["multiple_auth"] == 2


async def test_a_pixel_get_stores_its_sentry_data_and_answers_a_gif(ingest: Ingest) -> None:
    async with http(ingest) as client:
        for form, data in [("urlencoded", lambda raw: raw.decode()), ("base64", lambda raw: b64(raw).decode())]:
            event = error(f"'{form} pixel'")
            answer = await client.get("/api/1/store/", params={**KEY, "sentry_data": data(json.dumps(event).encode())})
            assert answer.status_code == 200 and answer.headers["content-type"] == "image/gif", answer.text
            assert answer.content == PIXEL and answer.content[6:10] == b"\x01\x00\x01\x00"  # 1×1
            assert in_inbox(ingest, event["event_id"])["event"] == event
        assert (await client.get("/api/1/envelope/", params={**KEY, "sentry_data": "{}"})).status_code == 405


# The real legacy clients, on a real port, into a real SQLite file ---------------------------------


async def test_raven_node_reports_an_exception(ingest: Ingest) -> None:
    """raven-node 2.6 posts base64 of zlib-deflated JSON with X-Sentry-Auth (docs/backend-reporting.md)."""
    if not RAVEN_NODE.exists():
        (pytest.fail if IN_CI else pytest.skip)(f"{RAVEN_NODE} missing (`make setup` installs it)")
    async with served(ingest) as port:
        sent = await anyio.run_process(["node", str(Path(__file__).parent / "raven_node.js"), str(RAVEN_NODE),
                                        f"http://lookout:its-secret@127.0.0.1:{port}/1", "from raven-node"],
                                       check=False)
    assert sent.returncode == 0, sent.stderr.decode()  # raven calls back with an error on any non-2xx answer
    stored = in_inbox(ingest, sent.stdout.decode().strip())
    assert stored is not None
    assert titles(ingest.inbox) == ["TypeError: from raven-node"]  # its `exception` is a bare list, the old form


async def test_raven_python_reports_an_exception(ingest: Ingest) -> None:
    """raven-python 6.10 posts zlib with Content-Encoding: deflate and X-Sentry-Auth."""
    from raven import Client
    from raven.transport.http import HTTPTransport

    async with served(ingest) as port:
        client = Client(f"http://lookout:its-secret@127.0.0.1:{port}/1", transport=HTTPTransport,
                        install_sys_hook=False, install_logging_hook=False, context={})

        def report() -> str:
            try:
                raise ValueError("from raven-python")
            except ValueError:
                return client.captureException(exc_info=sys.exc_info())

        event_id = await anyio.to_thread.run_sync(report)
    assert not client.state.did_fail()  # raven marks its state failed on any non-2xx answer
    assert in_inbox(ingest, event_id) is not None
    assert titles(ingest.inbox) == ["ValueError: from raven-python"]
