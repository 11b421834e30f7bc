"""Inbox ingest rate: Lookout's embedded inbox against Bugsink, on the same ~50 KB error events.

Both are measured in-process, so HTTP servers stay out of it: parse, group and store, on SQLite
files in a temp dir.
- Lookout, three ways: as the running app reads envelopes (the feeder, app/ingest/feeder.py: up to
  200 outbox rows per transaction, each event kept where its envelope already is); the same counting
  the time to write those envelopes to the outbox first (the tunnel's part); and one envelope per
  transaction through `InboxStore.ingest_envelope`, which keeps its own copy of each event.
- Bugsink (the `bugsink` package, pinned with its dependencies in bench/bugsink-requirements.txt,
  in a venv of its own under bench/.bugsink-venv, made on first use): its envelope endpoint through
  Django's test client, with the `local` configuration template (`bugsink-create-conf`), which digests
  each event immediately.
Then the issue list (first page, newest first) over what Lookout stored, timed 20 times; and over
100,000 small events in 10,000 issues (newest first, most events first, a search). Then what PII
scrubbing (app/ingest/scrubbing.py, on by default) costs the feeder: the same events fed with
scrubbing off, on, and on with a password in each event (so each row is rewritten), each into a
database of its own, the three alternating for `--scrub-rounds` rounds; the medians and their ratios.

    .venv/bin/python -m bench.inbox_ingest [--events 1000] [--bugsink-events 200] [--list-events 100000]
                                           [--scrub-rounds 3]

Goal (issue 6): Lookout ≥ 30 × Bugsink. Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
import uuid
from pathlib import Path

from app import db
from app.inbox.reading import InboxReader
from app.inbox.search import IssueSearch
from app.ingest.feeder import BATCH, InboxFeeder
from app.ingest.incoming import Incoming
from app.ingest.store import InboxStore
from bench.harness.bugsink import run_bugsink
from bench.harness.feeding import fed_per_second
from reflex_lookout.dsn import Dsn
from reflex_lookout.outbox import LOCAL, OutboxStore, new_row
from reflex_lookout.scrubbing.settings import ScrubbingSettings

GOAL = 30.0
LOCAL_DSN = "http://bench@localhost/1"  # the inbox's project 1 in these databases
LIST_GOAL_MS = 100.0

def envelopes(count: int, size: int, secret: bool = False) -> list[bytes]:
    """`count` error events of about `size` bytes (50 kinds of error, so grouping has work); with
    `secret`, each with a password in its request's data (which scrubbing filters)."""
    pad = "x" * max(0, size - 2000)
    made = []
    for n in range(count):
        event = {"event_id": uuid.uuid4().hex, "level": "error", "platform": "python", "timestamp": time.time(),
                 "extra": {"pad": pad}, "exception": {"values": [{"type": f"Error{n % 50}", "value": f"failed {n}",
                 "stacktrace": {"frames": [{"module": "app.x", "function": "f", "filename": "x.py", "lineno": n % 9,
                                            "in_app": True}]}}]}}
        if secret:
            event["request"] = {"method": "POST", "url": "https://shop.example/login",
                                "data": {"user": f"user{n}", "password": f"hunter{n}"}}
        payload = json.dumps(event).encode()
        header = {"event_id": event["event_id"]}  # no DSN: each side is told its own
        item_header = {"type": "event", "length": len(payload)}
        made.append(b"\n".join([json.dumps(header).encode(), json.dumps(item_header).encode(), payload]))
    return made


def lookout(bodies: list[bytes], workdir: Path) -> tuple[float, float, float, InboxReader]:
    """Lookout's rate the way the running app reads envelopes (the feeder: outbox rows in batches,
    one transaction each); the same counting the outbox writes before it (the tunnel's part, in
    batches as its writer commits them under load); and one envelope per transaction
    (`ingest_envelope`, which keeps its own copy of each event)."""
    engine = db.engine(f"sqlite:///{workdir / 'lookout.db'}")
    db.migrate(engine)
    store = InboxStore(engine)
    store.ensure_project(Dsn.parse(LOCAL_DSN))
    outbox = OutboxStore(engine)
    half = len(bodies) // 2
    first = bodies[:half]  # sliced before batching, so the last batch stops at the half
    start = time.perf_counter()  # what the tunnel does first: the envelopes into the outbox
    for at in range(0, half, BATCH):
        outbox.add_many([new_row(LOCAL_DSN, LOCAL, body, ["error"], None) for body in first[at:at + BATCH]])
    written = time.perf_counter() - start
    feeder = InboxFeeder(outbox, store)
    start = time.perf_counter()
    while feeder.feed_once():
        pass
    fed = time.perf_counter() - start
    batched, with_outbox = feeder.ingested / fed, feeder.ingested / (written + fed)
    assert feeder.ingested == half and feeder.rejected == 0, (feeder.ingested, feeder.rejected)
    start = time.perf_counter()
    for body in bodies[half:]:
        store.ingest_envelope(body, dsn=LOCAL_DSN)
    single = (len(bodies) - half) / (time.perf_counter() - start)
    return batched, with_outbox, single, InboxReader(engine)


SCRUBBING = {"off": ScrubbingSettings(scrub_data=False), "on": ScrubbingSettings(),
             "on, a password in each event": ScrubbingSettings()}


def scrubbing_rates(bodies: list[bytes], with_secrets: list[bytes], workdir: Path, rounds: int) -> dict[str, float]:
    """The feeder's median rate (events/s) per variant of SCRUBBING, over the same events, each
    round into fresh databases, the variants' order turning each round."""
    rates: dict[str, list[float]] = {label: [] for label in SCRUBBING}
    labels = list(SCRUBBING)
    for round_ in range(rounds):
        for label in labels[round_ % len(labels):] + labels[:round_ % len(labels)]:
            fed = with_secrets if "password" in label else bodies
            path = workdir / f"scrubbing-{round_}-{labels.index(label)}.db"
            rates[label].append(feeder_rate(fed, path, SCRUBBING[label]))
    return {label: statistics.median(found) for label, found in rates.items()}


def feeder_rate(bodies: list[bytes], path: Path, scrubbing: ScrubbingSettings) -> float:
    """Events/s of the feeder reading `bodies` into a fresh database at `path`, scrubbing under `scrubbing`."""
    engine = db.engine(f"sqlite:///{path}")
    db.migrate(engine)
    store = InboxStore(engine, scrubbing_of=lambda project_id: scrubbing)
    store.ensure_project(Dsn.parse(LOCAL_DSN))
    rate = fed_per_second(store, bodies, LOCAL_DSN)
    engine.dispose()
    return rate


def issue_list_ms(workdir: Path, events: int, issues: int) -> dict[str, float]:
    """Median server time (ms, 20 reads each) of the issue list's first page over `events` stored
    small events in `issues` issues: newest first, most events first, and with a search."""
    engine = db.engine(f"sqlite:///{workdir / 'list.db'}")
    db.migrate(engine)
    store = InboxStore(engine)
    store.ensure_project(Dsn.parse(LOCAL_DSN))
    now = time.time()
    batch: list[Incoming] = []
    for n in range(events):
        event = {"event_id": uuid.uuid4().hex, "level": "error", "platform": "python", "environment": "production",
                 "exception": {"values": [{"type": f"Error{n % issues}", "value": "failed"}]}}
        payload = json.dumps(event).encode()
        body = b"\n".join([b"{}", json.dumps({"type": "event", "length": len(payload)}).encode(), payload])
        batch.append(Incoming(body, "", now - (events - n), LOCAL_DSN))
        if len(batch) == 1000 or n == events - 1:
            store.ingest_batch(batch)
            batch = []
    search = IssueSearch(engine)
    timings: dict[str, float] = {}
    for label, read in (("newest first", lambda: search.search("is:unresolved")),
                        ("most events first", lambda: search.search("is:unresolved", sort="freq")),
                        ("search", lambda: search.search("is:unresolved error42"))):
        times = []
        for _ in range(20):
            start = time.perf_counter()
            read()
            times.append((time.perf_counter() - start) * 1000)
        timings[label] = statistics.median(times)
    return timings


def bugsink(bodies: list[bytes], workdir: Path) -> float:
    """Bugsink's events/s over `bodies` (bench/harness/bugsink.py); every one must be stored."""
    result = run_bugsink([(body, "") for body in bodies], workdir)
    assert result.stored == len(bodies), result
    return result.per_second


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--events", type=int, default=1000, help="events for Lookout (default 1000)")
    parser.add_argument("--bugsink-events", type=int, default=200, help="events for Bugsink (default 200)")
    parser.add_argument("--size", type=int, default=50_000, help="bytes per event, about (default 50000)")
    parser.add_argument("--list-events", type=int, default=100_000,
                        help="events stored for the issue list (default 100000; 0: skip)")
    parser.add_argument("--list-issues", type=int, default=10_000, help="issues they make (default 10000)")
    parser.add_argument("--scrub-rounds", type=int, default=3,
                        help="rounds of the scrubbing cost, each variant once a round (default 3; 0: skip)")
    args = parser.parse_args()
    bodies = envelopes(max(args.events, args.bugsink_events), args.size)
    with tempfile.TemporaryDirectory(prefix="lookout-inbox-bench-") as tmp:
        print(f"ingesting {args.events} events of ~{len(bodies[0]) // 1000} KB into Lookout ...", flush=True)
        ours, with_outbox, single, reader = lookout(bodies[: args.events], Path(tmp))
        print(f"ingesting {args.bugsink_events} of the same into Bugsink ...", flush=True)
        theirs = bugsink(bodies[: args.bugsink_events], Path(tmp))
        times = []
        for _ in range(20):
            start = time.perf_counter()
            IssueSearch(reader.engine).search("is:unresolved")
            times.append((time.perf_counter() - start) * 1000)
        listing = {}
        if args.list_events:
            print(f"storing {args.list_events} small events in {args.list_issues} issues for the issue list ...", flush=True)
            listing = issue_list_ms(Path(tmp), args.list_events, args.list_issues)
        scrubbed = {}
        if args.scrub_rounds:
            print(f"feeding {args.events} events with scrubbing off and on, {args.scrub_rounds} rounds ...", flush=True)
            scrubbed = scrubbing_rates(bodies[: args.events], envelopes(args.events, args.size, secret=True),
                                       Path(tmp), args.scrub_rounds)
    print(f"\n{'':<10}{'events/s':>10}")
    print(f"{'Lookout':<10}{ours:>10.1f}   (the feeder: outbox rows in batches of {BATCH}, a transaction each)")
    print(f"{'':<10}{with_outbox:>10.1f}   (the same plus writing the envelopes to the outbox first: "
          f"{with_outbox / theirs:.1f}× Bugsink)")
    print(f"{'':<10}{single:>10.1f}   (one envelope per transaction, own copy: {single / theirs:.1f}× Bugsink)")
    print(f"{'Bugsink':<10}{theirs:>10.1f}")
    print(f"\nLookout / Bugsink = {ours / theirs:.1f}×   (goal ≥ {GOAL:g}×: {'met' if ours / theirs >= GOAL else 'NOT met'})")
    print(f"issue list over {args.events} events: median {statistics.median(times):.1f} ms")
    for label, ms in listing.items():
        print(f"issue list over {args.list_events} events in {args.list_issues} issues, {label}: median {ms:.1f} ms "
              f"(goal ≤ {LIST_GOAL_MS:g} ms: {'met' if ms <= LIST_GOAL_MS else 'NOT met'})")
    if scrubbed:
        print(f"\nPII scrubbing, the feeder over the same {args.events} events (median of {args.scrub_rounds} rounds):")
        for label, rate in scrubbed.items():
            print(f"  scrubbing {label:<30}{rate:>10.1f} events/s   {rate / scrubbed['off']:.2f}× off")
        print(f"  (Lookout / Bugsink with scrubbing off: {scrubbed['off'] / theirs:.1f}×; the rows above scrub, the default)")


if __name__ == "__main__":
    main()
