"""Drain a pre-filled outbox with Lookout's own Forwarder, over a chosen httpx transport.

    python -m bench.drain --db /tmp/x/drain.db --dsn http://public@127.0.0.1:P/42 \\
        --count 5000 --body envelope.bin --transport aiohttp

Fills the outbox with `count` copies of the body (not timed), then runs `Forwarder.run()` and times
until the outbox is empty. Prints one JSON line: {"transport", "count", "seconds", "per_s"}.
The Forwarder is app code, unchanged; only its `client` differs:
- httpx:   `httpx.AsyncClient()` with httpx's own transport, same timeout, no redirects;
- aiohttp: `client=None`, i.e. the Forwarder's default (httpx over `httpx_aiohttp.AiohttpTransport`).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import sqlite3
import time
from pathlib import Path

import httpx

from app import db
from app.settings import Settings
from reflex_lookout.dsn import Dsn
from reflex_lookout.forwarder import Forwarder
from reflex_lookout.outbox import PENDING, OutboxStore
from reflex_lookout.protocol.ratelimits import RateLimits
from reflex_lookout.stats import TunnelStats

FILL_BATCH = 500
POLL_S = 0.02
TIMEOUT_S = 300.0


def fill(store: OutboxStore, dsn: str, body: bytes, count: int) -> None:
    row = {
        "dsn": dsn, "status": PENDING, "received_at": time.time(), "content_encoding": "",
        "categories": "error", "event_id": None, "size": len(body), "body": body,
    }
    for start in range(0, count, FILL_BATCH):
        store.add_many([row] * min(FILL_BATCH, count - start))


def client_for(transport: str, settings: Settings) -> httpx.AsyncClient | None:
    if transport == "aiohttp":
        return None  # the Forwarder's default client: httpx over httpx-aiohttp's transport
    return httpx.AsyncClient(timeout=settings.forward_timeout_s, follow_redirects=False)


def outbox_rows(path: Path) -> int:
    with contextlib.closing(sqlite3.connect(path, timeout=10)) as connection:
        return int(connection.execute("select count(*) from outbox").fetchone()[0])


async def drain(store: OutboxStore, settings: Settings, db_path: Path, transport: str) -> float:
    forwarder = Forwarder(store, settings, RateLimits(), TunnelStats(), client=client_for(transport, settings))
    started = time.perf_counter()
    task = asyncio.create_task(forwarder.run())
    try:
        while outbox_rows(db_path) > 0:
            if time.perf_counter() - started > TIMEOUT_S:
                raise TimeoutError(f"the outbox was not drained in {TIMEOUT_S:.0f} s")
            await asyncio.sleep(POLL_S)
        return time.perf_counter() - started
    finally:
        await stop(task)
        await forwarder.aclose()


async def stop(task: asyncio.Task[None]) -> None:
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--db", type=Path, required=True)
    parser.add_argument("--dsn", required=True)
    parser.add_argument("--count", type=int, default=5000)
    parser.add_argument("--body", type=Path, required=True)
    parser.add_argument("--transport", choices=["httpx", "aiohttp"], default="httpx")
    args = parser.parse_args()

    dsn = Dsn.parse(args.dsn)
    settings = Settings(dsn=dsn, given_environment="bench", release=None, tunnel_path="/monitoring")
    engine = db.engine(f"sqlite:///{args.db}")
    db.migrate(engine)
    store = OutboxStore(engine)
    fill(store, str(dsn), args.body.read_bytes(), args.count)
    seconds = asyncio.run(drain(store, settings, args.db, args.transport))
    print(json.dumps({
        "transport": args.transport, "count": args.count, "seconds": seconds, "per_s": args.count / seconds,
    }))


if __name__ == "__main__":
    main()
