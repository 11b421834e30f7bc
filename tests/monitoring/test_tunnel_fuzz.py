"""Whatever bytes arrive, the tunnel answers 200 or a 4xx with a sentence, never a 5xx."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from starlette.testclient import TestClient

from app.settings import Settings
from plugin_support.envelopes import build, error_event
from reflex_lookout.outbox import OutboxStore
from reflex_lookout.protocol.ratelimits import RateLimits
from reflex_lookout.stats import TunnelStats
from reflex_lookout.tunnel import Tunnel
from tests.environment import LOCAL_ENV

SETTINGS = Settings.from_env(LOCAL_ENV)
LOCAL = str(SETTINGS.local_dsn)


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[TestClient, OutboxStore]]:
    from app import db

    engine = db.engine(f"sqlite:///{tmp_path_factory.mktemp('fuzz') / 'fuzz.db'}")
    db.migrate(engine)
    store = OutboxStore(engine)
    tunnel = Tunnel(SETTINGS, store, RateLimits(), TunnelStats())
    with TestClient(tunnel.asgi()) as test_client:
        yield test_client, store


def _mutate(data: bytes, position: int, replacement: bytes, cut: int) -> bytes:
    position %= len(data) + 1
    return data[:position] + replacement + data[position + cut:]


valid = st.sampled_from([
    error_event(LOCAL),
    build(LOCAL, [("attachment", b"\x00\xff\n\r\n"), ("event", b"{}")]),
    build(LOCAL, [("event", b'{"message":"x"}')], with_length=False),
])
mutated = st.builds(_mutate, valid, st.integers(0, 400), st.binary(max_size=8), st.integers(0, 8))
encodings = st.sampled_from(["", "gzip", "deflate", "br", "zstd", "identity", "gzip, br", "bogus"])


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(body=st.one_of(st.binary(max_size=300), mutated), encoding=encodings)
def test_any_body_gets_200_or_a_4xx_sentence(client, body: bytes, encoding: str) -> None:
    test_client, store = client
    before = store.depth().get("local", {}).get("envelopes", 0)
    headers = {"Content-Encoding": encoding} if encoding else {}
    response = test_client.post(SETTINGS.tunnel_path, content=body, headers=headers)
    after = store.depth().get("local", {}).get("envelopes", 0)
    if response.status_code == 200:
        assert after == before + 1
    else:
        assert 400 <= response.status_code < 500, response.text
        assert response.json()["detail"].endswith(".")
        assert after == before  # a refusal stores nothing
