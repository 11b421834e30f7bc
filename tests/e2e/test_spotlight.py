"""Spotlight's real sidecar (`@spotlightjs/spotlight`, pinned in the Makefile's NPM_TOOLS) receives what
the plugin relays (reflex_lookout/spotlight.py), as its own clients see it: the Server-Sent Events of
`GET /stream`, and its UI's errors page in Chromium.

The sidecar reports on itself to sentry.io (a DSN in its code, always on: no flag or variable turns
it off) and listens on every address (it has no host option). It runs here with a preload
(`GUARD`) that refuses every connection and name lookup off this machine and binds it to 127.0.0.1;
its UI's own reports are aborted in the browser (only the sidecar's origin is let through).
"""

from __future__ import annotations

import asyncio
import contextlib
import http.server
import json
import logging
import os
import re
import socket
import subprocess
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
import sentry_sdk
from playwright.sync_api import Page, expect
from sentry_sdk.envelope import Envelope
from sentry_sdk.transport import Transport

from reflex_lookout.dsn import Dsn
from reflex_lookout.server import server_options
from reflex_lookout.settings import MonitoringSettings
from reflex_lookout.settings_error import SettingsError
from reflex_lookout.spotlight import MAX_ENVELOPE_BYTES, SpotlightRelay
from tests.e2e.app_server import ROOT
from tests.environment import LOCAL_DSN
from tests.services import stop_group

SIDECAR = ROOT / ".tools" / "node_modules" / "@spotlightjs" / "spotlight" / "dist" / "run.js"
# Loaded before the sidecar (node --import): connections and lookups stay on this machine, and a
# server given only a port listens on 127.0.0.1 (the sidecar's `serve({port})` would take every address).
GUARD = """
import dns from "node:dns";
import net from "node:net";
const local = (host) => ["localhost", "127.0.0.1", "::1", "::ffff:127.0.0.1"].includes(String(host).replace(/^\\[|\\]$/g, ""));
const said = new Set();
const refused = (what, host) => {
  if (!said.has(what + host)) console.error(`guard: refused ${what} ${host} (said once)`);
  said.add(what + host);
  return new Error(`guard: ${host} is off this machine`);
};
const connect = net.Socket.prototype.connect;
net.Socket.prototype.connect = function (...args) {
  const options = Array.isArray(args[0]) ? args[0][0] : args[0];
  const host = typeof options === "object" && options !== null ? (options.path ? "localhost" : options.host ?? "localhost")
    : (typeof args[1] === "string" ? args[1] : "localhost");
  if (local(host)) return connect.apply(this, args);
  const error = refused("a connection to", host);
  process.nextTick(() => this.destroy(error));
  return this;
};
for (const name of ["lookup", "resolve", "resolve4", "resolve6", "resolveAny"]) {
  const real = dns.promises[name];
  dns.promises[name] = (host, ...rest) =>
    local(host) ? real.call(dns.promises, host, ...rest) : Promise.reject(refused("to resolve", host));
}
const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  if (typeof args[0] === "number" && args[1] == null) args[1] = "127.0.0.1";
  return listen.apply(this, args);
};
"""
# The sidecar's environment leaves out what would point its own SDK or its capture elsewhere.
NOT_PASSED = ("SENTRY_SPOTLIGHT", "SENTRY_DSN", "SENTRY_DEBUG", "SPOTLIGHT_CAPTURE", "SPOTLIGHT_DEBUG", "NODE_OPTIONS")


@dataclass(frozen=True)
class Sidecar:
    port: int
    log: Path

    @property
    def url(self) -> str:
        """Where SDKs post envelopes, and where its clients read them (Server-Sent Events)."""
        return f"http://127.0.0.1:{self.port}/stream"

    def envelope(self, wanted: Callable[[list[Any]], bool], timeout_s: float = 15.0) -> list[Any]:
        """The first envelope the sidecar streams to a client (`GET /stream`; it replays what it holds to
        a new one) for which `wanted([header, items])` holds, each item [header, payload]."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            with contextlib.suppress(httpx.ReadTimeout), \
                    httpx.stream("GET", self.url, timeout=httpx.Timeout(5.0, read=1.0)) as response:
                assert response.headers["content-type"].startswith("text/event-stream")
                for line in response.iter_lines():
                    if line.startswith("data:") and wanted(parsed := json.loads(line[5:])):
                        return parsed
                    if time.monotonic() > deadline:
                        break
        raise AssertionError(f"the sidecar streamed no such envelope within {timeout_s:g} s; its log:\n"
                             + self.log.read_text(errors="replace")[-3000:])


@pytest.fixture(scope="module")
def sidecar(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Sidecar]:
    if not SIDECAR.is_file():
        pytest.skip(f"Spotlight's sidecar is not installed ({SIDECAR.relative_to(ROOT)}): `make setup` installs it")
    folder = tmp_path_factory.mktemp("spotlight")
    (folder / "guard.mjs").write_text(GUARD)
    log = folder / "sidecar.log"
    env = {k: v for k, v in os.environ.items() if k not in NOT_PASSED}
    with log.open("wb") as output:
        process = subprocess.Popen(["node", "--import", str(folder / "guard.mjs"), str(SIDECAR), "server", "--port", "0"],
                                   cwd=folder, env=env, stdout=output, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        deadline = time.monotonic() + 30
        while not (found := re.search(r"listening on (\d+)", log.read_text(errors="replace"))):
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"Spotlight's sidecar did not start:\n{log.read_text(errors='replace')[-3000:]}")
            time.sleep(0.05)
        yield Sidecar(int(found.group(1)), log)
    finally:
        stop_group(process, term_wait_s=5.0)


def error_with(marker: str) -> Callable[[list[Any]], bool]:
    """An envelope holding an error event whose exception says `marker`."""
    def wanted(envelope: list[Any]) -> bool:
        return any(header.get("type") == "event" and marker in json.dumps((payload.get("exception") or {}).get("values"))
                   for header, payload in envelope[1])
    return wanted


class Recording(Transport):
    """Our transport, as far as the tests need one: keeps each envelope's bytes, and hands them to
    the relay when given one (what the plugin's transport does with Spotlight on)."""

    def __init__(self, options: dict[str, Any] | None = None, relay: SpotlightRelay | None = None) -> None:
        super().__init__(options)
        self.bodies: list[bytes] = []
        self.relay = relay

    def capture_envelope(self, envelope: Envelope) -> None:
        self.bodies.append(envelope.serialize())
        if self.relay is not None:
            self.relay.send(self.bodies[-1])


def error_envelope(sentry_init: Callable[..., None], message: str) -> bytes:
    """A real envelope: sentry-sdk's, for an exception saying `message`."""
    transport = Recording()
    sentry_init(dsn=LOCAL_DSN, transport=transport)
    try:
        raise RuntimeError(message)
    except RuntimeError:
        sentry_sdk.capture_exception()
    sentry_sdk.flush()
    return transport.bodies[-1]


def test_relay_delivers_from_a_loop_and_from_a_thread(sidecar: Sidecar, sentry_init: Callable[..., None]) -> None:
    from_loop, from_thread = f"from a loop {uuid.uuid4()}", f"from a thread {uuid.uuid4()}"
    bodies = [error_envelope(sentry_init, from_loop), error_envelope(sentry_init, from_thread)]
    relay = SpotlightRelay(sidecar.url)

    async def in_handler() -> None:  # as the tunnel's ASGI handler calls it
        relay.send(bodies[0])

    # A thread of its own: Playwright's sync API may hold an event loop in this one.
    threads = [threading.Thread(target=asyncio.run, args=(in_handler(),)), threading.Thread(target=relay.send, args=(bodies[1],))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(5)
    for marker in (from_loop, from_thread):
        header, items = sidecar.envelope(error_with(marker))
        assert header["__spotlight_sender_user_agent"] == "reflex-lookout"
        assert items[0][1]["platform"] == "python"
    relay.close()
    assert (relay.sent, relay.failed, relay.dropped) == (2, 0, 0)


def test_relay_failures_are_logged_once_and_never_raised(caplog: pytest.LogCaptureFixture) -> None:
    with socket.socket() as closed:  # bound, not listening: connections to it are refused
        closed.bind(("127.0.0.1", 0))
        relay = SpotlightRelay(f"http://127.0.0.1:{closed.getsockname()[1]}/stream")
        with caplog.at_level(logging.WARNING, logger="reflex_lookout.spotlight"):
            for _ in range(3):
                relay.send(b'{}\n{"type":"event","length":2}\n{}\n')
            relay.send(b"x" * (MAX_ENVELOPE_BYTES + 1))
            relay.close(timeout_s=10)
    assert (relay.sent, relay.failed, relay.dropped) == (0, 3, 1)
    warnings = [r for r in caplog.records if r.name == "reflex_lookout.spotlight"]
    assert len(warnings) == 1 and "ConnectError" in warnings[0].getMessage()


def test_relay_posts_only_to_its_url(caplog: pytest.LogCaptureFixture) -> None:
    """A sidecar's redirect is not followed: the relay posts to the URL it was given and nowhere else."""
    paths: list[str] = []

    class Redirecting(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802  # http.server's name
            paths.append(self.path)
            self.rfile.read(int(self.headers["Content-Length"]))
            self.send_response(307)
            self.send_header("Location", f"http://127.0.0.1:{self.server.server_address[1]}/elsewhere")
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    with http.server.ThreadingHTTPServer(("127.0.0.1", 0), Redirecting) as server:
        threading.Thread(target=server.serve_forever, daemon=True).start()
        relay = SpotlightRelay(f"http://127.0.0.1:{server.server_address[1]}/stream")
        with caplog.at_level(logging.WARNING, logger="reflex_lookout.spotlight"):
            relay.send(b'{}\n{"type":"event","length":2}\n{}\n')
            relay.close(timeout_s=10)
        server.shutdown()
    assert paths == ["/stream"] and relay.failed == 1
    assert "answered 307" in caplog.text


@pytest.mark.parametrize("dsn", [LOCAL_DSN, None], ids=["dsn", "no-dsn"])
def test_server_sdk_leaves_spotlight_to_our_transport(sidecar: Sidecar, sentry_init: Callable[..., None],
                                                      monkeypatch: pytest.MonkeyPatch, dsn: str | None) -> None:
    """sentry-sdk's own Spotlight client is off (`spotlight=False`), even with SENTRY_SPOTLIGHT set: without
    a DSN it would turn on send_default_pii and sample everything, and it posts on the capturing
    thread (the event loop), with no timeout. Our transport gets each envelope and relays it."""
    monkeypatch.setenv("SENTRY_SPOTLIGHT", sidecar.url)  # what sentry-sdk would read, were it let
    settings = MonitoringSettings(dsn=Dsn.parse(dsn) if dsn else None, spotlight=sidecar.url, traces_sample_rate=0.0)
    try:
        options = server_options(settings, app_logger="spotlight_test_app")
    except SettingsError:
        pytest.skip("server_options needs a DSN in this version of server.py")
    relay = SpotlightRelay(settings.spotlight)
    transport = Recording(options, relay)
    sentry_init(transport=transport, **options)
    client = sentry_sdk.get_client()
    assert client.spotlight is None
    assert client.options["send_default_pii"] is False and client.options["traces_sampler"] is None
    marker = f"server error {uuid.uuid4()}"
    try:
        raise ValueError(marker)
    except ValueError:
        event_id = sentry_sdk.capture_exception()
    with sentry_sdk.start_transaction(name="not sampled"):
        pass
    sentry_sdk.flush()
    header, _ = sidecar.envelope(error_with(marker))
    assert header["event_id"] == event_id
    assert [body for body in transport.bodies if marker.encode() in body], "our transport did not get the event"
    assert not [body for body in transport.bodies if b'"type":"transaction"' in body]  # traces_sample_rate=0 held
    relay.close()


def test_spotlight_ui_lists_the_error(sidecar: Sidecar, page: Page, sentry_init: Callable[..., None]) -> None:
    """Spotlight's own UI, served by the sidecar, shows a relayed error on its errors page (offline: its
    reports to sentry.io are aborted here, as is anything else not from the sidecar)."""
    origin = f"http://localhost:{sidecar.port}"  # the UI's CSP lets it reach localhost, where it finds the sidecar
    elsewhere: list[str] = []

    def only_the_sidecar(route: Any) -> None:
        if route.request.url.startswith(origin + "/"):
            route.continue_()
        else:
            elsewhere.append(route.request.url)
            route.abort()

    page.context.route("**/*", only_the_sidecar)
    page.goto(origin + "/telemetry/errors")
    expect(page.get_by_text("Connected to Sidecar")).to_be_visible(timeout=15_000)
    marker = f"shown in Spotlight {uuid.uuid4()}"
    relay = SpotlightRelay(sidecar.url)
    relay.send(error_envelope(sentry_init, marker))
    expect(page.get_by_text(marker).first).to_be_visible(timeout=15_000)
    relay.close()
    assert all(re.match(r"https://[\w.-]*\.sentry\.io/", url) for url in elsewhere), elsewhere
