"""Per-project quotas at ingest: past a project's events a minute or an hour (app/projects/quota_options.py)
an envelope of error events is refused with 429, `Retry-After` (the seconds until the window that is
full starts again) and Sentry's `X-Sentry-Rate-Limits`, which the SDKs honour: they send nothing of
those categories until then. Nothing is stored of a refused envelope; nothing accepted before is touched.

Windows are fixed (the minute, the hour, from the epoch, as Relay slots them), counted across every
worker in the database (`inbox_quota_count`, a row per project, window and slot). A worker does not
ask the database for each event: as Relay's quota cache does (`quota_cache_ratio`), it admits on its
own up to SHARE of what was left of a window when it last synced, and syncs (adds what it admitted,
reads the total back: one transaction, on a worker thread, one at a time per process) when that is
spent or a new window starts; the event that syncs is added in the same transaction only if every
window has room for it. So the database is asked about once per SHARE of a window's room, not per
event; near a window's end the share is below one event and every event syncs, exactly; once it is
full, what follows is refused without asking (`_full`) until the window ends. The price:
what another worker admitted within its share is not seen until it syncs again, so a window may be
overrun by at most SHARE of what was left, per other worker (none with one worker), never more.

What counts: error events (Sentry's `error` category and the two it bills with it, `default` and
`security`). Transactions, spans, logs, sessions and the rest have categories of their own in Sentry,
with quotas of their own; one quota over them all would let a busy app's traces crowd its errors out.
A project's quotas are read again every CACHE_S seconds, so a change applies within that.
"""

from __future__ import annotations

import asyncio
import functools
import math
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import anyio.to_thread
import sqlalchemy
from sqlalchemy import delete, update
from sqlalchemy.dialects import postgresql, sqlite

from app.inbox.tables import QUOTA_COUNTS as COUNTS
from app.projects.options_store import CACHE_S, ProjectOptionsStore
from app.projects.quota_options import QuotaOptions
from reflex_lookout.dsn import Dsn
from reflex_lookout.protocol.asgi import Refused
from reflex_lookout.protocol.ratelimits import category_of

SHARE = 0.1  # of what a window had left at the last sync, admitted by one worker before the next
COUNTED = ("error", "default", "security")  # Sentry's error categories, as X-Sentry-Rate-Limits names them
REASON = "project_quota"  # Sentry's reason code for a project's quota


def events_in(item_types: Iterable[str]) -> int:
    """How many of an envelope's items a quota counts."""
    return sum(1 for item_type in item_types if category_of(item_type) in COUNTED)


@functools.lru_cache(maxsize=1024)
def project_of(dsn: str) -> int:
    """The project a DSN the tunnel accepted names (in local mode, the inbox project's id)."""
    return int(Dsn.parse(dsn).project_id)


@dataclass
class Window:
    """One window of one project's quota as this process sees it."""

    slot: int
    known: int = 0  # the total of every worker at the last sync (ours included)
    local: int = 0  # admitted here since, not yet in the database
    flying: int = 0  # admitted here and being added by the sync under way
    synced: bool = False

    @property
    def used(self) -> int:
        """Events of this window known to be in: every worker's at the last sync, and this one's since."""
        return self.known + self.local + self.flying

    def room(self, limit: int) -> float:
        """How many more events this process may admit before it must sync."""
        if not self.synced:
            return 0
        return SHARE * (limit - self.known) - self.local - self.flying


class QuotaCounts:
    """The windows' counts in the database: add what one process admitted, read the totals back."""

    def __init__(self, engine: sqlalchemy.Engine) -> None:
        self.engine = engine

    def add(self, project_id: int, deltas: dict[int, tuple[int, int, bool]], limits: dict[int, int],
            events: int) -> tuple[dict[int, int], bool]:
        """Add {window: (slot, events admitted, first sync of the slot here)} and, if every window has
        room for them, `events` more: ({window: total now}, whether `events` were let in). The first
        sync of a slot also deletes the project's rows of that window's older slots."""
        totals = {}
        with self.engine.begin() as connection:
            dialect = sqlite if connection.dialect.name == "sqlite" else postgresql
            for seconds, (slot, admitted, first) in sorted(deltas.items()):
                if first:
                    connection.execute(delete(COUNTS).where(
                        COUNTS.c.project_id == project_id, COUNTS.c.seconds == seconds, COUNTS.c.slot < slot))
                insert = dialect.insert(COUNTS).values(project_id=project_id, seconds=seconds, slot=slot,
                                                       count=admitted + events)
                upsert = insert.on_conflict_do_update(
                    index_elements=[COUNTS.c.project_id, COUNTS.c.seconds, COUNTS.c.slot],
                    set_={"count": COUNTS.c.count + insert.excluded.count},
                ).returning(COUNTS.c.count)
                totals[seconds] = int(connection.execute(upsert).scalar_one())
            if all(totals[seconds] <= limit for seconds, limit in limits.items()):
                return totals, True
            for seconds, (slot, _, _) in deltas.items():  # no room: take them back, in the same transaction
                connection.execute(update(COUNTS).where(
                    COUNTS.c.project_id == project_id, COUNTS.c.seconds == seconds, COUNTS.c.slot == slot,
                ).values(count=COUNTS.c.count - events))
        return {seconds: total - events for seconds, total in totals.items()}, False


class Quotas:
    """The quota check of one process: `await admit(dsn, events)` before an envelope is stored."""

    def __init__(self, engine: sqlalchemy.Engine, clock: Callable[[], float] = time.time) -> None:
        self.counts = QuotaCounts(engine)
        self.options = ProjectOptionsStore(engine)
        self.clock = clock
        self._quotas: dict[int, tuple[float, QuotaOptions]] = {}  # project → (when read, its quotas)
        self._windows: dict[tuple[int, int], Window] = {}  # (project, seconds) → its current window
        self._lock: tuple[asyncio.AbstractEventLoop, asyncio.Lock] | None = None

    async def admit(self, dsn: str, item_types: Sequence[str]) -> None:
        """Count an envelope's events (by its items' types) against the DSN's project, or `Refused`
        429 when a quota is full (the tunnel's `Admit`)."""
        if (events := events_in(item_types)) <= 0:
            return
        project_id = project_of(dsn)
        limits = (await self._quotas_of(project_id)).limits()
        if not limits or self._take(project_id, limits, events):
            return
        async with self._sync_lock():
            if not self._full(project_id, limits, events) and (
                    self._take(project_id, limits, events) or await self._sync(project_id, limits, events)):
                return  # made room by the sync another request waited for, or by this one
        raise self._refusal(project_id, limits, events)

    async def _quotas_of(self, project_id: int) -> QuotaOptions:
        now = time.monotonic()
        found = self._quotas.get(project_id)
        if found is None or now - found[0] > CACHE_S:
            found = self._quotas[project_id] = (now, await anyio.to_thread.run_sync(self.options.quotas, project_id))
        return found[1]

    def _window(self, project_id: int, seconds: int) -> Window:
        slot = int(self.clock() // seconds)
        window = self._windows.get((project_id, seconds))
        if window is None or window.slot != slot:  # a new window: what the old one held is done with
            window = self._windows[(project_id, seconds)] = Window(slot)
        return window

    def _take(self, project_id: int, limits: dict[int, int], events: int) -> bool:
        """Admit `events` within this process's share of every window, if they fit."""
        windows = {seconds: self._window(project_id, seconds) for seconds in limits}
        if any(windows[seconds].room(limit) < events for seconds, limit in limits.items()):
            return False
        for window in windows.values():
            window.local += events
        return True

    async def _sync(self, project_id: int, limits: dict[int, int], events: int) -> bool:
        """Add what this process admitted to the database, and `events` if every window has room for
        them (whether it had), and read the totals: off the event loop."""
        windows = {seconds: self._window(project_id, seconds) for seconds in limits}
        deltas = {seconds: (w.slot, w.local, not w.synced) for seconds, w in windows.items()}
        for window in windows.values():
            window.flying, window.local = window.local, 0
        try:
            totals, admitted = await anyio.to_thread.run_sync(self.counts.add, project_id, deltas, limits, events)
        except BaseException:
            for window in windows.values():
                window.local, window.flying = window.local + window.flying, 0
            raise
        for seconds, window in windows.items():
            window.known, window.flying, window.synced = totals[seconds], 0, True
        return admitted

    def _full(self, project_id: int, limits: dict[int, int], events: int) -> list[int]:
        """The windows that, as last synced, have no room for `events`: a sync cannot make any (counts
        only grow within a window), so a flood past a quota is refused without asking the database."""
        windows = {seconds: self._window(project_id, seconds) for seconds in limits}
        return [seconds for seconds, limit in limits.items()
                if windows[seconds].synced and windows[seconds].used + events > limit]

    def _refusal(self, project_id: int, limits: dict[int, int], events: int) -> Refused:
        """429 for the windows that are full, with the seconds until the last of them ends."""
        now = self.clock()
        windows = {seconds: self._window(project_id, seconds) for seconds in limits}
        full = self._full(project_id, limits, events) or list(limits)
        wait = max(max(1, math.ceil((windows[s].slot + 1) * s - now)) for s in full)
        what = " and ".join(f"{limits[s]} events {'a minute' if s == 60 else 'an hour'}" for s in sorted(full))
        return Refused(
            429, f"Project {project_id} takes at most {what}; try again in {wait} s.", "over_quota",
            {"Retry-After": str(wait), "X-Sentry-Rate-Limits": f"{wait}:{';'.join(COUNTED)}:project:{REASON}"},
        )

    def _sync_lock(self) -> asyncio.Lock:
        """One sync at a time per process, on the running event loop (tests run several loops in turn)."""
        loop = asyncio.get_running_loop()
        if self._lock is None or self._lock[0] is not loop:
            self._lock = (loop, asyncio.Lock())
        return self._lock[1]
