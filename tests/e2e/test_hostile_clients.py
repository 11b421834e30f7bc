"""Hostile clients get nothing (issue 13): another machine that has not signed in, and a foreign
site in a browser on this machine, send every event handler of every state (tests/e2e/hostile_client.py)
after a unique marker was planted in an error event, a log line, a transaction and a feedback.

The marker never appears in anything the server sends them, and no issue changes or disappears.
The other machine is a network namespace (tests/netns.py); the foreign site is a foreign `Origin`,
or, for DNS rebinding, a foreign `Host` too, from loopback.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import sqlite3
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from plugin_support.envelopes import assemble
from tests.e2e.app_server import ROOT, AppServer
from tests.e2e.helpers import LOG_DIR, _copy_project, started_app
from tests.e2e.hostile_transcript import Transcript
from tests.e2e.local_dsn import local_dsn
from tests.netns import Namespace

EVIL = "https://evil.example"
CLIENT_TIMEOUT_S = 900


@pytest.fixture(scope="module")
def app_server(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[AppServer]:
    """The production backend alone (its websocket and HTTP routes are all these clients speak to: no
    front end is built), run from a copy of the project, so that these tests can run in a process of
    their own (`make test`, `make e2e`) beside the other browser tests, which share the app built in the
    project's own .web/."""
    root = tmp_path_factory.mktemp("hostile") / "lookout"
    _copy_project(root, front_end=False)
    # A hostile client sends each socket ~450 events at once; the server answers a socket's messages in
    # order, so its answer to Engine.IO's ping comes after them. On a CI machine busy with the other
    # test processes that took over Reflex's 120 s ping timeout and the server dropped the flooding
    # client's sockets: the tests are about what every event gets back, so the app under test waits longer.
    yield from started_app(request, tmp_path_factory.mktemp("db") / "hostile.db", "hostile-app", root,
                           env={"REFLEX_SOCKET_TIMEOUT": "900"}, backend_only=True)


@dataclass(frozen=True)
class Planted:
    """Markers planted through the ingest endpoint, each a different place an inbox keeps text."""

    base: str  # every marker starts with it: searching for it finds them all
    issue_id: int
    trace_id: str

    @property
    def markers(self) -> dict[str, str]:
        return {place: f"{self.base}-{place.replace(' ', '-')}" for place in (
            "event message", "stack frame", "breadcrumb", "tag", "user email", "log line", "transaction", "span",
            "feedback",
        )}


def database(app_server: AppServer) -> Path:
    return Path(app_server.env["DATABASE_URL"].removeprefix("sqlite:///"))


def query(app_server: AppServer, sql: str, *parameters: object) -> list[tuple]:
    with contextlib.closing(sqlite3.connect(f"file:{database(app_server)}?mode=ro", uri=True, timeout=10)) as db:
        return db.execute(sql, parameters).fetchall()


def items(base: str, marker: dict[str, str], trace_id: str, event_id: str) -> list[tuple[str, dict]]:
    now = time.time()
    event = {
        "event_id": event_id, "level": "error", "platform": "python", "timestamp": now,
        "fingerprint": [base],
        "exception": {"values": [{"type": "HostileProbe", "value": marker["event message"], "stacktrace": {
            "frames": [{"function": marker["stack frame"], "filename": "probe.py", "lineno": 1, "in_app": True}],
        }}]},
        "breadcrumbs": {"values": [{"message": marker["breadcrumb"], "category": "probe", "timestamp": now}]},
        "tags": {"probe": marker["tag"]},
        "user": {"email": marker["user email"]},
        "contexts": {"trace": {"trace_id": trace_id, "span_id": uuid.uuid4().hex[:16]}},
    }
    log = {"items": [{"timestamp": now, "level": "error", "body": marker["log line"], "trace_id": trace_id,
                      "attributes": {}}]}
    transaction = {
        "event_id": uuid.uuid4().hex, "type": "transaction", "platform": "python", "transaction": marker["transaction"],
        "start_timestamp": now - 1, "timestamp": now,
        "contexts": {"trace": {"trace_id": trace_id, "span_id": uuid.uuid4().hex[:16], "op": "http.server"}},
        "spans": [{"span_id": uuid.uuid4().hex[:16], "trace_id": trace_id, "op": "db", "description": marker["span"],
                   "start_timestamp": now - 0.5, "timestamp": now - 0.2}],
    }
    feedback = {"event_id": uuid.uuid4().hex, "timestamp": now, "contexts": {"feedback": {
        "associated_event_id": event_id, "message": marker["feedback"], "name": "probe", "contact_email": "p@example.com",
    }}}
    return [("event", event), ("log", log), ("transaction", transaction), ("feedback", feedback)]


def posted(url: str, key: str, envelope: bytes, patience_s: float = 30) -> httpx.Response:
    """POST as an SDK does: a 503 ("could not be stored; try again later") is tried again after its
    Retry-After, within `patience_s`."""
    deadline = time.monotonic() + patience_s
    while True:
        answer = httpx.post(url, params={"sentry_key": key}, content=envelope)
        if answer.status_code != 503 or time.monotonic() > deadline:
            return answer
        time.sleep(float(answer.headers.get("Retry-After", "1")))


@pytest.fixture
def planted(app_server: AppServer) -> Planted:
    """Plant the markers from this machine and wait until the inbox has read every one."""
    dsn = local_dsn(app_server)
    key, project = dsn.public_key, dsn.project_id
    base, trace_id, event_id = f"hostile{uuid.uuid4().hex[:12]}", uuid.uuid4().hex, uuid.uuid4().hex
    marker = Planted(base, 0, trace_id).markers
    for item_type, payload in items(base, marker, trace_id, event_id):
        body = json.dumps(payload).encode()
        envelope = assemble({"event_id": payload.get("event_id", event_id)}, [({"type": item_type, "length": len(body)}, body)])
        answer = posted(f"{app_server.url}/api/{project}/envelope/", key, envelope)
        assert answer.status_code == 200, answer.text
    checks = {
        "issue": ("select id from inbox_issue where title like ?", f"%{marker['event message']}%"),
        "log line": ("select id from inbox_log where body = ?", marker["log line"]),
        "transaction": ("select id from inbox_transaction where name = ?", marker["transaction"]),
        "feedback": ("select id from inbox_feedback where message = ?", marker["feedback"]),
    }
    deadline = time.monotonic() + 20
    while True:
        found = {name: query(app_server, sql, value) for name, (sql, value) in checks.items()}
        if all(found.values()):
            return Planted(base, found["issue"][0][0], trace_id)
        assert time.monotonic() < deadline, f"not in the inbox after 20 s: {[n for n, f in found.items() if not f]}"
        time.sleep(0.2)


def inbox_state(app_server: AppServer) -> dict[str, object]:
    """What a hostile client must not change: each issue's status, and how much is stored."""
    return {
        "issues": dict(query(app_server, "select id, status from inbox_issue")),
        "events": query(app_server, "select count(*) from inbox_event")[0][0],
        "feedback": query(app_server, "select count(*) from inbox_feedback")[0][0],
    }


def changes(before: dict[str, object], after: dict[str, object]) -> list[str]:
    """Changes to what existed before (new issues and events are allowed: /try makes them)."""
    problems = [f"issue {issue} was {status}, now {after['issues'].get(issue, 'deleted')}"
                for issue, status in before["issues"].items() if after["issues"].get(issue) != status]
    return problems + [f"{what}: {before[what]} stored before, {after[what]} after"
                       for what in ("events", "feedback") if after[what] < before[what]]


@pytest.fixture
def transcript_path(request: pytest.FixtureRequest) -> Path:
    """Where the client writes what it sent and received: kept under tests/e2e/logs/ for a failed
    test to be read (each test removes it once it passed)."""
    LOG_DIR.mkdir(parents=True, exist_ok=True)
    return LOG_DIR / f"hostile-{request.node.name}-{time.strftime('%Y%m%d-%H%M%S')}.jsonl"


def run_client(prefix: list[str], url: str, planted: Planted, out: Path, app_server: AppServer,
               headers: dict[str, str] | None = None, options: tuple[str, ...] = ()) -> Transcript:
    """The client's transcript. Run with `--probe-each-event` in `options` to name the handler after
    whose event a leak came (it costs the server a tenth more: `got_nothing` does it on a leak)."""
    command = [*prefix, sys.executable, "-m", "tests.e2e.hostile_client", url, "--probe", planted.base,
               "--int", str(planted.issue_id), "--word", f"/issue?id={planted.issue_id}", "--word", "all",
               "--query", f"id={planted.issue_id}", "--query", f"id={planted.trace_id}",
               "--out", str(out), *options]
    for name, value in (headers or {}).items():
        command += [f"--{name.lower()}", value]
    done = subprocess.run(command, cwd=ROOT, env={**os.environ, **app_server.env, "PYTHONPATH": str(ROOT)},
                          capture_output=True, text=True, timeout=CLIENT_TIMEOUT_S)
    assert done.returncode == 0, f"the hostile client failed:\n{done.stderr[-4000:]}"
    return Transcript.read(out)


def got_nothing(transcript: Transcript, transcript_path: Path, planted: Planted, before: dict[str, object],
                app_server: AppServer, who: str, again: Callable[[Path], Transcript]) -> None:
    """No marker in anything the server sent, nothing changed; then the transcript goes. On a leak,
    `again` runs the same client with `--probe-each-event` (into another transcript), whose leaks
    name the handlers after whose events they came."""
    leaks, changed = transcript.leaks(planted.markers), changes(before, inbox_state(app_server))
    if leaks:  # the same again, each event probed: which handler each leak came after
        probed = transcript_path.with_name(transcript_path.stem + "-probed.jsonl")
        named = again(probed).leaks(planted.markers)
        leaks = named or [*leaks, f"(not found again with each event probed: {probed})"]
        transcript_path = probed if named else transcript_path
    assert not leaks and not changed, (
        f"{len(leaks)} leaks to {who}, and {len(changed)} changes (transcript: {transcript_path}):\n"
        + "\n".join([*leaks, *changed])
    )
    transcript_path.unlink()


def test_the_client_finds_every_marker_where_access_is_granted(
    app_server: AppServer, planted: Planted, transcript_path: Path
) -> None:
    """This machine may read the console: the same client, with the pages loaded, sees every marker,
    so where the others see none, it is not for want of looking."""
    # It stops once it has seen every marker (each connection at the end of its round of events).
    until_seen = tuple(itertools.chain.from_iterable(("--until-seen", m) for m in planted.markers.values()))
    transcript = run_client([], app_server.url, planted, transcript_path, app_server,
                            options=("--phase", "loaded", *until_seen))
    missed = set(planted.markers) - transcript.seen(planted.markers)
    assert not missed, f"a client this machine trusts never saw {sorted(missed)} (transcript: {transcript_path})"
    transcript_path.unlink()


def test_another_machine_that_has_not_signed_in_gets_nothing(
    app_server: AppServer, elsewhere: Namespace, planted: Planted, transcript_path: Path
) -> None:
    before = inbox_state(app_server)

    def client(out: Path, *options: str) -> Transcript:
        return run_client(elsewhere.command(), app_server.url_at(elsewhere.host_address), planted, out, app_server,
                          options=options)

    transcript = client(transcript_path)
    assert not transcript.of_kind("refused"), transcript.of_kind("refused")[:3]
    assert not transcript.of_kind("incomplete"), transcript.of_kind("incomplete")[:3]
    assert transcript.snapshots() > 0, "the server sent no state snapshot: the client did not really talk to it"
    got_nothing(transcript, transcript_path, planted, before, app_server, "another machine",
                again=lambda out: client(out, "--probe-each-event"))


@pytest.mark.parametrize("headers", [
    pytest.param({"Origin": EVIL}, id="foreign-origin"),
    pytest.param({"Origin": "http://evil.example:{port}", "Host": "evil.example:{port}"}, id="dns-rebinding"),
])
def test_a_foreign_site_in_a_browser_on_this_machine_gets_nothing(
    app_server: AppServer, planted: Planted, transcript_path: Path, headers: dict[str, str]
) -> None:
    before = inbox_state(app_server)
    sent = {name: value.format(port=app_server.port) for name, value in headers.items()}
    transcript = run_client([], app_server.url, planted, transcript_path, app_server, sent)
    refused = transcript.of_kind("refused")
    connected = len(transcript.of_kind("done")) + len(transcript.of_kind("incomplete"))
    assert refused or connected, "the client neither connected nor was refused"
    got_nothing(transcript, transcript_path, planted, before, app_server, f"a foreign site {sent}",
                again=lambda out: run_client([], app_server.url, planted, out, app_server, sent, ("--probe-each-event",)))


@pytest.mark.parametrize("headers", [
    pytest.param({"Origin": EVIL}, id="foreign-origin"),
    pytest.param({"Host": "evil.example:{port}"}, id="dns-rebinding"),
])
def test_the_inbox_api_answers_no_foreign_site(app_server: AppServer, planted: Planted, headers: dict[str, str]) -> None:
    sent = {name: value.format(port=app_server.port) for name, value in headers.items()}
    for path in ("/api/inbox/issues", f"/api/inbox/issues/{planted.issue_id}"):
        answer = httpx.get(app_server.url + path, headers=sent)
        assert answer.headers.get("access-control-allow-origin") not in (EVIL, "*"), (path, dict(answer.headers))
        assert answer.status_code != 200 and planted.base not in answer.text, (path, answer.status_code, answer.text[:300])
    # The same requests without the foreign header are this machine's own, and answered.
    assert planted.base in httpx.get(app_server.url + "/api/inbox/issues").text
