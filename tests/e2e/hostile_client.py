"""A hostile client of the app's websocket: it sends every event handler of every state in the app
(tests/e2e/hostile_plan.py), with plausible arguments and page paths, and writes down everything
the server sends back (tests/e2e/hostile_transcript.py). Run from another machine (`ip netns exec`,
tests/netns.py), or from this one with a foreign `Origin` or `Host`:

    python -m tests.e2e.hostile_client URL --probe TEXT [--int N]... [--word TEXT]... [--query id=N]...
        [--origin ORIGIN] [--host HOST] [--phase cold|loaded] --out transcript.jsonl

Reflex 0.10.1's wire protocol (reflex/app.py `EventNamespace`, .web/utils/state.js): Socket.IO on
namespace and path `/_event` over a websocket, the tab named by `?token=`; the client emits `event`
with `{"name": "<state full name>.<handler>", "payload": {argument: value}, "router_data":
{"pathname", "asPath", "query"}}`, and the server emits `event` with `{"delta": {state: {var:
value}}, "events": [...]}`. The route in `router_data` is the client's to choose.

One connection per page path (every page's, and each also with every `--query`), all at once, in
each phase: `cold` never runs a page's on_load, `loaded` runs it first. (Both phases at once made a
loaded machine's client fall minutes behind what the server sent, past Socket.IO's 120 s ping
timeout, and the server closed every connection.) Each
connection sends its plan's foreground events, then `hydrate` as a sentinel: a tab's events are
processed in order, so when the sentinel's snapshot arrives every earlier event has been; then the
background ones and another sentinel, and it waits for background loops (`watch`) to speak. Then
the tab leaves for a page without a live view (`LEAVE`) before it closes, as a browser tab
navigating away would: a watcher the tab started stops at its next turn instead of re-reading its
page every 2 s for an hour after the tab is gone (it does not notice a closed tab), which slowed
every later test. Each line of the transcript carries `t`, the client's monotonic clock in seconds.

An event's route is the page's own, as a browser sends it; with `--probe-each-event` its query
also carries `_probe=<seq>`, which the server echoes in the update the event causes, so that a leak
names the handler after whose event it came (tests/e2e/hostile_transcript.py). The tests use it to
explain a leak they found (it costs the server: Reflex rebuilds its router vars on every event).

With `--until-seen TEXT` (a client this machine trusts, looking for what it was told is there), the
events go in rounds of ROUND, each closed by a sentinel, and every connection stops at the end of
its round once what the server sent (on any connection) holds every TEXT given: the client has
shown that it finds them, and the server is not kept busy for nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import json
import time
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import socketio

from app.inbox.states import ALLOWED
from tests.e2e.hostile_plan import HYDRATE, Plan, Vocabulary, page_paths, state_vars
from tests.e2e.hostile_transcript import PROBE

NAMESPACE = "/_event"  # Reflex's Socket.IO namespace, and the path it is served on
PHASES = ("cold", "loaded")
WATCH_WAIT_S = 5.0  # background loops re-read every 2 s: two turns and some
# Every connection of a phase is served at once by one backend process: a sentinel comes back when
# the server has got through about all the phase's events (≈ 14,000).
SENTINEL_TIMEOUT_S = 600.0
LEAVE = "/no-such-page"  # where a tab goes before it closes: no page state watches it
LEAVE_TIMEOUT_S = 60.0


ROUND = 100  # foreground events between two sentinels, with --until-seen


def router_data(path: str, probe: int | str | None) -> dict[str, Any]:
    """The route of an event, as the page sends it; with a probe, `_probe=<probe>` in its query."""
    parts = urlsplit(path)
    query = {**dict(parse_qsl(parts.query)), **({PROBE: str(probe)} if probe is not None else {})}
    search = "&".join(f"{k}={v}" for k, v in query.items())
    return {"pathname": parts.path, "asPath": f"{parts.path}?{search}", "query": query}


class Client:
    """Runs every connection and writes the transcript."""

    def __init__(self, url: str, plan: Plan, paths: list[str], headers: dict[str, str], out: Path,
                 phases: Sequence[str] = PHASES, probe_each_event: bool = False,
                 until_seen: Sequence[str] = ()) -> None:
        self.url, self.plan, self.paths, self.headers, self.phases = url, plan, paths, headers, phases
        self.out = out.open("w")
        self.seq = itertools.count(1)
        self.probe_each_event = probe_each_event
        self.unseen, self.all_seen = set(until_seen), asyncio.Event()  # all_seen: only with until_seen

    def look_for(self, text: str) -> None:
        """Cross off the --until-seen texts that `text`, something the server sent, holds."""
        if self.unseen:
            self.unseen = {wanted for wanted in self.unseen if wanted not in text}
            if not self.unseen:
                self.all_seen.set()

    def write(self, **line: Any) -> str:
        """Write one line (with the time); the line, for a caller to look into."""
        text = json.dumps({"t": round(time.monotonic(), 3), **line}, ensure_ascii=False, default=str)
        self.out.write(text + "\n")
        return text

    async def run(self) -> None:
        try:
            for phase in self.phases:
                await asyncio.gather(*(self.connection(phase, path) for path in self.paths))
        finally:
            self.out.close()

    async def connection(self, phase: str, path: str) -> None:
        label = f"{phase} {path}"
        sio = socketio.AsyncClient(reconnection=False)
        sentinel, finished, closed, left = "", asyncio.Event(), asyncio.Event(), False

        @sio.on("*", namespace=NAMESPACE)
        async def received(event: str, data: Any = None) -> None:
            # After `done`, what the server sends is still written down (a leak there is a leak),
            # marked `left`: it is not what a client on the page saw (Transcript.seen leaves it out).
            text = self.write(kind="received", connection=label, event=event, data=data, **({"left": True} if left else {}))
            if not left:
                self.look_for(text)
            if sentinel and sentinel in text:  # a uuid's hex: written the same, escaped or not
                finished.set()

        @sio.on("disconnect", namespace=NAMESPACE)
        async def gone(*_: Any) -> None:
            closed.set()
            finished.set()

        try:
            await sio.connect(f"{self.url}?token={uuid.uuid4()}", headers=dict(self.headers), transports=["websocket"],
                              namespaces=[NAMESPACE], socketio_path=NAMESPACE, wait_timeout=10)
        except Exception as exc:  # noqa: BLE001 (any refusal is an outcome to record)
            self.write(kind="refused", connection=label, error=f"{type(exc).__name__}: {exc}")
            return
        async def answered() -> bool:
            """Send a sentinel and wait until its snapshot comes back (every earlier event of this
            tab was processed then); False if the connection closed first."""
            nonlocal sentinel
            sentinel = f"done-{uuid.uuid4().hex}"
            finished.clear()
            await sio.emit("event", {"name": HYDRATE, "payload": {}, "router_data": router_data(path, sentinel)},
                           namespace=NAMESPACE)
            try:
                await asyncio.wait_for(finished.wait(), SENTINEL_TIMEOUT_S)
            except TimeoutError:
                closed.set()
            return not closed.is_set()

        looking = bool(self.unseen)  # (`all_seen` is only ever set for a client looking)
        try:
            for background in (False, True):
                for n, (name, payload) in enumerate(self.plan.events(phase, path, background), 1):
                    seq = next(self.seq)
                    self.write(kind="sent", seq=seq, connection=label, name=name, payload=payload, path=path)
                    probe = seq if self.probe_each_event else None
                    await sio.emit("event", {"name": name, "payload": payload, "router_data": router_data(path, probe)},
                                   namespace=NAMESPACE)
                    if looking and n % ROUND == 0 and (not await answered() or self.all_seen.is_set()):
                        break
                if closed.is_set() or (not self.all_seen.is_set() and not await answered()):
                    self.write(kind="incomplete", connection=label)
                    return
                if self.all_seen.is_set():
                    break
            await asyncio.sleep(0 if self.all_seen.is_set() else WATCH_WAIT_S)
            self.write(kind="incomplete" if closed.is_set() else "done", connection=label)
            if not closed.is_set():
                left, sentinel = True, f"left-{uuid.uuid4().hex}"
                finished.clear()
                await sio.emit("event", {"name": HYDRATE, "payload": {}, "router_data": router_data(LEAVE, sentinel)},
                               namespace=NAMESPACE)
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(finished.wait(), LEAVE_TIMEOUT_S)
        finally:
            await sio.disconnect()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("url", help="the app, e.g. http://10.213.0.1:3000")
    parser.add_argument("--probe", required=True, help="text sent wherever a string goes (e.g. a search)")
    parser.add_argument("--int", dest="numbers", type=int, action="append", default=[], help="a whole number to send")
    parser.add_argument("--word", dest="words", action="append", default=[], help="another string to send")
    parser.add_argument("--query", dest="queries", action="append", default=[],
                        help="a query string to send with every page path too (e.g. id=1)")
    parser.add_argument("--origin", help="the Origin header to send")
    parser.add_argument("--host", help="the Host header to send")
    parser.add_argument("--phase", dest="phases", action="append", choices=PHASES, help="only this phase")
    parser.add_argument("--probe-each-event", action="store_true",
                        help="put _probe=<seq> in each event's route, to name the handler after which a leak came")
    parser.add_argument("--until-seen", action="append", default=[],
                        help="stop once what the server sent holds this text (and every other one given)")
    parser.add_argument("--out", type=Path, required=True)
    options = parser.parse_args()
    headers = {name: value for name, value in (("Origin", options.origin), ("Host", options.host)) if value}
    words = [*sorted(ALLOWED), *options.words]  # issue statuses, and what the caller adds (a route)
    vocabulary = Vocabulary(options.probe, list(dict.fromkeys([*options.numbers, 1, 0, -1])),
                            list(dict.fromkeys(words)), state_vars())
    paths = page_paths()
    paths += [f"{path}?{query}" for path in paths for query in options.queries]
    client = Client(options.url, Plan(vocabulary), paths, headers, options.out, options.phases or PHASES,
                    options.probe_each_event, options.until_seen)
    asyncio.run(client.run())


if __name__ == "__main__":
    main()
