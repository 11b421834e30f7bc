"""The /issues page's bulk actions: on the issues picked, or on every issue the search matches,
in chunks off the event loop, with the progress shown as it goes (app/inbox/bulk.py does the work).

The page's background handler `bulk` runs `apply`: it checks that the client is a maintainer before each chunk, so a
session that ends (or a role that changes) stops the work at the next chunk.
"""

from __future__ import annotations

from typing import Any, Protocol

import anyio.to_thread

from app.console.accounts import Viewer
from app.console.state import bounded, database, triage
from app.inbox import bulk
from app.inbox.search import IssueSearch, SearchError
from app.presentation.words import plural
from app.tables import chunks

CHUNK = 500  # issues per transaction (and per access check)
MAX_ALL_MATCHING = 10_000  # the most issues one bulk action changes
IGNORE_FOR = {"ignore_1h": 3600.0, "ignore_24h": 86400.0, "ignore_7d": 7 * 86400.0}
IGNORE_UNTIL = {"ignore_10": 10, "ignore_100": 100}
SIMPLE = ("resolve", "resolve_next_release", "unresolve", "ignore", "merge", "delete", "unassign")
DONE = {"resolve": "resolved", "resolve_next_release": "resolved in the next release", "unresolve": "unresolved",
        "ignore": "ignored", "merge": "merged", "delete": "deleted"}


def done_as(action: bulk.Action) -> str:
    """What the action did to an issue, for the notice ("resolved", "assigned to ada")."""
    if action.kind == "assign":
        return f"assigned to {action.assignee}" if action.assignee else "unassigned"
    return DONE.get(action.kind, action.kind)


def action_of(name: str) -> bulk.Action | None:
    """The action a client names: one of SIMPLE, an IGNORE_FOR or IGNORE_UNTIL key, or "assign:<user>"."""
    if name in SIMPLE:
        return bulk.Action("assign", assignee="") if name == "unassign" else bulk.Action(name)
    if name in IGNORE_FOR:
        return bulk.Action("ignore", for_s=IGNORE_FOR[name])
    if name in IGNORE_UNTIL:
        return bulk.Action("ignore", more_events=IGNORE_UNTIL[name])
    if name.startswith("assign:") and len(name) > len("assign:"):
        return bulk.Action("assign", assignee=name[len("assign:"):])
    return None


class BulkPage(Protocol):
    """What `apply` needs of the /issues page's state (app/pages/issues_state.py, a FormState)."""
    query: str
    project: str
    selected: list[int]
    all_matching: bool
    working: bool
    progress: str
    confirming_delete: bool
    error: str
    notice: str

    async def __aenter__(self) -> Any: ...
    async def __aexit__(self, *exc: object) -> None: ...
    def _begin_change(self) -> Viewer | None: ...
    def _maintainer(self) -> Viewer | None: ...
    async def _show(self) -> bool: ...


async def apply(state: BulkPage, name: str) -> None:
    """Apply the action `name` to the issues `state`'s client picked, or to all the search matches (run by
    the page's background handler `bulk`)."""
    async with state:
        state.confirming_delete = False
        maintainer = state._begin_change()
        action = action_of(bounded(name))
        if maintainer is None or state.working:
            return
        if action is None:
            state.error = "That is not an action the list offers."
            return
        if not state.all_matching and not state.selected:
            state.error = "Pick issues first, or all the issues the search matches."
            return
        state.working, state.progress = True, "starting…"
        picked, everything, query = list(state.selected), state.all_matching, state.query
        project = int(state.project) if state.project else None
    try:
        ids = picked
        if everything:
            ids = await anyio.to_thread.run_sync(lambda: IssueSearch(database()).ids(
                query, viewer=maintainer.name, project=project, limit=MAX_ALL_MATCHING))
        done, skipped, errors = 0, 0, []
        parts = [ids] if action.kind == "merge" else list(chunks(ids, CHUNK))
        for part in parts:
            async with state:
                if state._maintainer() is None:  # the session ended or the role changed: stop here
                    state.error = "The bulk action stopped: only a maintainer can change issues."
                    return
            outcome = await anyio.to_thread.run_sync(triage().bulk, action, list(part), maintainer.name)
            done, skipped = done + outcome.done, skipped + outcome.skipped
            errors += outcome.errors
            async with state:
                state.progress = f"{done + skipped:,} of {len(ids):,}"
        async with state:
            unchanged = f"; {skipped:,} unchanged" if skipped else ""
            state.notice = f"{done:,} of {plural(len(ids), 'issue')} {done_as(action)}{unchanged}."
            state.error = errors[0] if errors else ""
            state.selected, state.all_matching = [], False
    except (SearchError, ValueError) as exc:
        async with state:
            state.error = str(exc)
    finally:
        async with state:
            state.working, state.progress = False, ""
            await state._show()
