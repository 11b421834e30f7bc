"""Issue 35, "nothing unscrubbed ever reaches a file", against the built app as it runs (local mode).

Three real clients report events that each carry a secret of every kind Sentry's default scrubbing
rules name, each value of its own: a password in the request's data, an `Authorization: Bearer`
header, an `api_key` in `extra`, a card number, an IBAN, a PEM private key, a URL's password and a US
social security number. They are sentry-sdk (Python) on the app's local DSN (POST /api/1/envelope/),
a legacy JSON event on POST /api/1/store/?sentry_key=..., and Chromium posting an envelope to the
tunnel (/monitoring) from the app's own page. sentry-sdk also sends an event from a web crawler
(Googlebot's User-Agent), which the default inbound filters drop: its message has a marker of its own.

From before the first post until a few seconds after the events are shown, a thread reads every file
of the app's database folder (the SQLite file, its -wal and -shm, the migration lock, anything else)
every POLL_S, as the running app leaves them: the test never opens the database (the DSN comes from
the page's configuration), and never checkpoints, vacuums or flushes it. The app's other files are read
too: its page states (REFLEX_STATES_WORKDIR) and its log. No secret and no marker of the filtered event
may be seen in any read; the events' issue pages show "[Filtered]" (or Relay's `[creditcard]`) where
the values were and none of them; a last read after the feeder's next passes finds nothing either.

How a value is looked for: SQLite keeps a row too long for its page in a chain of overflow pages, and
on disk (file or WAL frame) a page boundary puts a page pointer or a frame header between two bytes of
a value that straddles it; a value is then no longer one run of bytes. Each secret is therefore also
looked for by its two halves (one boundary cannot cut both, and each half holds random characters
enough to be found nowhere by chance). The same goes for the kept markers, which are no secrets: that
the reads do find them (what the scan could not see would prove nothing) is checked too.
"""

from __future__ import annotations

import dataclasses
import json
import os
import random
import re
import threading
import time
import uuid
from collections.abc import Iterable
from pathlib import Path

import httpx
import hyperscan
import sentry_sdk
from playwright.sync_api import Page, expect
from sentry_sdk.scrubber import EventScrubber

from plugin_support.envelopes import build
from reflex_lookout.dsn import Dsn
from tests.e2e.app_server import AppServer
from tests.e2e.helpers import inbox_event

POLL_S = 0.02  # between two reads of every file
WAIT_MS = 20_000  # for an answer of the app, on a machine busy with other work
CRAWLER = "Googlebot/2.1 (+http://www.google.com/bot.html)"
FILTERED = "[Filtered]"


def _hex(n: int = 20) -> str:
    return uuid.uuid4().hex[:n]


def _digits(n: int) -> str:
    return "".join(random.choice("0123456789") for _ in range(n))


@dataclasses.dataclass(frozen=True)
class Secrets:
    """One client's values, each a secret of one kind, all its own; `kept` is no secret: it is
    written (the event's message), and the reads must find it."""

    client: str
    password: str
    bearer: str
    api_key: str
    card: str  # Relay's card pattern: 4\d{3}([-\s]?\d){12}
    iban: str
    pem_body: str
    url_password: str
    ssn: str
    kept: str

    @classmethod
    def new(cls, client: str) -> Secrets:
        card = "4" + _digits(15)
        return cls(
            client=client, password=f"pw{_hex()}", bearer=f"tok{_hex()}", api_key=f"key{_hex()}",
            card=" ".join(card[i:i + 4] for i in range(0, 16, 4)), iban="DE89" + _digits(18),
            pem_body=f"MIIEvQIBADAN{_hex()}", url_password=f"upw{_hex()}",
            ssn=f"{random.randint(100, 665)}-{random.randint(10, 99)}-{random.randint(1000, 9999)}",
            kept=f"kept{_hex()}",
        )

    @property
    def values(self) -> dict[str, str]:
        """Each secret by its kind."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.name not in ("client", "kept")}

    @property
    def pem(self) -> str:
        return f"-----BEGIN PRIVATE KEY-----\n{self.pem_body}\n-----END PRIVATE KEY-----\n"

    @property
    def url(self) -> str:
        return f"https://shopper:{self.url_password}@hooks.example.com/paid"

    def event(self, event_id: str, user_agent: str = "Mozilla/5.0 (X11; Linux x86_64; rv:140.0) Gecko/20100101 Firefox/140.0",
              platform: str = "python") -> dict:
        """An event as an SDK sends it, with every secret where an app's would be."""
        return {
            "event_id": event_id, "platform": platform, "level": "error",
            "message": f"checkout by {self.client} failed {self.kept} paid with {self.card}",
            "request": {
                "url": "https://shop.example.com/checkout", "method": "POST",
                "headers": {"Authorization": f"Bearer {self.bearer}", "User-Agent": user_agent},
                "data": {"user": "bob", "password": self.password, "card": self.card, "iban": self.iban,
                         "certificate": self.pem, "callback": self.url, "ssn": self.ssn, "note": f"note-{self.kept}"},
            },
            "extra": {"api_key": self.api_key, "order": "gift wrap please"},
        }


def pieces(value: str) -> list[bytes]:
    """What finds `value` on disk even when a page boundary cuts it: the value and its two halves."""
    data = value.encode()
    half = len(data) // 2
    return [data, data[:half], data[half:]]


def needles(secrets: Secrets) -> dict[str, list[bytes]]:
    """What must never be read, by a name that says whose and which secret."""
    found = {f"{secrets.client} {kind}": pieces(value) for kind, value in secrets.values.items()}
    found[f"{secrets.client} ssn"] = [secrets.ssn.encode()]  # too short to halve: nine digits, two dashes
    found[f"{secrets.client} card as digits"] = [secrets.card.replace(" ", "").encode()]
    return found


class Watch:
    """Every file under `folders`, and `files`, read as they are every POLL_S on a thread (`start`,
    `stop`); each read scanned for `needles` (name → byte strings, any one of which is a sighting).
    `seen`: name → the files it was seen in, and the seconds (since `start`) of the first read that saw it.

    A file is scanned whole when first read; after that, only where its bytes differ from the last read's
    (CHUNK by CHUNK, widened by the longest needle less one on each side): whatever is in the rest was
    there at the last read, and scanned then. A file of more than SMALL bytes (the database itself: tens of MB,
    every build's source maps) is read again when its size or times changed, and at least every
    FORCE_S: reading it whole at every read took more than the reads' interval on a loaded machine. In
    WAL mode a page reaches it only through a checkpoint (every 0.2 s, by the outbox writer) of what the
    -wal held first, and the -wal, like every small file, is read every time."""

    CHUNK = 1 << 16
    SMALL = 1 << 20
    FORCE_S = 0.25

    def __init__(self, folders: Iterable[Path], files: Iterable[Path], needles: dict[str, list[bytes]]) -> None:
        self.folders, self.files = list(folders), list(files)
        self.names: list[str] = []
        expressions: list[bytes] = []
        for name, strings in needles.items():
            for string in strings:
                self.names.append(name)
                expressions.append(re.escape(string))
        self.margin = max(len(string) for strings in needles.values() for string in strings) - 1
        self.database = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
        self.database.compile(expressions=expressions, ids=list(range(len(expressions))),
                              flags=[hyperscan.HS_FLAG_SINGLEMATCH] * len(expressions))
        self.seen: dict[str, tuple[set[str], float]] = {}
        self.reads = 0
        self.sizes: dict[str, int] = {}  # the largest size each file was read at
        self.times_read: dict[str, int] = {}  # how many times each file was read
        self.read_s = 0.0  # seconds spent reading and scanning, in all
        self.longest_gap = 0.0  # seconds between the starts of two reads
        self._last: dict[str, bytes] = {}
        self._stat: dict[str, tuple[int, int, int, int, float]] = {}  # inode, size, mtime, ctime; when read
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="disk-watch", daemon=True)
        self._started = 0.0
        self._first_read = threading.Event()
        self.failure: BaseException | None = None

    def paths(self) -> list[Path]:
        found = [p for p in self.files if p.is_file()]
        for folder in self.folders:
            for root, _, names in os.walk(folder):
                found += [Path(root) / name for name in names]
        return found

    def read_once(self, whole: bool = False) -> dict[str, set[str]]:
        """One read of every file: name → the files it was seen in (`whole`: every byte scanned, not
        only what changed since the last read)."""
        began = time.monotonic()
        hits: dict[str, set[str]] = {}
        scratch = hyperscan.Scratch(self.database)
        for path in self.paths():
            name = str(path)
            try:
                stat = path.stat()
                now, known = time.monotonic(), self._stat.get(name)
                if (not whole and stat.st_size > self.SMALL and known is not None and now - known[4] < self.FORCE_S
                        and known[:4] == (stat.st_ino, stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns)):
                    continue
                data = path.read_bytes()
            except (FileNotFoundError, IsADirectoryError):  # gone since it was listed (a journal, a state file)
                continue
            self._stat[name] = (stat.st_ino, stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns, now)
            self.sizes[name] = max(self.sizes.get(name, 0), len(data))
            self.times_read[name] = self.times_read.get(name, 0) + 1
            last, self._last[name] = self._last.get(name), data
            ids: set[int] = set()
            for start, end in [(0, len(data))] if whole or last is None else self._changed(last, data):
                self.database.scan(data[start:end], match_event_handler=_collect, context=ids, scratch=scratch)
            for i in ids:
                hits.setdefault(self.names[i], set()).add(name)
        self.reads += 1
        self.read_s += time.monotonic() - began
        return hits

    def _changed(self, last: bytes, data: bytes) -> list[tuple[int, int]]:
        """Where `data` differs from `last`, as (start, end) ranges widened by `margin`."""
        if last == data:
            return []
        size, chunk = len(data), self.CHUNK
        return [(max(0, at - self.margin), min(size, at + chunk + self.margin))
                for at in range(0, size, chunk) if data[at:at + chunk] != last[at:at + chunk]]

    def _run(self) -> None:
        last = time.monotonic()
        try:
            while not self._stop.is_set():
                now = time.monotonic()
                self.longest_gap = max(self.longest_gap, now - last)
                last = now
                for name, where in self.read_once().items():
                    files, first = self.seen.get(name, (set(), round(now - self._started, 2)))
                    self.seen[name] = (files | where, first)
                self._first_read.set()
                self._stop.wait(POLL_S)
        except BaseException as exc:  # noqa: BLE001 (said by `stop`, in the test's thread)
            self.failure = exc
            self._first_read.set()

    def start(self) -> None:
        """Reads from now on: returns once every file was read (and scanned) a first time."""
        self._started = time.monotonic()
        self._thread.start()
        self._first_read.wait(timeout=30)
        if self.failure is not None:
            raise AssertionError(f"the disk watch failed: {self.failure!r}") from self.failure

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=30)
        if self.failure is not None:
            raise AssertionError(f"the disk watch failed: {self.failure!r}") from self.failure

    def summary(self) -> str:
        took = time.monotonic() - self._started
        files = ", ".join(f"{name} ({size:,} B, read {self.times_read[name]} times)"
                          for name, size in sorted(self.sizes.items()))
        return (f"{self.reads} reads in {took:.1f} s (each {self.read_s / max(1, self.reads) * 1000:.0f} ms on average,"
                f" longest gap {self.longest_gap:.2f} s) of: {files}")


def _collect(pattern: int, _start: int, _end: int, _flags: int, ids: set[int]) -> None:
    ids.add(pattern)  # each pattern once per scan (HS_FLAG_SINGLEMATCH); the scan goes on


def database_folder(app_server: AppServer) -> Path:
    """Where the app under test keeps its SQLite database (a folder of its own: tests/e2e/conftest.py)."""
    return Path(app_server.env["DATABASE_URL"].removeprefix("sqlite:///")).parent


def report_with_the_sdk(sentry_init, dsn: Dsn, port: int, secrets: Secrets, crawled: str) -> tuple[str, str]:
    """sentry-sdk on the local DSN, its own scrubbing off (as an SDK without one sends): the crawler's
    event first, then the secrets' (one transport thread sends them in order). Their ids."""
    sentry_init(dsn=f"http://{dsn.public_key}@127.0.0.1:{port}/{dsn.project_id}", default_integrations=False,
                send_default_pii=True, event_scrubber=EventScrubber(denylist=[], send_default_pii=True))
    crawler_id = sentry_sdk.capture_event({
        "message": f"crawled {crawled}", "level": "error",
        "request": {"url": "https://shop.example.com/", "method": "GET", "headers": {"User-Agent": CRAWLER}},
    })
    with sentry_sdk.new_scope() as scope:
        scope.set_extra("api_key", secrets.api_key)  # the scope's extra, as an app sets it
        event = secrets.event(uuid.uuid4().hex)
        event.pop("extra")
        event_id = sentry_sdk.capture_event(event)
    assert crawler_id and event_id
    sentry_sdk.flush(timeout=10)
    return crawler_id, event_id


def report_to_store(app_server: AppServer, dsn: Dsn, secrets: Secrets) -> str:
    """A legacy client's JSON event on /store/, keyed in the query."""
    event_id = uuid.uuid4().hex
    answer = httpx.post(f"{app_server.url}/api/{dsn.project_id}/store/",
                        params={"sentry_key": dsn.public_key, "sentry_version": "7"},
                        json=secrets.event(event_id), timeout=30)
    assert answer.status_code == 200 and answer.json() == {"id": event_id}, answer.text
    return event_id


def report_through_the_tunnel(page: Page, dsn: Dsn, secrets: Secrets) -> str:
    """The page posts an envelope to the tunnel on its own origin, as the browser SDK does."""
    event_id = uuid.uuid4().hex
    event = secrets.event(event_id, page.evaluate("() => navigator.userAgent"), platform="javascript")
    body = build(str(dsn), [("event", json.dumps(event).encode())], event_id=event_id).decode()
    status, text = page.evaluate(
        "async (body) => { const r = await fetch('/monitoring', {method: 'POST', body}); return [r.status, await r.text()]; }",
        body)
    assert status == 200 and json.loads(text) == {"id": event_id}, text
    return event_id


def assert_scrubbed(event: dict, secrets: Secrets) -> None:
    """The inbox's copy: "[Filtered]" (Relay's `[creditcard]` in the message) where each secret was."""
    shown = json.dumps(event)
    assert [kind for kind, value in secrets.values.items() if value in shown] == []
    data = event["request"]["data"]
    assert {key: data[key] for key in ("password", "card", "iban", "ssn")} == dict.fromkeys(
        ("password", "card", "iban", "ssn"), FILTERED)
    assert data["certificate"] == f"-----BEGIN PRIVATE KEY-----\n{FILTERED}\n-----END PRIVATE KEY-----\n"
    assert data["callback"] == f"https://shopper:{FILTERED}@hooks.example.com/paid"
    assert data["note"] == f"note-{secrets.kept}"
    headers = event["request"]["headers"]
    assert headers.get("Authorization", headers.get("authorization")) == FILTERED
    assert event["extra"]["api_key"] == FILTERED
    assert event["logentry"]["formatted"] == f"checkout by {secrets.client} failed {secrets.kept} paid with [creditcard]"


def assert_issue_page_scrubbed(page: Page, app_server: AppServer, issue_id: int, secrets: Secrets) -> None:
    page.goto(f"{app_server.url}/issue?id={issue_id}")
    expect(page.locator("#page-title")).to_contain_text(f"{secrets.kept} paid with [creditcard]", timeout=WAIT_MS)
    contexts = page.locator("#issue-contexts")
    expect(contexts.locator(".context-table", has_text="Request")).to_be_visible(timeout=WAIT_MS)

    def value_of(key: str):
        row = contexts.locator("tr", has=page.locator(".context-key", has_text=re.compile(rf"^{re.escape(key)}$", re.I)))
        return row.locator(".context-value")

    for key in ("data.password", "data.card", "data.iban", "data.ssn", "headers.Authorization"):
        expect(value_of(key)).to_have_text(FILTERED)
    expect(value_of("data.certificate")).to_have_text(
        re.compile(rf"^-----BEGIN PRIVATE KEY-----\s*{re.escape(FILTERED)}\s*-----END PRIVATE KEY-----\s*$"))
    expect(value_of("data.callback")).to_have_text(f"https://shopper:{FILTERED}@hooks.example.com/paid")
    expect(value_of("data.note")).to_have_text(f"note-{secrets.kept}")
    html, text = page.content(), page.locator("body").inner_text()
    assert [kind for kind, value in secrets.values.items() if value in html or value in text] == []


def test_no_secret_and_no_filtered_event_ever_reaches_a_file(app_server: AppServer, page: Page, sentry_init) -> None:
    # The DSN from the page's own configuration: the database is not opened by this test.
    page.goto(app_server.url + "/")
    page.wait_for_function("() => !!window.lookout?.config?.dsn")
    dsn = Dsn.parse(page.evaluate("() => window.lookout.config.dsn"))
    clients = {name: Secrets.new(name) for name in ("sdk", "store", "tunnel")}
    crawled = f"crawled{_hex()}"
    forbidden = {name: strings for secrets in clients.values() for name, strings in needles(secrets).items()}
    forbidden["the filtered event's marker"] = pieces(crawled)
    kept = {f"{name} kept": pieces(secrets.kept)[1:] for name, secrets in clients.items()}  # either half
    folder = database_folder(app_server)
    # The app's page states (tests/conftest.py gives the apps it starts a folder of their own) and its log.
    states = [Path(os.environ["REFLEX_STATES_WORKDIR"])] if os.environ.get("REFLEX_STATES_WORKDIR") else []
    watch = Watch([folder, *states], [app_server.log_path], {**forbidden, **kept})

    watch.start()
    try:
        crawler_id, sdk_id = report_with_the_sdk(sentry_init, dsn, app_server.port, clients["sdk"], crawled)
        store_id = report_to_store(app_server, dsn, clients["store"])
        tunnel_id = report_through_the_tunnel(page, dsn, clients["tunnel"])
        issues = {}
        for name, event_id in (("sdk", sdk_id), ("store", store_id), ("tunnel", tunnel_id)):
            stored = inbox_event(app_server, event_id)
            assert_scrubbed(stored["event"], clients[name])
            issues[name] = stored["issue_id"]
        # Read before the SDK's event that followed it: dropped, not waiting.
        assert httpx.get(f"{app_server.url}/api/inbox/events/{crawler_id}", timeout=30).status_code == 404
        for name, issue_id in issues.items():
            assert_issue_page_scrubbed(page, app_server, issue_id, clients[name])
        time.sleep(3)  # a few seconds more of reads after the events were shown
    finally:
        watch.stop()
    summary = watch.summary()
    print(summary)
    assert any(Path(name).parent == folder and name.endswith("-wal") for name in watch.sizes), summary
    seen = {name: found for name, found in watch.seen.items() if name in forbidden}
    assert seen == {}, f"on disk: {seen}\n{summary}"
    # The scan sees what the app writes: each event's kept marker was read in the database's files.
    assert sorted(name for name, (where, _) in watch.seen.items()
                  if name in kept and any(Path(w).parent == folder for w in where)) == sorted(kept), summary
    assert watch.reads > 20, summary  # reads all along, not a few

    time.sleep(3)  # the feeder's next passes (and the outbox writer's checkpoints)
    last = watch.read_once(whole=True)
    assert {name: where for name, where in last.items() if name in forbidden} == {}
    assert sorted(name for name, where in last.items()
                  if name in kept and any(Path(w).parent == folder for w in where)) == sorted(kept)
    assert httpx.get(f"{app_server.url}/api/inbox/events/{crawler_id}", timeout=30).status_code == 404
